package auth

import (
	"crypto/x509"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/keystore/keystoretest"
)

// The formats themselves are internal/keystore's tests. These check that a
// listener's ssl.* settings reach the readers: which settings go together,
// inline PEM, Kafka's defaults, and errors that name the config and the
// listener.

func writeJKSKeyStore(t *testing.T, path, storePassword, keyPassword string, id testIdentity) string {
	t.Helper()
	return writeTestFile(t, filepath.Dir(path), filepath.Base(path), keystoretest.JKSKeyStore(t, "broker", storePassword, keyPassword, id.Key, id.Chain...))
}

func writeJKSTrustStore(t *testing.T, path, password string, certs ...*x509.Certificate) string {
	t.Helper()
	return writeTestFile(t, filepath.Dir(path), filepath.Base(path), keystoretest.JKSTrustStore(t, password, certs...))
}

func writePKCS12KeyStore(t *testing.T, path, password string, id testIdentity, cas ...*x509.Certificate) string {
	t.Helper()
	return writeTestFile(t, filepath.Dir(path), filepath.Base(path), keystoretest.PKCS12KeyStore(t, password, id.Key, id.Cert, cas...))
}

func writePKCS12TrustStore(t *testing.T, path, password string, certs ...*x509.Certificate) string {
	t.Helper()
	return writeTestFile(t, filepath.Dir(path), filepath.Base(path), keystoretest.PKCS12TrustStore(t, password, certs...))
}

// storeCase writes one identity and the CA as a key store and a trust
// store of one format, and returns the settings that name them.
type storeCase struct {
	name  string
	write func(t *testing.T, p *testPKI, id testIdentity, s *TLSSettings)
}

var storeCases = []storeCase{
	{"PEM files", func(t *testing.T, p *testPKI, id testIdentity, s *TLSSettings) {
		*s = TLSSettings{KeystoreType: "PEM", KeystoreLocation: id.PEMFile, TruststoreType: "PEM", TruststoreLocation: p.CAFile}
	}},
	{"PEM inline, one line each", func(t *testing.T, p *testPKI, id testIdentity, s *TLSSettings) {
		// What a multi-line value continued with \ in server.properties becomes.
		oneLine := func(b []byte) string { return strings.Join(strings.Fields(string(b)), " ") }
		*s = TLSSettings{KeystoreType: "pem", KeystoreKey: oneLine(id.KeyPEM), KeystoreCertificateChain: oneLine(id.CertPEM),
			TruststoreType: "PEM", TruststoreCertificates: oneLine(p.CAPEM)}
	}},
	{"PEM with an encrypted key", func(t *testing.T, p *testPKI, id testIdentity, s *TLSSettings) {
		enc := keystoretest.EncryptedKeyPEM(t, id.Key, "keypw")
		path := writeTestFile(t, t.TempDir(), "enc.pem", append(enc, id.CertPEM...))
		*s = TLSSettings{KeystoreType: "PEM", KeystoreLocation: path, KeyPassword: "keypw", TruststoreType: "PEM", TruststoreLocation: p.CAFile}
	}},
	{"PKCS12", func(t *testing.T, p *testPKI, id testIdentity, s *TLSSettings) {
		dir := t.TempDir()
		*s = TLSSettings{KeystoreType: "PKCS12", KeystoreLocation: writePKCS12KeyStore(t, filepath.Join(dir, "k.p12"), "storepw", id, p.CA), KeystorePassword: "storepw",
			TruststoreType: "PKCS12", TruststoreLocation: writePKCS12TrustStore(t, filepath.Join(dir, "t.p12"), "trustpw", p.CA), TruststorePassword: "trustpw"}
	}},
	{"JKS with a key password", func(t *testing.T, p *testPKI, id testIdentity, s *TLSSettings) {
		dir := t.TempDir()
		*s = TLSSettings{KeystoreType: "JKS", KeystoreLocation: writeJKSKeyStore(t, filepath.Join(dir, "k.jks"), "storepw", "keypw", id), KeystorePassword: "storepw", KeyPassword: "keypw",
			TruststoreType: "JKS", TruststoreLocation: writeJKSTrustStore(t, filepath.Join(dir, "t.jks"), "trustpw", p.CA), TruststorePassword: "trustpw"}
	}},
	{"JKS with the store password for the key", func(t *testing.T, p *testPKI, id testIdentity, s *TLSSettings) {
		dir := t.TempDir()
		*s = TLSSettings{KeystoreLocation: writeJKSKeyStore(t, filepath.Join(dir, "k.jks"), "storepw", "storepw", id), KeystorePassword: "storepw",
			TruststoreLocation: writeJKSTrustStore(t, filepath.Join(dir, "t.jks"), "trustpw", p.CA)}
	}},
	{"PKCS12 files with the default type JKS", func(t *testing.T, p *testPKI, id testIdentity, s *TLSSettings) {
		dir := t.TempDir()
		*s = TLSSettings{KeystoreType: "JKS", KeystoreLocation: writePKCS12KeyStore(t, filepath.Join(dir, "k.p12"), "storepw", id), KeystorePassword: "storepw",
			TruststoreType: "JKS", TruststoreLocation: writePKCS12TrustStore(t, filepath.Join(dir, "t.p12"), "trustpw", p.CA), TruststorePassword: "trustpw"}
	}},
	{"JKS files with the type PKCS12", func(t *testing.T, p *testPKI, id testIdentity, s *TLSSettings) {
		dir := t.TempDir()
		*s = TLSSettings{KeystoreType: "pkcs12", KeystoreLocation: writeJKSKeyStore(t, filepath.Join(dir, "k.jks"), "storepw", "storepw", id), KeystorePassword: "storepw",
			TruststoreType: "PKCS12", TruststoreLocation: writeJKSTrustStore(t, filepath.Join(dir, "t.jks"), "trustpw", p.CA), TruststorePassword: "trustpw"}
	}},
}

