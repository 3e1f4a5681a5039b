package keystore

import (
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/internal/keystore/keystoretest"
)

// stores is one identity's key store and the CA as a trust store, with
// what reading them takes.
type stores struct {
	key                                 []byte
	keyType, storePassword, keyPassword string
	trust                               []byte
	trustType, trustPassword            string
}

var storeCases = []struct {
	name  string
	write func(t *testing.T, p *testPKI, id identity) stores
}{
	{"PEM", func(t *testing.T, p *testPKI, id identity) stores {
		return stores{key: append(append([]byte{}, id.KeyPEM...), id.CertPEM...), keyType: "PEM", trust: p.CAPEM, trustType: "PEM"}
	}},
	{"PEM on one line, type in lower case", func(t *testing.T, p *testPKI, id identity) stores {
		// What a multi-line value continued with \ in a properties file
		// becomes.
		oneLine := func(b []byte) []byte { return []byte(strings.Join(strings.Fields(string(b)), " ")) }
		return stores{key: append(oneLine(id.CertPEM), oneLine(id.KeyPEM)...), keyType: "pem", trust: oneLine(p.CAPEM), trustType: "Pem"}
	}},
	{"PEM with an encrypted key", func(t *testing.T, p *testPKI, id identity) stores {
		return stores{key: append(keystoretest.EncryptedKeyPEM(t, id.Key, "keypw"), id.CertPEM...), keyType: "PEM", keyPassword: "keypw",
			trust: p.CAPEM, trustType: "PEM"}
	}},
	{"PKCS12", func(t *testing.T, p *testPKI, id identity) stores {
		return stores{key: keystoretest.PKCS12KeyStore(t, "storepw", id.Key, id.Cert, p.CA), keyType: "PKCS12", storePassword: "storepw",
			trust: keystoretest.PKCS12TrustStore(t, "trustpw", p.CA), trustType: "PKCS12", trustPassword: "trustpw"}
	}},
	{"JKS with a key password", func(t *testing.T, p *testPKI, id identity) stores {
		return stores{key: keystoretest.JKSKeyStore(t, "broker", "storepw", "keypw", id.Key, id.Cert), keyType: "JKS", storePassword: "storepw", keyPassword: "keypw",
			trust: keystoretest.JKSTrustStore(t, "trustpw", p.CA), trustType: "JKS", trustPassword: "trustpw"}
	}},
	{"JKS with the store password for the key, a trust store without a password", func(t *testing.T, p *testPKI, id identity) stores {
		return stores{key: keystoretest.JKSKeyStore(t, "broker", "storepw", "storepw", id.Key, id.Cert), keyType: "jks", storePassword: "storepw",
			trust: keystoretest.JKSTrustStore(t, "trustpw", p.CA), trustType: "jks"}
	}},
	{"PKCS12 files with the type JKS", func(t *testing.T, p *testPKI, id identity) stores {
		return stores{key: keystoretest.PKCS12KeyStore(t, "storepw", id.Key, id.Cert), keyType: "JKS", storePassword: "storepw",
			trust: keystoretest.PKCS12TrustStore(t, "trustpw", p.CA), trustType: "JKS", trustPassword: "trustpw"}
	}},
	{"JKS files with the type PKCS12", func(t *testing.T, p *testPKI, id identity) stores {
		return stores{key: keystoretest.JKSKeyStore(t, "broker", "storepw", "storepw", id.Key, id.Cert), keyType: "pkcs12", storePassword: "storepw",
			trust: keystoretest.JKSTrustStore(t, "trustpw", p.CA), trustType: "PKCS12", trustPassword: "trustpw"}
	}},
}

// read reads both stores, failing the test on an error.
func (s stores) read(t *testing.T) ([]tls.Certificate, []*x509.Certificate) {
	t.Helper()
	certs, err := KeyStore(s.key, s.keyType, s.storePassword, s.keyPassword)
	if err != nil {
		t.Fatalf("KeyStore: %v", err)
	}
	trust, err := TrustStore(s.trust, s.trustType, s.trustPassword)
	if err != nil {
		t.Fatalf("TrustStore: %v", err)
	}
	return certs, trust
}

