package keystoretest

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"testing"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// JKSKeyStore is a JKS key store holding one private key entry under
// alias, with its chain leaf first, as keytool -genkeypair writes it.
func JKSKeyStore(t testing.TB, alias, storePassword, keyPassword string, key crypto.PrivateKey, chain ...*x509.Certificate) []byte {
	t.Helper()
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	entry := keystore.PrivateKeyEntry{CreationTime: time.Now(), PrivateKey: keyDER}
	for _, c := range chain {
		entry.CertificateChain = append(entry.CertificateChain, keystore.Certificate{Type: "X509", Content: c.Raw})
	}
	ks := keystore.New()
	if err := ks.SetPrivateKeyEntry(alias, entry, []byte(keyPassword)); err != nil {
		t.Fatal(err)
	}
	return storeJKS(t, ks, storePassword)
}

// JKSTrustStore is a JKS trust store of trusted certificate entries, as
// keytool -importcert writes it.
func JKSTrustStore(t testing.TB, password string, certs ...*x509.Certificate) []byte {
	t.Helper()
	ks := keystore.New()
	for i, c := range certs {
		e := keystore.TrustedCertificateEntry{CreationTime: time.Now(), Certificate: keystore.Certificate{Type: "X509", Content: c.Raw}}
		if err := ks.SetTrustedCertificateEntry("ca"+string(rune('a'+i)), e); err != nil {
			t.Fatal(err)
		}
	}
	return storeJKS(t, ks, password)
}

func storeJKS(t testing.TB, ks keystore.KeyStore, password string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := ks.Store(&b, []byte(password)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// PKCS12KeyStore is a PKCS12 key store of one key, its certificate leaf
// and the CA certificates cas, with the modern algorithms keytool uses.
func PKCS12KeyStore(t testing.TB, password string, key crypto.PrivateKey, leaf *x509.Certificate, cas ...*x509.Certificate) []byte {
	t.Helper()
	data, err := pkcs12.Modern.Encode(key, leaf, cas, password)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// PKCS12TrustStore is a PKCS12 trust store of certificates marked trusted
// for Java, as keytool -importcert writes it.
func PKCS12TrustStore(t testing.TB, password string, certs ...*x509.Certificate) []byte {
	t.Helper()
	data, err := pkcs12.Modern.EncodeTrustStore(certs, password)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
