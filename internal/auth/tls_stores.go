package auth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/samsa-io/samsa/internal/keystore"
)

// A listener's key and trust stores as its ssl.* settings name them: a file
// or inline PEM, with Kafka's rules for which settings go together. The
// formats themselves are read by internal/keystore, which the client
// commands share.

// loadKeyStore reads the certificates and private keys a listener presents:
// from ssl.keystore.location, or from the inline ssl.keystore.key and
// ssl.keystore.certificate.chain. It returns none when neither is set.
func loadKeyStore(s TLSSettings) ([]tls.Certificate, error) {
	if s.KeystoreType == "" {
		s.KeystoreType = keystore.JKS
	}
	if err := checkKeyStoreSettings(s); err != nil {
		return nil, err
	}
	if s.KeystoreKey != "" {
		certs, err := keystore.KeyStore([]byte(s.KeystoreCertificateChain+"\n"+s.KeystoreKey), keystore.PEM, "", s.KeyPassword)
		if err != nil {
			return nil, fmt.Errorf("ssl.keystore.key and ssl.keystore.certificate.chain: %w", err)
		}
		return certs, nil
	}
	if s.KeystoreLocation == "" {
		return nil, nil
	}
	certs, err := readKeyStoreFile(s)
	if err != nil {
		return nil, fmt.Errorf("key store %s (ssl.keystore.location): %w", s.KeystoreLocation, err)
	}
	return certs, nil
}

func readKeyStoreFile(s TLSSettings) ([]tls.Certificate, error) {
	data, err := os.ReadFile(s.KeystoreLocation)
	if err != nil {
		return nil, err
	}
	return keystore.KeyStore(data, s.KeystoreType, s.KeystorePassword, s.KeyPassword)
}

// checkKeyStoreSettings refuses the combinations Kafka's
// DefaultSslEngineFactory refuses, with its reasons. Unlike Kafka, a PEM key
// store file may hold an unencrypted key and then needs no ssl.key.password.
func checkKeyStoreSettings(s TLSSettings) error {
	pem := strings.EqualFold(s.KeystoreType, keystore.PEM)
	switch {
	case s.KeystoreKey != "" && !pem:
		return fmt.Errorf("ssl.keystore.key can be set only with ssl.keystore.type=PEM, and ssl.keystore.type is %s", s.KeystoreType)
	case s.KeystoreKey != "" && s.KeystoreCertificateChain == "":
		return errors.New("ssl.keystore.key is set, but ssl.keystore.certificate.chain is not")
	case s.KeystoreKey == "" && s.KeystoreCertificateChain != "":
		return errors.New("ssl.keystore.certificate.chain is set, but ssl.keystore.key is not")
	case s.KeystoreKey != "" && s.KeystoreLocation != "":
		return errors.New("both ssl.keystore.location and ssl.keystore.key are set; set one")
	case pem && s.KeystorePassword != "" && (s.KeystoreKey != "" || s.KeystoreLocation != ""):
		return errors.New("ssl.keystore.password cannot be set for a PEM key store; set ssl.key.password to decrypt an encrypted key")
	case !pem && s.KeystoreLocation != "" && s.KeystorePassword == "":
		return errors.New("ssl.keystore.location is set, but ssl.keystore.password is not")
	}
	return checkStoreType("ssl.keystore.type", s.KeystoreType)
}

func checkStoreType(name, typ string) error {
	if err := keystore.CheckType(typ); err != nil {
		return fmt.Errorf("%s %w", name, err)
	}
	return nil
}

// loadTrustStore reads the CA certificates a listener trusts, from
// ssl.truststore.location or the inline ssl.truststore.certificates.
// configured is false when neither is set: the caller then falls back (a
// client to the system's roots, as Java does to its cacerts) or refuses.
func loadTrustStore(s TLSSettings) (certs []*x509.Certificate, configured bool, err error) {
	if s.TruststoreType == "" {
		s.TruststoreType = keystore.JKS
	}
	if err := checkTrustStoreSettings(s); err != nil {
		return nil, true, err
	}
	switch {
	case s.TruststoreCertificates != "":
		certs, err = keystore.TrustStore([]byte(s.TruststoreCertificates), keystore.PEM, "")
		if err != nil {
			return nil, true, fmt.Errorf("ssl.truststore.certificates: %w", err)
		}
		return certs, true, nil
	case s.TruststoreLocation == "":
		return nil, false, nil
	}
	certs, err = readTrustStoreFile(s)
	if err != nil {
		return nil, true, fmt.Errorf("trust store %s (ssl.truststore.location): %w", s.TruststoreLocation, err)
	}
	return certs, true, nil
}

func readTrustStoreFile(s TLSSettings) ([]*x509.Certificate, error) {
	data, err := os.ReadFile(s.TruststoreLocation)
	if err != nil {
		return nil, err
	}
	return keystore.TrustStore(data, s.TruststoreType, s.TruststorePassword)
}

func checkTrustStoreSettings(s TLSSettings) error {
	pem := strings.EqualFold(s.TruststoreType, keystore.PEM)
	switch {
	case s.TruststoreCertificates != "" && !pem:
		return fmt.Errorf("ssl.truststore.certificates can be set only with ssl.truststore.type=PEM, and ssl.truststore.type is %s", s.TruststoreType)
	case s.TruststoreCertificates != "" && s.TruststoreLocation != "":
		return errors.New("both ssl.truststore.location and ssl.truststore.certificates are set; set one")
	case pem && s.TruststorePassword != "" && (s.TruststoreCertificates != "" || s.TruststoreLocation != ""):
		return errors.New("ssl.truststore.password cannot be set for a PEM trust store")
	}
	return checkStoreType("ssl.truststore.type", s.TruststoreType)
}
