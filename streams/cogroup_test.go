package streams_test

import (
	"testing"

	"github.com/samsa-io/samsa/streams"
)

// Cogroup of two streams, one re-keyed: each input's aggregator folds its
// records into the shared aggregate (initialized once per key), in record
// order; null values are dropped (KStreamAggregate); the aggregate's
// timestamp is the largest of its records'.
func TestCogroup(t *testing.T) {
	b := streams.NewBuilder()
	clicks := streams.From[string, string](b, []string{"clicks"}).GroupByKey()
	views := streams.GroupBy(streams.From[string, string](b, []string{"views"}), func(k, v string) string { return v })
	cs := streams.CogroupStart(clicks, func(_ string, v, agg string) string { return agg + "c" + v })
	cs = streams.CogroupAdd(cs, views, func(k string, v, agg string) string { return agg + "v" + k })
	streams.CogroupAggregate(cs, func() string { return "<" }, streams.Materialized[string, string]{StoreName: "both"}).
		ToStream().To("out")
	h := newJoinHarness(t, b, "out")
	h.pipe("clicks", "a", "1", 10)
	h.pipe("views", "ignored", "a", 5)
	h.pipe("views", "x", "b", 20)
	h.pipe("clicks", "a", "null", 30)
	h.pipe("clicks", "b", "2", 15)
	h.expect("a=<c1@10 a=<c1va@10 b=<vb@20 b=<vbc2@20")
}

// The description Kafka's CogroupedStreamAggregateBuilder makes: the store
// name, the re-keyed input's repartition (named after the store, whose
// name does not match KSTREAM.*, so <topic>-filter/-sink/-source), one
// COGROUPKSTREAM-AGGREGATE- per input, then COGROUPKSTREAM-MERGE-.
// Subtopologies are numbered in the order Kafka writes the nodes, the
// sources first (clicks before views); within one, Kafka's NodeComparator
// orders the two sources (equal subtrees) by name.
const cogroupDescription = `Topologies:
   Sub-topology: 0
    Source: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-source (topics: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition])
      --> COGROUPKSTREAM-AGGREGATE-0000000008
    Source: KSTREAM-SOURCE-0000000000 (topics: [clicks])
      --> COGROUPKSTREAM-AGGREGATE-0000000007
    Processor: COGROUPKSTREAM-AGGREGATE-0000000007 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003])
      --> COGROUPKSTREAM-MERGE-0000000009
      <-- KSTREAM-SOURCE-0000000000
    Processor: COGROUPKSTREAM-AGGREGATE-0000000008 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003])
      --> COGROUPKSTREAM-MERGE-0000000009
      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-source
    Processor: COGROUPKSTREAM-MERGE-0000000009 (stores: [])
      --> KTABLE-TOSTREAM-0000000010
      <-- COGROUPKSTREAM-AGGREGATE-0000000007, COGROUPKSTREAM-AGGREGATE-0000000008
    Processor: KTABLE-TOSTREAM-0000000010 (stores: [])
      --> KSTREAM-SINK-0000000011
      <-- COGROUPKSTREAM-MERGE-0000000009
    Sink: KSTREAM-SINK-0000000011 (topic: out)
      <-- KTABLE-TOSTREAM-0000000010

  Sub-topology: 1
    Source: KSTREAM-SOURCE-0000000001 (topics: [views])
      --> KSTREAM-KEY-SELECT-0000000002
    Processor: KSTREAM-KEY-SELECT-0000000002 (stores: [])
      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter
      <-- KSTREAM-SOURCE-0000000001
    Processor: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter (stores: [])
      --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-sink
      <-- KSTREAM-KEY-SELECT-0000000002
    Sink: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-sink (topic: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition)
      <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter

`

func TestCogroupDescribe(t *testing.T) {
	b := streams.NewBuilder()
	clicks := streams.From[string, string](b, []string{"clicks"}).GroupByKey()
	views := streams.GroupBy(streams.From[string, string](b, []string{"views"}), func(k, v string) string { return v })
	cs := streams.CogroupStart(clicks, func(_ string, v, agg string) string { return agg + v })
	cs = streams.CogroupAdd(cs, views, func(_ string, v, agg string) string { return agg + v })
	streams.CogroupAggregate(cs, func() string { return "" }).ToStream().To("out")
	checkDescribe(t, b, cogroupDescription)
}
