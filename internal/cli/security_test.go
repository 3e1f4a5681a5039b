package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The brokers of these tests are Samsa processes with secured listeners
// (the PLAINTEXT one first, for arranging); the commands reach the secured
// one with the flags or a --command-config file, as a user would.

// brokerPlainJAAS declares the PLAIN users of a SASL listener.
const brokerPlainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";`

// saslBroker runs a broker with a SASL_PLAINTEXT listener offering PLAIN
// (user admin) and SCRAM-SHA-256 (the users samsa user create makes).
func saslBroker(t *testing.T, extra ...string) *samsaBroker {
	t.Helper()
	return startSamsa(t, append([]string{
		"--listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"--log.dirs", filepath.Join(t.TempDir(), "data"),
		"--override", "listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256",
		"--override", "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + brokerPlainJAAS,
	}, extra...)...)
}

// writeFile writes a file of the test and returns its path.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var plainAdmin = []string{"--sasl-mechanism", "PLAIN", "--sasl-user", "admin", "--sasl-password", "admin-secret"}

func TestSASLPlainWithFlags(t *testing.T) {
	t.Setenv(saslPasswordEnv, "")
	b := saslBroker(t)
	sasl := b.on("SASL_PLAINTEXT")
	sasl.ok("", append([]string{"topic", "create", "secured", "--partitions", "1"}, plainAdmin...)...)
	// produce dials through its own dialer (it reads the brokers' answers).
	sasl.ok("a\nb\n", append([]string{"produce", "secured"}, plainAdmin...)...)
	got := sasl.ok("", append([]string{"consume", "secured", "--from", "beginning"}, plainAdmin...)...)
	if got != "a\nb\n" {
		t.Fatalf("consumed %q", got)
	}
	if out := sasl.ok("", append([]string{"topic", "list"}, plainAdmin...)...); !strings.Contains(out, "secured") {
		t.Fatalf("topic list:\n%s", out)
	}
	for _, args := range [][]string{
		{"group", "list"},
		{"cluster", "info"},
		{"bench", "produce", "--topic", "secured", "--records", "10", "--record-size", "16"},
		{"user", "list"},
	} {
		sasl.ok("", append(args, plainAdmin...)...)
	}

	t.Setenv(saslPasswordEnv, "admin-secret")
	sasl.ok("", "topic", "list", "--sasl-mechanism", "PLAIN", "--sasl-user", "admin")
	// The flag wins over the environment.
	short := sasl.withTimeout(shortTimeout)
	short.fails("SASL authentication failed at "+sasl.addr+": Authentication failed: Invalid username or password",
		"topic", "list", "--sasl-mechanism", "PLAIN", "--sasl-user", "admin", "--sasl-password", "wrong")
}

func TestSASLWithCommandConfig(t *testing.T) {
	t.Setenv(saslPasswordEnv, "")
	b := saslBroker(t)
	b.ok("", "topic", "create", "from-file", "--partitions", "1")
	sasl := b.on("SASL_PLAINTEXT").withTimeout(shortTimeout)
	config := func(password string) string {
		return writeFile(t, "client.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"+
			`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="`+password+"\";\n")
	}
	good, bad := config("admin-secret"), config("wrong")
	if out := sasl.ok("", "topic", "list", "--command-config", good); !strings.Contains(out, "from-file") {
		t.Fatalf("topic list:\n%s", out)
	}
	sasl.fails("Invalid username or password", "topic", "list", "--command-config", bad)
	// Flags win over the file, both ways.
	sasl.ok("", "topic", "list", "--command-config", bad, "--sasl-password", "admin-secret")
	sasl.fails("Invalid username or password", "topic", "list", "--command-config", good, "--sasl-password", "wrong")
	// A file that needs SASL and credentials from the flags alone.
	bare := writeFile(t, "bare.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n")
	sasl.ok("", "topic", "list", "--command-config", bare, "--sasl-user", "admin", "--sasl-password", "admin-secret")
	sasl.fails("SASL PLAIN needs a user and a password", "topic", "list", "--command-config", bare)
}

