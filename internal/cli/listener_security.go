package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/httpauth"
	"github.com/samsa-io/samsa/internal/keystore"
)

// listenerSecurityFlags secure a service's own HTTP listener (samsa
// registry, samsa rest): TLS (Confluent's https listener and
// ssl.client.authentication) and basic authentication
// (authentication.method=BASIC), read by internal/httpauth.
type listenerSecurityFlags struct {
	tlsCert, tlsKey, tlsCA, clientAuth string
	users, kafkaMechanism, realm       string
	roles                              []string
}

// register adds the flags; realm is the challenge's default realm,
// caUse what else the CAs of --listener-tls-ca check ("" for nothing).
func (l *listenerSecurityFlags) register(f *pflag.FlagSet, realm, caUse string) {
	f.StringVar(&l.tlsCert, "listener-tls-cert", "", "PEM file of the API's certificate chain, leaf first: serve https")
	f.StringVar(&l.tlsKey, "listener-tls-key", "", "PEM file of the API certificate's private key")
	caDoc := "PEM file of the CAs client certificates are verified against"
	if caUse != "" {
		caDoc += ", and " + caUse
	}
	f.StringVar(&l.tlsCA, "listener-tls-ca", "", caDoc)
	f.StringVar(&l.clientAuth, "listener-tls-client-auth", "NONE", "client certificates on the API (Confluent's ssl.client.authentication): NONE, REQUESTED or REQUIRED (these need --listener-tls-ca)")
	f.StringVar(&l.users, "auth-users", "", "basic authentication: the users file, Jetty's PropertyFileLoginModule format (user: password[,role ...])")
	f.StringVar(&l.kafkaMechanism, "auth-kafka-mechanism", "", "basic authentication: check users not in --auth-users by a SASL login with their credentials to the cluster (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512), over the connection flags' TLS")
	f.StringVar(&l.realm, "auth-realm", realm, "basic authentication: the realm of the challenge (Confluent's authentication.realm)")
	f.StringSliceVar(&l.roles, "auth-roles", []string{"*"}, "basic authentication: the roles allowed in, * for every user (Confluent's authentication.roles)")
}

// tls reads the --listener-tls-* flags: nil, nil for plain HTTP.
func (l *listenerSecurityFlags) tls() (server, forward *tls.Config, err error) {
	if l.tlsCert == "" && l.tlsKey == "" {
		if l.tlsCA != "" || !strings.EqualFold(l.clientAuth, "NONE") {
			return nil, nil, errors.New("--listener-tls-ca and --listener-tls-client-auth need --listener-tls-cert and --listener-tls-key")
		}
		return nil, nil, nil
	}
	if l.tlsCert == "" || l.tlsKey == "" {
		return nil, nil, errors.New("--listener-tls-cert and --listener-tls-key go together")
	}
	cert, err := os.ReadFile(l.tlsCert)
	if err != nil {
		return nil, nil, fmt.Errorf("--listener-tls-cert: %w", err)
	}
	key, err := os.ReadFile(l.tlsKey)
	if err != nil {
		return nil, nil, fmt.Errorf("--listener-tls-key: %w", err)
	}
	certs, err := keystore.KeyStore(append(append(key, '\n'), cert...), keystore.PEM, "", "")
	if err != nil {
		return nil, nil, fmt.Errorf("--listener-tls-cert and --listener-tls-key: %w", err)
	}
	var cas []*x509.Certificate
	if l.tlsCA != "" {
		raw, err := os.ReadFile(l.tlsCA)
		if err != nil {
			return nil, nil, fmt.Errorf("--listener-tls-ca: %w", err)
		}
		if cas, err = keystore.TrustStore(raw, keystore.PEM, ""); err != nil || len(cas) == 0 {
			return nil, nil, fmt.Errorf("--listener-tls-ca %s: no certificate read (%v)", l.tlsCA, err)
		}
	}
	server, forward, err = httpauth.ListenerTLS(certs, cas, l.clientAuth)
	if err != nil {
		return nil, nil, fmt.Errorf("--listener-tls-client-auth: %w", err)
	}
	return server, forward, nil
}

// auth reads the --auth-* flags: nil when neither a users file nor a
// Kafka mechanism asks for basic authentication. loginOpts reach the
// cluster as the users a Kafka login checks (seeds and the connection's
// TLS, never the command's own SASL); nil without --auth-kafka-mechanism.
func (l *listenerSecurityFlags) auth(cmd *cobra.Command, conn *connection) (a *httpauth.Auth, loginOpts []kgo.Opt, err error) {
	if l.users == "" && l.kafkaMechanism == "" {
		for _, name := range []string{"auth-realm", "auth-roles"} {
			if cmd.Flags().Changed(name) {
				return nil, nil, fmt.Errorf("--%s needs --auth-users or --auth-kafka-mechanism", name)
			}
		}
		return nil, nil, nil
	}
	a = &httpauth.Auth{Realm: l.realm, Roles: l.roles}
	if l.users != "" {
		users, err := httpauth.LoadUsers(l.users)
		if err != nil {
			return nil, nil, fmt.Errorf("--auth-users: %w", err)
		}
		a.Users = users
	}
	if l.kafkaMechanism != "" {
		seeds, err := conn.seeds(cmd)
		if err != nil {
			return nil, nil, err
		}
		sec, err := conn.secure(cmd)
		if err != nil {
			return nil, nil, err
		}
		loginOpts = []kgo.Opt{kgo.SeedBrokers(seeds...)} // the caller's own SASL, never the command's
		if sec.tls != nil {
			loginOpts = append(loginOpts, kgo.DialTLSConfig(sec.tls))
		}
		if a.Login, err = httpauth.KafkaLogin(loginOpts, l.kafkaMechanism, conn.timeout); err != nil {
			return nil, nil, fmt.Errorf("--auth-kafka-mechanism: %w", err)
		}
	}
	return a, loginOpts, nil
}
