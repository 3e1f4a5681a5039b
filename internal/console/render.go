package console

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pages are the parsed templates: one set per page, each the layout
// (templates/layout.html, which every page shares, with the partials
// in templates/_*.html) plus the page's own file defining "title" and
// "content". A page file may define more templates, rendered alone as
// fragments (htmx swaps, server-sent events).
type pages struct {
	byName map[string]*template.Template
}

var (
	funcsMu sync.Mutex
	funcs   = template.FuncMap{}
)

// registerFuncs adds template functions; page files call it from init.
func registerFuncs(m template.FuncMap) {
	funcsMu.Lock()
	defer funcsMu.Unlock()
	for k, v := range m {
		if _, dup := funcs[k]; dup {
			panic("console: template function " + k + " registered twice")
		}
		funcs[k] = v
	}
}

func parsePages() (*pages, error) {
	base := template.New("layout.html").Funcs(baseFuncs).Funcs(funcs)
	shared := []string{"templates/layout.html"}
	partials, _ := fs.Glob(templateFS, "templates/_*.html")
	shared = append(shared, partials...)
	base, err := base.ParseFS(templateFS, shared...)
	if err != nil {
		return nil, fmt.Errorf("console: templates: %w", err)
	}
	files, _ := fs.Glob(templateFS, "templates/*.html")
	p := &pages{byName: map[string]*template.Template{}}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		if name == "layout" || strings.HasPrefix(name, "_") {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(templateFS, f)
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", f, err)
		}
		p.byName[name] = t
	}
	return p, nil
}

// view is what the layout renders around a page's data.
type view struct {
	Page     string // the page's template name
	Section  string // the nav entry lit: overview, topics, ...
	Title    string
	User     string
	CSRF     string
	Theme    string // light, dark or auto
	Path     string // the request's path and query, for theme links
	Nav      []navItem
	Login    bool // users log in (show logout)
	Registry bool
	Connect  bool
	Data     any
}

type navItem struct {
	Section, Label, Href, Key string
}

// nav is the sections of the console; Key is the keyboard shortcut
// after "g".
func (c *Console) nav() []navItem {
	items := []navItem{
		{"overview", "Overview", "/", "o"},
		{"topics", "Topics", "/topics", "t"},
		{"groups", "Groups", "/groups", "g"},
	}
	if c.cfg.RegistryURL != "" {
		items = append(items, navItem{"schemas", "Schemas", "/schemas", "s"})
	}
	if c.cfg.ConnectURL != "" {
		items = append(items, navItem{"connect", "Connect", "/connect", "c"})
	}
	items = append(items,
		navItem{"security", "Security", "/security", "a"},
		navItem{"ops", "Operations", "/ops", "r"},
	)
	return items
}

// render writes page (a template name) in the layout, with data as
// .Data; section lights the nav entry (the page's name by default).
func (c *Console) render(w http.ResponseWriter, r *http.Request, page string, data any) {
	c.renderSection(w, r, page, page, data)
}

