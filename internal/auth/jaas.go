package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/samsa-io/samsa/internal/jaas"
)

// sasl.jaas.config is parsed by internal/jaas, which the client-side
// commands share; this file reads what the broker's mechanisms take from it.

// The login modules whose options this package reads.
const (
	PlainLoginModule       = jaas.PlainLoginModule
	ScramLoginModule       = jaas.ScramLoginModule
	OAuthBearerLoginModule = jaas.OAuthBearerLoginModule
)

// JAASConfig is the login module entry of a sasl.jaas.config value. Its
// String and GoString hide the option values, so logging it leaks nothing.
type JAASConfig = jaas.Config

// ParseJAAS reads a sasl.jaas.config value (jaas.Parse).
func ParseJAAS(s string) (JAASConfig, error) { return jaas.Parse(s) }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// PlainUsers is the user database of Kafka's default PLAIN server callback
// handler: user name to password, from the user_<name> options of the
// PlainLoginModule entry. Its String and GoString list names only.
type PlainUsers map[string]string

// plainUserPrefix starts the options that declare a PLAIN user.
const plainUserPrefix = "user_"

// msgInvalidUserPassword is Kafka's answer to both an unknown user and a
// wrong password, so a client cannot tell which.
const msgInvalidUserPassword = "Authentication failed: Invalid username or password"

// PlainUsersFromJAAS collects the user_<name>="<password>" options.
func PlainUsersFromJAAS(j JAASConfig) (PlainUsers, error) {
	if j.LoginModule != PlainLoginModule {
		return nil, fmt.Errorf("jaas: PLAIN users come from %s, not %s", PlainLoginModule, j.LoginModule)
	}
	users := PlainUsers{}
	for k, v := range j.Options {
		name, ok := strings.CutPrefix(k, plainUserPrefix)
		if !ok {
			continue
		}
		if name == "" || !utf8.ValidString(name) {
			return nil, fmt.Errorf("jaas: option %q names no valid user", k)
		}
		users[name] = v
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("jaas: %s entry declares no user_<name> options, so no PLAIN user could log in", PlainLoginModule)
	}
	return users, nil
}

// CheckPlain compares SHA-256 digests in constant time, so the time taken
// tells neither the password's length nor how much of it matched, and an
// unknown user costs the same as a known one.
func (u PlainUsers) CheckPlain(user, password string) error {
	want, known := u[user]
	got := sha256.Sum256([]byte(password))
	exp := sha256.Sum256([]byte(want))
	match := subtle.ConstantTimeCompare(got[:], exp[:]) == 1
	if !known || !match {
		return Failed(msgInvalidUserPassword)
	}
	return nil
}

// String lists the user names, never the passwords.
func (u PlainUsers) String() string {
	names := sortedKeys(u)
	return "PlainUsers[" + strings.Join(names, " ") + "]"
}

// GoString keeps %#v from printing the passwords either.
func (u PlainUsers) GoString() string { return "auth." + u.String() }
