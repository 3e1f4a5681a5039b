package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/samsa-io/samsa/internal/keystore"
)

// How a command secures its connections: TLS and SASL, as a Kafka client
// does. The settings come from three places, each overriding the one
// before: a Kafka client properties file (--command-config, read with
// Kafka's names, security_config.go), the environment (SAMSA_SASL_PASSWORD),
// and the flags. Whatever cannot be honoured is refused before the first
// dial, with the flag or property that asked for it: nothing is ignored.

// saslPasswordEnv holds the SASL password when --sasl-password is not
// given, so that it stays out of shell history and process listings.
const saslPasswordEnv = "SAMSA_SASL_PASSWORD"

// The SASL mechanisms the commands speak, with Kafka's names.
const (
	mechanismPlain       = "PLAIN"
	mechanismScramSHA256 = "SCRAM-SHA-256"
	mechanismScramSHA512 = "SCRAM-SHA-512"
	mechanismOAuthBearer = "OAUTHBEARER"
)

var saslMechanisms = []string{mechanismPlain, mechanismScramSHA256, mechanismScramSHA512, mechanismOAuthBearer}

// parseMechanism reads a SASL mechanism name in any case.
func parseMechanism(s string) (string, bool) {
	for _, m := range saslMechanisms {
		if strings.EqualFold(strings.TrimSpace(s), m) {
			return m, true
		}
	}
	return "", false
}

// securityFlags are the flags of every client command that secure its
// connections.
type securityFlags struct {
	commandConfig string

	tls           bool
	tlsCA         string
	tlsCert       string
	tlsKey        string
	tlsInsecure   bool
	tlsServerName string

	saslMechanism string
	saslUser      string
	saslPassword  string
	saslToken     string
	saslTokenFile string
}

func (f *securityFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.commandConfig, "command-config", "",
		"a Kafka client properties file (security.protocol, ssl.truststore.*, ssl.keystore.* and ssl.key.password for JKS, PKCS12 or PEM stores, "+
			"ssl.endpoint.identification.algorithm, "+
			"sasl.mechanism, sasl.jaas.config), as kafka-topics.sh --command-config takes it; the --tls* and --sasl-* flags win over it")
	fs.BoolVar(&f.tls, "tls", false, "connect with TLS (implied by any other --tls-* flag)")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "PEM file of the CA certificates to verify the brokers against (default: the system's)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM file of the client certificate chain, leaf first, for brokers that ask for one (mutual TLS)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "PEM file of the unencrypted private key of --tls-cert (default: --tls-cert's file)")
	fs.BoolVar(&f.tlsInsecure, "tls-insecure-skip-verify", false,
		"FOR TESTING ONLY: accept any broker certificate and name, so anyone between the client and the brokers can read and change the traffic")
	fs.StringVar(&f.tlsServerName, "tls-server-name", "", "the name the brokers' certificates must hold (default: the host each broker is dialled at)")
	fs.StringVar(&f.saslMechanism, "sasl-mechanism", "", "authenticate with SASL: "+oneOf(saslMechanisms))
	fs.StringVar(&f.saslUser, "sasl-user", "", "the SASL user, for PLAIN and SCRAM")
	fs.StringVar(&f.saslPassword, "sasl-password", "", "the SASL password, for PLAIN and SCRAM (env "+saslPasswordEnv+" when the flag is not given, "+
		"which keeps it out of shell history)")
	fs.StringVar(&f.saslToken, "sasl-token", "", "the OAUTHBEARER token")
	fs.StringVar(&f.saslTokenFile, "sasl-token-file", "", "a file holding the OAUTHBEARER token, read again at each login")
}

// pathFrom is a file named by a flag or a property, for error messages.
type pathFrom struct {
	path string
	from string // "--tls-ca", "ssl.truststore.location"
}

func (p pathFrom) String() string { return p.from + " " + p.path }

// securitySettings are the resolved settings.
type securitySettings struct {
	tls        bool
	ca         storeFile // the CA certificates; none: the system's roots
	cert       storeFile // the client's key store; for PEM its chain leaf first, and the key unless key is set
	key        pathFrom  // --tls-key: cert's PEM private key, in a file of its own
	insecure   bool      // no verification at all (testing only)
	serverName string
	// chainOnly verifies the chain but not the host name
	// (ssl.endpoint.identification.algorithm empty).
	chainOnly bool

	mechanism  string // "" for no SASL
	user       string
	password   string
	scramToken bool // ScramLoginModule tokenauth=true: a delegation token
	token      string
	tokenFile  string
	unsecured  *unsecuredLogin // OAUTHBEARER's unsecured JWT, from sasl.jaas.config
}

