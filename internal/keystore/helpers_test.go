package keystore

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"testing"
	"time"
)

// identity is a certificate and its key, as Go values and PEM.
type identity struct {
	Cert    *x509.Certificate
	Key     crypto.Signer
	CertPEM []byte
	KeyPEM  []byte // unencrypted PKCS#8
}

// testPKI is a CA with a broker (server) and a client identity.
type testPKI struct {
	CA     *x509.Certificate
	CAKey  crypto.Signer
	CAPEM  []byte
	Server identity // CN=broker,OU=eng,O=Acme,C=US; localhost, 127.0.0.1
	Client identity // CN=alice,OU=eng,O=Acme,C=US
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	p := &testPKI{CAKey: newTestKey(t)}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "Test CA", Organization: []string{"Acme"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, p.CAKey.Public(), p.CAKey)
	if err != nil {
		t.Fatal(err)
	}
	if p.CA, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	p.CAPEM = pemEncode("CERTIFICATE", der)
	p.Server = p.issue(t, "broker")
	p.Client = p.issue(t, "alice")
	return p
}

// issue makes a certificate the CA signs, with the subject
// CN=<cn>,OU=eng,O=Acme,C=US, for both ends of a connection to localhost.
func (p *testPKI) issue(t testing.TB, cn string) identity {
	t.Helper()
	key := newTestKey(t)
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, OrganizationalUnit: []string{"eng"}, Organization: []string{"Acme"}, Country: []string{"US"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.CA, key.Public(), p.CAKey)
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
	return identity{Cert: cert, Key: key, CertPEM: pemEncode("CERTIFICATE", der), KeyPEM: pemEncode("PRIVATE KEY", keyDER)}
}

func newTestKey(t testing.TB) crypto.Signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func pemEncode(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func certPool(certs []*x509.Certificate) *x509.CertPool {
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool
}

// handshake runs a TLS handshake over loopback TCP and has the server send
// one byte, which surfaces a client certificate the server refused after a
// TLS 1.3 client thought itself done. It returns what the client saw of
// the server and the server of the client.
func handshake(t *testing.T, server, client *tls.Config) (clientSaw, serverSaw tls.ConnectionState, err error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	deadline := time.Now().Add(10 * time.Second)
	sc.SetDeadline(deadline)
	cc.SetDeadline(deadline)
	s, c := tls.Server(sc, server), tls.Client(cc, client)
	done := make(chan error, 1)
	go func() { // a handshake needs both ends running
		err := s.Handshake()
		if err == nil {
			_, err = s.Write([]byte{1})
		}
		if err != nil {
			sc.Close()
		}
		done <- err
	}()
	clientErr := c.Handshake()
	if clientErr == nil {
		_, clientErr = c.Read(make([]byte, 1))
	}
	if clientErr != nil {
		cc.Close()
	}
	serverErr := <-done
	if clientErr != nil || serverErr != nil {
		return tls.ConnectionState{}, tls.ConnectionState{}, fmt.Errorf("client: %v; server: %v", clientErr, serverErr)
	}
	return c.ConnectionState(), s.ConnectionState(), nil
}

// x509VerifyOptions verifies a server's certificate against roots, without
// its name.
func x509VerifyOptions(roots []*x509.Certificate) x509.VerifyOptions {
	return x509.VerifyOptions{Roots: certPool(roots), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
}
