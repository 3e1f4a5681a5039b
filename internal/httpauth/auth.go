package httpauth

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// Auth is HTTP basic authentication on the API, with the meaning of
// Confluent's authentication.method=BASIC: every request must carry a
// user and password that the users file (Jetty's PropertyFileLoginModule
// format) or a login to the Kafka cluster accepts, and the user must hold
// one of Roles ("*": any user). A request without valid credentials gets
// 401 with WWW-Authenticate: Basic realm="Realm"; a user without an
// allowed role gets 403.
type Auth struct {
	// Realm names the protection space in WWW-Authenticate (Confluent's
	// authentication.realm).
	Realm string
	// Roles are the roles allowed in (Confluent's authentication.roles);
	// "*" or empty: every authenticated user.
	Roles []string
	// Users are the users of the file, nil for none.
	Users map[string]User
	// Login, when set, checks the credentials of a user the file does not
	// hold against the Kafka cluster (KafkaLogin). Such a user has no
	// roles: Roles must allow any user for it to get in.
	Login func(ctx context.Context, user, password string) error
	// CacheTTL is how long a successful Login is trusted before the
	// cluster is asked again; 60s when zero.
	CacheTTL time.Duration

	cache struct {
		sync.Mutex
		ok map[string]time.Time // key: user and password hash; value: expiry
	}
}

// User is one line of a users file: its password check and its roles.
type User struct {
	// Password is the stored credential: plain text, or "MD5:" and the
	// hex MD5 digest of the password, as Jetty's Credential reads them.
	Password string
	Roles    []string
}

// ErrLoginFailed is a Login's answer for credentials the cluster refused
// (as opposed to a cluster it could not reach).
var ErrLoginFailed = errors.New("httpauth: login refused")

// LoadUsers reads a users file in Jetty's PropertyFileLoginModule format,
// one "user: password[,role ...]" per line, '#' or '!' starting a comment.
// Passwords are plain or "MD5:<hex>"; Jetty's OBF: and CRYPT: forms are
// refused rather than compared as plain text.
func LoadUsers(path string) (map[string]User, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("httpauth: users file: %w", err)
	}
	users := map[string]User{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		i := strings.IndexAny(line, ":=")
		if i <= 0 {
			return nil, fmt.Errorf("httpauth: users file %s line %d: want \"user: password[,role ...]\"", path, n)
		}
		name := strings.TrimSpace(line[:i])
		fields := strings.Split(line[i+1:], ",")
		u := User{Password: strings.TrimSpace(fields[0])}
		for _, r := range fields[1:] {
			if r = strings.TrimSpace(r); r != "" {
				u.Roles = append(u.Roles, r)
			}
		}
		if u.Password == "" {
			return nil, fmt.Errorf("httpauth: users file %s line %d: user %s has no password", path, n, name)
		}
		if p := strings.ToUpper(u.Password); strings.HasPrefix(p, "OBF:") || strings.HasPrefix(p, "CRYPT:") {
			return nil, fmt.Errorf("httpauth: users file %s line %d: user %s: OBF: and CRYPT: passwords are not read; use the password or MD5:<hex digest>", path, n, name)
		}
		users[name] = u
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("httpauth: users file %s: %w", path, err)
	}
	return users, nil
}

// Matches compares a password with the stored credential in constant
// time.
func (u User) Matches(password string) bool {
	want, given := u.Password, password
	if len(want) > 4 && strings.EqualFold(want[:4], "MD5:") {
		sum := md5.Sum([]byte(password))
		want, given = strings.ToLower(want[4:]), hex.EncodeToString(sum[:])
	}
	return subtle.ConstantTimeCompare([]byte(want), []byte(given)) == 1
}

// Principal is who a request came in as: the basic-auth user and
// password it carried, the roles the users file gives it, and whether the
// Kafka cluster accepted it (a user of the cluster's SASL principals, not
// of the file), so a service can act as that principal on the cluster.
type Principal struct {
	User, Password string
	Roles          []string
	Kafka          bool
}

// ErrUnauthorized is Check's answer for a request without valid
// credentials (answer 401 with Challenge); ErrForbidden for a user
// without an allowed role (403). Any other error of Check is the cluster
// not answering a login (the service's 5xx).
var (
	ErrUnauthorized = errors.New("httpauth: unauthorized")
	ErrForbidden    = errors.New("httpauth: forbidden")
)

// Check authenticates a request and checks the user's roles.
func (a *Auth) Check(req *http.Request) (Principal, error) {
	p, err := a.authenticate(req)
	if err == nil && !a.allowed(p.Roles) {
		err = ErrForbidden
	}
	return p, err
}

// Challenge sets the WWW-Authenticate header a 401 carries.
func (a *Auth) Challenge(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", fmt.Sprintf("Basic realm=%q", a.Realm))
}

func (a *Auth) authenticate(req *http.Request) (Principal, error) {
	user, password, ok := req.BasicAuth()
	if !ok {
		return Principal{}, ErrUnauthorized
	}
	if u, found := a.Users[user]; found {
		if !u.Matches(password) {
			return Principal{}, ErrUnauthorized
		}
		return Principal{User: user, Password: password, Roles: u.Roles}, nil
	}
	if a.Login == nil {
		return Principal{}, ErrUnauthorized
	}
	p := Principal{User: user, Password: password, Kafka: true}
	if a.cached(user, password) {
		return p, nil
	}
	switch err := a.Login(req.Context(), user, password); {
	case errors.Is(err, ErrLoginFailed):
		return Principal{}, ErrUnauthorized
	case err != nil:
		return Principal{}, fmt.Errorf("httpauth: login to the Kafka cluster: %w", err)
	}
	a.remember(user, password)
	return p, nil
}

// allowed reports whether roles hold one Roles allows.
func (a *Auth) allowed(roles []string) bool {
	if len(a.Roles) == 0 || slices.Contains(a.Roles, "*") {
		return true
	}
	for _, r := range roles {
		if slices.Contains(a.Roles, r) {
			return true
		}
	}
	return false
}

// CacheKey names a user and password without holding the password: the
// user and the SHA-256 of the password.
func CacheKey(user, password string) string {
	sum := sha256.Sum256([]byte(password))
	return user + "\x00" + string(sum[:])
}

func (a *Auth) cached(user, password string) bool {
	a.cache.Lock()
	defer a.cache.Unlock()
	exp, ok := a.cache.ok[CacheKey(user, password)]
	return ok && time.Now().Before(exp)
}

func (a *Auth) remember(user, password string) {
	ttl := a.CacheTTL
	if ttl <= 0 {
		ttl = 60 * time.Second
	}
	a.cache.Lock()
	defer a.cache.Unlock()
	if a.cache.ok == nil || len(a.cache.ok) > 10_000 {
		a.cache.ok = map[string]time.Time{} // a bound: a forgotten login is only asked again
	}
	a.cache.ok[CacheKey(user, password)] = time.Now().Add(ttl)
}
