package streams_test

import (
	"strings"
	"testing"

	"github.com/samsa-io/samsa/streams"
)

// The left values are "<product>:<note>"; a value without ':' has a null
// foreign key.
func productOf(_ string, v string) (string, bool) {
	p, _, ok := strings.Cut(v, ":")
	return p, ok
}

func fkTopology(left bool) *streams.Builder {
	b := streams.NewBuilder()
	orders := streams.TableFrom(b, "orders", streams.Consumed[string, string]{})
	products := streams.TableFrom(b, "products", streams.Consumed[string, string]{})
	var joined *streams.Table[string, string]
	if left {
		joined = streams.ForeignKeyLeftJoin(orders, products, productOf, func(_ string, o string, p *string) string { return o + "/" + orNull(p) })
	} else {
		joined = streams.ForeignKeyJoin(orders, products, productOf, func(_ string, o, p string) string { return o + "/" + p })
	}
	joined.ToStream().To("out")
	return b
}

// Kafka's KIP-213 inner join, record by record (as Kafka Streams 4.4's
// TopologyTestDriver printed it for the same input): a new left row
// subscribes and is answered only if the right row exists (timestamp: the
// later of the two); a right update answers its subscribers with its own
// timestamp; a foreign-key change unsubscribes the old key silently; a
// right delete and a left delete emit tombstones; a null foreign key joins
// nothing until the row gets one.
func TestForeignKeyJoin(t *testing.T) {
	h := newJoinHarness(t, fkTopology(false), "out")
	h.pipe("products", "p1", "P1", 1)
	h.expect("")
	h.pipe("orders", "o1", "p1:a", 10)
	h.expect("o1=p1:a/P1@10")
	h.pipe("orders", "o2", "p2:b", 11)
	h.expect("")
	h.pipe("products", "p2", "P2", 12)
	h.expect("o2=p2:b/P2@12")
	h.pipe("products", "p1", "P1x", 13)
	h.expect("o1=p1:a/P1x@13")
	h.pipe("orders", "o1", "p2:c", 14) // foreign key p1 -> p2
	h.expect("o1=p2:c/P2@14")
	h.pipe("orders", "o1", "p2:d", 15)
	h.expect("o1=p2:d/P2@15")
	h.pipe("products", "p1", "P1y", 16) // o1 left p1
	h.expect("")
	h.pipe("products", "p2", "null", 17)
	h.expect("o1=null@17 o2=null@17")
	h.pipe("orders", "o1", "null", 18)
	h.expect("o1=null@18")
	h.pipe("orders", "o3", "none", 20)
	h.pipe("products", "p1", "P1z", 21)
	h.pipe("orders", "o3", "p1:e", 22)
	h.expect("o3=p1:e/P1z@22")
	h.pipe("products", "p3", "P3", 30)
	h.pipe("orders", "o4", "p3:f", 25) // the right row is the later
	h.expect("o4=p3:f/P3@30")
	h.pipe("orders", "o2", "p2:z", 19) // same foreign key, no right row: nothing to retract
	h.expect("")
	h.pipe("orders", "o4", "none", 31) // to a null foreign key: retract
	h.expect("o4=null@31")
}

// The left join, record by record (as Kafka 4.4 printed it): every left
// row answers (right nil while there is none, or with a null foreign key);
// a foreign key change unsubscribes the old key silently; a left delete
// emits one tombstone.
func TestForeignKeyLeftJoin(t *testing.T) {
	h := newJoinHarness(t, fkTopology(true), "out")
	h.pipe("orders", "o1", "p1:a", 10)
	h.expect("o1=p1:a/null@10")
	h.pipe("products", "p1", "P1", 5)
	h.expect("o1=p1:a/P1@5")
	h.pipe("orders", "o1", "none", 12)
	h.expect("o1=none/null@12")
	h.pipe("orders", "o2", "none", 13)
	h.expect("o2=none/null@13")
	h.pipe("orders", "o1", "null", 14)
	h.expect("o1=null@14")
	h.pipe("orders", "o2", "p1:b", 15)
	h.expect("o2=p1:b/P1@15")
	h.pipe("products", "p1", "null", 16)
	h.expect("o2=p1:b/null@16")
	h.pipe("orders", "o2", "null", 17)
	h.expect("o2=null@17")
}

// What Kafka Streams 4.4 prints for fkTopology(false) (captured from a
// Java run of the same program): two sub-topologies joined by the
// subscription registration and response topics.
const foreignKeyDescription = `Topologies:
   Sub-topology: 0
    Source: KTABLE-SOURCE-0000000016 (topics: [KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic])
      --> KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-0000000017
    Source: KSTREAM-SOURCE-0000000001 (topics: [orders])
      --> KTABLE-SOURCE-0000000002
    Processor: KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-0000000017 (stores: [orders-STATE-STORE-0000000000])
      --> KTABLE-FK-JOIN-OUTPUT-0000000018
      <-- KTABLE-SOURCE-0000000016
    Processor: KTABLE-FK-JOIN-OUTPUT-0000000018 (stores: [])
      --> KTABLE-TOSTREAM-0000000020
      <-- KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-0000000017
    Processor: KTABLE-SOURCE-0000000002 (stores: [orders-STATE-STORE-0000000000])
      --> KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000007
      <-- KSTREAM-SOURCE-0000000001
    Processor: KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000007 (stores: [])
      --> KTABLE-SINK-0000000008
      <-- KTABLE-SOURCE-0000000002
    Processor: KTABLE-TOSTREAM-0000000020 (stores: [])
      --> KSTREAM-SINK-0000000021
      <-- KTABLE-FK-JOIN-OUTPUT-0000000018
    Sink: KSTREAM-SINK-0000000021 (topic: out)
      <-- KTABLE-TOSTREAM-0000000020
    Sink: KTABLE-SINK-0000000008 (topic: KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic)
      <-- KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000007

  Sub-topology: 1
    Source: KSTREAM-SOURCE-0000000004 (topics: [products])
      --> KTABLE-SOURCE-0000000005
    Source: KTABLE-SOURCE-0000000009 (topics: [KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic])
      --> KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000011
    Processor: KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000011 (stores: [KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010])
      --> KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000012
      <-- KTABLE-SOURCE-0000000009
    Processor: KTABLE-SOURCE-0000000005 (stores: [products-STATE-STORE-0000000003])
      --> KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000013
      <-- KSTREAM-SOURCE-0000000004
    Processor: KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000012 (stores: [products-STATE-STORE-0000000003])
      --> KTABLE-SINK-0000000015
      <-- KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000011
    Processor: KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000013 (stores: [KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010])
      --> KTABLE-SINK-0000000015
      <-- KTABLE-SOURCE-0000000005
    Sink: KTABLE-SINK-0000000015 (topic: KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic)
      <-- KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000012, KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000013

`

func TestForeignKeyJoinDescribe(t *testing.T) {
	topo, err := fkTopology(false).Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := topo.Describe()
	if err != nil {
		t.Fatal(err)
	}
	if d.String() != foreignKeyDescription {
		t.Fatalf("got\n%s\nwant\n%s", d, foreignKeyDescription)
	}
}