// TestStoreHandshake reads each format on both ends of a connection and
// runs a real handshake with mutual authentication over what was read.
func TestStoreHandshake(t *testing.T) {
	p := newTestPKI(t)
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			serverCerts, serverTrust := sc.write(t, p, p.Server).read(t)
			clientCerts, clientTrust := sc.write(t, p, p.Client).read(t)
			server := &tls.Config{Certificates: serverCerts, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: certPool(serverTrust)}
			client := &tls.Config{Certificates: clientCerts, RootCAs: certPool(clientTrust), ServerName: "localhost"}
			clientSaw, serverSaw, err := handshake(t, server, client)
			if err != nil {
				t.Fatalf("handshake: %v", err)
			}
			if got := clientSaw.PeerCertificates[0]; !got.Equal(p.Server.Cert) {
				t.Fatalf("the server presented %s, want the broker's certificate", got.Subject)
			}
			if got := serverSaw.PeerCertificates[0]; !got.Equal(p.Client.Cert) {
				t.Fatalf("the client presented %s, want alice's certificate", got.Subject)
			}
		})
	}
}

// TestStoreChain reads a PKCS12 file whose certificates come CA first:
// the key's own certificate must still be the leaf.
func TestStoreChain(t *testing.T) {
	p := newTestPKI(t)
	data := keystoretest.PKCS12KeyStore(t, "pw", p.Server.Key, p.CA, p.Server.Cert)
	certs, err := KeyStore(data, PKCS12, "pw", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(certs) != 1 || len(certs[0].Certificate) != 2 || !certs[0].Leaf.Equal(p.Server.Cert) {
		t.Fatalf("PKCS12 chain: %d certificates, leaf %v", len(certs[0].Certificate), certs[0].Leaf.Subject)
	}
}

// TestPKCS12KeyPassword: a PKCS12 key store's one password may be given
// as ssl.key.password too, as keytool users often do.
func TestPKCS12KeyPassword(t *testing.T) {
	p := newTestPKI(t)
	data := keystoretest.PKCS12KeyStore(t, "pw", p.Server.Key, p.Server.Cert)
	if certs, err := KeyStore(data, PKCS12, "pw", "pw"); err != nil || len(certs) != 1 {
		t.Fatalf("KeyStore = %d certificates, %v", len(certs), err)
	}
}

// TestTrustStoreWithoutPassword reads JKS and PKCS12 trust stores with no
// password: Java then skips the integrity check, and so does Samsa.
func TestTrustStoreWithoutPassword(t *testing.T) {
	p := newTestPKI(t)
	for typ, data := range map[string][]byte{
		JKS:    keystoretest.JKSTrustStore(t, "trustpw", p.CA),
		PKCS12: keystoretest.PKCS12TrustStore(t, "", p.CA),
	} {
		certs, err := TrustStore(data, typ, "")
		if err != nil || len(certs) != 1 || !certs[0].Equal(p.CA) {
			t.Fatalf("%s trust store without a password: %d certificates, %v", typ, len(certs), err)
		}
	}
}

func TestCheckType(t *testing.T) {
	for _, typ := range []string{"JKS", "jks", "PKCS12", "Pkcs12", "PEM", "pem"} {
		if err := CheckType(typ); err != nil {
			t.Errorf("CheckType(%q) = %v", typ, err)
		}
	}
	for _, typ := range []string{"", "JCEKS", "BCFKS", "PKCS11", "P12"} {
		if err := CheckType(typ); err == nil || !strings.Contains(err.Error(), "is not a store type Samsa reads: want JKS, PKCS12 or PEM") {
			t.Errorf("CheckType(%q) = %v", typ, err)
		}
	}
}
