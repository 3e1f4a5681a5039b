package streams_test

import (
	"testing"

	"github.com/samsa-io/samsa/streams"
)

// The three table-table joins over the same two tables, each to its own
// topic; expected outputs derived from Kafka's KTableKTable{Inner,Left,
// Right,Outer}Join processors: the result timestamp is the larger of the
// rows'; an inner join emits nothing while the other side has no row; the
// right side of a left join emits only with a left row, a right delete
// then being the left row joined with nothing.
func TestTableTableJoins(t *testing.T) {
	b := streams.NewBuilder()
	l := streams.TableFrom(b, "left", streams.Consumed[string, string]{})
	r := streams.TableFrom(b, "right", streams.Consumed[string, string]{})
	streams.TableTableJoin(l, r, func(k, a, c string) string { return a + "/" + c }).ToStream().To("inner")
	streams.TableTableLeftJoin(l, r, func(k, a string, c *string) string { return a + "/" + orNull(c) }).ToStream().To("leftout")
	streams.TableTableOuterJoin(l, r, func(k string, a, c *string) string { return orNull(a) + "/" + orNull(c) }).ToStream().To("outer")
	h := newJoinHarness(t, b, "inner")
	step := func(topic, k, v string, ts int64, inner, left, outer string) {
		t.Helper()
		h.pipe(topic, k, v, ts)
		h.expect(inner)
		h.expectOn("leftout", left)
		h.expectOn("outer", outer)
	}
	step("left", "a", "l1", 10, "", "a=l1/null@10", "a=l1/null@10")
	step("right", "a", "r1", 5, "a=l1/r1@10", "a=l1/r1@10", "a=l1/r1@10")
	step("right", "b", "r2", 20, "", "", "b=null/r2@20")
	step("left", "a", "l2", 15, "a=l2/r1@15", "a=l2/r1@15", "a=l2/r1@15")
	step("right", "a", "null", 30, "a=null@30", "a=l2/null@30", "a=l2/null@30")
	step("left", "a", "null", 40, "", "a=null@40", "a=null@40")
	step("right", "b", "null", 50, "", "", "b=null@50")
	step("left", "null", "x", 60, "", "", "")
	step("left", "c", "null", 70, "", "", "") // deleting what never was
}

// A join of a join: the first result is not materialized, so the second
// join reads it through the joined value getter of both sides.
func TestTableTableJoinOfJoin(t *testing.T) {
	b := streams.NewBuilder()
	l := streams.TableFrom(b, "left", streams.Consumed[string, string]{})
	r := streams.TableFrom(b, "right", streams.Consumed[string, string]{})
	x := streams.TableFrom(b, "third", streams.Consumed[string, string]{})
	lr := streams.TableTableLeftJoin(l, r, func(k, a string, c *string) string { return a + "/" + orNull(c) })
	streams.TableTableJoin(x, lr, func(k, a, c string) string { return a + "+" + c }).ToStream().To("out")
	h := newJoinHarness(t, b, "out")
	h.pipe("left", "a", "l1", 10)
	h.pipe("right", "a", "r1", 12)
	h.expect("")
	h.pipe("third", "a", "x1", 11)
	h.expect("a=x1+l1/r1@12")
	h.pipe("right", "a", "r2", 13)
	h.expect("a=x1+l1/r2@13")
}

// A materialized join keeps its result in a store a later stream-table
// join reads.
func TestTableTableJoinMaterialized(t *testing.T) {
	b := streams.NewBuilder()
	l := streams.TableFrom(b, "left", streams.Consumed[string, string]{})
	r := streams.TableFrom(b, "right", streams.Consumed[string, string]{})
	lr := streams.TableTableJoin(l, r, func(k, a, c string) string { return a + "/" + c }, streams.Materialized[string, string]{StoreName: "joined"})
	s := streams.From[string, string](b, []string{"events"})
	streams.StreamTableJoin(s, lr, func(k, e, j string) string { return e + "@" + j }).To("out")
	h := newJoinHarness(t, b, "out")
	h.pipe("left", "a", "l1", 1)
	h.pipe("right", "a", "r1", 2)
	h.pipe("events", "a", "e1", 3)
	h.expect("a=e1@l1/r1@3")
	h.pipe("left", "a", "null", 4)
	h.pipe("events", "a", "e2", 5)
	h.expect("")
}

// An unmaterialized inner join read by a stream: no row while either side
// has none.
func TestTableTableJoinGetter(t *testing.T) {
	b := streams.NewBuilder()
	l := streams.TableFrom(b, "left", streams.Consumed[string, string]{})
	r := streams.TableFrom(b, "right", streams.Consumed[string, string]{})
	lr := streams.TableTableJoin(l, r, func(k, a, c string) string { return a + "/" + c })
	s := streams.From[string, string](b, []string{"events"})
	streams.StreamTableLeftJoin(s, lr, func(k, e string, j *string) string { return e + "@" + orNull(j) }).To("out")
	h := newJoinHarness(t, b, "out")
	h.pipe("left", "a", "l1", 1)
	h.pipe("events", "a", "e1", 3)
	h.pipe("right", "a", "r1", 4)
	h.pipe("events", "a", "e2", 5)
	h.pipe("left", "a", "null", 6)
	h.pipe("events", "a", "e3", 7)
	h.expect("a=e1@null@3 a=e2@l1/r1@5 a=e3@null@7")
}
