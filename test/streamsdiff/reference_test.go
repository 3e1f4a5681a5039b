package streamsdiff

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "record the Kafka Streams topologies' describe() as testdata/describe/*.txt")

// fact is one hand-derived expectation of an output key: its values in
// order ("null" for a tombstone), or absent when values is nil.
type fact struct {
	why    string
	topic  string
	key    string
	values []string
}

// wkey is a windowed output key: key@start/end, the bounds in seconds
// after base.
func wkey(key string, start, end float64) string {
	return fmt.Sprintf("%s@%d/%d", key, at(start), at(end))
}

// TestJavaReference checks the Kafka Streams run against what the input
// must give, derived by hand from inputs.go: so the data exercises the
// semantics it claims to (grace, lateness, suppression, merges, joins'
// windows and nulls, foreign-key changes), and the harness reads what was
// written. It also keeps testdata/describe/ true to Kafka Streams'
// Topology.describe() (-update records them), for the Go side's
// Describe().
func TestJavaReference(t *testing.T) {
	out := javaOutputs(t)
	t.Run("word count", func(t *testing.T) { checkWordCount(t, out) })
	for _, f := range facts() {
		got, present := out[f.topic][f.key]
		switch {
		case f.values == nil && present:
			t.Errorf("%s: %s has key %q: %s", f.why, f.topic, f.key, formatRecords(got))
		case f.values != nil && !slices.Equal(out.values(f.topic, f.key), f.values):
			t.Errorf("%s: %s key %q is %s, want %q", f.why, f.topic, f.key, formatRecords(got), f.values)
		}
	}
	t.Run("suppressed windows emit once, late records never", func(t *testing.T) {
		for key, rs := range out["win-out"] {
			if len(rs) != 1 {
				t.Errorf("win-out %q emitted %d times: %s", key, len(rs), formatRecords(rs))
			}
			if v, _ := strconv.ParseInt(*rs[0].Value, 10, 64); v >= lateValue {
				t.Errorf("win-out %q summed a late record: %s", key, formatRecords(rs))
			}
		}
		if n := len(out["win-out"]); n != 7 {
			t.Errorf("win-out has %d windows, want a's 3, b's 1 and c's 3", n)
		}
	})
	t.Run("describe", checkDescribe)
}

