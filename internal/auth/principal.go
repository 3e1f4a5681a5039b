package auth

import (
	"errors"
	"fmt"
	"strings"
)

// Principal is who a connection authenticated as, in Kafka's form
// Type:Name. Kafka's built-in principals are all of type User.
type Principal struct {
	Type string
	Name string
}

// UserType is the type of every principal Kafka's own principal builder
// makes.
const UserType = "User"

// Anonymous is the principal of a connection that did not authenticate
// (PLAINTEXT, or SSL without a client certificate), as Kafka names it.
var Anonymous = Principal{Type: UserType, Name: "ANONYMOUS"}

// User is the principal User:name.
func User(name string) Principal { return Principal{Type: UserType, Name: name} }

// String is the principal as ACLs and super.users write it: User:alice.
func (p Principal) String() string { return p.Type + ":" + p.Name }

// ParsePrincipal reads Type:Name. The name may itself hold colons (a
// certificate's distinguished name does not, a mapped one may).
func ParsePrincipal(s string) (Principal, error) {
	t, n, ok := strings.Cut(s, ":")
	if !ok || t == "" {
		return Principal{}, fmt.Errorf("principal %q is not Type:Name", s)
	}
	return Principal{Type: t, Name: n}, nil
}

// Error is a failed authentication. Its message is sent to the client
// (SaslAuthenticate's ErrorMessage) and logged, so it never holds a
// password, a token or a key.
type Error struct {
	Msg string
}

func (e *Error) Error() string { return e.Msg }

// Failed returns an authentication error with a message safe to show.
func Failed(format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

// IsAuthError reports whether err is a failed authentication rather than
// a fault of the broker.
func IsAuthError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
