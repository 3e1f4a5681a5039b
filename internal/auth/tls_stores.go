package auth

import (
	"bytes"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"os"
	"regexp"
	"strings"
	"unicode/utf16"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// The store types of ssl.keystore.type and ssl.truststore.type. Java reads
// them case-insensitively, and so does Samsa.
const (
	StoreTypeJKS    = "JKS"
	StoreTypePKCS12 = "PKCS12"
	StoreTypePEM    = "PEM"
)

// loadKeyStore reads the certificates and private keys a listener presents:
// from ssl.keystore.location, or from the inline ssl.keystore.key and
// ssl.keystore.certificate.chain. It returns none when neither is set.
func loadKeyStore(s TLSSettings) ([]tls.Certificate, error) {
	if s.KeystoreType == "" {
		s.KeystoreType = StoreTypeJKS
	}
	if err := checkKeyStoreSettings(s); err != nil {
		return nil, err
	}
	if s.KeystoreKey != "" {
		certs, err := pemKeyStore([]byte(s.KeystoreCertificateChain+"\n"+s.KeystoreKey), s.KeyPassword)
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
	data, err := readStoreFile(s.KeystoreLocation)
	if err != nil {
		return nil, err
	}
	switch format, err := storeFormat(s.KeystoreType, data); {
	case err != nil:
		return nil, err
	case format == StoreTypePEM:
		return pemKeyStore(data, s.KeyPassword)
	case format == StoreTypePKCS12:
		return pkcs12KeyStore(data, s.KeystorePassword)
	default:
		keyPassword := s.KeyPassword
		if keyPassword == "" {
			keyPassword = s.KeystorePassword // Kafka's fallback
		}
		return jksKeyStore(data, s.KeystorePassword, keyPassword)
	}
}

// checkKeyStoreSettings refuses the combinations Kafka's
// DefaultSslEngineFactory refuses, with its reasons. Unlike Kafka, a PEM key
// store file may hold an unencrypted key and then needs no ssl.key.password.
func checkKeyStoreSettings(s TLSSettings) error {
	pem := strings.EqualFold(s.KeystoreType, StoreTypePEM)
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
	for _, t := range []string{StoreTypeJKS, StoreTypePKCS12, StoreTypePEM} {
		if strings.EqualFold(typ, t) {
			return nil
		}
	}
	return fmt.Errorf("%s %q is not a store type Samsa reads: want JKS, PKCS12 or PEM", name, typ)
}

// loadTrustStore reads the CA certificates a listener trusts, from
// ssl.truststore.location or the inline ssl.truststore.certificates.
// configured is false when neither is set: the caller then falls back (a
// client to the system's roots, as Java does to its cacerts) or refuses.
func loadTrustStore(s TLSSettings) (certs []*x509.Certificate, configured bool, err error) {
	if s.TruststoreType == "" {
		s.TruststoreType = StoreTypeJKS
	}
	if err := checkTrustStoreSettings(s); err != nil {
		return nil, true, err
	}
	switch {
	case s.TruststoreCertificates != "":
		certs, err = pemCertificates([]byte(s.TruststoreCertificates))
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
	data, err := readStoreFile(s.TruststoreLocation)
	if err != nil {
		return nil, err
	}
	switch format, err := storeFormat(s.TruststoreType, data); {
	case err != nil:
		return nil, err
	case format == StoreTypePEM:
		return pemCertificates(data)
	case format == StoreTypePKCS12:
		return pkcs12TrustStore(data, s.TruststorePassword)
	default:
		return jksTrustStore(data, s.TruststorePassword)
	}
}

func checkTrustStoreSettings(s TLSSettings) error {
	pem := strings.EqualFold(s.TruststoreType, StoreTypePEM)
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

// readStoreFile reads a store, refusing an empty file: an empty file is
// what a certificate rotation that writes in place shows for a moment.
func readStoreFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, errors.New("the file is empty")
	}
	return data, nil
}

// jksMagic starts every JKS file.
const jksMagic = 0xFEEDFEED

// storeFormat is the format to read a store file as. For JKS and PKCS12 it
// follows the file's content, as Java does (keystore.type.compat): keytool
// has written PKCS12 by default since Java 9, and such files are often
// configured with Kafka's default type JKS.
func storeFormat(typ string, data []byte) (string, error) {
	if strings.EqualFold(typ, StoreTypePEM) {
		return StoreTypePEM, nil
	}
	switch {
	case len(data) >= 4 && binary.BigEndian.Uint32(data) == jksMagic:
		return StoreTypeJKS, nil
	case data[0] == 0x30: // a DER SEQUENCE: a PKCS12 PFX
		return StoreTypePKCS12, nil
	case bytes.Contains(data, []byte("-----BEGIN ")):
		return "", fmt.Errorf("the file is PEM, and the store type is %s; set the type to PEM", typ)
	}
	return "", fmt.Errorf("the file is neither JKS nor PKCS12 (a JCEKS or BCFKS store is not supported)")
}

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
// value continued with backslashes in server.properties reaches Samsa on one
// line, which encoding/pem does not read and Kafka's own parser does.
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
	pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(leaf.PublicKey) {
		return tls.Certificate{}, fmt.Errorf("the private key does not match the certificate %s", describeCertificate(leaf))
	}
	return tls.Certificate{Certificate: chain, PrivateKey: key, Leaf: leaf}, nil
}

func describeCertificate(c *x509.Certificate) string {
	dn, err := subjectDN(c)
	if err != nil {
		dn = c.Subject.String()
	}
	return "(subject " + dn + ")"
}

// pkcs12KeyStore reads a PKCS12 key store. It has one password: keytool
// refuses a key password other than the store's for PKCS12, so
// ssl.key.password is not used.
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
		if pub, ok := s.Public().(interface{ Equal(crypto.PublicKey) bool }); ok {
			for i, c := range certs {
				if pub.Equal(c.PublicKey) {
					certs[0], certs[i] = certs[i], certs[0]
					break
				}
			}
		}
	}
	chain := make([][]byte, len(certs))
	for i, c := range certs {
		chain[i] = c.Raw
	}
	return chain
}

