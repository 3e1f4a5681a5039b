package streams_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/streams"
)

// Repartition passes every record through its topic unchanged (null values
// included) and resets the need to repartition.
func TestRepartition(t *testing.T) {
	b := streams.NewBuilder()
	in := streams.From[string, string](b, []string{"in"})
	streams.SelectKey(in, func(k, v string) string { return v }).
		Repartition(streams.Repartitioned[string, string]{Name: "rp", NumberOfPartitions: 3}).To("out")
	h := newJoinHarness(t, b, "out")
	h.pipe("in", "a", "x", 1)
	h.pipe("in", "b", "y", 2)
	h.expect("x=x@1 y=y@2")
}

// The text Kafka's KStreamImpl#repartition builds for an unnamed
// repartition: KSTREAM-REPARTITION-1 names the topic; its sink, filter and
// source take the generated names (createRepartitionedSource), since the
// prefix matches KSTREAM.*-<10 digits>.
const repartitionDescription = `Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [in])
      --> KSTREAM-FILTER-0000000003
    Processor: KSTREAM-FILTER-0000000003 (stores: [])
      --> KSTREAM-SINK-0000000002
      <-- KSTREAM-SOURCE-0000000000
    Sink: KSTREAM-SINK-0000000002 (topic: KSTREAM-REPARTITION-0000000001-repartition)
      <-- KSTREAM-FILTER-0000000003

  Sub-topology: 1
    Source: KSTREAM-SOURCE-0000000004 (topics: [KSTREAM-REPARTITION-0000000001-repartition])
      --> KSTREAM-SINK-0000000005
    Sink: KSTREAM-SINK-0000000005 (topic: out)
      <-- KSTREAM-SOURCE-0000000004

`

func TestRepartitionDescribe(t *testing.T) {
	b := streams.NewBuilder()
	streams.From[string, string](b, []string{"in"}).Repartition().To("out")
	checkDescribe(t, b, repartitionDescription)
}

func checkDescribe(t *testing.T, b *streams.Builder, want string) {
	t.Helper()
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := topo.Describe()
	if err != nil {
		t.Fatal(err)
	}
	if d.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", d, want)
	}
}

// ToTable: a null value deletes, a null key is dropped; after a key change
// the table is fed through its repartition topic. Old values reach a
// downstream that asks for them (here a table GroupBy, which subtracts
// them).
func TestToTable(t *testing.T) {
	b := streams.NewBuilder()
	in := streams.From[string, string](b, []string{"in"})
	in.ToTable(streams.Materialized[string, string]{StoreName: "t"}).ToStream().To("out")
	h := newJoinHarness(t, b, "out")
	h.pipe("in", "a", "1", 1)
	h.pipe("in", "null", "2", 2)
	h.pipe("in", "a", "null", 3)
	h.pipe("in", "b", "3", 4)
	h.expect("a=1@1 a=null@3 b=3@4")
}

func TestToTableAfterKeyChange(t *testing.T) {
	b := streams.NewBuilder()
	in := streams.From[string, string](b, []string{"in"})
	tbl := streams.SelectKey(in, func(k, v string) string { return k + k }).ToTable()
	// Count the rows per value: a row changing value moves between groups.
	counts := streams.GroupTableBy(tbl, func(k, v string) (string, string) { return v, k }).Count()
	streams.MapTableValues(counts, func(_ string, n int64) string { return strconv.FormatInt(n, 10) }).ToStream().To("counts")
	tbl.ToStream().To("out")
	// Kafka's toTable repartitions through <node>-repartition, the node
	// being KSTREAM-TOTABLE-2 (after the source and the key select).
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := topo.Describe()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.String(), "(topics: [KSTREAM-TOTABLE-0000000002-repartition])\n      --> KSTREAM-TOTABLE-0000000002\n") {
		t.Fatalf("no repartition before the table:\n%s", d)
	}
	h := newJoinHarness(t, b, "out")
	h.pipe("in", "a", "x", 1)
	h.pipe("in", "b", "x", 2)
	h.pipe("in", "a", "y", 3)
	h.expect("aa=x@1 bb=x@2 aa=y@3")
	h.expectOn("counts", "x=1@1 x=2@2 x=1@3 y=1@3")
}

