package cli

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const plainClientJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret";`

func TestCommandConfigSettings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  securitySettings
	}{{
		name:  "empty is plaintext",
		props: map[string]string{},
	}, {
		name:  "PLAINTEXT in lower case",
		props: map[string]string{"security.protocol": "plaintext"},
	}, {
		name: "SASL_PLAINTEXT with PLAIN",
		props: map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": plainClientJAAS},
		want: securitySettings{mechanism: "PLAIN", user: "admin", password: "admin-secret"},
	}, {
		name: "SASL_SSL with SCRAM, a delegation token, PEM stores, no host name check",
		props: map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
			"sasl.jaas.config":        `org.apache.kafka.common.security.scram.ScramLoginModule required username="tok" password='hmac' tokenauth=true;`,
			"ssl.truststore.location": "/ca.pem", "ssl.truststore.type": "pem",
			"ssl.keystore.location": "/me.pem", "ssl.keystore.type": "PEM",
			"ssl.endpoint.identification.algorithm": ""},
		want: securitySettings{tls: true, chainOnly: true,
			ca:        storeFile{pathFrom: pathFrom{"/ca.pem", "ssl.truststore.location"}, typ: "PEM"},
			cert:      storeFile{pathFrom: pathFrom{"/me.pem", "ssl.keystore.location"}, typ: "PEM"},
			mechanism: "SCRAM-SHA-512", user: "tok", password: "hmac", scramToken: true},
	}, {
		name: "JKS by default, with the passwords",
		props: map[string]string{"security.protocol": "SSL",
			"ssl.truststore.location": "/ts.jks", "ssl.truststore.password": "trust-pw",
			"ssl.keystore.location": "/ks.jks", "ssl.keystore.password": "store-pw", "ssl.key.password": "key-pw"},
		want: securitySettings{tls: true,
			ca:   storeFile{pathFrom: pathFrom{"/ts.jks", "ssl.truststore.location"}, typ: "JKS", password: "trust-pw"},
			cert: storeFile{pathFrom: pathFrom{"/ks.jks", "ssl.keystore.location"}, typ: "JKS", password: "store-pw", keyPassword: "key-pw"}},
	}, {
		name: "PKCS12 in lower case, a trust store without a password",
		props: map[string]string{"security.protocol": "SSL",
			"ssl.truststore.location": "/ts.p12", "ssl.truststore.type": "pkcs12",
			"ssl.keystore.location": "/ks.p12", "ssl.keystore.type": "pkcs12", "ssl.keystore.password": "store-pw"},
		want: securitySettings{tls: true,
			ca:   storeFile{pathFrom: pathFrom{"/ts.p12", "ssl.truststore.location"}, typ: "PKCS12"},
			cert: storeFile{pathFrom: pathFrom{"/ks.p12", "ssl.keystore.location"}, typ: "PKCS12", password: "store-pw"}},
	}, {
		name: "PEM with an encrypted key",
		props: map[string]string{"security.protocol": "SSL",
			"ssl.keystore.location": "/me.pem", "ssl.keystore.type": "PEM", "ssl.key.password": "key-pw"},
		want: securitySettings{tls: true,
			cert: storeFile{pathFrom: pathFrom{"/me.pem", "ssl.keystore.location"}, typ: "PEM", keyPassword: "key-pw"}},
	}, {
		name:  "SSL alone, host name checked",
		props: map[string]string{"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "HTTPS"},
		want:  securitySettings{tls: true},
	}, {
		name:  "SASL without a JAAS config: the flags give the credentials",
		props: map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256"},
		want:  securitySettings{mechanism: "SCRAM-SHA-256"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := commandConfigSettings(tc.props)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(securitySettings{}, storeFile{}, pathFrom{}, unsecuredLogin{})); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCommandConfigRefusals(t *testing.T) {
	const secret = "s3cr3t-Value"
	sasl := func(kv ...string) map[string]string {
		m := map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	ssl := func(kv ...string) map[string]string {
		m := map[string]string{"security.protocol": "SSL"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  string
	}{
		{"unknown property", map[string]string{"acks": "all"}, "unknown or unsupported property acks: the commands read security.protocol"},
		{"typo", map[string]string{"security.protocl": "SSL"}, "unknown or unsupported property security.protocl"},
		{"client.id", map[string]string{"client.id": "x"}, "client.id: give it with --client-id"},
		{"token endpoint", sasl("sasl.oauthbearer.token.endpoint.url", "https://idp"), "fetching OAUTHBEARER tokens is not supported"},
		{"inline PEM", ssl("ssl.truststore.certificates", "-----BEGIN"), "inline PEM is not read"},
		{"TLS versions", ssl("ssl.enabled.protocols", "TLSv1.2"), "ssl.enabled.protocols: the TLS versions are Go's"},
		{"bad protocol", map[string]string{"security.protocol": "TLS"}, `security.protocol "TLS": want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL`},
		{"ssl setting on plaintext", map[string]string{"ssl.truststore.location": "/ca.pem"}, "ssl.truststore.location is set, but security.protocol PLAINTEXT does not use it"},
		{"sasl setting without SASL", ssl("sasl.mechanism", "PLAIN"), "sasl.mechanism is set, but security.protocol SSL does not use it"},
		{"unknown store type", ssl("ssl.truststore.location", "/ts.jceks", "ssl.truststore.type", "JCEKS"),
			`ssl.truststore.type "JCEKS" is not a store type Samsa reads: want JKS, PKCS12 or PEM`},
		{"JKS key store without its password", ssl("ssl.keystore.location", "/ks.jks"), "ssl.keystore.location is set, but ssl.keystore.password is not"},
		{"PKCS12 key store without its password", ssl("ssl.keystore.location", "/ks.p12", "ssl.keystore.type", "PKCS12", "ssl.key.password", secret),
			"ssl.keystore.location is set, but ssl.keystore.password is not"},
		{"type without location", ssl("ssl.truststore.type", "PEM"), "ssl.truststore.type is set without ssl.truststore.location"},
		{"password without location", ssl("ssl.keystore.password", secret), "ssl.keystore.password is set without ssl.keystore.location"},
		{"key password without key store", ssl("ssl.key.password", secret), "ssl.key.password is set without ssl.keystore.location"},
		{"PEM trust store password", ssl("ssl.truststore.location", "/ca.pem", "ssl.truststore.type", "PEM", "ssl.truststore.password", secret),
			"ssl.truststore.password: a PEM store has no password"},
		{"PEM key store password", ssl("ssl.keystore.location", "/me.pem", "ssl.keystore.type", "pem", "ssl.keystore.password", secret),
			"ssl.keystore.password: a PEM store has no password"},
		{"endpoint algorithm", ssl("ssl.endpoint.identification.algorithm", "dns"), `ssl.endpoint.identification.algorithm "dns": want https, or empty`},
		{"GSSAPI by default", map[string]string{"security.protocol": "SASL_SSL"}, "sasl.mechanism GSSAPI is not supported: want PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER"},
		{"bad JAAS", sasl("sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required password="`+secret+`"`),
			"sasl.jaas.config: jaas: entry for org.apache.kafka.common.security.plain.PlainLoginModule not terminated by a semicolon"},
		{"wrong module", sasl("sasl.jaas.config", `org.apache.kafka.common.security.scram.ScramLoginModule required username="a" password="`+secret+`";`),
			"the login module is org.apache.kafka.common.security.scram.ScramLoginModule, but sasl.mechanism PLAIN takes org.apache.kafka.common.security.plain.PlainLoginModule"},
		{"broker's users in a client", sasl("sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b" user_a="`+secret+`";`),
			"option user_a is not one a client's org.apache.kafka.common.security.plain.PlainLoginModule takes"},
		{"tokenauth on PLAIN", sasl("sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b" tokenauth=true;`),
			"option tokenauth is not one"},
		{"OAuth client credentials", map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
			"sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="c" clientSecret="` + secret + `";`},
			"option clientId is not one the unsecured login takes"},
		{"unsecured login without a subject", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
			"sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_name="x";`},
			"the unsecured login needs the principal as a string claim: unsecuredLoginStringClaim_sub"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := commandConfigSettings(tc.props)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error shows a secret: %v", err)
			}
		})
	}
}

// The file is read with Kafka's properties syntax: continued lines, ':' as
// the separator, comments, and no ${} expansion.
func TestReadCommandConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "client.properties")
	text := "# a Kafka client's file\n" +
		"security.protocol : SASL_PLAINTEXT\n" +
		"sasl.mechanism=PLAIN\n" +
		"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n" +
		"    username=\"admin\" \\\n    password=\"${not-expanded}\";\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := readCommandConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.mechanism != "PLAIN" || s.user != "admin" || s.password != "${not-expanded}" {
		t.Fatalf("read %+v", s)
	}
	if _, err := readCommandConfig(filepath.Join(t.TempDir(), "missing.properties")); err == nil ||
		!strings.HasPrefix(err.Error(), "--command-config: open ") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestUnsecuredLoginToken(t *testing.T) {
	u, err := parseUnsecuredLogin(map[string]string{
		"unsecuredLoginStringClaim_sub":    "alice",
		"unsecuredLoginNumberClaim_n":      "1.5",
		"unsecuredLoginListClaim_scope":    ",read,write,",
		"unsecuredLoginExtension_traceId":  "abc",
		"unsecuredLoginLifetimeSeconds":    "60",
		"unsecuredLoginScopeClaimName":     "scope",
		"unsecuredLoginPrincipalClaimName": "sub",
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(1_700_000_000_250)
	parts := strings.Split(u.token(now), ".")
	if len(parts) != 3 || parts[2] != "" {
		t.Fatalf("token %q is not header.claims.", u.token(now))
	}
	var header, claims map[string]any
	for i, dst := range []*map[string]any{&header, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(map[string]any{"alg": "none"}, header); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	want := map[string]any{"sub": "alice", "n": 1.5, "scope": []any{"read", "write"}, "iat": 1700000000.25, "exp": 1700000060.25}
	if diff := cmp.Diff(want, claims); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"traceId": "abc"}, u.extensions); diff != "" {
		t.Errorf("extensions (-want +got):\n%s", diff)
	}
	for opts, want := range map[string]string{
		"unsecuredLoginStringClaim_exp":       "iat and exp are set at each login",
		"unsecuredLoginNumberClaim_n":         "want a number",
		"unsecuredLoginExtension_auth":        "letters only, and not auth",
		"unsecuredLoginLifetimeSeconds":       "want a positive number of seconds",
		"unsecuredLoginPrincipalClaimName=id": "needs the principal as a string claim: unsecuredLoginStringClaim_id",
	} {
		k, v, _ := strings.Cut(opts, "=")
		_, err := parseUnsecuredLogin(map[string]string{"unsecuredLoginStringClaim_sub": "alice", k: v})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=%q: %v, want %q", k, v, err, want)
		}
	}
}
