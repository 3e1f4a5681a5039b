package cli

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// The client commands read PEM files only. JKS and PKCS12 stores are
// refused at --command-config with the command that converts them: the
// broker's readers of those formats live in internal/auth, which a
// client-side package may not import.

// readCAFile reads the CA certificates to verify the brokers against.
func readCAFile(p pathFrom) (*x509.CertPool, error) {
	data, err := os.ReadFile(p.path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.from, err)
	}
	pool := x509.NewCertPool()
	n := 0
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: certificate %d: %w", p, n+1, err)
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no PEM certificate in it", p)
	}
	return pool, nil
}

// readKeyPair reads a client certificate chain and its private key, which
// may be in the same file.
func readKeyPair(cert, key pathFrom) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(cert.path)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: %w", cert.from, err)
	}
	keyPEM := certPEM
	if key.path != cert.path {
		if keyPEM, err = os.ReadFile(key.path); err != nil {
			return tls.Certificate{}, fmt.Errorf("%s: %w", key.from, err)
		}
	}
	if cert == key && !hasPrivateKey(keyPEM) {
		if cert.from == "--tls-cert" {
			return tls.Certificate{}, fmt.Errorf("%s: no PEM private key in it: give the key's file with --tls-key", cert)
		}
		return tls.Certificate{}, fmt.Errorf("%s: no PEM private key in it: a PEM key store holds the key and its certificate chain", cert)
	}
	if encryptedKey(keyPEM) {
		return tls.Certificate{}, fmt.Errorf("%s: the private key is encrypted, which the client commands do not read: "+
			"decrypt it (openssl pkcs8 -in key.pem -out key-plain.pem) and keep the file private", key)
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		if cert == key {
			return tls.Certificate{}, fmt.Errorf("%s (certificate and key): %w", cert, err)
		}
		return tls.Certificate{}, fmt.Errorf("%s and %s: %w", cert, key, err)
	}
	return c, nil
}

func hasPrivateKey(data []byte) bool {
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return false
		}
		if strings.HasSuffix(b.Type, "PRIVATE KEY") {
			return true
		}
	}
}

// encryptedKey reports a PKCS#8 key encrypted with a password, or one
// encrypted the old OpenSSL way (Proc-Type headers).
func encryptedKey(data []byte) bool {
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return false
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" || strings.HasSuffix(b.Type, "PRIVATE KEY") && b.Headers["Proc-Type"] != "" {
			return true
		}
	}
}

// verifyChain checks the broker's chain against roots (the system's when
// nil) without its name, for ssl.endpoint.identification.algorithm empty.
func verifyChain(roots *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: the broker sent no certificate")
		}
		opts := x509.VerifyOptions{
			Roots:         roots,
			Intermediates: x509.NewCertPool(),
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(opts)
		return err
	}
}
