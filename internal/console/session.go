package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/internal/httpauth"
)

const (
	cookieName  = "samsa_console"
	themeCookie = "samsa_theme"
	// sessionIdle ends a logged-in session unused this long.
	sessionIdle = 30 * time.Minute
	// maxSessions bounds the logged-in sessions (each holds Kafka
	// clients); the least recently used goes first.
	maxSessions = 256
)

// session is one browser's: its CSRF token and, for a logged-in user,
// the user's own clients. Without login every browser shares the
// console's clients.
type session struct {
	id       string
	user     string // "" when nobody logs in
	password string // kept only to reach the registry and Connect as the user; never rendered
	opts     []kgo.Opt
	cl       *kgo.Client
	adm      *kadm.Client
	reg      *sr.Client // nil without a registry
	csrf     string
	last     atomic.Int64
	owned    bool // its clients are its own (closed with it)
}

type sessions struct {
	c      *Console
	key    []byte // signs CSRF tokens of anonymous sessions
	shared *session

	mu   sync.Mutex
	byID map[string]*session
}

func newSessions(c *Console) *sessions {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	ss := &sessions{c: c, key: key, byID: map[string]*session{}}
	if c.cfg.LoginMechanism == "" {
		ss.shared = ss.build("", "")
	}
	return ss
}

// build makes the clients of user (the console's own identity when "").
func (ss *sessions) build(user, password string) *session {
	opts := append([]kgo.Opt{kgo.ClientID("samsa-console")}, ss.c.cfg.ClientOpts...)
	if user != "" {
		mech, _ := httpauth.Mechanism(ss.c.cfg.LoginMechanism, user, password)
		opts = append(opts, kgo.SASL(mech))
	}
	s := &session{user: user, password: password, opts: opts, owned: user != ""}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		// Only bad options fail here, and New checked them.
		panic(fmt.Sprintf("console: client options: %v", err))
	}
	s.cl, s.adm = cl, kadm.NewClient(cl)
	if ss.c.cfg.RegistryURL != "" {
		ropts := []sr.ClientOpt{sr.URLs(ss.c.cfg.RegistryURL), sr.HTTPClient(ss.c.http), sr.UserAgent("samsa-console")}
		if user != "" {
			ropts = append(ropts, sr.BasicAuth(user, password))
		}
		s.reg, _ = sr.NewClient(ropts...)
	}
	s.last.Store(time.Now().UnixNano())
	return s
}

func (s *session) close() {
	if s.owned && s.cl != nil {
		s.cl.Close()
	}
}

// get is the request's session; a browser without one gets one (its
// cookie set on w).
func (ss *sessions) get(w http.ResponseWriter, r *http.Request) (*session, error) {
	id := ""
	if ck, err := r.Cookie(cookieName); err == nil && len(ck.Value) == 43 {
		id = ck.Value
	}
	if id != "" {
		ss.mu.Lock()
		s := ss.byID[id]
		ss.mu.Unlock()
		if s != nil {
			s.last.Store(time.Now().UnixNano())
			return s, nil
		}
	}
	if id == "" {
		id = randomID()
		ss.setCookie(w, id)
	}
	// Not logged in: an anonymous session whose CSRF token is the
	// cookie's signature, so nothing is stored for it.
	anon := &session{id: id, csrf: ss.sign(id)}
	if ss.shared != nil {
		anon.opts, anon.cl, anon.adm, anon.reg = ss.shared.opts, ss.shared.cl, ss.shared.adm, ss.shared.reg
	}
	return anon, nil
}

func (ss *sessions) setCookie(w http.ResponseWriter, id string) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true,
		Secure: ss.c.cfg.SecureCookies, SameSite: http.SameSiteStrictMode})
}

func (ss *sessions) sign(id string) string {
	m := hmac.New(sha256.New, ss.key)
	m.Write([]byte(id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// login replaces the browser's session with a logged-in one.
func (ss *sessions) login(w http.ResponseWriter, user, password string) *session {
	s := ss.build(user, password)
	s.id = randomID()
	s.csrf = randomID()
	ss.mu.Lock()
	if len(ss.byID) >= maxSessions {
		var oldest *session
		for _, o := range ss.byID {
			if oldest == nil || o.last.Load() < oldest.last.Load() {
				oldest = o
			}
		}
		delete(ss.byID, oldest.id)
		defer oldest.close()
	}
	ss.byID[s.id] = s
	ss.mu.Unlock()
	ss.setCookie(w, s.id)
	return s
}

func (ss *sessions) logout(w http.ResponseWriter, s *session) {
	ss.mu.Lock()
	if ss.byID[s.id] == s {
		delete(ss.byID, s.id)
	}
	ss.mu.Unlock()
	s.close()
	ss.setCookie(w, randomID())
}

func (ss *sessions) expireLoop(done <-chan struct{}) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		cut := time.Now().Add(-sessionIdle).UnixNano()
		var gone []*session
		ss.mu.Lock()
		for id, s := range ss.byID {
			if s.last.Load() < cut {
				delete(ss.byID, id)
				gone = append(gone, s)
			}
		}
		ss.mu.Unlock()
		for _, s := range gone {
			s.close()
		}
	}
}

func (ss *sessions) closeAll() {
	ss.mu.Lock()
	all := ss.byID
	ss.byID = map[string]*session{}
	ss.mu.Unlock()
	for _, s := range all {
		s.close()
	}
	if ss.shared != nil {
		ss.shared.cl.Close()
	}
}

// checkCSRF accepts a mutating request only from the console's own
// pages: the form field _csrf or the X-CSRF-Token header (htmx) must be
// the session's token, and a browser's Origin, when sent, this host.
func (s *session) checkCSRF(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return fmt.Errorf("cross-origin request from %q refused", o)
		}
	}
	tok := r.Header.Get("X-CSRF-Token")
	if tok == "" {
		tok = r.PostFormValue("_csrf")
	}
	if tok == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(s.csrf)) != 1 {
		return errors.New("the form's CSRF token is missing or stale: reload the page and try again")
	}
	return nil
}

