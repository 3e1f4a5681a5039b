package schemaregistry

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
var ErrLoginFailed = errors.New("schemaregistry: login refused")

// LoadUsers reads a users file in Jetty's PropertyFileLoginModule format,
// one "user: password[,role ...]" per line, '#' or '!' starting a comment.
// Passwords are plain or "MD5:<hex>"; Jetty's OBF: and CRYPT: forms are
// refused rather than compared as plain text.
func LoadUsers(path string) (map[string]User, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("schemaregistry: users file: %w", err)
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
			return nil, fmt.Errorf("schemaregistry: users file %s line %d: want \"user: password[,role ...]\"", path, n)
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
			return nil, fmt.Errorf("schemaregistry: users file %s line %d: user %s has no password", path, n, name)
		}
		if p := strings.ToUpper(u.Password); strings.HasPrefix(p, "OBF:") || strings.HasPrefix(p, "CRYPT:") {
			return nil, fmt.Errorf("schemaregistry: users file %s line %d: user %s: OBF: and CRYPT: passwords are not read; use the password or MD5:<hex digest>", path, n, name)
		}
		users[name] = u
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("schemaregistry: users file %s: %w", path, err)
	}
	return users, nil
}

// matches compares a password with the stored credential in constant
// time.
func (u User) matches(password string) bool {
	want, given := u.Password, password
	if len(want) > 4 && strings.EqualFold(want[:4], "MD5:") {
		sum := md5.Sum([]byte(password))
		want, given = strings.ToLower(want[4:]), hex.EncodeToString(sum[:])
	}
	return subtle.ConstantTimeCompare([]byte(want), []byte(given)) == 1
}

// authenticate checks a request's credentials: the user's roles when it
// got in, or the error to answer.
func (a *Auth) authenticate(req *http.Request) ([]string, *Error) {
	user, password, ok := req.BasicAuth()
	if !ok {
		return nil, errUnauthorized()
	}
	if u, found := a.Users[user]; found {
		if !u.matches(password) {
			return nil, errUnauthorized()
		}
		return u.Roles, nil
	}
	if a.Login == nil {
		return nil, errUnauthorized()
	}
	if a.cached(user, password) {
		return nil, nil
	}
	switch err := a.Login(req.Context(), user, password); {
	case errors.Is(err, ErrLoginFailed):
		return nil, errUnauthorized()
	case err != nil:
		return nil, &Error{http.StatusInternalServerError, codeStore, fmt.Sprintf("Error while authenticating against the Kafka cluster: %v", err)}
	}
	a.remember(user, password)
	return nil, nil
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

func cacheKey(user, password string) string {
	sum := sha256.Sum256([]byte(password))
	return user + "\x00" + string(sum[:])
}

func (a *Auth) cached(user, password string) bool {
	a.cache.Lock()
	defer a.cache.Unlock()
	exp, ok := a.cache.ok[cacheKey(user, password)]
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
	a.cache.ok[cacheKey(user, password)] = time.Now().Add(ttl)
}

// withAuth puts basic authentication in front of h; a nil Auth lets
// everything through.
func withAuth(a *Auth, h http.Handler) http.Handler {
	if a == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		roles, e := a.authenticate(req)
		if e == nil && !a.allowed(roles) {
			e = &Error{http.StatusForbidden, http.StatusForbidden, "Forbidden"}
		}
		if e != nil {
			if e.Status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf("Basic realm=%q", a.Realm))
			}
			writeError(w, e)
			return
		}
		h.ServeHTTP(w, req)
	})
}

func errUnauthorized() *Error {
	return &Error{http.StatusUnauthorized, http.StatusUnauthorized, "Unauthorized"}
}
