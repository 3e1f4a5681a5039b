package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"math/big"
)

// Delegation tokens (KIP-48) as Kafka derives their secrets. A token is
// an ID and an HMAC: HmacSHA512 of the ID's UTF-8 bytes under the
// delegation.token.secret.key's UTF-8 bytes. Nothing but the ID is stored;
// every node that knows the key derives the HMAC again. A client logs in
// with SCRAM, the token ID as the user name and the HMAC in standard
// base64 as the password (tokenauth=true), so each node keeps, per SCRAM
// mechanism, the credential that password salts to.

// DelegationTokenHMAC is the HMAC of a token ID under the secret key.
func DelegationTokenHMAC(secretKey, tokenID string) []byte {
	m := hmac.New(sha512.New, []byte(secretKey))
	m.Write([]byte(tokenID))
	return m.Sum(nil)
}

// DelegationTokenPassword is the SCRAM password of a token: its HMAC in
// standard base64, as Kafka's clients send it.
func DelegationTokenPassword(hmac []byte) string {
	return base64.StdEncoding.EncodeToString(hmac)
}

// NewDelegationTokenCredential salts a token's password for one SCRAM
// mechanism, with a fresh salt and the mechanism's minimum of 4096
// iterations, as Kafka's brokers do for each token they learn of.
func NewDelegationTokenCredential(mechanism string, hmac []byte) (ScramCredential, error) {
	return NewScramCredential(mechanism, DelegationTokenPassword(hmac), newScramSalt(), MinScramIterations)
}

// newScramSalt draws a salt shaped as Kafka's ScramFormatter draws them:
// 130 random bits written in base 36.
func newScramSalt() []byte {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 130))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return []byte(n.Text(36))
}