// Table GroupBy, as Kafka's KTableRepartitionMap + KTableAggregate/Reduce:
// an update moving a row to another group subtracts it there first, then
// adds it to its new group; an update within a group is one record
// (subtract then add on the same aggregate); a delete subtracts; a group
// whose count reaches zero stays (Kafka deletes only on a null result).
func TestTableGroupBy(t *testing.T) {
	b := streams.NewBuilder()
	users := streams.TableFrom(b, "users", streams.Consumed[string, string]{}) // user -> "region:amount"
	region := func(v string) string { return v[:1] }
	amount := func(v string) int64 { n, _ := strconv.ParseInt(v[2:], 10, 64); return n }
	byRegion := streams.GroupTableBy(users, func(k, v string) (string, int64) { return region(v), amount(v) })
	streams.MapTableValues(byRegion.Count(), func(_ string, n int64) string { return strconv.FormatInt(n, 10) }).ToStream().To("count")
	streams.MapTableValues(byRegion.Reduce(func(a, v int64) int64 { return a + v }, func(a, v int64) int64 { return a - v }),
		func(_ string, n int64) string { return strconv.FormatInt(n, 10) }).ToStream().To("sum")
	streams.TableAggregate(byRegion, func() string { return "" },
		func(_ string, v int64, agg string) string { return agg + "+" + strconv.FormatInt(v, 10) },
		func(_ string, v int64, agg string) string { return agg + "-" + strconv.FormatInt(v, 10) },
		streams.Materialized[string, string]{StoreName: "trail"}).ToStream().To("trail")
	h := newJoinHarness(t, b, "count")
	step := func(k, v string, ts int64, count, sum, trail string) {
		t.Helper()
		h.pipe("users", k, v, ts)
		h.expect(count)
		h.expectOn("sum", sum)
		h.expectOn("trail", trail)
	}
	step("u1", "e:5", 10, "e=1@10", "e=5@10", "e=+5@10")
	step("u2", "e:7", 20, "e=2@20", "e=12@20", "e=+5+7@20")
	// Same group: one record, subtract then add.
	step("u1", "e:6", 15, "e=2@20", "e=13@20", "e=+5+7-5+6@20")
	// Moves to group w: subtracted from e first, then added to w.
	step("u2", "w:7", 30, "e=1@30 w=1@30", "e=6@30 w=7@30", "e=+5+7-5+6-7@30 w=+7@30")
	// A delete subtracts; the count stays at zero.
	step("u1", "null", 40, "e=0@40", "e=0@40", "e=+5+7-5+6-7-6@40")
}

// The description Kafka builds for table.groupBy(...).count() (KTableImpl
// #groupBy names KTABLE-SELECT-, KGroupedTableImpl#count takes the store
// name, then the sink, the source, KTABLE-AGGREGATE-; the topic is the
// store's name + -repartition; the source table is materialized because
// the select needs old values).
const tableGroupByDescription = `Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000001 (topics: [users])
      --> KTABLE-SOURCE-0000000002
    Processor: KTABLE-SOURCE-0000000002 (stores: [users-STATE-STORE-0000000000])
      --> KTABLE-SELECT-0000000003
      <-- KSTREAM-SOURCE-0000000001
    Processor: KTABLE-SELECT-0000000003 (stores: [])
      --> KSTREAM-SINK-0000000005
      <-- KTABLE-SOURCE-0000000002
    Sink: KSTREAM-SINK-0000000005 (topic: KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition)
      <-- KTABLE-SELECT-0000000003

  Sub-topology: 1
    Source: KSTREAM-SOURCE-0000000006 (topics: [KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition])
      --> KTABLE-AGGREGATE-0000000007
    Processor: KTABLE-AGGREGATE-0000000007 (stores: [KTABLE-AGGREGATE-STATE-STORE-0000000004])
      --> KTABLE-TOSTREAM-0000000008
      <-- KSTREAM-SOURCE-0000000006
    Processor: KTABLE-TOSTREAM-0000000008 (stores: [])
      --> KSTREAM-SINK-0000000009
      <-- KTABLE-AGGREGATE-0000000007
    Sink: KSTREAM-SINK-0000000009 (topic: out)
      <-- KTABLE-TOSTREAM-0000000008

`

func TestTableGroupByDescribe(t *testing.T) {
	b := streams.NewBuilder()
	users := streams.TableFrom(b, "users", streams.Consumed[string, string]{})
	streams.GroupTableBy(users, func(k, v string) (string, string) { return v, k }).Count().ToStream().To("out")
	checkDescribe(t, b, tableGroupByDescription)
}

// A table read with a named store builds, and its source node keeps the
// store (it used to be connected before the node existed).
func TestTableFromNamedStore(t *testing.T) {
	b := streams.NewBuilder()
	users := streams.TableFrom(b, "users", streams.Consumed[string, string]{}, streams.Materialized[string, string]{StoreName: "u"})
	streams.GroupTableBy(users, func(k, v string) (string, string) { return v, k }).Count().ToStream().To("out")
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := topo.Describe()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.String(), "Processor: KTABLE-SOURCE-0000000001 (stores: [u])") {
		t.Fatalf("the table source does not keep store u:\n%s", d)
	}
}
