package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestMutatingRequestsNeedTheCSRFToken: a POST without the session's
// token, with another session's, or from another origin is refused with
// 403 and does nothing.
func TestMutatingRequestsNeedTheCSRFToken(t *testing.T) {
	tc := startConsole(t, Config{})
	tok := tc.csrf()
	for name, form := range map[string]url.Values{
		"none":  {"_csrf": {""}},
		"wrong": {"_csrf": {"x" + tok[1:]}},
	} {
		st, body, _ := tc.post("/logout", form)
		if st != http.StatusForbidden || !strings.Contains(body, "CSRF") {
			t.Errorf("%s token: status %d, want 403 naming CSRF:\n%s", name, st, body)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, tc.URL+"/logout", strings.NewReader(url.Values{"_csrf": {tok}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://evil.example")
	if st, body, _ := tc.do(req); st != http.StatusForbidden {
		t.Errorf("cross-origin POST: status %d, want 403:\n%s", st, body)
	}
	if st, _, loc := tc.post("/logout", url.Values{"_csrf": {tok}}); st != http.StatusSeeOther || loc != "/" {
		t.Errorf("POST with the token: status %d to %q, want 303 to /", st, loc)
	}
}

// TestStaticFilesAndSecurityHeaders: the vendored scripts and the
// stylesheet are served from the binary, every answer carries the
// headers that keep the console out of frames and scripts off other
// origins, and an unknown path is a 404 page.
func TestStaticFilesAndSecurityHeaders(t *testing.T) {
	tc := startConsole(t, Config{})
	for _, p := range []string{"/static/htmx-2.0.11.min.js", "/static/htmx-ext-sse-2.2.4.min.js", "/static/console.js", "/static/console.css"} {
		req, _ := http.NewRequest(http.MethodGet, tc.URL+p, nil)
		st, body, h := tc.do(req)
		if st != 200 || len(body) < 100 {
			t.Errorf("%s: status %d, %d bytes", p, st, len(body))
		}
		if h.Get("Content-Security-Policy") == "" || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: security headers missing: %v", p, h)
		}
	}
	if st, body := tc.get("/no/such/page"); st != 404 || !strings.Contains(body, "no page at /no/such/page") {
		t.Errorf("unknown page: status %d:\n%s", st, body)
	}
}
