package streams_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/serde"
)

// joinHarness pipes string records into topics of a driver and reads an
// output topic as "key=value@ts" (null for a null key or value).
type joinHarness struct {
	t   *testing.T
	d   *streams.TestDriver
	in  map[string]*streams.InputTopic[string, string]
	out *streams.OutputTopic[string, string]
	// outs are further output topics read with expectOn.
	outs map[string]*streams.OutputTopic[string, string]
}

func newJoinHarness(t *testing.T, b *streams.Builder, out string) *joinHarness {
	t.Helper()
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := streams.NewTestDriver(topo, streams.TestDriverConfig{ApplicationID: "app"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return &joinHarness{t: t, d: d, in: map[string]*streams.InputTopic[string, string]{},
		out: streams.NewOutputTopic(d, out, serde.String(), serde.String()), outs: map[string]*streams.OutputTopic[string, string]{}}
}

// pipe sends key=value@ts; "null" makes a null key or value.
func (h *joinHarness) pipe(topic, key, value string, ts int64) {
	h.t.Helper()
	in, ok := h.in[topic]
	if !ok {
		in = streams.NewInputTopic(h.d, topic, serde.String(), serde.String())
		h.in[topic] = in
	}
	r := streams.Record[string, string]{Key: key, Value: value, Timestamp: ts, NullKey: key == "null", NullValue: value == "null"}
	if err := in.PipeRecord(r); err != nil {
		h.t.Fatal(err)
	}
}

// expect checks the records written since the last call.
func (h *joinHarness) expect(want string) {
	h.t.Helper()
	h.check(h.out, want)
}

// expectOn checks the records written to topic since the last call.
func (h *joinHarness) expectOn(topic, want string) {
	h.t.Helper()
	out, ok := h.outs[topic]
	if !ok {
		out = streams.NewOutputTopic(h.d, topic, serde.String(), serde.String())
		h.outs[topic] = out
	}
	h.check(out, want)
}

func (h *joinHarness) check(out *streams.OutputTopic[string, string], want string) {
	h.t.Helper()
	recs, err := out.ReadRecords()
	if err != nil {
		h.t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		k, v := r.Key, r.Value
		if r.NullKey {
			k = "null"
		}
		if r.NullValue {
			v = "null"
		}
		got = append(got, fmt.Sprintf("%s=%s@%d", k, v, r.Timestamp))
	}
	if g := strings.Join(got, " "); g != want {
		h.t.Fatalf("output\ngot  %q\nwant %q", g, want)
	}
}

func orNull(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}
