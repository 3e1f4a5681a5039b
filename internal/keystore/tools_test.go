package keystore

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreKeytoolAndOpenSSLFiles reads stores that keytool and openssl
// wrote (testdata/README.md says how), so that the formats are checked
// against the tools Kafka users have, not only against the libraries that
// also wrote the other tests' stores.
func TestStoreKeytoolAndOpenSSLFiles(t *testing.T) {
	const keytoolDN, opensslDN = "CN=keytool,OU=eng,O=Acme,C=US", "CN=openssl,OU=eng,O=Acme,C=US"
	keyStores := []struct {
		name                    string
		files                   []string // read one after the other, as one store
		typ, store, keyPassword string
		want                    string // the leaf's subject, or a part of the error
	}{
		{"keytool JKS", []string{"keytool.jks"}, JKS, "storepass", "keypass", keytoolDN},
		{"keytool PKCS12", []string{"keytool.p12"}, PKCS12, "storepass", "", keytoolDN},
		{"openssl PKCS#8", []string{"openssl.crt", "openssl.key"}, PEM, "", "", opensslDN},
		{"openssl PBES2 AES-256 SHA-256", []string{"openssl.crt", "openssl-aes256-sha256.key"}, PEM, "", "secret", opensslDN},
		{"openssl PBES2 AES-128 SHA-512", []string{"openssl.crt", "openssl-aes128-sha512.key"}, PEM, "", "secret", opensslDN},
		{"openssl PBES2 3DES SHA-1", []string{"openssl.crt", "openssl-des3-sha1.key"}, PEM, "", "secret", opensslDN},
		{"openssl PBES1", []string{"openssl.crt", "openssl-pbes1.key"}, PEM, "", "secret", "only PBES2"},
		{"openssl scrypt", []string{"openssl.crt", "openssl-scrypt.key"}, PEM, "", "secret", "scrypt is not"},
		{"openssl PBES2 wrong password", []string{"openssl.crt", "openssl-aes256-sha256.key"}, PEM, "", "nope", "wrong ssl.key.password"},
	}
	for _, tt := range keyStores {
		t.Run(tt.name, func(t *testing.T) {
			var data []byte
			for i, f := range tt.files {
				if i > 0 {
					data = append(data, '\n')
				}
				data = append(data, readTestdata(t, f)...)
			}
			certs, err := KeyStore(data, tt.typ, tt.store, tt.keyPassword)
			if !strings.HasPrefix(tt.want, "CN=") {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("KeyStore = %v, want an error containing %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(certs) != 1 || certs[0].Leaf.Subject.String() != tt.want {
				t.Fatalf("%d certificates, subject %s", len(certs), certs[0].Leaf.Subject)
			}
		})
	}
	for _, tt := range []struct{ file, typ, password string }{
		{"keytool-trust.jks", JKS, "trustpass"},
		{"keytool-trust.jks", JKS, ""},
		{"keytool-trust.p12", PKCS12, "trustpass"},
		{"keytool.jks", JKS, "storepass"}, // a key entry's certificate is trusted too, as in Java
	} {
		certs, err := TrustStore(readTestdata(t, tt.file), tt.typ, tt.password)
		if err != nil || len(certs) == 0 {
			t.Fatalf("trust store %s: %d certificates, %v", tt.file, len(certs), err)
		}
		for _, c := range certs {
			if c.Subject.String() != keytoolDN {
				t.Errorf("trust store %s: subject %s", tt.file, c.Subject)
			}
		}
	}
}

// TestStoreKeytoolHandshake serves keytool's self-signed JKS certificate to
// a client trusting keytool's PKCS12 trust store, checking the chain but
// not the host name, which keytool's certificate has no alternative name
// for.
func TestStoreKeytoolHandshake(t *testing.T) {
	certs, err := KeyStore(readTestdata(t, "keytool.jks"), JKS, "storepass", "keypass")
	if err != nil {
		t.Fatal(err)
	}
	trust, err := TrustStore(readTestdata(t, "keytool-trust.p12"), PKCS12, "trustpass")
	if err != nil {
		t.Fatal(err)
	}
	client := &tls.Config{InsecureSkipVerify: true, VerifyConnection: func(cs tls.ConnectionState) error {
		_, err := cs.PeerCertificates[0].Verify(x509VerifyOptions(trust))
		return err
	}}
	if _, _, err := handshake(t, &tls.Config{Certificates: certs}, client); err != nil {
		t.Fatalf("handshake: %v", err)
	}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
