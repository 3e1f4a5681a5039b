package streams

import (
	"strings"
	"testing"

	"github.com/samsa-io/samsa/streams/serde"
)

func TestSuppressUntilTimeLimitEmitsEarlyWhenFull(t *testing.T) {
	b := NewBuilder()
	counts := From[string, string](b, []string{"in"}).GroupByKey().Count()
	counts.Suppress(UntilTimeLimit(10*ms, MaxRecords(2))).ToStream().To("out")
	d := run(t, b, []pipeRec{
		{"a", "x", 0},
		{"b", "x", 1},
		{"a", "x", 2},  // a keeps its place (time 0), now a=2
		{"c", "x", 3},  // three keys in a buffer of two: the oldest, a, goes early
		{"d", "x", 12}, // stream time 12: b (buffered at 1) is due; c (3) is not
	})
	expect(t, "time limit", read(t, d, "out"), "a=2@2 b=1@1")
}

func TestSuppressShutDownWhenFull(t *testing.T) {
	b := NewBuilder()
	counts := From[string, string](b, []string{"in"}).GroupByKey().Count()
	counts.Suppress(UntilTimeLimit(10*ms, MaxRecords(1).ShutDownWhenFull())).ToStream().To("out")
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewTestDriver(topo, TestDriverConfig{})
	if err != nil {
		t.Fatal(err)
	}
	in := NewInputTopic(d, "in", serde.String(), serde.String())
	if err := in.Pipe("a", "x", 0); err != nil {
		t.Fatal(err)
	}
	err = in.Pipe("b", "x", 1)
	if err == nil || !strings.Contains(err.Error(), "KTABLE-SUPPRESS-0000000003 buffer exceeded its max capacity. Currently [2/1] records") {
		t.Fatalf("a second key in a buffer of one with ShutDownWhenFull: got %v", err)
	}
}

