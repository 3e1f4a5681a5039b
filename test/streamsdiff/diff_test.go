package streamsdiff

import (
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/samsa-io/samsa/internal/devcluster"
)

func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

// The Kafka Streams run is the same for both tests: the first test that
// needs it runs it, the other reuses its outputs.
var (
	javaOnce sync.Once
	javaOut  outputs
)

// javaOutputs answers the Kafka Streams run's outputs, running it first
// if no test did.
func javaOutputs(t *testing.T) outputs {
	t.Helper()
	requireJava(t)
	ran := false
	javaOnce.Do(func() {
		ran = true
		javaOut = runTopologies(t, "java-", startJava)
	})
	if javaOut == nil {
		if ran {
			t.Fatal("the Kafka Streams run produced nothing")
		}
		t.Fatal("the Kafka Streams run failed in an earlier test")
	}
	return javaOut
}

// TestDifferential runs the six topologies on Samsa's library and on
// Kafka Streams 4.4, each on a Samsa broker of its own with the same
// input, and requires the same output records: per output topic and key,
// the same values (nulls included), timestamps and partitions, in the
// same order.
func TestDifferential(t *testing.T) {
	requireJava(t)
	// Samsa's side first: it is the one expected to fail while the
	// library is written, and it fails fast.
	samsa := runTopologies(t, "samsa-", runSamsaTopologies)
	java := javaOutputs(t)
	if diffs := diffOutputs(java, samsa, "Kafka Streams", "Samsa"); len(diffs) > 0 {
		t.Errorf("%d keys differ:\n%s", len(diffs), strings.Join(diffs, "\n"))
	}
}

// TestJavaRepeatable runs Kafka Streams a second time, on a fresh broker,
// and requires the same outputs as the first run: the determinism the
// differential test rests on (ordered inputs, no ties, no cache, idle
// tasks waiting for data; DIFFERENTIAL.md).
func TestJavaRepeatable(t *testing.T) {
	first := javaOutputs(t)
	second := runTopologies(t, "java2-", startJava)
	if diffs := diffOutputs(first, second, "first run", "second run"); len(diffs) > 0 {
		t.Errorf("Kafka Streams' output differs between two runs on %d keys:\n%s", len(diffs), strings.Join(diffs, "\n"))
	}
}

// TestDiffOutputs checks the comparison itself: equal runs have no
// difference, and a changed value, a missing record, a reordering, a
// different timestamp or partition and an extra key are each reported.
func TestDiffOutputs(t *testing.T) {
	v := func(s string) *string { return &s }
	ref := outputs{"wc-out": {
		"a": {{Value: v("1"), Timestamp: at(1)}, {Value: v("2"), Timestamp: at(2)}},
		"b": {{Value: nil, Timestamp: at(3), Partition: 1}},
	}}
	if d := diffOutputs(ref, ref, "x", "y"); len(d) != 0 {
		t.Errorf("a run differs from itself: %v", d)
	}
	for name, change := range map[string]func(o outputs){
		"value":     func(o outputs) { o["wc-out"]["a"][1].Value = v("3") },
		"null":      func(o outputs) { o["wc-out"]["b"][0].Value = v("") },
		"missing":   func(o outputs) { o["wc-out"]["a"] = o["wc-out"]["a"][:1] },
		"order":     func(o outputs) { a := o["wc-out"]["a"]; a[0], a[1] = a[1], a[0] },
		"timestamp": func(o outputs) { o["wc-out"]["a"][0].Timestamp++ },
		"partition": func(o outputs) { o["wc-out"]["b"][0].Partition = 0 },
		"extra key": func(o outputs) { o["wc-out"]["c"] = []outRecord{{Value: v("1")}} },
		"lost key":  func(o outputs) { delete(o["wc-out"], "b") },
	} {
		got := outputs{"wc-out": {}}
		for k, rs := range ref["wc-out"] {
			got["wc-out"][k] = slices.Clone(rs)
		}
		change(got)
		if d := diffOutputs(ref, got, "x", "y"); len(d) != 1 {
			t.Errorf("%s: %d differences reported, want 1: %v", name, len(d), d)
		}
	}
}