// An unauthenticated client on a SASL listener fails with the reason, not
// after --timeout.
func TestSASLListenerWithoutCredentials(t *testing.T) {
	b := saslBroker(t)
	b.on("SASL_PLAINTEXT").withTimeout(shortTimeout).fails("is SASL missing? (see --tls, --sasl-mechanism and --command-config)", "topic", "list")
}

// OAUTHBEARER with Kafka's unsecured tokens: made from the JAAS login of a
// --command-config file, or given with --sasl-token or --sasl-token-file.
func TestSASLOAuthBearer(t *testing.T) {
	b := startSamsa(t, "--listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"--log.dirs", filepath.Join(t.TempDir(), "data"),
		"--override", "listener.name.sasl_plaintext.sasl.enabled.mechanisms=OAUTHBEARER",
		"--override", "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;")
	b.ok("", "topic", "create", "oauth", "--partitions", "1")
	sasl := b.on("SASL_PLAINTEXT").withTimeout(shortTimeout)
	file := writeFile(t, "oauth.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"+
		`sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="alice";`+"\n")
	if out := sasl.ok("", "topic", "list", "--command-config", file); !strings.Contains(out, "oauth") {
		t.Fatalf("topic list:\n%s", out)
	}
	token := unsecuredToken(`{"sub":"alice","iat":` + unix(time.Now()) + `,"exp":` + unix(time.Now().Add(time.Hour)) + `}`)
	sasl.ok("", "topic", "list", "--sasl-mechanism", "OAUTHBEARER", "--sasl-token", token)
	sasl.ok("", "topic", "list", "--sasl-mechanism", "OAUTHBEARER", "--sasl-token-file", writeFile(t, "token", token+"\n"))
	expired := unsecuredToken(`{"sub":"alice","iat":` + unix(time.Now().Add(-2*time.Hour)) + `,"exp":` + unix(time.Now().Add(-time.Hour)) + `}`)
	sasl.fails("SASL authentication failed", "topic", "list", "--sasl-mechanism", "OAUTHBEARER", "--sasl-token", expired)
	// The flag's token wins over the file's login.
	sasl.fails("SASL authentication failed", "topic", "list", "--command-config", file, "--sasl-token", expired)
}

// Every client command takes the security flags (samsa schema talks HTTP
// to a registry, not Kafka to a cluster).
func TestSecurityFlagsOnEveryCommand(t *testing.T) {
	for _, cmd := range Commands() {
		if cmd.PersistentFlags().Lookup("bootstrap-server") == nil {
			continue
		}
		for _, name := range []string{"command-config", "tls", "tls-ca", "tls-cert", "tls-key", "tls-insecure-skip-verify",
			"tls-server-name", "sasl-mechanism", "sasl-user", "sasl-password", "sasl-token", "sasl-token-file"} {
			if cmd.PersistentFlags().Lookup(name) == nil {
				t.Errorf("samsa %s has no --%s", cmd.Name(), name)
			}
		}
	}
}

func unsecuredToken(claims string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString([]byte(claims)) + "."
}

func unix(t time.Time) string { return big.NewInt(t.Unix()).String() }