// settings resolves the command-config file, the environment and the
// flags of cmd.
func (f *securityFlags) settings(cmd *cobra.Command) (securitySettings, error) {
	var s securitySettings
	if f.commandConfig != "" {
		var err error
		if s, err = readCommandConfig(f.commandConfig); err != nil {
			return securitySettings{}, err
		}
	}
	changed := cmd.Flags().Changed
	if err := f.applyTLS(&s, changed); err != nil {
		return securitySettings{}, err
	}
	if err := f.applySASL(&s, changed); err != nil {
		return securitySettings{}, err
	}
	if err := s.check(); err != nil {
		return securitySettings{}, err
	}
	return s, nil
}

func (f *securityFlags) applyTLS(s *securitySettings, changed func(string) bool) error {
	for _, name := range []string{"tls-ca", "tls-cert", "tls-key", "tls-insecure-skip-verify", "tls-server-name"} {
		if changed(name) {
			if changed("tls") && !f.tls {
				return fmt.Errorf("--%s needs TLS, which --tls=false turns off", name)
			}
			s.tls = true
		}
	}
	if changed("tls") {
		s.tls = f.tls
	}
	if changed("tls-ca") && changed("tls-insecure-skip-verify") {
		return errors.New("--tls-insecure-skip-verify turns off the verification --tls-ca is for: give one of them")
	}
	if changed("tls-key") && !changed("tls-cert") {
		return errors.New("--tls-key needs --tls-cert, the certificate of the key")
	}
	// A flag replaces the file's store whole, passwords included: the
	// flags name PEM files, which have none.
	if changed("tls-ca") {
		s.ca = storeFile{pathFrom: pathFrom{f.tlsCA, "--tls-ca"}, typ: keystore.PEM}
	}
	if changed("tls-cert") {
		s.cert = storeFile{pathFrom: pathFrom{f.tlsCert, "--tls-cert"}, typ: keystore.PEM}
	}
	if changed("tls-key") {
		s.key = pathFrom{f.tlsKey, "--tls-key"}
	}
	if changed("tls-insecure-skip-verify") {
		s.insecure = f.tlsInsecure
	}
	if changed("tls-server-name") {
		s.serverName = f.tlsServerName
	}
	if !s.tls && s.ca.path+s.cert.path != "" {
		return fmt.Errorf("%s is set, but TLS is off", firstNonEmpty(s.ca.pathFrom, s.cert.pathFrom))
	}
	return nil
}

func firstNonEmpty(ps ...pathFrom) pathFrom {
	for _, p := range ps {
		if p.path != "" {
			return p
		}
	}
	return pathFrom{}
}

func (f *securityFlags) applySASL(s *securitySettings, changed func(string) bool) error {
	if changed("sasl-mechanism") {
		m, ok := parseMechanism(f.saslMechanism)
		if !ok {
			return fmt.Errorf("invalid --sasl-mechanism %q: want %s", f.saslMechanism, oneOf(saslMechanisms))
		}
		s.mechanism = m
	}
	for _, name := range []string{"sasl-user", "sasl-password", "sasl-token", "sasl-token-file"} {
		if changed(name) && s.mechanism == "" {
			return fmt.Errorf("--%s needs --sasl-mechanism (or sasl.mechanism in --command-config)", name)
		}
	}
	if changed("sasl-token") && changed("sasl-token-file") {
		return errors.New("give --sasl-token or --sasl-token-file, not both")
	}
	if changed("sasl-user") {
		s.user = f.saslUser
	}
	switch {
	case changed("sasl-password"):
		s.password = f.saslPassword
	case s.mechanism != "" && s.mechanism != mechanismOAuthBearer && os.Getenv(saslPasswordEnv) != "":
		s.password = os.Getenv(saslPasswordEnv)
	}
	if changed("sasl-token") || changed("sasl-token-file") {
		s.token, s.tokenFile, s.unsecured = f.saslToken, f.saslTokenFile, nil
	}
	return nil
}

