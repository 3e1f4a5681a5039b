package streams

import (
	"fmt"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/streams/serde"
)

// MapNullable keeps a null through, as Kafka's map: a merged session's
// tombstone re-keyed by Main.java's map((wk, v) -> pair(label, v)) stays a
// tombstone (the differential test's sess-out), and the function sees
// nil for it. Map, whose function gets 0, would write a 0.
func TestMapNullableKeepsTombstones(t *testing.T) {
	b := NewBuilder()
	counts := SessionCount(From[string, string](b, []string{"in"}).GroupByKey().
		WindowedBySession(OfInactivityGapAndGrace(10*ms, 100*ms)))
	var seen []string
	MapNullable(counts.ToStream(), func(wk Windowed[string], v *int64) (string, *int64) {
		seen = append(seen, fmt.Sprint(v != nil))
		return fmt.Sprintf("%s@%d/%d", wk.Key, wk.Window.Start, wk.Window.End), v
	}).To("out", Produced[string, int64]{Key: serde.String(), Value: serde.Int64()})
	d := run(t, b, []pipeRec{{"s", "x", 100}, {"s", "y", 105}})
	recs, err := NewOutputTopic(d, "out", serde.String(), serde.Int64()).ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		v := fmt.Sprint(r.Value)
		if r.NullValue {
			v = "null"
		}
		got = append(got, r.Key+"="+v)
	}
	expect(t, "outputs", strings.Join(got, " "), "s@100/100=1 s@100/100=null s@100/105=2")
	expect(t, "the function saw a value", strings.Join(seen, " "), "true false true")
}
