package console

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/httpauth"
)

// Config is a console's set-up. The zero value of every field but
// ClientOpts is usable.
type Config struct {
	// ClientOpts reach the cluster: seed brokers and TLS, and, when no
	// user logs in, the console's own SASL identity.
	ClientOpts []kgo.Opt
	// LoginMechanism, when set (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512),
	// makes every user log in with their Kafka credentials; each session
	// then reaches the cluster, the registry and Connect as its user, so
	// the cluster's ACLs apply. ClientOpts must then carry no SASL.
	LoginMechanism string
	// RegistryURL is a Schema Registry's base URL; empty hides the
	// registry's page and decodes no schema.
	RegistryURL string
	// ConnectURL is a Connect cluster's REST base URL; empty hides
	// Connect's page.
	ConnectURL string
	// AdminURLs are Samsa brokers' HTTP admin listeners (9644), read for
	// the balancer's state; empty hides it (an Apache Kafka cluster has
	// none).
	AdminURLs []string
	// SampleInterval is how often the overview's charts sample the
	// cluster while someone looks at them; 5 s when zero.
	SampleInterval time.Duration
	// PageSize is how many records the message browser shows at once
	// (50 when zero; at most 500).
	PageSize int
	// SecureCookies marks the session cookie Secure: set it when a TLS
	// proxy fronts the console.
	SecureCookies bool
	// RequestTimeout bounds one page's requests to the cluster and the
	// HTTP services; 15 s when zero.
	RequestTimeout time.Duration
	Logger         *slog.Logger
}

// Console is the web console: an http.Handler over a Kafka cluster.
type Console struct {
	cfg      Config
	log      *slog.Logger
	mux      *http.ServeMux
	pages    *pages
	sessions *sessions
	http     *http.Client
	// groupLags are the groups' lag charts' samples (groups.go).
	groupLags groupsHistory

	closeOnce sync.Once
	closed    chan struct{}
	wg        sync.WaitGroup
}

// New makes a console; it connects to nothing until the first page.
func New(cfg Config) (*Console, error) {
	if cfg.LoginMechanism != "" {
		if _, err := httpauth.Mechanism(cfg.LoginMechanism, "", ""); err != nil {
			return nil, fmt.Errorf("console: login mechanism: %w", err)
		}
	}
	if cfg.SampleInterval <= 0 {
		cfg.SampleInterval = 5 * time.Second
	}
	switch {
	case cfg.PageSize <= 0:
		cfg.PageSize = 50
	case cfg.PageSize > 500:
		return nil, fmt.Errorf("console: page size %d: at most 500 records are shown at once", cfg.PageSize)
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 15 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	for _, u := range append([]string{cfg.RegistryURL, cfg.ConnectURL}, cfg.AdminURLs...) {
		if u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return nil, fmt.Errorf("console: %q is not an http:// or https:// URL", u)
		}
	}
	cfg.RegistryURL = strings.TrimSuffix(cfg.RegistryURL, "/")
	cfg.ConnectURL = strings.TrimSuffix(cfg.ConnectURL, "/")
	c := &Console{
		cfg:    cfg,
		log:    cfg.Logger.With("component", "console"),
		mux:    http.NewServeMux(),
		http:   &http.Client{Timeout: cfg.RequestTimeout},
		closed: make(chan struct{}),
	}
	var err error
	if c.pages, err = parsePages(); err != nil {
		return nil, err
	}
	c.sessions = newSessions(c)
	c.routes()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.sessions.expireLoop(c.closed)
	}()
	return c, nil
}

// routes registers every page. Each page's file holds its handlers and
// its routes function.
func (c *Console) routes() {
	c.mux.Handle("GET /static/", staticHandler())
	c.mux.HandleFunc("GET /login", c.serveLoginForm)
	c.mux.HandleFunc("POST /login", c.serveLogin)
	c.mux.HandleFunc("POST /logout", c.serveLogout)
	c.mux.HandleFunc("GET /theme", c.serveTheme)
	c.routesOverview(c.mux)
	c.routesTopics(c.mux)
	c.routesMessages(c.mux)
	c.routesGroups(c.mux)
	c.routesSchemas(c.mux)
	c.routesConnect(c.mux)
	c.routesSecurity(c.mux)
	c.routesOps(c.mux)
	c.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, nil, statusErr(http.StatusNotFound, fmt.Errorf("no page at %s", r.URL.Path)))
	})
}

// ServeHTTP serves a request: static files as they are; every other
// request with its session (logging in first when users must), a
// mutating one only with the session's CSRF token.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self'")
	if strings.HasPrefix(r.URL.Path, "/static/") {
		c.mux.ServeHTTP(w, r)
		return
	}
	s, err := c.sessions.get(w, r)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	if s.user == "" && c.cfg.LoginMechanism != "" && r.URL.Path != "/login" && r.URL.Path != "/theme" {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			http.Redirect(w, r, "/login?next="+urlQueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		http.Error(w, "log in first", http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if err := s.checkCSRF(r); err != nil {
			c.fail(w, r, s, statusErr(http.StatusForbidden, err))
			return
		}
	}
	c.mux.ServeHTTP(w, r.WithContext(withSession(r.Context(), s)))
}

// Serve serves the console on ln until ctx ends.
func (c *Console) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(c.log.Handler(), slog.LevelWarn)}
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	})
	defer stop()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Close ends every session's clients and the background samplers.
func (c *Console) Close() {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.wg.Wait()
		c.sessions.closeAll()
	})
}

// ctx is a request's context bounded by the console's request timeout.
func (c *Console) ctx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), c.cfg.RequestTimeout)
}