func (c *Console) renderSection(w http.ResponseWriter, r *http.Request, page, section string, data any) {
	t := c.pages.byName[page]
	if t == nil {
		c.fail(w, r, nil, fmt.Errorf("console: no page template %q", page))
		return
	}
	v := c.viewFor(r, page, section, data)
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", v); err != nil {
		c.log.Error("render", "page", page, "err", err)
		http.Error(w, "the page could not be rendered: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
}

func (c *Console) viewFor(r *http.Request, page, section string, data any) view {
	v := view{Page: page, Section: section, Theme: "auto", Path: r.URL.RequestURI(), Nav: c.nav(),
		Login: c.cfg.LoginMechanism != "", Registry: c.cfg.RegistryURL != "", Connect: c.cfg.ConnectURL != "", Data: data}
	if s, ok := r.Context().Value(sessionKey{}).(*session); ok {
		v.User, v.CSRF = s.user, s.csrf
	} else if s, err := c.sessions.get(discardCookies{}, r); err == nil {
		v.User, v.CSRF = s.user, s.csrf
	}
	if ck, err := r.Cookie(themeCookie); err == nil && (ck.Value == "light" || ck.Value == "dark") {
		v.Theme = ck.Value
	}
	return v
}

// fragment writes one named template of page alone (an htmx swap).
func (c *Console) fragment(w http.ResponseWriter, r *http.Request, page, name string, data any) {
	t := c.pages.byName[page]
	if t == nil {
		http.Error(w, "no page "+page, http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, c.viewFor(r, page, page, data)); err != nil {
		c.log.Error("render fragment", "page", page, "fragment", name, "err", err)
		http.Error(w, "the fragment could not be rendered: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
}

// fragmentString renders one named template of page to a string (a
// server-sent event's data).
func (c *Console) fragmentString(r *http.Request, page, name string, data any) (string, error) {
	t := c.pages.byName[page]
	if t == nil {
		return "", fmt.Errorf("no page %s", page)
	}
	var buf bytes.Buffer
	err := t.ExecuteTemplate(&buf, name, c.viewFor(r, page, page, data))
	return buf.String(), err
}

type discardCookies struct{}

func (discardCookies) Header() http.Header         { return http.Header{} }
func (discardCookies) Write(b []byte) (int, error) { return len(b), nil }
func (discardCookies) WriteHeader(int)             {}

// statusError carries the HTTP status an error answers with.
type statusError struct {
	status int
	err    error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

func statusErr(status int, err error) error { return &statusError{status, err} }

// badRequest is a 400 with a message for the user.
func badRequest(format string, args ...any) error {
	return statusErr(http.StatusBadRequest, fmt.Errorf(format, args...))
}

type errorView struct {
	Status  int
	Message string
	Kafka   string // the Kafka error's name, when it is one
}

// fail answers err as an error page (a fragment for htmx requests): a
// Kafka error by its name and description, an HTTP service's by its
// message; the status is the error's own, 502 for a service's
// failure, 500 otherwise.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, _ *session, err error) {
	v := errorView{Status: http.StatusInternalServerError, Message: err.Error()}
	var se *statusError
	var he *httpError
	var ke *kerr.Error
	var ne net.Error
	switch {
	case errors.As(err, &se):
		v.Status = se.status
	case errors.As(err, &ke):
		v.Kafka = ke.Message
		v.Status = http.StatusBadGateway
		switch {
		case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.GroupAuthorizationFailed),
			errors.Is(err, kerr.ClusterAuthorizationFailed), errors.Is(err, kerr.TransactionalIDAuthorizationFailed),
			errors.Is(err, kerr.DelegationTokenAuthorizationFailed):
			v.Status = http.StatusForbidden
		case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.GroupIDNotFound):
			v.Status = http.StatusNotFound
		case errors.Is(err, kerr.InvalidRequest), errors.Is(err, kerr.InvalidConfig), errors.Is(err, kerr.InvalidPartitions),
			errors.Is(err, kerr.InvalidReplicationFactor), errors.Is(err, kerr.InvalidTopicException), errors.Is(err, kerr.TopicAlreadyExists),
			errors.Is(err, kerr.PolicyViolation), errors.Is(err, kerr.NonEmptyGroup), errors.Is(err, kerr.OffsetOutOfRange):
			v.Status = http.StatusBadRequest
		}
	case errors.As(err, &he):
		v.Status = http.StatusBadGateway
		if he.Status >= 400 && he.Status < 500 {
			v.Status = he.Status
		}
	case errors.As(err, &ne):
		// A service (or the cluster) that does not answer.
		v.Status = http.StatusBadGateway
	}
	if v.Status >= 500 {
		c.log.Warn("page failed", "path", r.URL.Path, "status", v.Status, "err", err)
	}
	w.WriteHeader(v.Status)
	if r.Header.Get("HX-Request") == "true" && r.Header.Get("HX-Boosted") != "true" {
		// A partial swap (not a boosted navigation): the error box alone.
		c.fragment(discardHeader{w}, r, "error", "error-box", v)
		return
	}
	t := c.pages.byName["error"]
	var buf bytes.Buffer
	if t == nil || t.ExecuteTemplate(&buf, "layout.html", c.viewFor(r, "error", "", v)) != nil {
		_, _ = fmt.Fprintf(w, "%d: %s\n", v.Status, template.HTMLEscapeString(v.Message))
		return
	}
	_, _ = w.Write(buf.Bytes())
}

// discardHeader keeps fail's status when fragment sets headers.
type discardHeader struct{ http.ResponseWriter }

func (d discardHeader) WriteHeader(int) {}

// staticHandler serves the embedded static files, cached for a day
// (their names carry versions where they change).
func staticHandler() http.Handler {
	sub, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/static/", http.FileServerFS(sub))
	css := buildCSS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=86400")
		if r.URL.Path == "/static/console.css" {
			w.Header().Set("Content-Type", "text/css; charset=utf-8")
			_, _ = w.Write(css)
			return
		}
		files.ServeHTTP(w, r)
	})
}

// buildCSS is static/base.css followed by each page's static/css/*.css.
func buildCSS(sub fs.FS) []byte {
	var out bytes.Buffer
	b, _ := fs.ReadFile(sub, "base.css")
	out.Write(b)
	names, _ := fs.Glob(sub, "css/*.css")
	sort.Strings(names)
	for _, n := range names {
		b, _ := fs.ReadFile(sub, n)
		out.WriteString("\n/* " + n + " */\n")
		out.Write(b)
	}
	return out.Bytes()
}

var baseFuncs = template.FuncMap{
	"bytes": humanBytes,
	"count": humanCount,
	"time":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000Z") },
	"add":   func(a, b int) int { return a + b },
	"sub64": func(a, b int64) int64 { return a - b },
	"query": urlQueryEscape,
	"csrfTag": func(tok string) template.HTML {
		return template.HTML(`<input type="hidden" name="_csrf" value="` + template.HTMLEscapeString(tok) + `">`)
	},
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n), -1
	for (f >= unit || f <= -unit) && i < 5 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGTPE"[i])
}

func humanCount(n int64) string {
	switch {
	case n >= 1e9 || n <= -1e9:
		return fmt.Sprintf("%.2fG", float64(n)/1e9)
	case n >= 1e6 || n <= -1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1e4 || n <= -1e4:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := time.Since(t).Round(time.Second)
	if d < 0 {
		return "in " + (-d).String()
	}
	return d.String() + " ago"
}
