package console

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// The cluster behind the console in these tests is a real Samsa broker:
// cmd/samsa built once per test run and started as samsa serve. The
// package itself never imports the broker.
func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

// testConsole is a console on a real broker, served on a loopback
// httptest server, with a browser-like HTTP client (cookies kept,
// redirects not followed) and an independent Kafka client of the broker.
type testConsole struct {
	t       testing.TB
	c       *Console
	URL     string
	Broker  string
	Client  *kgo.Client
	Admin   *kadm.Client
	browser *http.Client
}

// startConsole starts a broker (brokerArgs are more of samsa serve's
// flags) and a console on it with cfg (its seed brokers added).
func startConsole(t testing.TB, cfg Config, brokerArgs ...string) *testConsole {
	t.Helper()
	addr, _ := devcluster.StartTestBroker(t, brokerArgs...)
	return startConsoleOn(t, addr, cfg)
}

// startConsoleOn starts a console on the broker at addr.
func startConsoleOn(t testing.TB, addr string, cfg Config) *testConsole {
	t.Helper()
	cfg.ClientOpts = append([]kgo.Opt{kgo.SeedBrokers(addr)}, cfg.ClientOpts...)
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c)
	t.Cleanup(func() { srv.Close(); c.Close() })
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	jar, _ := cookiejar.New(nil)
	return &testConsole{t: t, c: c, URL: srv.URL, Broker: addr, Client: cl, Admin: kadm.NewClient(cl),
		browser: &http.Client{Jar: jar, Timeout: 60 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}}
}

func (tc *testConsole) do(req *http.Request) (int, string, http.Header) {
	tc.t.Helper()
	resp, err := tc.browser.Do(req)
	if err != nil {
		tc.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tc.t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// get fetches path as the browser; it answers the status and the body.
func (tc *testConsole) get(path string) (int, string) {
	tc.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, tc.URL+path, nil)
	st, body, _ := tc.do(req)
	return st, body
}

var csrfRE = regexp.MustCompile(`<meta name="csrf-token" content="([^"]*)">`)

// csrf is the browser's CSRF token, read from a rendered page.
func (tc *testConsole) csrf() string {
	tc.t.Helper()
	_, body := tc.get("/")
	m := csrfRE.FindStringSubmatch(body)
	if m == nil || m[1] == "" {
		tc.t.Fatalf("no CSRF token in the page:\n%s", body)
	}
	return m[1]
}

// post submits form to path as the browser, with its CSRF token (unless
// the form carries one); it answers the status, the body and the
// redirect's Location ("" when none).
func (tc *testConsole) post(path string, form url.Values) (int, string, string) {
	tc.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, set := form["_csrf"]; !set {
		form.Set("_csrf", tc.csrf())
	}
	req, _ := http.NewRequest(http.MethodPost, tc.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	st, body, h := tc.do(req)
	return st, body, h.Get("Location")
}

// wantContains fails unless body has each of subs.
func wantContains(t testing.TB, body string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(body, s) {
			t.Fatalf("the page lacks %q:\n%s", s, body)
		}
	}
}

// ctx is a test's context with a deadline.
func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}
