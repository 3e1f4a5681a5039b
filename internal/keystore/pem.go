package keystore

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// pemKeyStore reads a PEM private key and its certificate chain, leaf first.
// The key is PKCS#8 (encrypted with PBES2 when ssl.key.password is set, as
// Kafka requires), or an unencrypted PKCS#1 or SEC 1 key.
func pemKeyStore(data []byte, keyPassword string) ([]tls.Certificate, error) {
	blocks, err := parsePEM(data)
	if err != nil {
		return nil, err
	}
	var keys []pemBlock
	var chain [][]byte
	for _, b := range blocks {
		switch {
		case b.typ == "CERTIFICATE":
			chain = append(chain, b.der)
		case strings.HasSuffix(b.typ, "PRIVATE KEY"):
			keys = append(keys, b)
		}
	}
	if len(keys) != 1 {
		return nil, fmt.Errorf("want one PEM private key, found %d", len(keys))
	}
	key, err := pemPrivateKey(keys[0], keyPassword)
	if err != nil {
		return nil, err
	}
	c, err := keyPair(key, chain)
	if err != nil {
		return nil, err
	}
	return []tls.Certificate{c}, nil
}

func pemPrivateKey(b pemBlock, password string) (crypto.PrivateKey, error) {
	if b.headers {
		return nil, fmt.Errorf("the %s has PEM headers: an OpenSSL-encrypted key (Proc-Type) is not supported; convert it with openssl pkcs8 -topk8 -v2 aes256", b.typ)
	}
	switch b.typ {
	case "ENCRYPTED PRIVATE KEY":
		if password == "" {
			return nil, errors.New("the private key is encrypted, and ssl.key.password is not set")
		}
		return decryptPKCS8(b.der, password)
	}
	if password != "" {
		return nil, errors.New("ssl.key.password is set, but the private key is not encrypted: drop ssl.key.password")
	}
	switch b.typ {
	case "PRIVATE KEY":
		return x509.ParsePKCS8PrivateKey(b.der)
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(b.der)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(b.der)
	}
	return nil, fmt.Errorf("a %s is not a private key Samsa reads (want PKCS#8, PKCS#1 or SEC 1)", b.typ)
}

func pemCertificates(data []byte) ([]*x509.Certificate, error) {
	blocks, err := parsePEM(data)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	for _, b := range blocks {
		if b.typ != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.der)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", len(certs)+1, err)
		}
		certs = append(certs, c)
	}
	return certs, nil
}

// pemBlock is one decoded PEM block; headers is true when it had any.
type pemBlock struct {
	typ     string
	der     []byte
	headers bool
}

// pemBlockRE finds PEM blocks wherever their line breaks went: a multi-line
// value continued with backslashes in a properties file reaches Samsa on
// one line, which encoding/pem does not read and Kafka's own parser does.
var pemBlockRE = regexp.MustCompile(`(?s)-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END ([A-Z0-9 ]+)-----`)

func parsePEM(data []byte) ([]pemBlock, error) {
	var blocks []pemBlock
	for _, m := range pemBlockRE.FindAllSubmatch(data, -1) {
		typ, body := string(m[1]), string(m[2])
		if typ != string(m[3]) {
			return nil, fmt.Errorf("PEM block BEGIN %s ends with END %s", typ, m[3])
		}
		b := pemBlock{typ: typ, headers: strings.Contains(body, ":")}
		if !b.headers {
			var err error
			if b.der, err = base64.StdEncoding.DecodeString(strings.Join(strings.Fields(body), "")); err != nil {
				return nil, fmt.Errorf("PEM block %s: %w", typ, err)
			}
		}
		blocks = append(blocks, b)
	}
	if len(blocks) == 0 {
		return nil, errors.New("no PEM block found")
	}
	return blocks, nil
}
