package auth

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"
)

// Kafka's bounds on SCRAM iterations (ScramMechanism.minIterations and
// maxIterations).
const (
	MinScramIterations = 4096
	MaxScramIterations = 16384
)

// scramHash is the hash of a SCRAM mechanism, or nil for another name.
func scramHash(mechanism string) func() hash.Hash {
	switch mechanism {
	case MechanismScramSHA256:
		return sha256.New
	case MechanismScramSHA512:
		return sha512.New
	}
	return nil
}

// ScramCredentialFromSalted derives the stored credential from a salted
// password (RFC 5802's SaltedPassword), which is what
// AlterUserScramCredentials carries: the client salts, the broker keeps
// StoredKey and ServerKey only.
func ScramCredentialFromSalted(mechanism string, salt, saltedPassword []byte, iterations int32) (ScramCredential, error) {
	h := scramHash(mechanism)
	if h == nil {
		return ScramCredential{}, fmt.Errorf("unknown SCRAM mechanism %q", mechanism)
	}
	if iterations < MinScramIterations || iterations > MaxScramIterations {
		return ScramCredential{}, fmt.Errorf("%s iterations %d outside [%d, %d]", mechanism, iterations, MinScramIterations, MaxScramIterations)
	}
	if len(salt) == 0 || len(saltedPassword) == 0 {
		return ScramCredential{}, fmt.Errorf("%s credential needs a salt and a salted password", mechanism)
	}
	clientKey := hmacOf(h, saltedPassword, "Client Key")
	stored := h()
	stored.Write(clientKey)
	return ScramCredential{
		Salt:       append([]byte(nil), salt...),
		StoredKey:  stored.Sum(nil),
		ServerKey:  hmacOf(h, saltedPassword, "Server Key"),
		Iterations: iterations,
	}, nil
}

// NewScramCredential salts a password: for users created at format time
// (--add-scram), by the CLI, and in tests.
func NewScramCredential(mechanism, password string, salt []byte, iterations int32) (ScramCredential, error) {
	h := scramHash(mechanism)
	if h == nil {
		return ScramCredential{}, fmt.Errorf("unknown SCRAM mechanism %q", mechanism)
	}
	salted, err := pbkdf2.Key(h, password, salt, int(iterations), h().Size())
	if err != nil {
		return ScramCredential{}, fmt.Errorf("%s: salt password: %w", mechanism, err)
	}
	return ScramCredentialFromSalted(mechanism, salt, salted, iterations)
}

func hmacOf(h func() hash.Hash, key []byte, msg string) []byte {
	m := hmac.New(h, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}