// Flags that cannot make a connection are refused before any dial, with
// the flag in the message.
func TestSecurityFlagErrors(t *testing.T) {
	t.Setenv(saslPasswordEnv, "")
	c := newTestCluster(t)
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	os.WriteFile(notPEM, []byte("hello"), 0o600)
	ca := newTestCA(t)
	certPEM, keyPEM := ca.issue(t, pkix.Name{CommonName: "me"}, 10, false)
	encrypted := filepath.Join(dir, "encrypted.pem")
	os.WriteFile(encrypted, append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1}})...), 0o600)
	certOnly := filepath.Join(dir, "cert.pem")
	os.WriteFile(certOnly, certPEM, 0o600)
	keyOnly := filepath.Join(dir, "key.pem")
	os.WriteFile(keyOnly, keyPEM, 0o600)
	missingJKS := filepath.Join(dir, "missing.jks")
	jks := writeFile(t, "jks.properties", "security.protocol=SSL\nssl.truststore.location="+missingJKS+"\nssl.truststore.password=changeit\n")
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"--sasl-user needs --sasl-mechanism", []string{"--sasl-user", "alice"}},
		{"--sasl-token needs --sasl-mechanism", []string{"--sasl-token", "t"}},
		{`invalid --sasl-mechanism "GSSAPI": want PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER`, []string{"--sasl-mechanism", "GSSAPI"}},
		{"SASL SCRAM-SHA-256 needs a user and a password: --sasl-user and --sasl-password (or SAMSA_SASL_PASSWORD)",
			[]string{"--sasl-mechanism", "scram-sha-256", "--sasl-user", "alice"}},
		{"a token is for OAUTHBEARER", []string{"--sasl-mechanism", "PLAIN", "--sasl-token", "t"}},
		{"OAUTHBEARER needs a token", []string{"--sasl-mechanism", "OAUTHBEARER"}},
		{"OAUTHBEARER logs in with a token", []string{"--sasl-mechanism", "OAUTHBEARER", "--sasl-token", "t", "--sasl-user", "a"}},
		{"give --sasl-token or --sasl-token-file, not both", []string{"--sasl-mechanism", "OAUTHBEARER", "--sasl-token", "t", "--sasl-token-file", notPEM}},
		{"--sasl-token-file: open " + filepath.Join(dir, "missing"), []string{"--sasl-mechanism", "OAUTHBEARER", "--sasl-token-file", filepath.Join(dir, "missing")}},
		{"--tls-key needs --tls-cert", []string{"--tls-key", keyOnly}},
		{"--tls-insecure-skip-verify turns off the verification --tls-ca is for", []string{"--tls-ca", notPEM, "--tls-insecure-skip-verify"}},
		{"--tls-ca needs TLS, which --tls=false turns off", []string{"--tls=false", "--tls-ca", notPEM}},
		{"--tls-ca: open " + filepath.Join(dir, "missing"), []string{"--tls-ca", filepath.Join(dir, "missing")}},
		{"--tls-ca " + notPEM + ": no PEM block found", []string{"--tls-ca", notPEM}},
		{"--tls-cert " + certOnly + ": no PEM private key in it: give the key's file with --tls-key", []string{"--tls-cert", certOnly}},
		{"--tls-cert " + encrypted + ": the private key is encrypted", []string{"--tls-cert", encrypted}},
		{"ssl.truststore.location: open " + missingJKS + ": no such file or directory", []string{"--command-config", jks}},
	} {
		c.fails(tc.want, append([]string{"topic", "list"}, tc.args...)...)
	}
}

