package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/serde"
)

// Word count splits as Java's split("\\W+") after toLowerCase: punctuation
// and digits-adjacent underscores as Java's \W, empty words dropped.
func TestWordCount(t *testing.T) {
	topo, err := wordCount("in", "out")
	if err != nil {
		t.Fatal(err)
	}
	got := drive(t, topo, serde.String(), []streams.Record[string, string]{
		{Key: "0", Value: "Hello, word_1 WORLD"},
		{Key: "1", Value: "  hello--world! "},
	}, func(k string, v int64) string { return k + "=" + strconv.FormatInt(v, 10) })
	want := "hello=1 word_1=1 world=1 hello=2 world=2"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// The windowed count keys its output key@start/end (Bench.java's map) over
// one-minute tumbling windows.
func TestWindowedCount(t *testing.T) {
	topo, err := windowedCount("in", "out")
	if err != nil {
		t.Fatal(err)
	}
	got := drive(t, topo, serde.Int64(), []streams.Record[string, int64]{
		{Key: "a", Value: 7, Timestamp: 1_000},
		{Key: "a", Value: 7, Timestamp: 59_999},
		{Key: "a", Value: 7, Timestamp: 60_000},
	}, func(k string, v int64) string { return k + "=" + strconv.FormatInt(v, 10) })
	want := "a@0/60000=1 a@0/60000=2 a@60000/120000=1"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func drive[V any](t *testing.T, topo *streams.Topology, vs serde.Serde[V], in []streams.Record[string, V], show func(string, int64) string) string {
	t.Helper()
	d, err := streams.NewTestDriver(topo, streams.TestDriverConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	input := streams.NewInputTopic(d, "in", serde.String(), vs)
	for _, r := range in {
		if err := input.PipeRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := streams.NewOutputTopic(d, "out", serde.String(), serde.Int64()).ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, show(r.Key, r.Value))
	}
	return strings.Join(got, " ")
}

// The driver's properties file reads back key by key, and a line without
// '=' is an error rather than skipped.
func TestReadProperties(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.properties")
	if err := os.WriteFile(good, []byte("# c\napplication.id=x\nstatestore.cache.max.bytes = 0\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	props, err := readProperties(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(props) != 2 || props["application.id"] != "x" || props["statestore.cache.max.bytes"] != "0" {
		t.Fatalf("props = %v", props)
	}
	bad := filepath.Join(dir, "bad.properties")
	if err := os.WriteFile(bad, []byte("application.id\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readProperties(bad); err == nil {
		t.Fatal("a line without '=' was accepted")
	}
}