func randomID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

type sessionKey struct{}

func withSession(ctx context.Context, s *session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// sess is the request's session.
func sess(r *http.Request) *session {
	s, _ := r.Context().Value(sessionKey{}).(*session)
	if s == nil {
		panic("console: a page ran without its session")
	}
	return s
}

// Client is the request's Kafka client (the user's, when users log in).
func (c *Console) client(r *http.Request) *kgo.Client { return sess(r).cl }

// admin is the request's admin client.
func (c *Console) admin(r *http.Request) *kadm.Client { return sess(r).adm }

// registry is the request's Schema Registry client; nil without one.
func (c *Console) registry(r *http.Request) *sr.Client { return sess(r).reg }

// newClient is a short-lived client of the request's user with more
// options (a consumer's partitions and offsets); the caller closes it.
func (c *Console) newClient(r *http.Request, extra ...kgo.Opt) (*kgo.Client, error) {
	s := sess(r)
	return kgo.NewClient(append(append([]kgo.Opt{}, s.opts...), extra...)...)
}

// httpError is a non-2xx answer of an HTTP service (Connect, the
// registry, a broker's admin listener).
type httpError struct {
	Status  int
	Message string
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message) }

// doJSON sends a JSON request to base+path as the request's user (basic
// auth with their Kafka login when users log in) and decodes a 2xx
// answer into out (when not nil).
func (c *Console) doJSON(r *http.Request, method, base, path string, in, out any) error {
	if base == "" {
		return statusErr(http.StatusNotFound, errors.New("this service is not configured for the console"))
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = strings.NewReader(string(b))
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s := sess(r); s.user != "" {
		req.SetBasicAuth(s.user, s.password)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		msg := strings.TrimSpace(string(data))
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &e) == nil && e.Message != "" {
			msg = e.Message
		}
		return &httpError{Status: resp.StatusCode, Message: msg}
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	return json.Unmarshal(data, out)
}

func (c *Console) serveLoginForm(w http.ResponseWriter, r *http.Request) {
	if c.cfg.LoginMechanism == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	c.render(w, r, "login", loginView{Next: safeNext(r.URL.Query().Get("next")), Mechanism: c.cfg.LoginMechanism})
}

type loginView struct {
	Next, Mechanism, User, Error string
}

func (c *Console) serveLogin(w http.ResponseWriter, r *http.Request) {
	if c.cfg.LoginMechanism == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	user, password := r.PostFormValue("user"), r.PostFormValue("password")
	next := safeNext(r.PostFormValue("next"))
	v := loginView{Next: next, Mechanism: c.cfg.LoginMechanism, User: user}
	if user == "" || password == "" {
		v.Error = "Enter a user and a password."
		w.WriteHeader(http.StatusBadRequest)
		c.render(w, r, "login", v)
		return
	}
	check, err := httpauth.KafkaLogin(c.cfg.ClientOpts, c.cfg.LoginMechanism, c.cfg.RequestTimeout)
	if err == nil {
		err = check(r.Context(), user, password)
	}
	if err != nil {
		c.log.Info("login refused", "user", user, "err", err)
		v.Error = "The cluster refused this login."
		if !errors.Is(err, httpauth.ErrLoginFailed) {
			v.Error = "The cluster could not be reached to check this login: " + err.Error()
		}
		w.WriteHeader(http.StatusUnauthorized)
		c.render(w, r, "login", v)
		return
	}
	c.sessions.login(w, user, password)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) serveLogout(w http.ResponseWriter, r *http.Request) {
	c.sessions.logout(w, sess(r))
	to := "/"
	if c.cfg.LoginMechanism != "" {
		to = "/login"
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// serveTheme sets the colour theme (light, dark or auto) and goes back.
func (c *Console) serveTheme(w http.ResponseWriter, r *http.Request) {
	t := r.URL.Query().Get("set")
	if t != "light" && t != "dark" {
		t = "auto"
	}
	http.SetCookie(w, &http.Cookie{Name: themeCookie, Value: t, Path: "/", MaxAge: 365 * 24 * 3600,
		Secure: c.cfg.SecureCookies, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
}

// safeNext is a local path to go to after a login; anything else is /.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
