package config

import (
	"strings"
	"testing"
)

// Samsa's own configs are named under samsa., and only they are: a name
// of Kafka's must not be taken for one of Samsa's, nor the reverse.
func TestSamsaOwnConfigs(t *testing.T) {
	own := 0
	for _, e := range Broker.Entries() {
		if e.SamsaOwn() {
			own++
		}
		if strings.HasPrefix(e.Name, "samsa") != e.SamsaOwn() {
			t.Errorf("%s: SamsaOwn %v", e.Name, e.SamsaOwn())
		}
	}
	if own == 0 {
		t.Error("no config is Samsa's own")
	}
	e, _ := Broker.Lookup("samsa.http.listener")
	if e == nil || e.DefaultValue != "127.0.0.1:9644" || e.Mode != ReadOnly {
		t.Fatalf("samsa.http.listener: %+v", e)
	}
	if !strings.Contains(Broker.Markdown(), "Samsa's own; Kafka has no such config.") {
		t.Error("the reference does not say which configs are Samsa's own")
	}
}

func TestHostPortValidator(t *testing.T) {
	for _, c := range []struct {
		v  string
		ok bool
	}{
		{"", true}, {"127.0.0.1:9644", true}, {"localhost:0", true}, {"[::1]:9644", true}, {":9644", true},
		{"9644", false}, {"127.0.0.1:", false}, {"127.0.0.1:65536", false}, {"127.0.0.1:http", false},
	} {
		if err := (hostPort{}).Validate(c.v); (err == nil) != c.ok {
			t.Errorf("%q: %v, want ok=%v", c.v, err, c.ok)
		}
	}
}
