package auth

import "time"

// The SASL mechanism names Kafka uses.
const (
	MechanismPlain       = "PLAIN"
	MechanismScramSHA256 = "SCRAM-SHA-256"
	MechanismScramSHA512 = "SCRAM-SHA-512"
	MechanismOAuthBearer = "OAUTHBEARER"
)

// Mechanism is the server side of one SASL mechanism on one listener.
type Mechanism interface {
	// Name is the mechanism's name as SaslHandshake carries it.
	Name() string
	// NewSession starts one authentication exchange.
	NewSession() Session
}

// Session is one authentication exchange of a connection.
type Session interface {
	// Step takes the client's next token and returns the reply to send.
	// done is true once the exchange has ended; err is then nil for a
	// success. A failed authentication is an *Error (IsAuthError), whose
	// message is safe to send and log.
	Step(token []byte) (reply []byte, done bool, err error)
	// Principal is the authenticated principal once Step has returned
	// done without an error.
	Principal() Principal
	// Expiry is when the credential used stops being valid (an
	// OAUTHBEARER token's exp, a delegation token's expiry); zero when it
	// does not. Re-authentication (KIP-368) ends the session no later.
	Expiry() time.Time
}

// ScramCredential is what the broker stores of a SCRAM user: the salted
// keys of RFC 5802, never the password.
type ScramCredential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// ScramCredentials finds a user's credential for one SCRAM mechanism.
// The broker implements it over the current metadata image.
type ScramCredentials interface {
	ScramCredential(mechanism, user string) (ScramCredential, bool)
}

// PlainChecker checks a PLAIN user name and password: the seam for
// another user database. It returns an *Error when they do not match.
type PlainChecker interface {
	CheckPlain(user, password string) error
}
