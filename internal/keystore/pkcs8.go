package keystore

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"hash"
)

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
	if p.IterationCount < 1 || p.IterationCount > maxPBKDF2Iterations {
		return nil, fmt.Errorf("the private key's PBKDF2 iteration count %d is outside 1-%d", p.IterationCount, maxPBKDF2Iterations)
	}
	return pbkdf2.Key(h, password, p.Salt, p.IterationCount, keyLen)
}

// maxPBKDF2Iterations bounds the work a key file may ask for: the count
// comes from the file, and a corrupt or hostile one could otherwise stall
// a start or a certificate reload for minutes (2^26 iterations take half a
// minute here). Tools write 2,048 (OpenSSL 1.x) to 600,000 (current
// recommendations); ten million take a few seconds.
const maxPBKDF2Iterations = 10_000_000

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
