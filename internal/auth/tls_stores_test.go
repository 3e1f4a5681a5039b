package auth

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// writeJKSKeyStore writes a JKS key store holding one identity and its
// chain, as keytool -genkeypair would.
func writeJKSKeyStore(t testing.TB, path, storePassword, keyPassword string, id testIdentity) string {
	t.Helper()
	keyDER, err := x509.MarshalPKCS8PrivateKey(id.Key)
	if err != nil {
		t.Fatal(err)
	}
	ks := keystore.New()
	var chain []keystore.Certificate
	for _, c := range id.Chain {
		chain = append(chain, keystore.Certificate{Type: "X509", Content: c.Raw})
	}
	entry := keystore.PrivateKeyEntry{CreationTime: time.Now(), PrivateKey: keyDER, CertificateChain: chain}
	if err := ks.SetPrivateKeyEntry("broker", entry, []byte(keyPassword)); err != nil {
		t.Fatal(err)
	}
	return storeJKS(t, ks, path, storePassword)
}

// writeJKSTrustStore writes a JKS trust store, as keytool -importcert would.
func writeJKSTrustStore(t testing.TB, path, password string, certs ...*x509.Certificate) string {
	t.Helper()
	ks := keystore.New()
	for i, c := range certs {
		e := keystore.TrustedCertificateEntry{CreationTime: time.Now(), Certificate: keystore.Certificate{Type: "X509", Content: c.Raw}}
		if err := ks.SetTrustedCertificateEntry("ca"+string(rune('a'+i)), e); err != nil {
			t.Fatal(err)
		}
	}
	return storeJKS(t, ks, path, password)
}

