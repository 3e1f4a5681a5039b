package cli

import (
	"crypto"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/internal/keystore/keystoretest"
)

// A Kafka user's client.properties names JKS or PKCS12 stores, with their
// passwords, or a PEM key encrypted with ssl.key.password. These tests give
// such files to the commands and reach a broker that requires client
// certificates, so each store is read and used: without the client's
// certificate the broker refuses the handshake, and without the CA the
// client refuses the broker.

// clientStores are a client identity and the test CA written in each
// format, with the passwords they were written with.
type clientStores struct {
	dir                   string
	p12, jks, encPEM, pem string // key stores
	trustP12, trustJKS    string
	otherCAJKS            string // a trust store of a CA that signed nothing here
	storePass, keyPass    string
	trustPass, pemKeyPass string
}

func writeClientStores(t *testing.T, ca *testCA) clientStores {
	t.Helper()
	certPEM, keyPEM := ca.issue(t, pkix.Name{CommonName: "client"}, 4, false)
	cert, key := parseIssued(t, certPEM, keyPEM)
	s := clientStores{dir: t.TempDir(), storePass: "store-Secret1", keyPass: "key-Secret2", trustPass: "trust-Secret3", pemKeyPass: "pem-Secret4"}
	write := func(name string, data []byte) string {
		path := filepath.Join(s.dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	s.p12 = write("client.p12", keystoretest.PKCS12KeyStore(t, s.storePass, key, cert, ca.cert))
	s.jks = write("client.jks", keystoretest.JKSKeyStore(t, "client", s.storePass, s.keyPass, key, cert))
	s.encPEM = write("client-encrypted.pem", append(keystoretest.EncryptedKeyPEM(t, key, s.pemKeyPass), certPEM...))
	s.pem = write("client.pem", append(keyPEM, certPEM...))
	s.trustP12 = write("trust.p12", keystoretest.PKCS12TrustStore(t, s.trustPass, ca.cert))
	s.trustJKS = write("trust.jks", keystoretest.JKSTrustStore(t, s.trustPass, ca.cert))
	s.otherCAJKS = write("other-trust.jks", keystoretest.JKSTrustStore(t, s.trustPass, newTestCA(t).cert))
	return s
}

// parseIssued turns what testCA.issue returns back into Go values.
func parseIssued(t *testing.T, certPEM, keyPEM []byte) (*x509.Certificate, crypto.PrivateKey) {
	t.Helper()
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// properties writes a client.properties for SSL with the given lines.
func (s clientStores) properties(t *testing.T, lines ...string) string {
	t.Helper()
	return writeFile(t, "client.properties", "security.protocol=SSL\n"+strings.Join(lines, "\n")+"\n")
}

func TestTLSCommandConfigStores(t *testing.T) {
	ca := newTestCA(t)
	b, _ := mtlsBroker(t, ca)
	b.ok("", "topic", "create", "from-stores", "--partitions", "1")
	tlsc := b.on("SSL").withTimeout(shortTimeout)
	s := writeClientStores(t, ca)

	for _, tc := range []struct {
		name  string
		lines []string
	}{
		{"PKCS12", []string{
			"ssl.keystore.type=PKCS12", "ssl.keystore.location=" + s.p12, "ssl.keystore.password=" + s.storePass,
			"ssl.truststore.type=PKCS12", "ssl.truststore.location=" + s.trustP12, "ssl.truststore.password=" + s.trustPass}},
		{"JKS with a key password", []string{
			"ssl.keystore.type=JKS", "ssl.keystore.location=" + s.jks, "ssl.keystore.password=" + s.storePass, "ssl.key.password=" + s.keyPass,
			"ssl.truststore.type=JKS", "ssl.truststore.location=" + s.trustJKS, "ssl.truststore.password=" + s.trustPass}},
		// Kafka's default type JKS over PKCS12 files, as keytool has
		// written them since Java 9.
		{"PKCS12 files with the default type", []string{
			"ssl.keystore.location=" + s.p12, "ssl.keystore.password=" + s.storePass,
			"ssl.truststore.location=" + s.trustP12, "ssl.truststore.password=" + s.trustPass}},
		// A JKS trust store without its password is read without the
		// integrity check, as in Java.
		{"PEM with an encrypted key, a JKS trust store without its password", []string{
			"ssl.keystore.type=PEM", "ssl.keystore.location=" + s.encPEM, "ssl.key.password=" + s.pemKeyPass,
			"ssl.truststore.location=" + s.trustJKS}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if out := tlsc.in(t).ok("", "topic", "list", "--command-config", s.properties(t, tc.lines...)); !strings.Contains(out, "from-stores") {
				t.Fatalf("topic list:\n%s", out)
			}
		})
	}

	// The stores are used, not skipped: a trust store of another CA fails
	// the broker's certificate; a client without its key store is refused
	// by the broker.
	tlsc.fails("certificate signed by unknown authority", "topic", "list", "--command-config", s.properties(t,
		"ssl.keystore.location="+s.jks, "ssl.keystore.password="+s.storePass, "ssl.key.password="+s.keyPass,
		"ssl.truststore.location="+s.otherCAJKS, "ssl.truststore.password="+s.trustPass))
	if r := tlsc.run("", "topic", "list", "--command-config", s.properties(t,
		"ssl.truststore.location="+s.trustJKS, "ssl.truststore.password="+s.trustPass)); r.err == nil {
		t.Fatal("served without a client certificate")
	}
}

// A wrong password, or one the store has no use for, is refused before any
// dial, naming the property to fix and the store, never the password.
func TestTLSCommandConfigStorePasswords(t *testing.T) {
	ca := newTestCA(t)
	c := newTestCluster(t)
	s := writeClientStores(t, ca)
	const wrong = "wrong-Secret9"
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"PKCS12 key store", []string{"ssl.keystore.type=PKCS12", "ssl.keystore.location=" + s.p12, "ssl.keystore.password=" + wrong},
			"ssl.keystore.location " + s.p12 + ": wrong ssl.keystore.password (the PKCS12 integrity check failed)"},
		{"JKS key store", []string{"ssl.keystore.location=" + s.jks, "ssl.keystore.password=" + wrong, "ssl.key.password=" + s.keyPass},
			"ssl.keystore.location " + s.jks + ": wrong ssl.keystore.password (the JKS integrity check failed)"},
		{"JKS key", []string{"ssl.keystore.location=" + s.jks, "ssl.keystore.password=" + s.storePass, "ssl.key.password=" + wrong},
			"ssl.keystore.location " + s.jks + `: entry "client": wrong ssl.key.password`},
		{"JKS key without its password", []string{"ssl.keystore.location=" + s.jks, "ssl.keystore.password=" + s.storePass},
			"wrong ssl.key.password, or ssl.keystore.password when no key password is set"},
		{"PKCS12 trust store", []string{"ssl.truststore.type=PKCS12", "ssl.truststore.location=" + s.trustP12, "ssl.truststore.password=" + wrong},
			"ssl.truststore.location " + s.trustP12 + ": wrong ssl.truststore.password (the PKCS12 integrity check failed)"},
		{"PKCS12 trust store without its password", []string{"ssl.truststore.location=" + s.trustP12},
			"ssl.truststore.location " + s.trustP12 + ": ssl.truststore.password is not set, and this PKCS12 trust store cannot be read without it"},
		{"JKS trust store", []string{"ssl.truststore.location=" + s.trustJKS, "ssl.truststore.password=" + wrong},
			"ssl.truststore.location " + s.trustJKS + ": wrong ssl.truststore.password (the JKS integrity check failed)"},
		{"encrypted PEM key", []string{"ssl.keystore.type=PEM", "ssl.keystore.location=" + s.encPEM, "ssl.key.password=" + wrong},
			"ssl.keystore.location " + s.encPEM + ": wrong ssl.key.password"},
		{"encrypted PEM key without its password", []string{"ssl.keystore.type=PEM", "ssl.keystore.location=" + s.encPEM},
			"the private key is encrypted, and ssl.key.password is not set"},
		{"key store without its password", []string{"ssl.keystore.location=" + s.p12},
			"ssl.keystore.location is set, but ssl.keystore.password is not"},
		// A password the store has no use for is refused, not ignored.
		{"key password for a PKCS12 key store", []string{"ssl.keystore.location=" + s.p12, "ssl.keystore.password=" + s.storePass, "ssl.key.password=" + s.keyPass},
			"ssl.keystore.location " + s.p12 + ": ssl.key.password differs from ssl.keystore.password, and a PKCS12 key store has only the one"},
		{"key password for an unencrypted PEM key", []string{"ssl.keystore.type=PEM", "ssl.keystore.location=" + s.pem, "ssl.key.password=" + s.keyPass},
			"ssl.keystore.location " + s.pem + ": ssl.key.password is set, but the private key is not encrypted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"topic", "list", "--command-config", s.properties(t, tc.lines...)}
			c.in(t).fails(tc.want, args...)
			r := c.in(t).run("", args...)
			for _, secret := range []string{wrong, s.storePass, s.keyPass, s.trustPass, s.pemKeyPass} {
				if strings.Contains(r.err.Error(), secret) || strings.Contains(r.stderr, secret) {
					t.Fatalf("the error shows a password: %v\n%s", r.err, r.stderr)
				}
			}
		})
	}
}

// in is the same cluster reporting to t, a subtest's.
func (c *testCluster) in(t *testing.T) *testCluster {
	cp := *c
	cp.t = t
	return &cp
}
