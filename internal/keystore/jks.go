package keystore

import (
	"bytes"
	"crypto/sha1"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"unicode/utf16"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
)

// jksWhitener is the text JKS mixes into its integrity digest.
const jksWhitener = "Mighty Aphrodite"

// jksDigest is a JKS file's integrity digest: SHA-1 over the password as
// UTF-16, the whitener, and the store's contents.
func jksDigest(password string, body []byte) []byte {
	h := sha1.New()
	for _, u := range utf16.Encode([]rune(password)) {
		h.Write([]byte{byte(u >> 8), byte(u)})
	}
	h.Write([]byte(jksWhitener))
	h.Write(body)
	return h.Sum(nil)
}

// checkJKS checks a JKS file's digest with the password, so that a wrong
// password is reported as one. With no password it skips the check as Java
// does, by re-signing the contents with the empty password that
// keystore-go, which always checks, is then given.
func checkJKS(data []byte, password, passwordConfig string) ([]byte, error) {
	if len(data) < sha1.Size+12 {
		return nil, errors.New("the JKS file is truncated")
	}
	body := data[:len(data)-sha1.Size]
	if password == "" {
		return append(body[:len(body):len(body)], jksDigest("", body)...), nil
	}
	if subtle.ConstantTimeCompare(jksDigest(password, body), data[len(body):]) != 1 {
		return nil, fmt.Errorf("wrong %s (the JKS integrity check failed)", passwordConfig)
	}
	return data, nil
}

func loadJKS(data []byte, password, passwordConfig string) (keystore.KeyStore, error) {
	data, err := checkJKS(data, password, passwordConfig)
	if err != nil {
		return keystore.KeyStore{}, err
	}
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
		return keystore.KeyStore{}, fmt.Errorf("read JKS: %w", err)
	}
	return ks, nil
}

func jksKeyStore(data []byte, password, keyPassword string) ([]tls.Certificate, error) {
	ks, err := loadJKS(data, password, "ssl.keystore.password")
	if err != nil {
		return nil, err
	}
	var certs []tls.Certificate
	for _, alias := range ks.Aliases() {
		if !ks.IsPrivateKeyEntry(alias) {
			continue
		}
		c, err := jksKeyEntry(ks, alias, keyPassword)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", alias, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("the JKS file holds no private key entry")
	}
	return certs, nil
}

func jksKeyEntry(ks keystore.KeyStore, alias, keyPassword string) (tls.Certificate, error) {
	e, err := ks.GetPrivateKeyEntry(alias, []byte(keyPassword))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("wrong ssl.key.password, or ssl.keystore.password when no key password is set (%v)", err)
	}
	key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("private key: %w", err)
	}
	chain := make([][]byte, len(e.CertificateChain))
	for i, c := range e.CertificateChain {
		chain[i] = c.Content
	}
	return keyPair(key, chain)
}

// jksTrustStore reads the trusted certificate entries and, as Java's trust
// manager does, the leaf certificate of each private key entry.
func jksTrustStore(data []byte, password string) ([]*x509.Certificate, error) {
	ks, err := loadJKS(data, password, "ssl.truststore.password")
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	for _, alias := range ks.Aliases() {
		der, ok := jksTrustedCertificate(ks, alias)
		if !ok {
			continue
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", alias, err)
		}
		certs = append(certs, c)
	}
	return certs, nil
}

func jksTrustedCertificate(ks keystore.KeyStore, alias string) ([]byte, bool) {
	if e, err := ks.GetTrustedCertificateEntry(alias); err == nil {
		return e.Certificate.Content, true
	}
	chain, err := ks.GetPrivateKeyEntryCertificateChain(alias)
	if err != nil || len(chain) == 0 {
		return nil, false
	}
	return chain[0].Content, true
}