func storeJKS(t testing.TB, ks keystore.KeyStore, path, password string) string {
	t.Helper()
	var b bytes.Buffer
	if err := ks.Store(&b, []byte(password)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func writePKCS12KeyStore(t testing.TB, path, password string, id testIdentity, cas ...*x509.Certificate) string {
	t.Helper()
	data, err := pkcs12.Modern.Encode(id.Key, id.Cert, cas, password)
	if err != nil {
		t.Fatal(err)
	}
	return writeTestFile(t, filepath.Dir(path), filepath.Base(path), data)
}

func writePKCS12TrustStore(t testing.TB, path, password string, certs ...*x509.Certificate) string {
	t.Helper()
	data, err := pkcs12.Modern.EncodeTrustStore(certs, password)
	if err != nil {
		t.Fatal(err)
	}
	return writeTestFile(t, filepath.Dir(path), filepath.Base(path), data)
}

// encryptPKCS8 encrypts a PKCS#8 key as openssl pkcs8 -topk8 -v2 aes256
// does: PBES2, PBKDF2 with HMAC-SHA256, AES-256-CBC.
func encryptPKCS8(t testing.TB, der []byte, password string) []byte {
	t.Helper()
	salt, iv := make([]byte, 16), make([]byte, aes.BlockSize)
	rand.Read(salt)
	rand.Read(iv)
	key, err := pbkdf2.Key(sha256.New, password, salt, 2048, 32)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := aes.NewCipher(key)
	pad := aes.BlockSize - len(der)%aes.BlockSize
	plain := append(append([]byte{}, der...), bytes.Repeat([]byte{byte(pad)}, pad)...)
	ciphertext := make([]byte, len(plain))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(ciphertext, plain)
	kdf := pbkdf2Params{Salt: salt, IterationCount: 2048, PRF: pkix.AlgorithmIdentifier{
		Algorithm: asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}, Parameters: asn1.NullRawValue}}
	params := pbes2Params{
		KeyDerivationFunc: pkix.AlgorithmIdentifier{Algorithm: oidPBKDF2, Parameters: asn1.RawValue{FullBytes: mustMarshal(t, kdf)}},
		EncryptionScheme:  pkix.AlgorithmIdentifier{Algorithm: asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}, Parameters: asn1.RawValue{FullBytes: mustMarshal(t, iv)}},
	}
	return mustMarshal(t, encryptedPrivateKeyInfo{
		Algorithm:     pkix.AlgorithmIdentifier{Algorithm: oidPBES2, Parameters: asn1.RawValue{FullBytes: mustMarshal(t, params)}},
		EncryptedData: ciphertext,
	})
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := asn1.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
		der, _ := x509.MarshalPKCS8PrivateKey(id.Key)
		enc := pemEncode("ENCRYPTED PRIVATE KEY", encryptPKCS8(t, der, "keypw"))
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

func TestStoreChain(t *testing.T) {
	p := newTestPKI(t)
	dir := t.TempDir()
	// A PKCS12 file whose certificates come CA first: the key's own
	// certificate must still be the leaf.
	data, err := pkcs12.Modern.Encode(p.Server.Key, p.CA, []*x509.Certificate{p.Server.Cert}, "pw")
	if err != nil {
		t.Fatal(err)
	}
	certs, err := loadKeyStore(TLSSettings{KeystoreType: "PKCS12", KeystoreLocation: writeTestFile(t, dir, "k.p12", data), KeystorePassword: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if len(certs) != 1 || len(certs[0].Certificate) != 2 || !certs[0].Leaf.Equal(p.Server.Cert) {
		t.Fatalf("PKCS12 chain: %d certificates, leaf %v", len(certs[0].Certificate), certs[0].Leaf.Subject)
	}
}

func TestStoreErrors(t *testing.T) {
	p := newTestPKI(t)
	dir := t.TempDir()
	jks := writeJKSKeyStore(t, filepath.Join(dir, "k.jks"), "storepw", "keypw", p.Server)
	p12 := writePKCS12KeyStore(t, filepath.Join(dir, "k.p12"), "storepw", p.Server)
	trustJKS := writeJKSTrustStore(t, filepath.Join(dir, "t.jks"), "trustpw", p.CA)
	trustP12 := writePKCS12TrustStore(t, filepath.Join(dir, "t.p12"), "trustpw", p.CA)
	keyDER, _ := x509.MarshalPKCS8PrivateKey(p.Server.Key)
	encrypted := writeTestFile(t, dir, "enc.pem", append(pemEncode("ENCRYPTED PRIVATE KEY", encryptPKCS8(t, keyDER, "keypw")), p.Server.CertPEM...))
	mismatch := writeTestFile(t, dir, "mismatch.pem", append(append([]byte{}, p.Client.KeyPEM...), p.Server.CertPEM...))
	noKey := writeTestFile(t, dir, "nokey.pem", p.Server.CertPEM)
	noCert := writeTestFile(t, dir, "nocert.pem", p.Server.KeyPEM)
	empty := writeTestFile(t, dir, "empty.jks", nil)
	garbage := writeTestFile(t, dir, "garbage.jks", []byte("JCEKS or something"))
	noCerts := writeTestFile(t, dir, "nocerts.pem", []byte("-----BEGIN X-----\n-----END X-----\n"))
	legacy := filepath.Join("testdata", "tls", "openssl-legacy.key")

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
		{"not a store", func(s *TLSSettings) { s.KeystoreType, s.KeystoreLocation, s.KeystorePassword = "JKS", garbage, "pw" }, "neither JKS nor PKCS12"},
		{"PEM file as JKS", func(s *TLSSettings) { s.KeystoreType, s.KeystorePassword = "JKS", "pw" }, "the file is PEM, and the store type is JKS"},
		{"unknown store type", func(s *TLSSettings) { s.TruststoreType = "JCEKS" }, `ssl.truststore.type "JCEKS" is not a store type`},
		{"JKS wrong store password", func(s *TLSSettings) {
			s.KeystoreType, s.KeystoreLocation, s.KeystorePassword, s.KeyPassword = "JKS", jks, "nope", "keypw"
		},
			"wrong ssl.keystore.password (the JKS integrity check failed)"},
		{"JKS wrong key password", func(s *TLSSettings) {
			s.KeystoreType, s.KeystoreLocation, s.KeystorePassword, s.KeyPassword = "JKS", jks, "storepw", "nope"
		},
			`entry "broker": wrong ssl.key.password`},
		{"JKS key password missing", func(s *TLSSettings) { s.KeystoreType, s.KeystoreLocation, s.KeystorePassword = "JKS", jks, "storepw" },
			"wrong ssl.key.password, or ssl.keystore.password when no key password is set"},
		{"JKS without a store password", func(s *TLSSettings) { s.KeystoreType, s.KeystoreLocation = "JKS", jks }, "ssl.keystore.location is set, but ssl.keystore.password is not"},
		{"PKCS12 wrong password", func(s *TLSSettings) { s.KeystoreType, s.KeystoreLocation, s.KeystorePassword = "PKCS12", p12, "nope" },
			"wrong ssl.keystore.password (the PKCS12 integrity check failed)"},
		{"JKS trust store wrong password", func(s *TLSSettings) {
			s.TruststoreType, s.TruststoreLocation, s.TruststorePassword = "JKS", trustJKS, "nope"
		},
			"wrong ssl.truststore.password (the JKS integrity check failed)"},
		{"PKCS12 trust store wrong password", func(s *TLSSettings) {
			s.TruststoreType, s.TruststoreLocation, s.TruststorePassword = "PKCS12", trustP12, "nope"
		},
			"wrong ssl.truststore.password (the PKCS12 integrity check failed)"},
		{"PKCS12 key store as trust store", func(s *TLSSettings) {
			s.TruststoreType, s.TruststoreLocation, s.TruststorePassword = "PKCS12", p12, "storepw"
		},
			"read PKCS12 trust store (it must hold only certificates marked trusted"},
		{"encrypted PEM wrong password", func(s *TLSSettings) { s.KeystoreLocation, s.KeyPassword = encrypted, "nope" }, "wrong ssl.key.password"},
		{"encrypted PEM without password", func(s *TLSSettings) { s.KeystoreLocation = encrypted }, "the private key is encrypted, and ssl.key.password is not set"},
		{"legacy encrypted PEM", func(s *TLSSettings) { s.KeystoreLocation, s.KeyPassword = legacy, "secret" }, "an OpenSSL-encrypted key (Proc-Type) is not supported"},
		{"key does not match", func(s *TLSSettings) { s.KeystoreLocation = mismatch }, "the private key does not match the certificate (subject CN=broker,OU=eng,O=Acme,C=US)"},
		{"PEM without a key", func(s *TLSSettings) { s.KeystoreLocation = noKey }, "want one PEM private key, found 0"},
		{"PEM without a certificate", func(s *TLSSettings) { s.KeystoreLocation = noCert }, "no certificate for the private key"},
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
		{"mismatched PEM markers", func(s *TLSSettings) {
			s.TruststoreLocation, s.TruststoreCertificates = "", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END PRIVATE KEY-----"
		}, "PEM block BEGIN CERTIFICATE ends with END PRIVATE KEY"},
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

// TestStoreTrustWithoutPassword reads JKS and PKCS12 trust stores with no
// ssl.truststore.password: Java then skips the integrity check, and so
// does Samsa.
func TestStoreTrustWithoutPassword(t *testing.T) {
	p := newTestPKI(t)
	dir := t.TempDir()
	for _, s := range []TLSSettings{
		{TruststoreType: "JKS", TruststoreLocation: writeJKSTrustStore(t, filepath.Join(dir, "t.jks"), "trustpw", p.CA)},
		{TruststoreType: "PKCS12", TruststoreLocation: writePKCS12TrustStore(t, filepath.Join(dir, "t.p12"), "", p.CA)},
	} {
		certs, configured, err := loadTrustStore(s)
		if err != nil || !configured || len(certs) != 1 || !certs[0].Equal(p.CA) {
			t.Fatalf("%s trust store without a password: %d certificates, %v, %v", s.TruststoreType, len(certs), configured, err)
		}
	}
}

// TestStoreKeytoolAndOpenSSLFiles reads stores that keytool and openssl
// wrote (testdata/tls/README.md says how), so that the formats are checked
// against the tools Kafka users have, not only against the libraries that
// also wrote the other tests' files.
func TestStoreKeytoolAndOpenSSLFiles(t *testing.T) {
	dir := filepath.Join("testdata", "tls")
	const keytoolDN = "CN=keytool,OU=eng,O=Acme,C=US"
	keyStores := []struct {
		name string
		s    TLSSettings
		dn   string
	}{
		{"keytool JKS", TLSSettings{KeystoreType: "JKS", KeystoreLocation: "keytool.jks", KeystorePassword: "storepass", KeyPassword: "keypass"}, keytoolDN},
		{"keytool PKCS12", TLSSettings{KeystoreType: "PKCS12", KeystoreLocation: "keytool.p12", KeystorePassword: "storepass"}, keytoolDN},
		{"openssl PKCS#8", TLSSettings{KeystoreType: "PEM", KeystoreKey: "openssl.key", KeystoreCertificateChain: "openssl.crt"}, "CN=openssl,OU=eng,O=Acme,C=US"},
		{"openssl PBES2 AES-256 SHA-256", TLSSettings{KeystoreType: "PEM", KeystoreKey: "openssl-aes256-sha256.key", KeystoreCertificateChain: "openssl.crt", KeyPassword: "secret"}, "CN=openssl,OU=eng,O=Acme,C=US"},
		{"openssl PBES2 AES-128 SHA-512", TLSSettings{KeystoreType: "PEM", KeystoreKey: "openssl-aes128-sha512.key", KeystoreCertificateChain: "openssl.crt", KeyPassword: "secret"}, "CN=openssl,OU=eng,O=Acme,C=US"},
		{"openssl PBES2 3DES SHA-1", TLSSettings{KeystoreType: "PEM", KeystoreKey: "openssl-des3-sha1.key", KeystoreCertificateChain: "openssl.crt", KeyPassword: "secret"}, "CN=openssl,OU=eng,O=Acme,C=US"},
		{"openssl PBES1", TLSSettings{KeystoreType: "PEM", KeystoreKey: "openssl-pbes1.key", KeystoreCertificateChain: "openssl.crt", KeyPassword: "secret"}, "only PBES2"},
		{"openssl scrypt", TLSSettings{KeystoreType: "PEM", KeystoreKey: "openssl-scrypt.key", KeystoreCertificateChain: "openssl.crt", KeyPassword: "secret"}, "scrypt is not"},
		{"openssl PBES2 wrong password", TLSSettings{KeystoreType: "PEM", KeystoreKey: "openssl-aes256-sha256.key", KeystoreCertificateChain: "openssl.crt", KeyPassword: "nope"}, "wrong ssl.key.password"},
	}
	for _, tt := range keyStores {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.s
			if s.KeystoreKey != "" { // inline: read the files' text
				s.KeystoreKey, s.KeystoreCertificateChain = readTestdata(t, dir, s.KeystoreKey), readTestdata(t, dir, s.KeystoreCertificateChain)
			} else {
				s.KeystoreLocation = filepath.Join(dir, s.KeystoreLocation)
			}
			certs, err := loadKeyStore(s)
			if !strings.HasPrefix(tt.dn, "CN=") {
				if err == nil || !strings.Contains(err.Error(), tt.dn) {
					t.Fatalf("loadKeyStore = %v, want an error containing %q", err, tt.dn)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if dn, _ := subjectDN(certs[0].Leaf); len(certs) != 1 || dn != tt.dn {
				t.Fatalf("%d certificates, subject %s", len(certs), dn)
			}
		})
	}
	for _, s := range []TLSSettings{
		{TruststoreType: "JKS", TruststoreLocation: "keytool-trust.jks", TruststorePassword: "trustpass"},
		{TruststoreType: "JKS", TruststoreLocation: "keytool-trust.jks"},
		{TruststoreType: "PKCS12", TruststoreLocation: "keytool-trust.p12", TruststorePassword: "trustpass"},
		{TruststoreType: "JKS", TruststoreLocation: "keytool.jks", TruststorePassword: "storepass"}, // a key entry's certificate is trusted too
	} {
		s.TruststoreLocation = filepath.Join(dir, s.TruststoreLocation)
		certs, _, err := loadTrustStore(s)
		if err != nil || len(certs) == 0 {
			t.Fatalf("trust store %s: %d certificates, %v", s.TruststoreLocation, len(certs), err)
		}
		for _, c := range certs {
			if dn, _ := subjectDN(c); dn != keytoolDN {
				t.Errorf("trust store %s: subject %s", s.TruststoreLocation, dn)
			}
		}
	}
}

// TestStoreKeytoolHandshake serves keytool's self-signed JKS certificate to
// a client trusting keytool's trust store, checking the chain but not the
// host name, which keytool's certificate has no alternative name for.
func TestStoreKeytoolHandshake(t *testing.T) {
	dir := filepath.Join("testdata", "tls")
	srv := newServer(t, TLSSettings{KeystoreLocation: filepath.Join(dir, "keytool.jks"), KeystorePassword: "storepass", KeyPassword: "keypass"}, time.Now)
	client := newClient(t, TLSSettings{TruststoreType: "PKCS12", TruststoreLocation: filepath.Join(dir, "keytool-trust.p12"), TruststorePassword: "trustpass"}, "broker.example")
	if r := handshake(t, srv.Config(), client); !r.ok() {
		t.Fatalf("handshake: %v", r)
	}
}

func readTestdata(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
