package auth

import (
	"bytes"
	"fmt"
	"time"
	"unicode/utf8"
)

// SASL/PLAIN (RFC 4616) as Kafka's PlainSaslServer runs it: one client
// message, authzid NUL authcid NUL passwd, answered by an empty token.
//
// What the client reads when it fails, as Kafka sends it:
//   - a malformed message, an empty user name or an empty password: the
//     generic "Authentication failed during authentication due to invalid
//     credentials with SASL mechanism PLAIN" (Kafka raises a SaslException,
//     whose detail SaslServerAuthenticator keeps off the wire);
//   - an unknown user or a wrong password: "Authentication failed: Invalid
//     username or password", the same for both;
//   - an authorization id other than the user name, checked after the
//     password as Kafka does: "Authentication failed: Client requested an
//     authorization id that is different from username".
//
// Stricter than Kafka, following RFC 4616: the message must be UTF-8 and
// hold exactly two NULs (Kafka decodes with replacement characters and
// ignores anything after a third NUL).

// msgAuthzidDiffers is Kafka's refusal of an authzid that is not the user.
const msgAuthzidDiffers = "Authentication failed: Client requested an authorization id that is different from username"

// mechanismFailed is the message Kafka's SaslServerAuthenticator sends in
// place of a mechanism's own SaslException, which may tell whether a user
// exists. PLAIN, SCRAM and OAUTHBEARER all use it.
func mechanismFailed(mechanism string) error {
	return Failed("Authentication failed during authentication due to invalid credentials with SASL mechanism %s", mechanism)
}

// errExchangeEnded answers a token sent after the exchange ended, which a
// correct broker never passes on.
var errExchangeEnded = Failed("Authentication failed: the SASL exchange has already ended")

// NewPlain is the PLAIN mechanism checking users with check (PlainUsers
// for Kafka's user_<name> JAAS options). When check fails with an error
// that is not an *Error, Step returns it wrapped: a fault of the user
// database, not a failed authentication.
func NewPlain(check PlainChecker) Mechanism { return plainMechanism{check: check} }

type plainMechanism struct {
	check PlainChecker
}

func (plainMechanism) Name() string { return MechanismPlain }

func (m plainMechanism) NewSession() Session { return &plainSession{check: m.check} }

type plainSession struct {
	check     PlainChecker
	ended     bool
	principal Principal
}

func (s *plainSession) Step(msg []byte) ([]byte, bool, error) {
	if s.ended {
		return nil, true, errExchangeEnded
	}
	s.ended = true
	authzid, user, password, ok := parsePlain(msg)
	if !ok {
		return nil, true, mechanismFailed(MechanismPlain)
	}
	if err := s.check.CheckPlain(user, password); err != nil {
		if !IsAuthError(err) {
			return nil, true, fmt.Errorf("plain: check credentials: %w", err)
		}
		return nil, true, err
	}
	if authzid != "" && authzid != user {
		return nil, true, Failed(msgAuthzidDiffers)
	}
	s.principal = User(user)
	return nil, true, nil
}

func (s *plainSession) Principal() Principal { return s.principal }

// Expiry is zero: a password does not expire.
func (s *plainSession) Expiry() time.Time { return time.Time{} }

// parsePlain splits [authzid] NUL authcid NUL passwd; ok is false when the
// message is malformed or the user name or password is empty.
func parsePlain(msg []byte) (authzid, user, password string, ok bool) {
	if !utf8.Valid(msg) {
		return "", "", "", false
	}
	parts := bytes.Split(msg, []byte{0})
	if len(parts) != 3 || len(parts[1]) == 0 || len(parts[2]) == 0 {
		return "", "", "", false
	}
	return string(parts[0]), string(parts[1]), string(parts[2]), true
}
