package keystoretest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"
)

// CA is a throwaway certificate authority valid for a day.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	PEM  []byte
}

// Identity is a certificate a CA signed and its key, as Go values and
// PEM (the key unencrypted PKCS#8).
type Identity struct {
	Cert    *x509.Certificate
	Key     crypto.Signer
	CertPEM []byte
	KeyPEM  []byte
}

// NewKey is an ECDSA P-256 key.
func NewKey(t testing.TB) crypto.Signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// PEM is der as one PEM block of typ.
func PEM(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// Subject is CN=<cn>,OU=eng,O=Acme,C=US, the tests' usual subject.
func Subject(cn string) pkix.Name {
	return pkix.Name{CommonName: cn, OrganizationalUnit: []string{"eng"}, Organization: []string{"Acme"}, Country: []string{"US"}}
}

// NewCA makes a CA named "Test CA" of Acme.
func NewCA(t testing.TB) *CA {
	t.Helper()
	ca := &CA{Key: NewKey(t)}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "Test CA", Organization: []string{"Acme"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, ca.Key.Public(), ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	if ca.Cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	ca.PEM = PEM("CERTIFICATE", der)
	return ca
}

// Issue signs a certificate for key with subject, valid for 127.0.0.1 and
// dnsNames and for both ends of a connection, as brokers use one for both.
func (ca *CA) Issue(t testing.TB, subject pkix.Name, dnsNames []string, key crypto.Signer) Identity {
	t.Helper()
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      subject,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     dnsNames,
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return Identity{Cert: cert, Key: key, CertPEM: PEM("CERTIFICATE", der), KeyPEM: PEM("PRIVATE KEY", keyDER)}
}
