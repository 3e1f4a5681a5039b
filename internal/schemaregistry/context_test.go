package schemaregistry

import (
	"net/http/httptest"
	"testing"
)

// TestRewriteContextPath pins the context-scoped paths against the plain
// paths Confluent's ContextFilter turns them into.
func TestRewriteContextPath(t *testing.T) {
	cases := []struct{ method, in, want string }{
		{"GET", "/subjects/a/versions", "/subjects/a/versions"},
		{"GET", "/contexts", "/contexts"},
		{"DELETE", "/contexts/.ctx", "/contexts/:.ctx:"},
		{"DELETE", "/contexts/ctx", "/contexts/:.ctx:"},
		{"GET", "/contexts/.ctx/subjects", "/subjects?subjectPrefix=%3A.ctx%3A"},
		{"GET", "/contexts/.ctx/subjects?subjectPrefix=a", "/subjects?subjectPrefix=%3A.ctx%3Aa"},
		{"GET", "/contexts/.ctx/subjects?subjectPrefix=:.o:a", "/subjects?subjectPrefix=%3A.o%3Aa"},
		{"POST", "/contexts/.ctx/subjects/s/versions", "/subjects/:.ctx:s/versions"},
		{"GET", "/contexts/.ctx/subjects/:.o:s/versions/1", "/subjects/:.o:s/versions/1"},
		{"POST", "/contexts/.ctx/compatibility/subjects/s/versions/latest", "/compatibility/subjects/:.ctx:s/versions/latest"},
		{"PUT", "/contexts/.ctx/config", "/config/:.ctx:"},
		{"PUT", "/contexts/.ctx/config/s", "/config/:.ctx:s"},
		{"GET", "/contexts/.ctx/mode/s", "/mode/:.ctx:s"},
		{"GET", "/contexts/./config", "/config"},
		{"GET", "/contexts/./subjects/s/versions", "/subjects/s/versions"},
		{"GET", "/contexts/.ctx/schemas/ids/3", "/schemas/ids/3?subject=%3A.ctx%3A"},
		{"GET", "/contexts/.ctx/schemas/ids/3?subject=s", "/schemas/ids/3?subject=%3A.ctx%3As"},
		{"GET", "/contexts/.ctx/schemas", "/schemas?subjectPrefix=%3A.ctx%3A"},
		{"GET", "/contexts/.ctx/subjects/a%2Fb/versions", "/subjects/:.ctx:a%2Fb/versions"},
	}
	for _, c := range cases {
		req := httptest.NewRequest(c.method, c.in, nil)
		if e := rewriteContextPath(req); e != nil {
			t.Errorf("%s %s: %v", c.method, c.in, e)
			continue
		}
		if got := req.URL.RequestURI(); got != c.want {
			t.Errorf("%s %s: got %s, want %s", c.method, c.in, got, c.want)
		}
	}
	req := httptest.NewRequest("GET", "/contexts/a:b/subjects", nil)
	if e := rewriteContextPath(req); e == nil || e.Code != 400 {
		t.Errorf("a context with a colon: %v", e)
	}
}

// TestSubjectMatcher pins subjectPrefix as Confluent's key ranges read it.
func TestSubjectMatcher(t *testing.T) {
	subjects := []string{"a", "ab", "b", ":.ctx:a", ":.ctx:b", ":.ctx2:a", ":.other:a"}
	cases := map[string][]string{
		"":        {"a", "ab", "b"},
		"a":       {"a", "ab"},
		":*:":     subjects,
		":*:a":    {"a", "ab", ":.ctx:a", ":.ctx2:a", ":.other:a"},
		":.ctx:":  {":.ctx:a", ":.ctx:b"},
		":.ctx:b": {":.ctx:b"},
		":.ctx":   {":.ctx:a", ":.ctx:b", ":.ctx2:a"},
		":.:a":    {"a", "ab"},
	}
	for prefix, want := range cases {
		match := subjectMatcher(prefix)
		var got []string
		for _, s := range subjects {
			if match(s) {
				got = append(got, s)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%q: got %v, want %v", prefix, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%q: got %v, want %v", prefix, got, want)
				break
			}
		}
	}
}