// testCA issues a test's certificates: a broker's for 127.0.0.1 and
// clients' by common name.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "samsa cli test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a certificate and its key in PEM; a server's is for
// 127.0.0.1.
func (ca *testCA) issue(t *testing.T, subject pkix.Name, serial int64, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.DNSNames = []string{"broker.test"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}

// mtlsBroker runs a broker whose SSL listener requires client certificates
// that ca signed, and returns it with the file of ca's certificate. Its
// own certificate is for 127.0.0.1 and broker.test.
func mtlsBroker(t *testing.T, ca *testCA) (*samsaBroker, string) {
	t.Helper()
	dir := t.TempDir()
	serverCert, serverKey := ca.issue(t, pkix.Name{CommonName: "broker"}, 2, true)
	keystore := writeFile(t, "broker.pem", string(serverKey)+string(serverCert))
	caFile := writeFile(t, "ca.pem", string(ca.pem))
	b := startSamsa(t, "--listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
		"--log.dirs", filepath.Join(dir, "data"),
		"--override", "ssl.keystore.type=PEM", "--override", "ssl.keystore.location="+keystore,
		"--override", "ssl.truststore.type=PEM", "--override", "ssl.truststore.location="+caFile,
		"--override", "listener.name.ssl.ssl.client.auth=required")
	return b, caFile
}

// TLS on an SSL listener that asks for client certificates (mutual TLS):
// the CA and the certificate from the flags or a --command-config file,
// the host name checked unless told otherwise.
func TestTLSClientCommands(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	b, caFile := mtlsBroker(t, ca)
	clientCert, clientKey := ca.issue(t, pkix.Name{CommonName: "client"}, 3, false)
	clientPEM := filepath.Join(dir, "client.pem")
	os.WriteFile(clientPEM, append(clientKey, clientCert...), 0o600)
	clientCertOnly, clientKeyOnly := filepath.Join(dir, "client-cert.pem"), filepath.Join(dir, "client-key.pem")
	os.WriteFile(clientCertOnly, clientCert, 0o600)
	os.WriteFile(clientKeyOnly, clientKey, 0o600)
	other := newTestCA(t)
	otherCA := filepath.Join(dir, "other-ca.pem")
	os.WriteFile(otherCA, other.pem, 0o600)

	b.ok("", "topic", "create", "over-tls", "--partitions", "1")
	tlsc := b.on("SSL").withTimeout(shortTimeout)
	mtls := []string{"--tls-ca", caFile, "--tls-cert", clientPEM}

	tlsc.ok("x\ny\n", append([]string{"produce", "over-tls"}, mtls...)...)
	if got := tlsc.ok("", "consume", "over-tls", "--from", "beginning", "--tls-ca", caFile,
		"--tls-cert", clientCertOnly, "--tls-key", clientKeyOnly); got != "x\ny\n" {
		t.Fatalf("consumed %q", got)
	}
	tlsc.fails("certificate signed by unknown authority", "topic", "list", "--tls", "--tls-cert", clientPEM)
	tlsc.fails("certificate signed by unknown authority", "topic", "list", "--tls-ca", otherCA, "--tls-cert", clientPEM)
	tlsc.fails("over TLS: tls: failed to verify certificate: x509: certificate is valid for broker.test, not elsewhere.test",
		"topic", "list", "--tls-ca", caFile, "--tls-cert", clientPEM, "--tls-server-name", "elsewhere.test")
	tlsc.ok("", "topic", "list", "--tls-ca", caFile, "--tls-cert", clientPEM, "--tls-server-name", "broker.test")
	// For testing only: nothing is verified.
	tlsc.ok("", "topic", "list", "--tls-insecure-skip-verify", "--tls-cert", clientPEM)
	// Without a client certificate the broker refuses the handshake.
	if r := tlsc.run("", "topic", "list", "--tls-ca", caFile); r.err == nil {
		t.Fatal("served without a client certificate")
	}

	props := func(text string) string {
		return writeFile(t, "tls.properties", "security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location="+caFile+
			"\nssl.keystore.type=PEM\nssl.keystore.location="+clientPEM+"\n"+text)
	}
	if out := tlsc.ok("", "topic", "list", "--command-config", props("")); !strings.Contains(out, "over-tls") {
		t.Fatalf("topic list:\n%s", out)
	}
	tlsc.fails("not elsewhere.test", "topic", "list", "--command-config", props(""), "--tls-server-name", "elsewhere.test")
	// ssl.endpoint.identification.algorithm empty checks the chain only.
	tlsc.ok("", "topic", "list", "--command-config", props("ssl.endpoint.identification.algorithm=\n"), "--tls-server-name", "elsewhere.test")
	tlsc.fails("certificate signed by unknown authority", "topic", "list", "--command-config", props("ssl.endpoint.identification.algorithm=\n"),
		"--tls-ca", otherCA)
}
