package httpauth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
)

// ListenerTLS is the TLS of a service's HTTP listener and of its calls to another
// instance (a Schema Registry forwarding a write):
// certs is the listener's certificate (chain and key), cas the CAs that
// client certificates are verified against and that another instance's
// certificate is checked against when a write is forwarded (nil: no
// client verification, and the system's CAs for forwarding). clientAuth
// is Confluent's ssl.client.authentication: NONE, REQUESTED (verified
// when given) or REQUIRED, the last two needing cas. The forwarding side
// shows the same certificate, for a primary that requires one.
func ListenerTLS(certs []tls.Certificate, cas []*x509.Certificate, clientAuth string) (server, forward *tls.Config, err error) {
	if len(certs) == 0 {
		return nil, nil, errors.New("httpauth: TLS needs a certificate and its key")
	}
	var pool *x509.CertPool
	if len(cas) > 0 {
		pool = x509.NewCertPool()
		for _, c := range cas {
			pool.AddCert(c)
		}
	}
	server = &tls.Config{Certificates: certs, MinVersion: tls.VersionTLS12}
	switch strings.ToUpper(clientAuth) {
	case "", "NONE":
	case "REQUESTED":
		server.ClientAuth = tls.VerifyClientCertIfGiven
	case "REQUIRED":
		server.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, nil, fmt.Errorf("httpauth: client authentication %q: want NONE, REQUESTED or REQUIRED", clientAuth)
	}
	if server.ClientAuth != tls.NoClientCert {
		if pool == nil {
			return nil, nil, fmt.Errorf("httpauth: client authentication %s needs CAs to verify client certificates against", clientAuth)
		}
		server.ClientCAs = pool
	}
	forward = &tls.Config{Certificates: certs, RootCAs: pool, MinVersion: tls.VersionTLS12}
	return server, forward, nil
}
