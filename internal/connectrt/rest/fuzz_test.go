package rest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzBodies sends any body to every endpoint that reads one: each answer
// is a status with Kafka's JSON body, never a panic or a 2xx for a body
// that is not a JSON object.
func FuzzBodies(f *testing.F) {
	for _, seed := range []string{
		`{"name":"a","config":{"connector.class":"FileStreamSource","topic":"t"}}`,
		`{"offsets":[{"partition":{"a":1},"offset":null}]}`,
		`{"level":"DEBUG"}`, `{"a":null}`, `{bad`, `[]`, `null`, `"x"`, `{"x":{"y":[1]}}`, `{"a":1e400}`,
	} {
		f.Add(seed)
	}
	h := newMemHerder("w")
	s, err := New(Config{Herder: h, Loggers: NewLevelVars(0)})
	if err != nil {
		f.Fatal(err)
	}
	routes := []struct{ method, path string }{
		{"POST", "/connectors"},
		{"PUT", "/connectors/c/config"},
		{"PATCH", "/connectors/c/config"},
		{"PATCH", "/connectors/c/offsets"},
		{"PUT", "/connector-plugins/FileStreamSource/config/validate"},
		{"PUT", "/admin/loggers/a.b"},
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, rt := range routes {
			req := httptest.NewRequest(rt.method, rt.path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code < 200 || rec.Code > 599 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") && rec.Code != http.StatusNoContent {
				t.Fatalf("%s %s %q: %d %q", rt.method, rt.path, body, rec.Code, rec.Body.String())
			}
			if rec.Code < 300 && !strings.HasPrefix(strings.TrimSpace(body), "{") {
				t.Fatalf("%s %s took %q: %d", rt.method, rt.path, body, rec.Code)
			}
		}
	})
}
