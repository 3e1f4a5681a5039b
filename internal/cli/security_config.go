package cli

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/magiconair/properties"

	"github.com/samsa-io/samsa/internal/jaas"
	"github.com/samsa-io/samsa/internal/keystore"
)

// --command-config is a Kafka client properties file, the one
// kafka-topics.sh --command-config and the other Kafka tools take. Its
// security settings are read with Kafka's names and defaults (a store type
// is JKS unless set, sasl.mechanism GSSAPI, the host name checked). A
// property the commands cannot honour is refused, never skipped: a file
// that worked with Kafka's tools either works here or says why not.

// commandConfigReads lists what the file may set, for error messages.
const commandConfigReads = "security.protocol, ssl.truststore.location, .type and .password, " +
	"ssl.keystore.location, .type and .password, ssl.key.password, " +
	"ssl.endpoint.identification.algorithm, sasl.mechanism and sasl.jaas.config"

// refusedProperties are client properties the commands know and do not
// support, with the reason. Any other property outside the list above is
// refused as unknown.
var refusedProperties = map[string]string{
	"ssl.truststore.certificates":         "inline PEM is not read: put the certificates in a file, and set ssl.truststore.location and ssl.truststore.type=PEM",
	"ssl.keystore.certificate.chain":      "inline PEM is not read: put the chain and the key in a file, and set ssl.keystore.location and ssl.keystore.type=PEM",
	"ssl.keystore.key":                    "inline PEM is not read: put the chain and the key in a file, and set ssl.keystore.location and ssl.keystore.type=PEM",
	"ssl.protocol":                        "the TLS versions are Go's: TLS 1.2 and 1.3",
	"ssl.enabled.protocols":               "the TLS versions are Go's: TLS 1.2 and 1.3",
	"ssl.cipher.suites":                   "the cipher suites are Go's defaults",
	"sasl.login.callback.handler.class":   "fetching OAUTHBEARER tokens is not supported: give the token with --sasl-token or --sasl-token-file",
	"sasl.oauthbearer.token.endpoint.url": "fetching OAUTHBEARER tokens is not supported: give the token with --sasl-token or --sasl-token-file",
	"sasl.kerberos.service.name":          "GSSAPI (Kerberos) is not supported",
	"bootstrap.servers":                   "give the brokers with --bootstrap-server",
	"client.id":                           "give it with --client-id",
}

// readCommandConfig reads the security settings of a properties file.
func readCommandConfig(path string) (securitySettings, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return securitySettings{}, fmt.Errorf("--command-config: %w", err)
	}
	loader := properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	p, err := loader.LoadBytes(data)
	if err != nil {
		return securitySettings{}, fmt.Errorf("--command-config %s: %w", path, err)
	}
	s, err := commandConfigSettings(p.Map())
	if err != nil {
		return securitySettings{}, fmt.Errorf("--command-config %s: %w", path, err)
	}
	return s, nil
}

// commandConfigSettings turns client properties into settings.
func commandConfigSettings(props map[string]string) (securitySettings, error) {
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if why, ok := refusedProperties[k]; ok {
			return securitySettings{}, fmt.Errorf("%s: %s", k, why)
		}
		if !knownProperty(k) {
			return securitySettings{}, fmt.Errorf("unknown or unsupported property %s: the commands read %s", k, commandConfigReads)
		}
	}
	var s securitySettings
	protocol := strings.ToUpper(strings.TrimSpace(props["security.protocol"]))
	switch protocol {
	case "", "PLAINTEXT":
		protocol = "PLAINTEXT"
	case "SSL", "SASL_SSL":
		s.tls = true
	case "SASL_PLAINTEXT":
	default:
		return securitySettings{}, fmt.Errorf("security.protocol %q: want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", props["security.protocol"])
	}
	withSASL := strings.HasPrefix(protocol, "SASL_")
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if strings.HasPrefix(k, "ssl.") && !s.tls || strings.HasPrefix(k, "sasl.") && !withSASL {
			return securitySettings{}, fmt.Errorf("%s is set, but security.protocol %s does not use it", k, protocol)
		}
	}
	if s.tls {
		if err := tlsProperties(&s, props); err != nil {
			return securitySettings{}, err
		}
	}
	if withSASL {
		if err := saslProperties(&s, props); err != nil {
			return securitySettings{}, err
		}
	}
	return s, nil
}

func knownProperty(k string) bool {
	switch k {
	case "security.protocol", "ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.password",
		"ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.password", "ssl.key.password",
		"ssl.endpoint.identification.algorithm", "sasl.mechanism", "sasl.jaas.config":
		return true
	}
	return false
}

