package keystore

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"testing"

	"github.com/samsa-io/samsa/internal/keystore/keystoretest"
)

// identity is a certificate and its key, as Go values and PEM.
type identity = keystoretest.Identity

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
	ca := keystoretest.NewCA(t)
	p := &testPKI{CA: ca.Cert, CAKey: ca.Key, CAPEM: ca.PEM}
	p.Server = ca.Issue(t, keystoretest.Subject("broker"), []string{"localhost"}, keystoretest.NewKey(t))
	p.Client = ca.Issue(t, keystoretest.Subject("alice"), []string{"localhost"}, keystoretest.NewKey(t))
	return p
}

func newTestKey(t testing.TB) crypto.Signer { return keystoretest.NewKey(t) }

func pemEncode(typ string, der []byte) []byte { return keystoretest.PEM(typ, der) }

func certPool(certs []*x509.Certificate) *x509.CertPool {
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool
}

// handshake runs a TLS handshake over loopback TCP
// (keystoretest.RunHandshake) and returns what the client saw of the
// server and the server of the client, or both ends' errors.
func handshake(t *testing.T, server, client *tls.Config) (clientSaw, serverSaw tls.ConnectionState, err error) {
	t.Helper()
	h := keystoretest.RunHandshake(t, server, client)
	if h.ClientErr != nil || h.ServerErr != nil {
		return tls.ConnectionState{}, tls.ConnectionState{}, fmt.Errorf("client: %v; server: %v", h.ClientErr, h.ServerErr)
	}
	return h.Client, h.Server, nil
}

// x509VerifyOptions verifies a server's certificate against roots, without
// its name.
func x509VerifyOptions(roots []*x509.Certificate) x509.VerifyOptions {
	return x509.VerifyOptions{Roots: certPool(roots), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
}
