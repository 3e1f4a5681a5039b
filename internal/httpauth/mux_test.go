package httpauth

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestUnrouted(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /things/{id}", func(http.ResponseWriter, *http.Request) {})
	for _, c := range []struct {
		method, path string
		code         int
		unrouted     bool
		allow        string
	}{
		{"GET", "/things/1", 0, false, ""},
		{"GET", "/nothing", http.StatusNotFound, true, ""},
		{"DELETE", "/things/1", http.StatusMethodNotAllowed, true, "GET, HEAD"},
	} {
		w := httptest.NewRecorder()
		code, unrouted := Unrouted(mux, w, httptest.NewRequest(c.method, c.path, nil))
		if code != c.code || unrouted != c.unrouted || w.Header().Get("Allow") != c.allow {
			t.Errorf("%s %s: %d %v Allow %q, want %d %v %q", c.method, c.path, code, unrouted, w.Header().Get("Allow"), c.code, c.unrouted, c.allow)
		}
		if w.Body.Len() != 0 {
			t.Errorf("%s %s: the mux's body %q was written", c.method, c.path, w.Body.String())
		}
	}
}