func tlsProperties(s *securitySettings, props map[string]string) error {
	var err error
	if s.ca, err = storeProperties(props, "ssl.truststore"); err != nil {
		return err
	}
	if s.cert, err = storeProperties(props, "ssl.keystore"); err != nil {
		return err
	}
	// Kafka's DefaultSslEngineFactory: a JKS or PKCS12 key store needs its
	// password, a trust store may go without (no integrity check then).
	if s.cert.path != "" && s.cert.typ != keystore.PEM && s.cert.password == "" {
		return errors.New("ssl.keystore.location is set, but ssl.keystore.password is not")
	}
	if kp := props["ssl.key.password"]; kp != "" {
		if s.cert.path == "" {
			return errors.New("ssl.key.password is set without ssl.keystore.location")
		}
		s.cert.keyPassword = kp
	}
	if alg, ok := props["ssl.endpoint.identification.algorithm"]; ok {
		switch strings.ToLower(strings.TrimSpace(alg)) {
		case "https":
		case "":
			s.chainOnly = true
		default:
			return fmt.Errorf("ssl.endpoint.identification.algorithm %q: want https, or empty to skip the host name check", alg)
		}
	}
	return nil
}

// storeProperties reads the location, type and password of a store
// (prefix ssl.truststore or ssl.keystore). The type is JKS unless set, as
// in Kafka; a JKS or PKCS12 file is then read as whichever it really is.
func storeProperties(props map[string]string, prefix string) (storeFile, error) {
	loc, typ, password := props[prefix+".location"], props[prefix+".type"], props[prefix+".password"]
	if loc == "" {
		for _, k := range []string{prefix + ".type", prefix + ".password"} {
			if props[k] != "" {
				return storeFile{}, fmt.Errorf("%s is set without %s.location", k, prefix)
			}
		}
		return storeFile{}, nil
	}
	if typ == "" {
		typ = keystore.JKS // Kafka's default
	}
	if err := keystore.CheckType(typ); err != nil {
		return storeFile{}, fmt.Errorf("%s.type %w", prefix, err)
	}
	typ = strings.ToUpper(typ)
	if typ == keystore.PEM && password != "" {
		return storeFile{}, fmt.Errorf("%s.password: a PEM store has no password (Kafka refuses one too)", prefix)
	}
	return storeFile{pathFrom: pathFrom{loc, prefix + ".location"}, typ: typ, password: password}, nil
}

func saslProperties(s *securitySettings, props map[string]string) error {
	name := props["sasl.mechanism"]
	if strings.TrimSpace(name) == "" {
		name = "GSSAPI" // Kafka's default
	}
	m, ok := parseMechanism(name)
	if !ok {
		return fmt.Errorf("sasl.mechanism %s is not supported: want %s", name, oneOf(saslMechanisms))
	}
	s.mechanism = m
	raw, ok := props["sasl.jaas.config"]
	if !ok {
		return nil // the flags may give the credentials
	}
	j, err := jaas.Parse(raw)
	if err != nil {
		return fmt.Errorf("sasl.jaas.config: %w", err)
	}
	if err := jaasCredentials(s, j); err != nil {
		return fmt.Errorf("sasl.jaas.config: %w", err)
	}
	return nil
}

// loginModules are the login module of each mechanism.
var loginModules = map[string]string{
	mechanismPlain:       jaas.PlainLoginModule,
	mechanismScramSHA256: jaas.ScramLoginModule,
	mechanismScramSHA512: jaas.ScramLoginModule,
	mechanismOAuthBearer: jaas.OAuthBearerLoginModule,
}

// jaasCredentials reads a client's login module entry: username and
// password for PLAIN and SCRAM (and SCRAM's tokenauth), an unsecured login
// for OAUTHBEARER. An option the module does not take is refused: in a
// client entry it is most often a broker's (user_alice) copied by mistake.
func jaasCredentials(s *securitySettings, j jaas.Config) error {
	if want := loginModules[s.mechanism]; j.LoginModule != want {
		return fmt.Errorf("the login module is %s, but sasl.mechanism %s takes %s", j.LoginModule, s.mechanism, want)
	}
	if s.mechanism == mechanismOAuthBearer {
		u, err := parseUnsecuredLogin(j.Options)
		s.unsecured = u
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(j.Options)) {
		v := j.Options[k]
		switch {
		case k == "username":
			s.user = v
		case k == "password":
			s.password = v
		case k == "tokenauth" && j.LoginModule == jaas.ScramLoginModule:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("option tokenauth: want true or false")
			}
			s.scramToken = b
		default:
			return fmt.Errorf("option %s is not one a client's %s takes (username, password)", k, j.LoginModule)
		}
	}
	return nil
}

