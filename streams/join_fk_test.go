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

// Kafka's KIP-213 inner join, record by record: a new left row subscribes
// and is answered only if the right row exists (timestamp: the later of
// the two); a right update answers its subscribers with its own
// timestamp; a foreign-key change unsubscribes the old key silently; a
// right delete and a left delete emit tombstones; a null foreign key is
// skipped, and (Kafka's rule) so is any later update of that row.
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
	h.expect("")
	h.pipe("products", "p3", "P3", 30)
	h.pipe("orders", "o4", "p3:f", 25) // the right row is the later
	h.expect("o4=p3:f/P3@30")
}

// The left join, record by record: every left row answers (right nil
// while there is none); moving to a null foreign key answers twice (the
// old key's delete, then the null key), as Kafka; a left delete emits a
// tombstone per subscription it sends.
func TestForeignKeyLeftJoin(t *testing.T) {
	h := newJoinHarness(t, fkTopology(true), "out")
	h.pipe("orders", "o1", "p1:a", 10)
	h.expect("o1=p1:a/null@10")
	h.pipe("products", "p1", "P1", 5)
	h.expect("o1=p1:a/P1@5")
	h.pipe("orders", "o1", "none", 12)
	h.expect("o1=none/null@12 o1=none/null@12")
	h.pipe("orders", "o2", "none", 13)
	h.expect("o2=none/null@13")
	h.pipe("orders", "o1", "null", 14)
	h.expect("o1=null@14")
	h.pipe("orders", "o2", "p1:b", 15)
	h.expect("o2=p1:b/P1@15")
	h.pipe("products", "p1", "null", 16)
	h.expect("o2=p1:b/null@16")
	h.pipe("orders", "o2", "null", 17)
	h.expect("o2=null@17 o2=null@17")
}