// TestStoreHandshake runs a real handshake with mutual authentication for
// each store format, on both ends.
func TestStoreHandshake(t *testing.T) {
	p := newTestPKI(t)
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			var server, client TLSSettings
			sc.write(t, p, p.Server, &server)
			sc.write(t, p, p.Client, &client)
			server.ClientAuth, server.Listener = "required", "SSL"
			client.EndpointIdentificationAlgorithm = "https"
			srv := newServer(t, server, time.Now)
			r := handshake(t, srv.Config(), newClient(t, client, "localhost"))
			if !r.ok() {
				t.Fatalf("handshake: %v", r)
			}
			if r.servedSerial().Cmp(p.Server.Cert.SerialNumber) != 0 {
				t.Fatalf("server presented serial %v, want the broker's", r.servedSerial())
			}
			if got, err := srv.Principal(r.server); err != nil || got.String() != "User:CN=alice,OU=eng,O=Acme,C=US" {
				t.Fatalf("Principal = %v, %v", got, err)
			}
		})
	}
}

// TestStoreErrors: a listener's settings that cannot make its stores are
// refused with the config and the listener named. Each format's own errors
// are internal/keystore's TestStoreErrors.
func TestStoreErrors(t *testing.T) {
	p := newTestPKI(t)
	dir := t.TempDir()
	jks := writeJKSKeyStore(t, filepath.Join(dir, "k.jks"), "storepw", "keypw", p.Server)
	trustP12 := writePKCS12TrustStore(t, filepath.Join(dir, "t.p12"), "trustpw", p.CA)
	encrypted := writeTestFile(t, dir, "enc.pem", append(keystoretest.EncryptedKeyPEM(t, p.Server.Key, "keypw"), p.Server.CertPEM...))
	empty := writeTestFile(t, dir, "empty.jks", nil)
	noCerts := writeTestFile(t, dir, "nocerts.pem", []byte("-----BEGIN X-----\n-----END X-----\n"))

	pemServer := p.serverSettings()
	tests := []struct {
		name   string
		change func(*TLSSettings)
		want   string
	}{
		{"missing key store", func(s *TLSSettings) { s.KeystoreLocation = filepath.Join(dir, "nope.jks") },
			"key store " + filepath.Join(dir, "nope.jks") + " (ssl.keystore.location): open " + filepath.Join(dir, "nope.jks") + ": no such file or directory"},
		{"missing trust store", func(s *TLSSettings) { s.TruststoreLocation = filepath.Join(dir, "nope.pem") }, "(ssl.truststore.location): open"},
		{"no key store", func(s *TLSSettings) { s.KeystoreLocation = "" }, "a TLS listener needs a key store"},
		{"empty file", func(s *TLSSettings) { s.KeystoreType, s.KeystoreLocation, s.KeystorePassword = "JKS", empty, "pw" }, "the file is empty"},
		{"unknown store type", func(s *TLSSettings) { s.TruststoreType = "JCEKS" }, `ssl.truststore.type "JCEKS" is not a store type`},
		{"JKS wrong store password", func(s *TLSSettings) {
			s.KeystoreType, s.KeystoreLocation, s.KeystorePassword, s.KeyPassword = "JKS", jks, "nope", "keypw"
		},
			"key store " + jks + " (ssl.keystore.location): wrong ssl.keystore.password (the JKS integrity check failed)"},
		{"JKS without a store password", func(s *TLSSettings) { s.KeystoreType, s.KeystoreLocation = "JKS", jks }, "ssl.keystore.location is set, but ssl.keystore.password is not"},
		{"PKCS12 trust store wrong password", func(s *TLSSettings) {
			s.TruststoreType, s.TruststoreLocation, s.TruststorePassword = "PKCS12", trustP12, "nope"
		},
			"wrong ssl.truststore.password (the PKCS12 integrity check failed)"},
		{"encrypted PEM without password", func(s *TLSSettings) { s.KeystoreLocation = encrypted }, "the private key is encrypted, and ssl.key.password is not set"},
		{"PEM key store password", func(s *TLSSettings) { s.KeystorePassword = "pw" }, "ssl.keystore.password cannot be set for a PEM key store"},
		{"PEM trust store password", func(s *TLSSettings) { s.TruststorePassword = "pw" }, "ssl.truststore.password cannot be set for a PEM trust store"},
		{"inline key with JKS", func(s *TLSSettings) {
			s.KeystoreType, s.KeystoreLocation, s.KeystoreKey, s.KeystoreCertificateChain = "JKS", "", string(p.Server.KeyPEM), string(p.Server.CertPEM)
		}, "ssl.keystore.key can be set only with ssl.keystore.type=PEM, and ssl.keystore.type is JKS"},
		{"inline key without chain", func(s *TLSSettings) { s.KeystoreLocation, s.KeystoreKey = "", string(p.Server.KeyPEM) },
			"ssl.keystore.key is set, but ssl.keystore.certificate.chain is not"},
		{"inline chain without key", func(s *TLSSettings) { s.KeystoreLocation, s.KeystoreCertificateChain = "", string(p.Server.CertPEM) },
			"ssl.keystore.certificate.chain is set, but ssl.keystore.key is not"},
		{"inline key and location", func(s *TLSSettings) {
			s.KeystoreKey, s.KeystoreCertificateChain = string(p.Server.KeyPEM), string(p.Server.CertPEM)
		},
			"both ssl.keystore.location and ssl.keystore.key are set"},
		{"inline trust with JKS", func(s *TLSSettings) {
			s.TruststoreType, s.TruststoreLocation, s.TruststoreCertificates = "JKS", "", string(p.CAPEM)
		},
			"ssl.truststore.certificates can be set only with ssl.truststore.type=PEM"},
		{"inline trust and location", func(s *TLSSettings) { s.TruststoreCertificates = string(p.CAPEM) }, "both ssl.truststore.location and ssl.truststore.certificates are set"},
		{"bad inline PEM", func(s *TLSSettings) {
			s.TruststoreLocation, s.TruststoreCertificates = "", "-----BEGIN CERTIFICATE----- !!! -----END CERTIFICATE-----"
		},
			"ssl.truststore.certificates: PEM block CERTIFICATE: illegal base64"},
		{"no PEM at all", func(s *TLSSettings) { s.TruststoreLocation, s.TruststoreCertificates = "", "MIIB..." }, "ssl.truststore.certificates: no PEM block found"},
		{"client auth without a trust store", func(s *TLSSettings) { s.TruststoreLocation = "" }, "ssl.client.auth=required needs a trust store"},
		{"requested client auth without a trust store", func(s *TLSSettings) { s.TruststoreLocation, s.ClientAuth = "", "requested" },
			"ssl.client.auth=requested needs a trust store"},
		{"client auth with an empty trust store", func(s *TLSSettings) { s.TruststoreLocation = noCerts }, "ssl.client.auth=required and the trust store holds no certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := pemServer
			tt.change(&s)
			_, err := NewServerTLS(s, time.Now)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NewServerTLS = %v\nwant an error containing %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "auth: listener SSL: ") {
				t.Fatalf("the error %q does not name the listener", err)
			}
		})
	}
}
