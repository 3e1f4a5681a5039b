package cli

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/samsa-io/samsa/internal/keystore"
)

// The client's certificates and the CA certificates it trusts, read by
// internal/keystore, the broker's readers: JKS, PKCS12 and PEM stores (with
// their passwords) from --command-config, PEM files from the --tls-* flags.

// storeFile is a key or trust store file and what reading it takes.
type storeFile struct {
	pathFrom
	typ         string // keystore.JKS, PKCS12 or PEM; a flag's file is PEM
	password    string // ssl.keystore.password or ssl.truststore.password
	keyPassword string // ssl.key.password
}

// readTrustStore reads the CA certificates to verify the brokers against.
func readTrustStore(s storeFile) (*x509.CertPool, error) {
	data, err := os.ReadFile(s.path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.from, err)
	}
	certs, err := keystore.TrustStore(data, s.typ, s.password)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%s: no certificate in it", s)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// readKeyStore reads the client's certificate chains and private keys. A
// PEM key may be in a file of its own (--tls-key), read after the chain.
func readKeyStore(s storeFile, keyFile pathFrom) ([]tls.Certificate, error) {
	data, err := os.ReadFile(s.path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.from, err)
	}
	if keyFile.path != "" {
		keyPEM, err := os.ReadFile(keyFile.path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", keyFile.from, err)
		}
		if err := checkFlagKey(keyFile, keyPEM); err != nil {
			return nil, err
		}
		certs, err := keystore.KeyStore(append(append(data, '\n'), keyPEM...), keystore.PEM, "", "")
		if err != nil {
			return nil, fmt.Errorf("%s and %s: %w", s.pathFrom, keyFile, err)
		}
		return certs, nil
	}
	if s.from == "--tls-cert" {
		if !hasPrivateKey(data) {
			return nil, fmt.Errorf("%s: no PEM private key in it: give the key's file with --tls-key", s)
		}
		if err := checkFlagKey(s.pathFrom, data); err != nil {
			return nil, err
		}
	}
	certs, err := keystore.KeyStore(data, s.typ, s.password, s.keyPassword)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	return certs, nil
}

// checkFlagKey refuses an encrypted key from a flag, which has no password
// flag to go with it, before the reader asks for ssl.key.password.
func checkFlagKey(p pathFrom, data []byte) error {
	if encryptedKey(data) {
		return fmt.Errorf("%s: the private key is encrypted, which the --tls-* flags do not read: "+
			"decrypt it (openssl pkcs8 -in key.pem -out key-plain.pem) and keep the file private, "+
			"or give it with ssl.keystore.location and ssl.key.password in --command-config", p)
	}
	return nil
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
