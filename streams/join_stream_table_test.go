package streams_test

import (
	"strings"
	"testing"

	"github.com/samsa-io/samsa/streams"
)

func streamTableTopology(left bool) *streams.Builder {
	b := streams.NewBuilder()
	orders := streams.From[string, string](b, []string{"orders"})
	prices := streams.TableFrom(b, "prices", streams.Consumed[string, string]{})
	var joined *streams.Stream[string, string]
	if left {
		joined = streams.StreamTableLeftJoin(orders, prices, func(k, o string, p *string) string { return k + ":" + o + "/" + orNull(p) })
	} else {
		joined = streams.StreamTableJoin(orders, prices, func(k, o, p string) string { return k + ":" + o + "/" + p })
	}
	joined.To("out")
	return b
}

// Kafka's KStreamKTableJoin: the stream looks the table up; table updates
// emit nothing; the stream record's timestamp is the result's, even when
// the row is newer; null keys and values are dropped (a left join keeps a
// null key, KIP-962).
func TestStreamTableJoin(t *testing.T) {
	h := newJoinHarness(t, streamTableTopology(false), "out")
	h.pipe("orders", "a", "o1", 10) // no row yet
	h.expect("")
	h.pipe("prices", "a", "p1", 5)
	h.expect("")
	h.pipe("orders", "a", "o2", 20)
	h.expect("a=a:o2/p1@20")
	h.pipe("prices", "a", "p2", 30)
	h.expect("")
	h.pipe("orders", "a", "o3", 25) // out of order: the current row still
	h.expect("a=a:o3/p2@25")
	h.pipe("prices", "a", "null", 40) // delete
	h.pipe("orders", "a", "o4", 41)
	h.pipe("orders", "null", "o5", 42)
	h.pipe("prices", "b", "q1", 1)
	h.pipe("orders", "b", "null", 43)
	h.pipe("orders", "b", "o6", 44)
	h.expect("b=b:o6/q1@44")
}

func TestStreamTableLeftJoin(t *testing.T) {
	h := newJoinHarness(t, streamTableTopology(true), "out")
	h.pipe("orders", "a", "o1", 10)
	h.expect("a=a:o1/null@10")
	h.pipe("prices", "a", "p1", 5)
	h.pipe("orders", "a", "o2", 20)
	h.expect("a=a:o2/p1@20")
	h.pipe("prices", "a", "null", 40)
	h.pipe("orders", "a", "o4", 41)
	h.pipe("orders", "null", "o5", 42)
	h.pipe("orders", "b", "null", 43)
	h.expect("a=a:o4/null@41 null=:o5/null@42")
}

// A key change before the join writes the stream through
// <node>-repartition, then joins; the result is as without it.
func TestStreamTableJoinAfterKeyChange(t *testing.T) {
	b := streams.NewBuilder()
	orders := streams.From[string, string](b, []string{"orders"})
	rekeyed := streams.SelectKey(orders, func(_, v string) string { return v[:1] })
	prices := streams.TableFrom(b, "prices", streams.Consumed[string, string]{})
	streams.StreamTableJoin(rekeyed, prices, func(k, o, p string) string { return o + "/" + p }).To("out")
	h := newJoinHarness(t, b, "out")
	h.pipe("prices", "x", "px", 1)
	h.pipe("orders", "k1", "x1", 10)
	h.pipe("orders", "k2", "y1", 11)
	h.expect("x=x1/px@10")
}

func globalTopology(left bool) *streams.Builder {
	b := streams.NewBuilder()
	orders := streams.From[string, string](b, []string{"orders"})
	customers := streams.GlobalTableFrom(b, "customers", streams.Consumed[string, string]{})
	// The order's value names its customer before a comma: "c1,book".
	mapper := func(_ string, v string) (string, bool) {
		c, _, ok := strings.Cut(v, ",")
		return c, ok
	}
	if left {
		streams.StreamGlobalTableLeftJoin(orders, customers, mapper, func(k, o string, c *string) string { return o + "/" + orNull(c) }).To("out")
	} else {
		streams.StreamGlobalTableJoin(orders, customers, mapper, func(k, o, c string) string { return o + "/" + c }).To("out")
	}
	return b
}