// facts are the hand-derived expectations, each with its reason.
func facts() []fact {
	win := inputTopics["win-in"]
	a, c := keyIn("a", 0, win), keyIn("c", 1, win)
	s := keyIn("s", 0, inputTopics["sess-in"])
	fs := []fact{
		{"a's [0,10) holds 1+2 and 100 (out of order, in grace), not the late 9", "win-out", wkey(a, 0, 10), []string{"103"}},
		{"a's [10,20) closed when b moved stream time to 30: 3+4, not the late 18", "win-out", wkey(a, 10, 20), []string{"7"}},
		{"a's [20,30) is emitted by the flush record", "win-out", wkey(a, 20, 30), []string{"5"}},
		{"c's [0,10) holds the out-of-order 6", "win-out", wkey(c, 0, 10), []string{"4"}},
		{"c's [10,20) closes exactly at stream time 25 (end + grace)", "win-out", wkey(c, 10, 20), []string{"2"}},
		{"the flush record's window never closes", "win-out", wkey(keyIn("flush", 0, win), 1000, 1010), nil},
		{"hopping [5,15) is open (until 20) when the record at 9 comes: counted", "hop-out", wkey(a, 5, 15), []string{"1", "2", "3"}},
		{"hopping [10,20) counts the null value at 17.5, not the late 18", "hop-out", wkey(a, 10, 20), []string{"1", "2", "3"}},

		{"session [10,10] merged into [5,10]: a tombstone", "sess-out", wkey(s, 10, 10), []string{"1", "null"}},
		{"the record at 5 merges with 10", "sess-out", wkey(s, 5, 10), []string{"2"}},
		{"session [0,0] left the store (gap + grace = 7 s) before 5 came: not merged", "sess-out", wkey(s, 0, 0), []string{"1"}},
		{"no merged session [0,10]", "sess-out", wkey(s, 0, 10), nil},
		{"the record at 12 is late (stream time 30, grace 2 s)", "sess-out", wkey(s, 5, 12), nil},
		{"33 merges with 30: a tombstone", "sess-out", wkey(s, 30, 30), []string{"1", "null"}},
		{"33 merges with 30", "sess-out", wkey(s, 30, 33), []string{"2"}},

		{"u2's first record precedes its table row", "stj-inner", "u2", []string{"us+Bob"}},
		{"u2's first record precedes its table row", "stj-left", "u2", []string{"fr+null", "us+Bob"}},
		{"u3's row was deleted", "stj-inner", "u3", nil},
		{"u3's row was deleted", "stj-left", "u3", []string{"it+null"}},
		{"a non-versioned table: the out-of-order 9 joins the row of 10", "stj-inner", "u4", []string{"es+Dan", "fr+Dan"}},
		{"the null value is dropped by the inner join", "stj-inner", "u1", []string{"de+Alice", "fr+Alicia"}},
		{"the null value is dropped by the left join", "stj-left", "u1", []string{"de+Alice", "fr+Alicia"}},
		{"the inner join drops a null key", "stj-inner", nullKeyName, nil},
		{"the left join keeps a null key (KIP-962)", "stj-left", nullKeyName, []string{"de+null"}},
		{"the global join looks a null key's value up (KIP-962)", "stj-global", nullKeyName, []string{"de+Germany"}},
		{"the global table is loaded in full first: us is United States", "stj-global", "u2", []string{"fr+France", "us+United States"}},
		{"it was deleted from the global table", "stj-global", "u3", nil},

		{"a product change and a foreign-key change", "fk-inner", "o1", []string{"p1:2/Widget", "p1:2/Widget v2", "p2:7/Gadget"}},
		{"an order deleted", "fk-inner", "o2", []string{"p2:1/Gadget", "null"}},
		{"an order deleted", "fk-left", "o2", []string{"p2:1/Gadget", "null"}},
		{"its product deleted", "fk-inner", "o3", []string{"p3:5/Doohickey", "null"}},
		{"its product deleted", "fk-left", "o3", []string{"p3:5/Doohickey", "p3:5/null"}},
		{"its product created later", "fk-inner", "o4", []string{"p9:1/Sprocket"}},
		{"its product created later", "fk-left", "o4", []string{"p9:1/null", "p9:1/Sprocket"}},
		{"a new order sees the product's latest value", "fk-inner", "o6", []string{"p1:1/Widget v2"}},
	}
	// The stream-stream script runs in both partitions.
	n := inputTopics["ssj-left"]
	for p := int32(0); p < int32(n); p++ {
		k := func(name string) string { return keyIn(name, p, n) }
		fs = append(fs,
			fact{"joined", "ssj-inner", k("j1"), []string{"L1+R1"}},
			fact{"a left join result replaces no match", "ssj-left", k("j1"), []string{"L1+R1"}},
			fact{"never matched: emitted once its window closed", "ssj-left", k("j2"), []string{"L2+null"}},
			fact{"never matched", "ssj-inner", k("j2"), nil},
			fact{"a right record alone", "ssj-outer", k("j3"), []string{"null+R3"}},
			fact{"two left records in one window", "ssj-inner", k("j4"), []string{"L4a+R4", "L4b+R4"}},
			fact{"6 s apart: no join", "ssj-outer", k("j5"), []string{"null+R5", "L5+null"}},
			fact{"out of order within grace: joined", "ssj-inner", k("j6"), []string{"L6+R6"}},
			fact{"late: R7 already left the store", "ssj-inner", k("j7"), nil},
			fact{"late: emitted as unmatched at once (its window is closed)", "ssj-left", k("j7"), []string{"Llate+null"}},
			fact{"late", "ssj-outer", k("j7"), []string{"null+R7", "Llate+null"}},
		)
	}
	return fs
}

// checkWordCount checks wc-out against a model of word count: per word,
// counts 1..n in the order of its input partition, each with the largest
// timestamp seen so far (an aggregate's timestamp), in the word's
// murmur2 partition.
func checkWordCount(t *testing.T, out outputs) {
	want := map[string][]outRecord{}
	for p := int32(0); p < int32(inputTopics["wc-in"]); p++ {
		for _, r := range inputs()[0] {
			if r.topic != "wc-in" || r.partition != p {
				continue
			}
			for _, w := range words(string(r.value)) {
				prev := want[w]
				ts := r.timestamp
				if len(prev) > 0 {
					ts = max(ts, prev[len(prev)-1].Timestamp)
				}
				v := strconv.Itoa(len(prev) + 1)
				want[w] = append(prev, outRecord{Value: &v, Timestamp: ts, Partition: murmur2Partition(w, outputPartitions)})
			}
		}
	}
	if diffs := diffOutputs(outputs{"wc-out": want}, outputs{"wc-out": out["wc-out"]}, "model", "Kafka Streams"); len(diffs) > 0 {
		t.Errorf("word count:\n%s", strings.Join(diffs, "\n"))
	}
	if got := out.values("wc-out", "kafka"); len(got) != 6 {
		t.Errorf("kafka counted %v, want 1..6", got)
	}
}

// checkDescribe compares the Java run's Topology.describe() with
// testdata/describe/ (or records them with -update).
func checkDescribe(t *testing.T) {
	for _, app := range apps {
		got := []byte(javaDescribe[app.name])
		golden := filepath.Join("testdata", "describe", app.name+".txt")
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test -run TestJavaReference -update records it)", err)
		}
		if string(got) != string(want) {
			t.Errorf("%s's describe() changed:\n%s\nwant:\n%s", app.name, got, want)
		}
	}
}
