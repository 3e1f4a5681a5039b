package keystore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/samsa-io/samsa/internal/keystore/keystoretest"
)

// The readers take files an operator names, which may be anything: a
// truncated copy, another format, a store from a newer keytool. Whatever
// the bytes, they return an error or stores, and never panic.

func fuzzSeeds(f *testing.F) {
	p := newTestPKI(f)
	seeds := [][]byte{
		nil, {0x30}, {0xFE, 0xED, 0xFE, 0xED}, []byte("-----BEGIN CERTIFICATE-----"),
		keystoretest.JKSKeyStore(f, "broker", "pw", "pw", p.Server.Key, p.Server.Cert),
		keystoretest.JKSTrustStore(f, "pw", p.CA),
		keystoretest.PKCS12KeyStore(f, "pw", p.Server.Key, p.Server.Cert, p.CA),
		keystoretest.PKCS12TrustStore(f, "pw", p.CA),
		append(keystoretest.EncryptedKeyPEM(f, p.Server.Key, "pw"), p.Server.CertPEM...),
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*"))
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			seeds = append(seeds, data)
		}
	}
	for _, s := range seeds {
		f.Add(s, JKS, "pw", "") // JKS reads PKCS12 by content too
		f.Add(s, PEM, "", "pw")
	}
}

func FuzzKeyStore(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, typ, storePassword, keyPassword string) {
		certs, err := KeyStore(data, typ, storePassword, keyPassword)
		if err == nil && len(certs) == 0 {
			t.Fatal("a key store read without error holds no key")
		}
	})
}

func FuzzTrustStore(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, typ, password, _ string) {
		TrustStore(data, typ, password)
	})
}
