package restproxy

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzCreateConsumerRequest feeds arbitrary bodies to a v2 consumer
// instance's create decoding and checks: any input is a config or a 422
// with a message, never a panic, and a config holds only valid values.
func FuzzCreateConsumerRequest(f *testing.F) {
	for _, s := range []string{
		`{"name":"c","format":"JSON","auto.offset.reset":"earliest","auto.commit.enable":false,"fetch.min.bytes":"10","consumer.request.timeout.ms":500}`,
		`{"id":"x","responseMinBytes":-1,"requestWaitMs":"1"}`,
		`{"format":"xml","auto.commit.enable":"TRUE"}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r createConsumerRequest
		if json.Unmarshal(body, &r) != nil {
			return
		}
		cfg, e := parseInstanceConfig(&r)
		if e != nil {
			if e.Status != 422 || e.Message == "" {
				t.Fatalf("error %+v, want a 422 with a message", e)
			}
			return
		}
		if _, ok := parseEmbeddedFormat(string(cfg.format)); !ok || cfg.minBytes < -1 || cfg.requestWait <= 0 {
			t.Fatalf("config %+v from %s", cfg, body)
		}
		if name := instanceName(&r); name == "" && r.ID == nil && r.Name == nil {
			t.Fatal("no name generated")
		} else if r.ID == nil && r.Name == nil && !strings.HasPrefix(name, "rest-consumer-") {
			t.Fatalf("generated name %q", name)
		}
	})
}

// FuzzNegotiateRecordsFormat: any Accept header chooses a format the
// proxy knows with its media type, or nothing; never a panic.
func FuzzNegotiateRecordsFormat(f *testing.F) {
	for _, s := range []string{"", "*/*", "application/vnd.kafka.json.v2+json; q=0.5, application/vnd.kafka.v2+json", "application/json", "a/b;q=x,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		fmt, typ, ok := negotiateRecordsFormat([]string{accept})
		if !ok {
			return
		}
		if _, known := parseEmbeddedFormat(string(fmt)); !known || !strings.HasPrefix(typ, "application/vnd.kafka.") {
			t.Fatalf("Accept %q: format %q type %q", accept, fmt, typ)
		}
	})
}