// The final result drops a window's tombstone (Kafka's
// safeToDropTombstones), and a key updated again keeps the value it had
// when first buffered as the old value downstream lookups see.
func TestSuppressBufferOrderAndBytes(t *testing.T) {
	buf := newTimeOrderedBuffer(&storeDef{name: "s"})
	md := RecordMetadata{Topic: "in"}
	buf.put(20, "b", bufferedRecord{key: "b", newV: int64(1), ts: 5, md: md, newSize: 8})
	buf.put(10, "z", bufferedRecord{key: "z", newV: int64(1), ts: 6, md: md, newSize: 8})
	buf.put(20, "a", bufferedRecord{key: "a", newV: int64(1), oldV: int64(7), ts: 7, md: md, newSize: 8, oldSize: 8})
	// Kafka's estimate: 8 (time) + key + prior + old (unless it is the
	// prior) + new + 8+8+len(topic)+4 of record context (22 here). b and
	// z: 8+1+0+8+22; a after its first put 8+1+8 (prior, the old value)
	// +8+22, after its second 8+1+8 (prior) +8 (old) +8+22.
	if got, want := buf.bufferSize(), int64(39+39+47); got != want {
		t.Errorf("buffer size %d, want %d", got, want)
	}
	buf.put(99, "a", bufferedRecord{key: "a", newV: int64(2), oldV: int64(1), ts: 8, md: md, newSize: 8, oldSize: 8})
	want := int64(39 + 39 + 55)
	if got := buf.bufferSize(); got != want {
		t.Errorf("buffer size %d, want %d", got, want)
	}
	if prior, ok := buf.priorValue([]byte("a")); !ok || prior != int64(7) {
		t.Errorf("prior value of a: %v %v, want 7 (the old value when first buffered)", prior, ok)
	}
	var order []string
	err := buf.evictWhile(func() bool { return true }, func(r bufferedRecord) error {
		order = append(order, r.key.(string))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// By buffer time, then key bytes; a's second put kept its time 20.
	if strings.Join(order, " ") != "z a b" {
		t.Errorf("evicted %v, want z a b", order)
	}
	if buf.bufferSize() != 0 || buf.numRecords() != 0 {
		t.Errorf("after evicting all: %d records, %d bytes", buf.numRecords(), buf.bufferSize())
	}
}

// The description Kafka Streams prints for
//
//	builder.stream("in").groupByKey()
//	  .windowedBy(TimeWindows.ofSizeAndGrace(...)).count()
//	  .suppress(Suppressed.untilWindowCloses(unbounded()))
//	  .toStream().selectKey(...).to("out")
//
// derived from Kafka's naming (the count's store takes its index before
// the processor, the suppression's processor before its store); the
// differential test confirms it against Kafka Streams itself.
const windowedCountDescription = `Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [in])
      --> KSTREAM-AGGREGATE-0000000002
    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000001])
      --> KTABLE-SUPPRESS-0000000003
      <-- KSTREAM-SOURCE-0000000000
    Processor: KTABLE-SUPPRESS-0000000003 (stores: [KTABLE-SUPPRESS-STATE-STORE-0000000004])
      --> KTABLE-TOSTREAM-0000000005
      <-- KSTREAM-AGGREGATE-0000000002
    Processor: KTABLE-TOSTREAM-0000000005 (stores: [])
      --> KSTREAM-KEY-SELECT-0000000006
      <-- KTABLE-SUPPRESS-0000000003
    Processor: KSTREAM-KEY-SELECT-0000000006 (stores: [])
      --> KSTREAM-SINK-0000000007
      <-- KTABLE-TOSTREAM-0000000005
    Sink: KSTREAM-SINK-0000000007 (topic: out)
      <-- KSTREAM-KEY-SELECT-0000000006

`

// With count(Materialized) without a store name, Kafka takes one store
// name it never uses (index 2); with a key change before the grouping the
// repartition topic is named after the store, its nodes by generated
// names (the store's name is a generated one).
const sessionCountDescription = `Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [in])
      --> KSTREAM-KEY-SELECT-0000000001
    Processor: KSTREAM-KEY-SELECT-0000000001 (stores: [])
      --> KSTREAM-FILTER-0000000006
      <-- KSTREAM-SOURCE-0000000000
    Processor: KSTREAM-FILTER-0000000006 (stores: [])
      --> KSTREAM-SINK-0000000005
      <-- KSTREAM-KEY-SELECT-0000000001
    Sink: KSTREAM-SINK-0000000005 (topic: KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition)
      <-- KSTREAM-FILTER-0000000006

  Sub-topology: 1
    Source: KSTREAM-SOURCE-0000000007 (topics: [KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition])
      --> KSTREAM-AGGREGATE-0000000004
    Processor: KSTREAM-AGGREGATE-0000000004 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000003])
      --> KTABLE-TOSTREAM-0000000008
      <-- KSTREAM-SOURCE-0000000007
    Processor: KTABLE-TOSTREAM-0000000008 (stores: [])
      --> KSTREAM-KEY-SELECT-0000000009
      <-- KSTREAM-AGGREGATE-0000000004
    Processor: KSTREAM-KEY-SELECT-0000000009 (stores: [])
      --> KSTREAM-SINK-0000000010
      <-- KTABLE-TOSTREAM-0000000008
    Sink: KSTREAM-SINK-0000000010 (topic: out)
      <-- KSTREAM-KEY-SELECT-0000000009

`

func TestWindowedDescribe(t *testing.T) {
	b := NewBuilder()
	grouped := From[string, string](b, []string{"in"}).GroupByKey()
	counts := WindowedCount(grouped.WindowedBy(OfSizeAndGrace(10*ms, 5*ms)))
	toLabelled(counts.Suppress(UntilWindowCloses(Unbounded())), "out")
	describe(t, b, windowedCountDescription)

	b = NewBuilder()
	rekeyed := SelectKey(From[string, string](b, []string{"in"}), func(k, v string) string { return v })
	sessions := rekeyed.GroupByKey().WindowedBySession(OfInactivityGapWithNoGrace(10 * ms))
	toLabelled(SessionCount(sessions, Materialized[string, int64]{}), "out")
	describe(t, b, sessionCountDescription)
}

func describe(t *testing.T, b *Builder, want string) {
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
		t.Errorf("got\n%s\nwant\n%s", d, want)
	}
}

func TestWindowedBuildErrors(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *Builder)
		want  string
	}{
		{"zero size", func(b *Builder) {
			WindowedCount(From[string, string](b, []string{"in"}).GroupByKey().WindowedBy(OfSizeWithNoGrace(0)))
		}, "window size must be larger than zero"},
		{"advance past size", func(b *Builder) {
			WindowedCount(From[string, string](b, []string{"in"}).GroupByKey().WindowedBy(OfSizeWithNoGrace(10 * ms).AdvanceBy(11 * ms)))
		}, "advancement interval should be more than zero"},
		{"zero gap", func(b *Builder) {
			SessionCount(From[string, string](b, []string{"in"}).GroupByKey().WindowedBySession(OfInactivityGapWithNoGrace(0)))
		}, "inactivity gap cannot be zero"},
		{"retention below size plus grace", func(b *Builder) {
			WindowedCount(From[string, string](b, []string{"in"}).GroupByKey().WindowedBy(OfSizeAndGrace(10*ms, 5*ms)),
				Materialized[string, int64]{StoreName: "w", Retention: 14 * ms})
		}, "the retention period of the window store w must be no smaller than its window size plus the grace period. Got size=[10], grace=[5], retention=[14]"},
		{"sliding retention", func(b *Builder) {
			WindowedCount(From[string, string](b, []string{"in"}).GroupByKey().WindowedBySliding(OfTimeDifferenceAndGrace(10*ms, 5*ms)),
				Materialized[string, int64]{StoreName: "s", Retention: 24 * ms})
		}, "must be no smaller than 2 * time difference plus the grace period"},
		{"session retention", func(b *Builder) {
			SessionCount(From[string, string](b, []string{"in"}).GroupByKey().WindowedBySession(OfInactivityGapAndGrace(10*ms, 5*ms)),
				Materialized[string, int64]{StoreName: "s", Retention: 14 * ms})
		}, "the retention period of the session store s must be no smaller than the session inactivity gap plus the grace period"},
		{"until window closes on a table that is not windowed", func(b *Builder) {
			From[string, string](b, []string{"in"}).GroupByKey().Count().Suppress(UntilWindowCloses(Unbounded()))
		}, "window close time is only defined for windowed computations"},
		{"until window closes emitting early", func(b *Builder) {
			WindowedCount(From[string, string](b, []string{"in"}).GroupByKey().WindowedBy(OfSizeWithNoGrace(10 * ms))).
				Suppress(UntilWindowCloses(MaxRecords(10)))
		}, "UntilWindowCloses needs a buffer that does not emit early"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := NewBuilder()
			c.build(b)
			_, err := b.Build()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// Suppress finds the window's grace through the table operations between
// it and the aggregation, as Kafka's GraphGraceSearchUtil.
func TestSuppressAfterTableFilter(t *testing.T) {
	b := NewBuilder()
	grouped := From[string, string](b, []string{"in"}).GroupByKey()
	counts := WindowedCount(grouped.WindowedBy(OfSizeAndGrace(10*ms, 5*ms)))
	odd := counts.Filter(func(_ Windowed[string], n int64) bool { return n%2 == 1 })
	toLabelled(odd.Suppress(UntilWindowCloses(Unbounded())), "out")
	d := run(t, b, []pipeRec{
		{"a", "x", 1},  // a[0,10)=1: odd
		{"b", "x", 2},  // b[0,10)=1: odd
		{"b", "x", 3},  // b[0,10)=2: filtered out, a tombstone downstream
		{"c", "x", 15}, // stream time 15 = 10+5 closes [0,10)
	})
	// b's window ended filtered out: its final tombstone is dropped.
	expect(t, "final odd counts", read(t, d, "out"), "a[0,10)=1@1")
}
