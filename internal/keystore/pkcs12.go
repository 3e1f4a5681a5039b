package keystore

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"software.sslmate.com/src/go-pkcs12"
)

// pkcs12KeyStore reads a PKCS12 key store. It has one password: keytool
// ignores a key password other than the store's for PKCS12, and KeyStore
// refuses one.
func pkcs12KeyStore(data []byte, password string) ([]tls.Certificate, error) {
	key, leaf, cas, err := pkcs12.DecodeChain(data, password)
	if err != nil {
		return nil, pkcs12Error("ssl.keystore.password", err)
	}
	chain := orderChain(key, append([]*x509.Certificate{leaf}, cas...))
	c, err := keyPair(key, chain)
	if err != nil {
		return nil, err
	}
	return []tls.Certificate{c}, nil
}

// orderChain puts the certificate of the key first: a PKCS12 file does not
// order its certificates, and DecodeChain takes the first as the leaf.
func orderChain(key crypto.PrivateKey, certs []*x509.Certificate) [][]byte {
	if s, ok := key.(crypto.Signer); ok {
		for i, c := range certs {
			if publicKeyOf(s, c) {
				certs[0], certs[i] = certs[i], certs[0]
				break
			}
		}
	}
	chain := make([][]byte, len(certs))
	for i, c := range certs {
		chain[i] = c.Raw
	}
	return chain
}

// pkcs12TrustStore reads the certificates of a PKCS12 trust store. Unlike
// Java, it cannot skip the integrity check when no password is set, so a
// store written with a password needs it.
func pkcs12TrustStore(data []byte, password string) ([]*x509.Certificate, error) {
	certs, err := pkcs12.DecodeTrustStore(data, password)
	if password == "" && (errors.Is(err, pkcs12.ErrIncorrectPassword) || errors.Is(err, pkcs12.ErrDecryption)) {
		return nil, errors.New("ssl.truststore.password is not set, and this PKCS12 trust store cannot be read without it")
	}
	if errors.Is(err, pkcs12.ErrIncorrectPassword) || errors.Is(err, pkcs12.ErrDecryption) {
		return nil, pkcs12Error("ssl.truststore.password", err)
	}
	if err != nil {
		return nil, fmt.Errorf("read PKCS12 trust store (it must hold only certificates marked trusted, as keytool -importcert writes them): %w", err)
	}
	return certs, nil
}

func pkcs12Error(passwordConfig string, err error) error {
	if errors.Is(err, pkcs12.ErrIncorrectPassword) || errors.Is(err, pkcs12.ErrDecryption) {
		return fmt.Errorf("wrong %s (the PKCS12 integrity check failed)", passwordConfig)
	}
	return fmt.Errorf("read PKCS12: %w", err)
}
