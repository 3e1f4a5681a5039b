package streams_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/serde"
)

var nonWord = regexp.MustCompile(`\W+`)

func wordCount(t *testing.T, storeName string) *streams.Topology {
	b := streams.NewBuilder()
	lines := streams.From[string, string](b, []string{"wc-in"})
	words := streams.FlatMapValues(lines, func(_ string, line string) []string {
		var out []string
		for _, w := range nonWord.Split(strings.ToLower(line), -1) {
			if w != "" {
				out = append(out, w)
			}
		}
		return out
	})
	counts := streams.GroupBy(words, func(_, w string) string { return w }).Count(streams.Materialized[string, int64]{StoreName: storeName})
	counts.ToStream().To("wc-out")
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func TestWordCountDriver(t *testing.T) {
	d, err := streams.NewTestDriver(wordCount(t, "counts"), streams.TestDriverConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := streams.NewInputTopic(d, "wc-in", serde.String(), serde.String())
	out := streams.NewOutputTopic(d, "wc-out", serde.String(), serde.Int64())
	for i, line := range []string{"Hello Kafka", "hello samsa, HELLO"} {
		if err := in.PipeRecord(streams.Record[string, string]{Value: line, NullKey: true, Timestamp: int64(10 * (i + 1))}); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := out.ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Key+"="+itoa(r.Value)+"@"+itoa(r.Timestamp))
	}
	want := "hello=1@10 kafka=1@10 hello=2@20 samsa=1@20 hello=3@20"
	if strings.Join(got, " ") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// The description Kafka Streams 4.x prints for the same program (its word
// count demo with the store named "counts").
const wordCountDescription = `Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [wc-in])
      --> KSTREAM-FLATMAPVALUES-0000000001
    Processor: KSTREAM-FLATMAPVALUES-0000000001 (stores: [])
      --> KSTREAM-KEY-SELECT-0000000002
      <-- KSTREAM-SOURCE-0000000000
    Processor: KSTREAM-KEY-SELECT-0000000002 (stores: [])
      --> counts-repartition-filter
      <-- KSTREAM-FLATMAPVALUES-0000000001
    Processor: counts-repartition-filter (stores: [])
      --> counts-repartition-sink
      <-- KSTREAM-KEY-SELECT-0000000002
    Sink: counts-repartition-sink (topic: counts-repartition)
      <-- counts-repartition-filter

  Sub-topology: 1
    Source: counts-repartition-source (topics: [counts-repartition])
      --> KSTREAM-AGGREGATE-0000000003
    Processor: KSTREAM-AGGREGATE-0000000003 (stores: [counts])
      --> KTABLE-TOSTREAM-0000000007
      <-- counts-repartition-source
    Processor: KTABLE-TOSTREAM-0000000007 (stores: [])
      --> KSTREAM-SINK-0000000008
      <-- KSTREAM-AGGREGATE-0000000003
    Sink: KSTREAM-SINK-0000000008 (topic: wc-out)
      <-- KTABLE-TOSTREAM-0000000007

`

func TestWordCountDescribe(t *testing.T) {
	d, err := wordCount(t, "counts").Describe()
	if err != nil {
		t.Fatal(err)
	}
	if d.String() != wordCountDescription {
		t.Fatalf("got\n%s\nwant\n%s", d, wordCountDescription)
	}
}