func pkcs12TrustStore(data []byte, password string) ([]*x509.Certificate, error) {
	certs, err := pkcs12.DecodeTrustStore(data, password)
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

// The object identifiers of PKCS#5 v2 (RFC 8018) that encrypted PKCS#8 keys
// use: what openssl pkcs8 -topk8 and Java write.
var (
	oidPBES2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidDESEDE3CBC = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

var pbkdf2Hashes = map[string]func() hash.Hash{
	oidHMACSHA1.String():  sha1.New,
	"1.2.840.113549.2.8":  sha256.New224,
	"1.2.840.113549.2.9":  sha256.New,
	"1.2.840.113549.2.10": sha512.New384,
	"1.2.840.113549.2.11": sha512.New,
	"1.2.840.113549.2.13": sha512.New512_224,
	"1.2.840.113549.2.12": sha512.New512_256,
}

// pbes2Ciphers maps an encryption scheme to its key length.
var pbes2Ciphers = map[string]int{
	"2.16.840.1.101.3.4.1.2":  16, // aes128-CBC
	"2.16.840.1.101.3.4.1.22": 24, // aes192-CBC
	"2.16.840.1.101.3.4.1.42": 32, // aes256-CBC
	oidDESEDE3CBC.String():    24, // des-ede3-cbc
}

type encryptedPrivateKeyInfo struct {
	Algorithm     pkix.AlgorithmIdentifier
	EncryptedData []byte
}

type pbes2Params struct {
	KeyDerivationFunc pkix.AlgorithmIdentifier
	EncryptionScheme  pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt           []byte
	IterationCount int
	KeyLength      int                      `asn1:"optional"`
	PRF            pkix.AlgorithmIdentifier `asn1:"optional"`
}

// decryptPKCS8 decrypts an EncryptedPrivateKeyInfo protected with PBES2
// (PBKDF2 with an HMAC-SHA family PRF, AES-CBC or 3DES-CBC): what current
// openssl and Java write. The older PBES1 schemes and scrypt are refused.
// Go's standard library has no PKCS#8 decryption; PBES2 is small enough to
// write over crypto/pbkdf2 rather than bring in a library.
func decryptPKCS8(der []byte, password string) (crypto.PrivateKey, error) {
	var info encryptedPrivateKeyInfo
	if _, err := asn1.Unmarshal(der, &info); err != nil {
		return nil, fmt.Errorf("read the encrypted private key: %w", err)
	}
	if !info.Algorithm.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("the private key is encrypted with %s; only PBES2 (openssl pkcs8 -topk8 -v2 aes256) is supported", info.Algorithm.Algorithm)
	}
	block, iv, err := pbes2Cipher(info.Algorithm.Parameters.FullBytes, password)
	if err != nil {
		return nil, err
	}
	plain, err := decryptCBC(block, iv, info.EncryptedData)
	if err != nil {
		return nil, errors.New("wrong ssl.key.password (the decrypted private key is not valid)")
	}
	key, err := x509.ParsePKCS8PrivateKey(plain)
	if err != nil {
		return nil, errors.New("wrong ssl.key.password (the decrypted private key is not valid)")
	}
	return key, nil
}

// pbes2Cipher derives the key of a PBES2 scheme and returns its cipher and
// initialization vector.
func pbes2Cipher(params []byte, password string) (cipher.Block, []byte, error) {
	var p pbes2Params
	if _, err := asn1.Unmarshal(params, &p); err != nil {
		return nil, nil, fmt.Errorf("read the PBES2 parameters: %w", err)
	}
	keyLen, ok := pbes2Ciphers[p.EncryptionScheme.Algorithm.String()]
	if !ok {
		return nil, nil, fmt.Errorf("the private key's cipher %s is not supported (want AES-CBC or 3DES-CBC)", p.EncryptionScheme.Algorithm)
	}
	var iv []byte
	if _, err := asn1.Unmarshal(p.EncryptionScheme.Parameters.FullBytes, &iv); err != nil {
		return nil, nil, fmt.Errorf("read the cipher's IV: %w", err)
	}
	key, err := pbkdf2Key(p.KeyDerivationFunc, password, keyLen)
	if err != nil {
		return nil, nil, err
	}
	var block cipher.Block
	if p.EncryptionScheme.Algorithm.Equal(oidDESEDE3CBC) {
		block, err = des.NewTripleDESCipher(key)
	} else {
		block, err = aes.NewCipher(key)
	}
	if err == nil && len(iv) != block.BlockSize() {
		err = fmt.Errorf("the cipher's IV has %d bytes, want %d", len(iv), block.BlockSize())
	}
	return block, iv, err
}

func pbkdf2Key(kdf pkix.AlgorithmIdentifier, password string, keyLen int) ([]byte, error) {
	if !kdf.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("the private key's key derivation %s is not supported (want PBKDF2; scrypt is not)", kdf.Algorithm)
	}
	var p pbkdf2Params
	if _, err := asn1.Unmarshal(kdf.Parameters.FullBytes, &p); err != nil {
		return nil, fmt.Errorf("read the PBKDF2 parameters: %w", err)
	}
	prf := p.PRF.Algorithm
	if len(prf) == 0 {
		prf = oidHMACSHA1 // the default of RFC 8018
	}
	h := pbkdf2Hashes[prf.String()]
	if h == nil {
		return nil, fmt.Errorf("the private key's PBKDF2 PRF %s is not supported (want HMAC-SHA1 or HMAC-SHA2)", prf)
	}
	if p.KeyLength != 0 && p.KeyLength != keyLen {
		return nil, fmt.Errorf("the PBKDF2 key length %d does not fit the cipher's %d", p.KeyLength, keyLen)
	}
	return pbkdf2.Key(h, password, p.Salt, p.IterationCount, keyLen)
}

// decryptCBC decrypts and removes the PKCS#7 padding, whose check is what
// catches most wrong passwords.
func decryptCBC(block cipher.Block, iv, data []byte) ([]byte, error) {
	n := block.BlockSize()
	if len(data) == 0 || len(data)%n != 0 {
		return nil, errors.New("bad ciphertext length")
	}
	plain := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, data)
	pad := int(plain[len(plain)-1])
	if pad == 0 || pad > n {
		return nil, errors.New("bad padding")
	}
	for _, b := range plain[len(plain)-pad:] {
		if int(b) != pad {
			return nil, errors.New("bad padding")
		}
	}
	return plain[:len(plain)-pad], nil
}