// check refuses settings that cannot make a login.
func (s *securitySettings) check() error {
	switch s.mechanism {
	case "":
		return nil
	case mechanismOAuthBearer:
		if s.user != "" || s.password != "" {
			return errors.New("OAUTHBEARER logs in with a token (--sasl-token, --sasl-token-file, or an unsecured login in sasl.jaas.config), " +
				"not with a user and password")
		}
		if s.token == "" && s.tokenFile == "" && s.unsecured == nil {
			return errors.New("OAUTHBEARER needs a token: --sasl-token, --sasl-token-file, or an unsecured login " +
				"(OAuthBearerLoginModule with unsecuredLoginStringClaim_sub) in --command-config's sasl.jaas.config")
		}
		if s.tokenFile != "" {
			if _, err := readToken(s.tokenFile); err != nil {
				return err
			}
		}
		return nil
	}
	if s.token != "" || s.tokenFile != "" || s.unsecured != nil {
		return fmt.Errorf("a token is for OAUTHBEARER; SASL %s logs in with a user and password", s.mechanism)
	}
	if s.user == "" || s.password == "" {
		return fmt.Errorf("SASL %s needs a user and a password: --sasl-user and --sasl-password (or %s), "+
			"or username and password in --command-config's sasl.jaas.config", s.mechanism, saslPasswordEnv)
	}
	if s.scramToken && s.mechanism == mechanismPlain {
		return errors.New("tokenauth in sasl.jaas.config is for SCRAM, not PLAIN")
	}
	return nil
}

// readToken reads an OAUTHBEARER token file.
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--sasl-token-file: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("--sasl-token-file %s is empty", path)
	}
	return t, nil
}

// saslMechanism is the franz-go mechanism of the settings; nil without
// SASL. now stamps unsecured tokens.
func (s *securitySettings) saslMechanism(now func() time.Time) sasl.Mechanism {
	switch s.mechanism {
	case mechanismPlain:
		return plain.Auth{User: s.user, Pass: s.password}.AsMechanism()
	case mechanismScramSHA256:
		return scram.Auth{User: s.user, Pass: s.password, IsToken: s.scramToken}.AsSha256Mechanism()
	case mechanismScramSHA512:
		return scram.Auth{User: s.user, Pass: s.password, IsToken: s.scramToken}.AsSha512Mechanism()
	case mechanismOAuthBearer:
		return oauth.Oauth(func(context.Context) (oauth.Auth, error) { return s.oauthLogin(now()) })
	}
	return nil
}

// oauthLogin is one OAUTHBEARER login's token: the one given, the token
// file as it is now, or a fresh unsecured token.
func (s *securitySettings) oauthLogin(now time.Time) (oauth.Auth, error) {
	switch {
	case s.token != "":
		return oauth.Auth{Token: s.token}, nil
	case s.tokenFile != "":
		t, err := readToken(s.tokenFile)
		return oauth.Auth{Token: t}, err
	}
	return oauth.Auth{Token: s.unsecured.token(now), Extensions: s.unsecured.extensions}, nil
}

// tlsConfig is the TLS configuration of the settings; nil without TLS.
func (s *securitySettings) tlsConfig() (*tls.Config, error) {
	if !s.tls {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: s.serverName}
	if s.ca.path != "" {
		pool, err := readTrustStore(s.ca)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if s.cert.path != "" {
		// A JKS store may hold several keys: crypto/tls presents the first
		// that suits the broker's request, as Java's key manager picks one.
		certs, err := readKeyStore(s.cert, s.key)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = certs
	}
	switch {
	case s.insecure:
		cfg.InsecureSkipVerify = true
	case s.chainOnly:
		// Go checks the chain and the name together: skip both, then check
		// the chain alone.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = verifyChain(cfg.RootCAs)
	}
	return cfg, nil
}

// dialTLS dials host and runs the TLS handshake as kgo.DialTLSConfig does:
// the server name is the host dialled unless the config names one.
func dialTLS(ctx context.Context, d *net.Dialer, cfg *tls.Config, network, host string) (net.Conn, error) {
	c := cfg.Clone()
	if c.ServerName == "" {
		server, _, err := net.SplitHostPort(host)
		if err != nil {
			return nil, fmt.Errorf("unable to split host:port for dialing: %w", err)
		}
		c.ServerName = server
	}
	return (&tls.Dialer{NetDialer: d, Config: c}).DialContext(ctx, network, host)
}
