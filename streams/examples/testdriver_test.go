package examples_test

import (
	"testing"

	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/examples"
	"github.com/samsa-io/samsa/streams/serde"
)

// TestWordCount is a unit test of a topology as a user writes one.
func TestWordCount(t *testing.T) {
	topo, err := examples.WordCount("lines", "word-counts")
	if err != nil {
		t.Fatal(err)
	}
	d, err := streams.NewTestDriver(topo, streams.TestDriverConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := streams.NewInputTopic(d, "lines", serde.String(), serde.String())
	out := streams.NewOutputTopic(d, "word-counts", serde.String(), serde.Int64())
	if err := in.Pipe("", "hello hello", 10); err != nil {
		t.Fatal(err)
	}
	recs, err := out.ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[1].Key != "hello" || recs[1].Value != 2 || recs[1].Timestamp != 10 {
		t.Fatalf("got %+v, want hello=1 then hello=2 at 10", recs)
	}
}
