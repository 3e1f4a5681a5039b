package keystoretest

import (
	"bytes"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"testing"
)

// The object identifiers of PKCS#5 v2 (RFC 8018) and the algorithms
// openssl pkcs8 -topk8 -v2 aes256 -v2prf hmacWithSHA256 names.
var (
	oidPBES2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
)

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
	PRF            pkix.AlgorithmIdentifier
}

// EncryptedKeyPEM is key as an ENCRYPTED PRIVATE KEY PEM block, encrypted
// with password as openssl pkcs8 -topk8 -v2 aes256 does: PBES2, PBKDF2
// with HMAC-SHA256, AES-256-CBC.
func EncryptedKeyPEM(t testing.TB, key crypto.PrivateKey, password string) []byte {
	t.Helper()
	return EncryptedKeyPEMClaiming(t, key, password, 2048)
}

// EncryptedKeyPEMClaiming is EncryptedKeyPEM, encrypted with 2,048
// PBKDF2 iterations but saying it took claimed: a key file asking a reader
// for more work than it did, without the writer doing it.
func EncryptedKeyPEMClaiming(t testing.TB, key crypto.PrivateKey, password string, claimed int) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	salt, iv := make([]byte, 16), make([]byte, aes.BlockSize)
	rand.Read(salt)
	rand.Read(iv)
	const iterations = 2048
	aesKey, err := pbkdf2.Key(sha256.New, password, salt, iterations, 32)
	if err != nil {
		t.Fatal(err)
	}
	block, err := aes.NewCipher(aesKey)
	if err != nil {
		t.Fatal(err)
	}
	pad := aes.BlockSize - len(der)%aes.BlockSize
	plain := append(der, bytes.Repeat([]byte{byte(pad)}, pad)...)
	ciphertext := make([]byte, len(plain))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(ciphertext, plain)
	kdf := pbkdf2Params{Salt: salt, IterationCount: claimed,
		PRF: pkix.AlgorithmIdentifier{Algorithm: oidHMACSHA256, Parameters: asn1.NullRawValue}}
	params := pbes2Params{
		KeyDerivationFunc: pkix.AlgorithmIdentifier{Algorithm: oidPBKDF2, Parameters: asn1.RawValue{FullBytes: marshal(t, kdf)}},
		EncryptionScheme:  pkix.AlgorithmIdentifier{Algorithm: oidAES256CBC, Parameters: asn1.RawValue{FullBytes: marshal(t, iv)}},
	}
	info := encryptedPrivateKeyInfo{
		Algorithm:     pkix.AlgorithmIdentifier{Algorithm: oidPBES2, Parameters: asn1.RawValue{FullBytes: marshal(t, params)}},
		EncryptedData: ciphertext,
	}
	return pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: marshal(t, info)})
}

func marshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := asn1.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