// Piping into the global topic updates the global store; the stream joins
// it through the key mapper; a mapper saying "no key" (Kafka's null) drops
// the record in an inner join and keeps it in a left join (Kafka 4.4), as
// a record with a null key.
func TestStreamGlobalTableJoin(t *testing.T) {
	h := newJoinHarness(t, globalTopology(false), "out")
	h.pipe("orders", "o1", "c1,book", 10)
	h.expect("")
	h.pipe("customers", "c1", "alice", 1)
	h.pipe("orders", "o2", "c1,pen", 20)
	h.pipe("orders", "o3", "nocomma", 21)
	h.pipe("orders", "null", "c1,ink", 22)
	h.expect("o2=c1,pen/alice@20 null=c1,ink/alice@22")
	h.pipe("customers", "c1", "null", 30)
	h.pipe("orders", "o4", "c1,cup", 31)
	h.expect("")

	h = newJoinHarness(t, globalTopology(true), "out")
	h.pipe("orders", "o1", "c1,book", 10)
	h.pipe("customers", "c1", "alice", 1)
	h.pipe("orders", "o2", "c1,pen", 20)
	h.pipe("orders", "o3", "nocomma", 21)
	h.pipe("orders", "o5", "null", 22)
	h.pipe("orders", "null", "c2,ink", 23)
	h.expect("o1=c1,book/null@10 o2=c1,pen/alice@20 o3=nocomma/null@21 null=c2,ink/null@23")
}

// What Kafka Streams 4.4 prints for
//
//	builder.stream("orders").join(builder.table("prices"), joiner).to("out")
//
// (a Java run, testdata/joins_reference): the table's store name is
// generated first (prefix "prices-"), then its two nodes, the join, the
// sink; the join processor is connected to the table's store, which the
// lookup materializes.
const streamTableDescription = `Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [orders])
      --> KSTREAM-JOIN-0000000004
    Processor: KSTREAM-JOIN-0000000004 (stores: [prices-STATE-STORE-0000000001])
      --> KSTREAM-SINK-0000000005
      <-- KSTREAM-SOURCE-0000000000
    Source: KSTREAM-SOURCE-0000000002 (topics: [prices])
      --> KTABLE-SOURCE-0000000003
    Sink: KSTREAM-SINK-0000000005 (topic: out)
      <-- KSTREAM-JOIN-0000000004
    Processor: KTABLE-SOURCE-0000000003 (stores: [prices-STATE-STORE-0000000001])
      --> none
      <-- KSTREAM-SOURCE-0000000002

`

func TestStreamTableJoinDescribe(t *testing.T) {
	topo, err := streamTableTopology(false).Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := topo.Describe()
	if err != nil {
		t.Fatal(err)
	}
	if d.String() != streamTableDescription {
		t.Fatalf("got\n%s\nwant\n%s", d, streamTableDescription)
	}
}

// What Kafka 4.4 prints for a stream joined with a global table: the global
// store's group is numbered after the stream's subtopology and makes no
// tasks; the inner global join is named KSTREAM-LEFTJOIN- as in Kafka.
const globalDescription = `Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [orders])
      --> KSTREAM-LEFTJOIN-0000000004
    Processor: KSTREAM-LEFTJOIN-0000000004 (stores: [])
      --> KSTREAM-SINK-0000000005
      <-- KSTREAM-SOURCE-0000000000
    Sink: KSTREAM-SINK-0000000005 (topic: out)
      <-- KSTREAM-LEFTJOIN-0000000004

  Sub-topology: 1 for global store (will not generate tasks)
    Source: KSTREAM-SOURCE-0000000002 (topics: [customers])
      --> KTABLE-SOURCE-0000000003
    Processor: KTABLE-SOURCE-0000000003 (stores: [customers-STATE-STORE-0000000001])
      --> none
      <-- KSTREAM-SOURCE-0000000002
`

func TestStreamGlobalTableJoinDescribe(t *testing.T) {
	topo, err := globalTopology(false).Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := topo.Describe()
	if err != nil {
		t.Fatal(err)
	}
	if d.String() != globalDescription {
		t.Fatalf("got\n%s\nwant\n%s", d, globalDescription)
	}
}