// unsecuredLogin makes the unsecured JWTs of Kafka's
// OAuthBearerUnsecuredLoginCallbackHandler: alg "none", the claims of the
// unsecuredLogin*Claim_ options, iat now and exp a lifetime later. For
// development and tests only, as in Kafka: anyone can write such a token.
type unsecuredLogin struct {
	claims     map[string]any
	lifetime   time.Duration
	extensions map[string]string
}

// The options of the unsecured login handler.
const (
	optStringClaim    = "unsecuredLoginStringClaim_"
	optNumberClaim    = "unsecuredLoginNumberClaim_"
	optListClaim      = "unsecuredLoginListClaim_"
	optExtension      = "unsecuredLoginExtension_"
	optPrincipalClaim = "unsecuredLoginPrincipalClaimName"
	optLifetime       = "unsecuredLoginLifetimeSeconds"
	optScopeClaim     = "unsecuredLoginScopeClaimName"
)

// extensionName is RFC 7628's key syntax, which Kafka checks.
var extensionName = regexp.MustCompile(`^[A-Za-z]+$`)

func parseUnsecuredLogin(opts map[string]string) (*unsecuredLogin, error) {
	u := &unsecuredLogin{claims: map[string]any{}, lifetime: time.Hour}
	principal := "sub"
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		v := opts[k]
		var claim string
		switch {
		case strings.HasPrefix(k, optStringClaim):
			claim = strings.TrimPrefix(k, optStringClaim)
			u.claims[claim] = v
		case strings.HasPrefix(k, optNumberClaim):
			claim = strings.TrimPrefix(k, optNumberClaim)
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return nil, fmt.Errorf("option %s: want a number", k)
			}
			u.claims[claim] = n
		case strings.HasPrefix(k, optListClaim):
			claim = strings.TrimPrefix(k, optListClaim)
			u.claims[claim] = listClaim(v)
		case strings.HasPrefix(k, optExtension):
			name := strings.TrimPrefix(k, optExtension)
			if !extensionName.MatchString(name) || name == "auth" {
				return nil, fmt.Errorf("option %s: an extension name is letters only, and not auth", k)
			}
			if u.extensions == nil {
				u.extensions = map[string]string{}
			}
			u.extensions[name] = v
			continue
		case k == optPrincipalClaim:
			principal = strings.TrimSpace(v)
			continue
		case k == optLifetime:
			secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || secs <= 0 {
				return nil, fmt.Errorf("option %s: want a positive number of seconds", k)
			}
			u.lifetime = time.Duration(secs) * time.Second
			continue
		case k == optScopeClaim:
			continue // names the scope claim for the token's reader; the token is the same
		default:
			return nil, fmt.Errorf("option %s is not one the unsecured login takes (%s<name>, %s<name>, %s<name>, %s<name>, %s, %s, %s): "+
				"samsa does not fetch tokens, give one with --sasl-token or --sasl-token-file",
				k, optStringClaim, optNumberClaim, optListClaim, optExtension, optPrincipalClaim, optLifetime, optScopeClaim)
		}
		if claim == "" || claim == "iat" || claim == "exp" {
			return nil, fmt.Errorf("option %s: the claim name must be given, and iat and exp are set at each login", k)
		}
	}
	if _, ok := u.claims[principal].(string); !ok || principal == "" {
		return nil, fmt.Errorf("the unsecured login needs the principal as a string claim: %s%s", optStringClaim, principal)
	}
	return u, nil
}

// listClaim reads Kafka's list syntax: the first character is the
// separator of the rest (",a,b"); trailing empty items are dropped, as
// Java's split drops them.
func listClaim(v string) []string {
	if v == "" {
		return []string{}
	}
	items := strings.Split(v[1:], v[:1])
	for len(items) > 0 && items[len(items)-1] == "" {
		items = items[:len(items)-1]
	}
	return items
}

// token is an unsecured JWT issued at now.
func (u *unsecuredLogin) token(now time.Time) string {
	claims := maps.Clone(u.claims)
	iat := float64(now.UnixMilli()) / 1000
	claims["iat"] = iat
	claims["exp"] = iat + u.lifetime.Seconds()
	body, _ := json.Marshal(claims) // strings, floats and string lists always marshal
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString(body) + "."
}
