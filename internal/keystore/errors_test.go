package keystore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/internal/keystore/keystoretest"
)

// TestStoreErrors: every way a store fails to read says why, naming the
// password config to fix when a password is wrong.
func TestStoreErrors(t *testing.T) {
	p := newTestPKI(t)
	jks := keystoretest.JKSKeyStore(t, "broker", "storepw", "keypw", p.Server.Key, p.Server.Cert)
	p12 := keystoretest.PKCS12KeyStore(t, "storepw", p.Server.Key, p.Server.Cert)
	trustJKS := keystoretest.JKSTrustStore(t, "trustpw", p.CA)
	trustP12 := keystoretest.PKCS12TrustStore(t, "trustpw", p.CA)
	encrypted := append(keystoretest.EncryptedKeyPEM(t, p.Server.Key, "keypw"), p.Server.CertPEM...)
	// 2^26 iterations would take half a minute: refused before any work.
	greedy := append(keystoretest.EncryptedKeyPEMClaiming(t, p.Server.Key, "keypw", 1<<26), p.Server.CertPEM...)
	serverPEM := append(append([]byte{}, p.Server.KeyPEM...), p.Server.CertPEM...)
	legacy, err := os.ReadFile(filepath.Join("testdata", "openssl-legacy.key"))
	if err != nil {
		t.Fatal(err)
	}
	keyStore := func(data []byte, typ, storePassword, keyPassword string) func() error {
		return func() error { _, err := KeyStore(data, typ, storePassword, keyPassword); return err }
	}
	trustStore := func(data []byte, typ, password string) func() error {
		return func() error { _, err := TrustStore(data, typ, password); return err }
	}
	tests := []struct {
		name string
		read func() error
		want string
	}{
		{"empty file", keyStore(nil, JKS, "pw", ""), "the file is empty"},
		{"PBKDF2 asking for 2^26 iterations", keyStore(greedy, PEM, "", "keypw"), "iteration count 67108864 is outside 1-10000000"},
		{"empty PEM file", trustStore([]byte{}, PEM, ""), "the file is empty"},
		{"not a store", keyStore([]byte("JCEKS or something"), JKS, "pw", ""), "the file is neither JKS nor PKCS12"},
		{"PEM file as JKS", keyStore(serverPEM, JKS, "pw", ""), "the file is PEM, and the store type is JKS; set the type to PEM"},
		{"unknown store type", trustStore(trustJKS, "JCEKS", "trustpw"), `"JCEKS" is not a store type Samsa reads`},
		{"truncated JKS", keyStore(jks[:20], JKS, "storepw", ""), "the JKS file is truncated"},
		{"JKS wrong store password", keyStore(jks, JKS, "nope", "keypw"), "wrong ssl.keystore.password (the JKS integrity check failed)"},
		{"JKS wrong key password", keyStore(jks, JKS, "storepw", "nope"), `entry "broker": wrong ssl.key.password`},
		{"JKS key password missing", keyStore(jks, JKS, "storepw", ""), "wrong ssl.key.password, or ssl.keystore.password when no key password is set"},
		{"PKCS12 wrong password", keyStore(p12, PKCS12, "nope", ""), "wrong ssl.keystore.password (the PKCS12 integrity check failed)"},
		{"JKS trust store wrong password", trustStore(trustJKS, JKS, "nope"), "wrong ssl.truststore.password (the JKS integrity check failed)"},
		{"PKCS12 trust store wrong password", trustStore(trustP12, PKCS12, "nope"), "wrong ssl.truststore.password (the PKCS12 integrity check failed)"},
		{"PKCS12 trust store without its password", trustStore(trustP12, PKCS12, ""),
			"ssl.truststore.password is not set, and this PKCS12 trust store cannot be read without it"},
		{"PKCS12 key store as trust store", trustStore(p12, PKCS12, "storepw"), "read PKCS12 trust store (it must hold only certificates marked trusted"},
		{"JKS trust store as key store", keyStore(trustJKS, JKS, "trustpw", ""), "the JKS file holds no private key entry"},
		{"encrypted PEM wrong password", keyStore(encrypted, PEM, "", "nope"), "wrong ssl.key.password"},
		{"encrypted PEM without password", keyStore(encrypted, PEM, "", ""), "the private key is encrypted, and ssl.key.password is not set"},
		{"legacy encrypted PEM", keyStore(append(legacy, p.Server.CertPEM...), PEM, "", "secret"), "an OpenSSL-encrypted key (Proc-Type) is not supported"},
		{"key does not match", keyStore(append(append([]byte{}, p.Client.KeyPEM...), p.Server.CertPEM...), PEM, "", ""),
			"the private key does not match the certificate (subject CN=broker,OU=eng,O=Acme,C=US)"},
		{"PEM key store password", keyStore(serverPEM, PEM, "storepw", ""), "ssl.keystore.password cannot be set for a PEM key store"},
		{"PEM trust store password", trustStore(p.CAPEM, "pem", "trustpw"), "ssl.truststore.password cannot be set for a PEM trust store"},
		{"PEM key password for an unencrypted key", keyStore(serverPEM, PEM, "", "keypw"),
			"ssl.key.password is set, but the private key is not encrypted: drop ssl.key.password"},
		{"PKCS12 key password", keyStore(p12, PKCS12, "storepw", "keypw"),
			"ssl.key.password differs from ssl.keystore.password, and a PKCS12 key store has only the one"},
		{"PKCS12 file of type JKS with a key password", keyStore(p12, JKS, "storepw", "keypw"),
			"ssl.key.password differs from ssl.keystore.password"},
		{"PEM without a key", keyStore(p.Server.CertPEM, PEM, "", ""), "want one PEM private key, found 0"},
		{"PEM with two keys", keyStore(append(append([]byte{}, serverPEM...), p.Client.KeyPEM...), PEM, "", ""), "want one PEM private key, found 2"},
		{"PEM without a certificate", keyStore(p.Server.KeyPEM, PEM, "", ""), "no certificate for the private key"},
		{"bad PEM", trustStore([]byte("-----BEGIN CERTIFICATE----- !!! -----END CERTIFICATE-----"), PEM, ""), "PEM block CERTIFICATE: illegal base64"},
		{"mismatched PEM markers", trustStore([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END PRIVATE KEY-----"), PEM, ""),
			"PEM block BEGIN CERTIFICATE ends with END PRIVATE KEY"},
		{"no PEM at all", trustStore([]byte("MIIB..."), PEM, ""), "no PEM block found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.read()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v\nwant an error containing %q", err, tt.want)
			}
			for _, secret := range []string{"storepw", "keypw", "trustpw", "nope"} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("the error %q shows the password %q", err, secret)
				}
			}
		})
	}
}
