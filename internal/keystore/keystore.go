package keystore

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// The store types of ssl.keystore.type and ssl.truststore.type. Java reads
// them case-insensitively, and so does Samsa.
const (
	JKS    = "JKS"
	PKCS12 = "PKCS12"
	PEM    = "PEM"
)

// CheckType refuses a store type this package does not read.
func CheckType(typ string) error {
	for _, t := range []string{JKS, PKCS12, PEM} {
		if strings.EqualFold(typ, t) {
			return nil
		}
	}
	return fmt.Errorf("%q is not a store type Samsa reads: want JKS, PKCS12 or PEM", typ)
}

// KeyStore reads the private keys and certificate chains of a key store of
// type typ (JKS, PKCS12 or PEM, in any case), each chain leaf first.
//
// storePassword is ssl.keystore.password, which JKS and PKCS12 stores need
// and a PEM store cannot have. keyPassword is ssl.key.password: a JKS key's
// password (the store's when empty, as in Kafka), or the password of an
// encrypted PEM key. A password the store has no use for is refused rather
// than ignored, as Kafka fails on it too: a PKCS12 store has one password,
// and an unencrypted PEM key none. A JKS store may hold several keys; the
// others one each.
func KeyStore(data []byte, typ, storePassword, keyPassword string) ([]tls.Certificate, error) {
	format, err := storeFormat(typ, data)
	if err != nil {
		return nil, err
	}
	switch format {
	case PEM:
		if storePassword != "" {
			return nil, errors.New("ssl.keystore.password cannot be set for a PEM key store; set ssl.key.password to decrypt an encrypted key")
		}
		return pemKeyStore(data, keyPassword)
	case PKCS12:
		if keyPassword != "" && keyPassword != storePassword {
			return nil, errors.New("ssl.key.password differs from ssl.keystore.password, and a PKCS12 key store has only the one: " +
				"drop ssl.key.password")
		}
		return pkcs12KeyStore(data, storePassword)
	}
	if keyPassword == "" {
		keyPassword = storePassword // Kafka's fallback
	}
	return jksKeyStore(data, storePassword, keyPassword)
}

// TrustStore reads the certificates a trust store of type typ trusts.
// password is ssl.truststore.password; without one a JKS store is read
// without its integrity check, as Java does, and a PKCS12 store only if it
// was written without one. A PEM store cannot have one.
// A store that holds no certificate is not an error here: whether that may
// stand is the caller's decision.
func TrustStore(data []byte, typ, password string) ([]*x509.Certificate, error) {
	format, err := storeFormat(typ, data)
	if err != nil {
		return nil, err
	}
	switch format {
	case PEM:
		if password != "" {
			return nil, errors.New("ssl.truststore.password cannot be set for a PEM trust store")
		}
		return pemCertificates(data)
	case PKCS12:
		return pkcs12TrustStore(data, password)
	}
	return jksTrustStore(data, password)
}

// jksMagic starts every JKS file.
const jksMagic = 0xFEEDFEED

// storeFormat is the format to read a store as. For JKS and PKCS12 it
// follows the content, as Java does (keystore.type.compat): keytool has
// written PKCS12 by default since Java 9, and such files are often
// configured with Kafka's default type JKS.
func storeFormat(typ string, data []byte) (string, error) {
	if err := CheckType(typ); err != nil {
		return "", err
	}
	// An empty file is what a certificate rotation that writes in place
	// shows for a moment: say so rather than read it as a store of nothing.
	// (Inline PEM, the only store that is not a file, is never empty.)
	if len(data) == 0 {
		return "", errors.New("the file is empty")
	}
	if strings.EqualFold(typ, PEM) {
		return PEM, nil
	}
	switch {
	case len(data) >= 4 && binary.BigEndian.Uint32(data) == jksMagic:
		return JKS, nil
	case data[0] == 0x30: // a DER SEQUENCE: a PKCS12 PFX
		return PKCS12, nil
	case bytes.Contains(data, []byte("-----BEGIN ")):
		return "", fmt.Errorf("the file is PEM, and the store type is %s; set the type to PEM", typ)
	}
	return "", errors.New("the file is neither JKS nor PKCS12 (a JCEKS or BCFKS store is not supported)")
}

// keyPair pairs a private key with its certificate chain, leaf first, and
// checks the leaf holds the key's public half: a mismatch would otherwise
// surface only as failed handshakes.
func keyPair(key crypto.PrivateKey, chain [][]byte) (tls.Certificate, error) {
	if len(chain) == 0 {
		return tls.Certificate{}, errors.New("no certificate for the private key")
	}
	leaf, err := x509.ParseCertificate(chain[0])
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("certificate: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return tls.Certificate{}, fmt.Errorf("a %T private key cannot sign", key)
	}
	if !publicKeyOf(signer, leaf) {
		return tls.Certificate{}, fmt.Errorf("the private key does not match the certificate (subject %s)", leaf.Subject)
	}
	return tls.Certificate{Certificate: chain, PrivateKey: key, Leaf: leaf}, nil
}

// publicKeyOf reports whether c holds the public half of key.
func publicKeyOf(key crypto.Signer, c *x509.Certificate) bool {
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && pub.Equal(c.PublicKey)
}
