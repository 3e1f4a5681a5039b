package streams

import (
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/samsa-io/samsa/streams/serde"
)

// The expected outputs below are derived by hand from Kafka Streams' code
// (KStreamWindowAggregate, KStreamSlidingWindowAggregate,
// KStreamSessionWindowAggregate, KTableSuppressProcessorSupplier); the
// differential test against Kafka Streams itself confirms them.

const ms = time.Millisecond

// windowLabel writes a windowed key as key[start,end).
func windowLabel[K, V any](k Windowed[K], _ V) string {
	return fmt.Sprintf("%v[%d,%d)", k.Key, k.Window.Start, k.Window.End)
}

// toLabelled writes a windowed table's changes to topic with the window in
// the key, as users map a windowed key before To.
func toLabelled[K any](t *Table[Windowed[K], int64], topic string) {
	SelectKey(t.ToStream(), windowLabel[K, int64]).To(topic)
}

type pipeRec struct {
	key   string
	value string
	ts    int64
}

func run(t *testing.T, b *Builder, in []pipeRec) *TestDriver {
	t.Helper()
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewTestDriver(topo, TestDriverConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	input := NewInputTopic(d, "in", serde.String(), serde.String())
	for _, r := range in {
		if err := input.Pipe(r.key, r.value, r.ts); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// read returns a topic's records as key=value@ts, a null value as null.
func read(t *testing.T, d *TestDriver, topic string) string {
	t.Helper()
	recs, err := NewOutputTopic(d, topic, serde.String(), serde.Int64()).ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		v := fmt.Sprint(r.Value)
		if r.NullValue {
			v = "null"
		}
		out = append(out, fmt.Sprintf("%s=%s@%d", r.Key, v, r.Timestamp))
	}
	return strings.Join(out, " ")
}

func droppedRecords(d *TestDriver) int {
	var m dto.Metric
	if err := d.mets.dropped.WithLabelValues("0_0").Write(&m); err != nil {
		panic(err)
	}
	return int(m.GetCounter().GetValue())
}

func expect(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\ngot  %s\nwant %s", what, got, want)
	}
}

func TestTumblingWindowGraceAndSuppress(t *testing.T) {
	b := NewBuilder()
	grouped := From[string, string](b, []string{"in"}).GroupByKey()
	counts := WindowedCount(grouped.WindowedBy(OfSizeAndGrace(10*ms, 5*ms)))
	toLabelled(counts, "updates")
	toLabelled(counts.Suppress(UntilWindowCloses(Unbounded())), "final")
	d := run(t, b, []pipeRec{
		{"a", "x", 1},
		{"a", "x", 12},
		{"a", "x", 8},  // out of order, within grace: [0,10) closes at 10+5
		{"a", "x", 15}, // stream time 15 closes [0,10)
		{"a", "x", 3},  // late: dropped
		{"b", "x", 25}, // stream time 25 closes [10,20)
	})
	expect(t, "updates", read(t, d, "updates"),
		"a[0,10)=1@1 a[10,20)=1@12 a[0,10)=2@8 a[10,20)=2@15 b[20,30)=1@25")
	expect(t, "final results", read(t, d, "final"), "a[0,10)=2@8 a[10,20)=2@15")
	if n := droppedRecords(d); n != 1 {
		t.Errorf("dropped %d records, want 1 (the late one)", n)
	}
}

func TestHoppingWindows(t *testing.T) {
	b := NewBuilder()
	grouped := From[string, string](b, []string{"in"}).GroupByKey()
	toLabelled(WindowedCount(grouped.WindowedBy(OfSizeWithNoGrace(10*ms).AdvanceBy(5*ms))), "out")
	d := run(t, b, []pipeRec{
		{"a", "x", 3},  // [0,10) only: no window starts before the epoch
		{"a", "x", 7},  // [0,10) and [5,15)
		{"a", "x", 12}, // [5,15) and [10,20)
		{"a", "x", 4},  // its only window [0,10) closed at 10: dropped
		{"a", "x", 9},  // [0,10) closed (dropped, counted), [5,15) open
	})
	expect(t, "hopping", read(t, d, "out"),
		"a[0,10)=1@3 a[0,10)=2@7 a[5,15)=1@7 a[5,15)=2@12 a[10,20)=1@12 a[5,15)=3@12")
	if n := droppedRecords(d); n != 2 {
		t.Errorf("dropped %d, want 2: one per closed window of a record, as Kafka counts", n)
	}
}

func TestSlidingWindows(t *testing.T) {
	b := NewBuilder()
	grouped := From[string, string](b, []string{"in"}).GroupByKey()
	// Sliding windows include both bounds; the label's ")" is only the
	// helper's format.
	toLabelled(WindowedCount(grouped.WindowedBySliding(OfTimeDifferenceAndGrace(10*ms, 100*ms))), "out")
	d := run(t, b, []pipeRec{
		// The first record makes its left window [10,20].
		{"a", "x", 20},
		// The previous record's right window [21,31] gets this record;
		// its left window [15,25] starts from the aggregate before it.
		{"a", "x", 25},
		// Too far from 25 for 25's right window [26,36]: only [30,40].
		{"a", "x", 40},
		// Out of order: updates [21,31] and [15,25], which hold it; creates
		// its left window [12,22] (from [10,20]'s aggregate) and its right
		// window [23,33] holding the later 25.
		{"a", "x", 22},
		// Records before the time difference share the window [0,10]; a
		// record before the newest of them gets a right window.
		{"e", "x", 5},
		{"e", "x", 3},
	})
	expect(t, "sliding", read(t, d, "out"), strings.Join([]string{
		"a[10,20)=1@20",
		"a[21,31)=1@25 a[15,25)=2@25",
		"a[30,40)=1@40",
		"a[21,31)=2@25 a[15,25)=3@25 a[12,22)=2@22 a[23,33)=1@25",
		"e[0,10)=1@5",
		"e[4,14)=1@5 e[0,10)=2@5",
	}, " "))
}

func TestSlidingWindowsDropLate(t *testing.T) {
	b := NewBuilder()
	grouped := From[string, string](b, []string{"in"}).GroupByKey()
	toLabelled(WindowedCount(grouped.WindowedBySliding(OfTimeDifferenceAndGrace(10*ms, 5*ms))), "out")
	d := run(t, b, []pipeRec{
		{"a", "x", 100},
		{"a", "x", 84}, // its latest window [84,94] ends before 100-5: dropped
		{"a", "x", 92}, // in [90,100]; its left window [82,92] is closed
	})
	// 92's left window ends before the close time 95 (dropped, counted);
	// its right window [93,103] holds 100, so it is created (Kafka checks
	// no close time for a right window: it only copies an aggregate).
	expect(t, "sliding late", read(t, d, "out"), "a[90,100)=1@100 a[90,100)=2@100 a[93,103)=1@100")
	if n := droppedRecords(d); n != 2 {
		t.Errorf("dropped %d, want 2", n)
	}
}

func TestSessionWindowsMerge(t *testing.T) {
	b := NewBuilder()
	grouped := From[string, string](b, []string{"in"}).GroupByKey()
	// Grace 25: the store keeps sessions ending after stream time minus
	// gap plus grace (35), exactly; Kafka's processor closes them at
	// end < stream time - 35, one millisecond later, so a session ending
	// exactly then is open but no longer found: the records here stay
	// clear of that edge.
	sessions := grouped.WindowedBySession(OfInactivityGapAndGrace(10*ms, 25*ms))
	toLabelled(SessionCount(sessions), "counts")
	concat := SessionAggregate(sessions, func() string { return "" },
		func(_ string, v string, agg string) string { return agg + v },
		func(_ string, a, b string) string { return a + "+" + b })
	SelectKey(concat.ToStream(), windowLabel[string, string]).To("concat")
	d := run(t, b, []pipeRec{
		{"a", "p", 100},
		{"a", "q", 130},
		{"a", "r", 115}, // more than 10 from both: a session of its own
		{"a", "s", 122}, // within 10 of 115 and 130: merges them into [115,130]
		{"a", "t", 105}, // within 10 of 100 and of 115: merges all into [100,130]
		{"b", "u", 94},  // its session ends before 130-10-25: dropped
		{"a", "v", 110}, // inside [100,130]: the session is replaced in place
	})
	expect(t, "session counts", read(t, d, "counts"), strings.Join([]string{
		"a[100,100)=1@100",
		"a[130,130)=1@130",
		"a[115,115)=1@115",
		"a[115,115)=null@115 a[130,130)=null@130 a[115,130)=3@130",
		"a[100,100)=null@100 a[115,130)=null@130 a[100,130)=5@130",
		"a[100,130)=null@130 a[100,130)=6@130",
	}, " "))
	recs, err := NewOutputTopic(d, "concat", serde.String(), serde.String()).ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	// The merger folds the sessions into init() by ascending end: "" with
	// [100,100]'s "p", then with [115,130]'s "+r+qs", then the record's
	// "t"; the last record merges [100,130] alone into "" again.
	expect(t, "merged aggregate", last.Key+"="+last.Value, "a[100,130)=++p++r+qstv")
	if n := droppedRecords(d); n != 2 {
		t.Errorf("dropped %d, want 2 (the late record, by each aggregation)", n)
	}
}

// Window and session stores hide what is past retention behind the
// largest time put, as Kafka's stores do on reads (the segmented stores
// drop whole segments later; a read never returns an expired window).
func TestWindowStoreExpiry(t *testing.T) {
	def := &storeDef{name: "w", retention: 10, keySerde: box(serde.String()), valueSerde: box(serde.Int64())}
	ws := newMemWindow(def)
	for _, start := range []int64{0, 5, 10} {
		if err := ws.put("k", start, start, start); err != nil {
			t.Fatal(err)
		}
	}
	// Observed 10, retention 10: start 0 is expired, 5 and 10 live.
	if _, _, ok, _ := ws.fetch("k", 0); ok {
		t.Error("window 0 is past retention but fetched")
	}
	rows, err := ws.fetchRange("k", 0, 100, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].start != 10 || rows[1].start != 5 {
		t.Errorf("backward fetch: %+v, want starts 10, 5", rows)
	}
	if err := ws.put("k", 0, int64(99), 0); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := ws.fetch("k", 0); ok {
		t.Error("a put past retention was kept")
	}

	ss := newMemSession(&storeDef{name: "s", retention: 10, keySerde: box(serde.String()), valueSerde: box(serde.Int64())})
	for _, w := range []Window{{Start: 0, End: 3}, {Start: 4, End: 6}, {Start: 8, End: 13}} {
		if err := ss.put("k", w, w.End); err != nil {
			t.Fatal(err)
		}
	}
	found, err := ss.findSessions("k", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	// Observed end 13, retention 10: the session ending at 3 is expired.
	if len(found) != 2 || found[0].window.End != 6 || found[1].window.End != 13 {
		t.Errorf("sessions %+v, want the ones ending at 6 and 13", found)
	}
}

// A windowed table's keys go out in Kafka's windowed layouts by default:
// the time-window key (start only; the reader adds the size back) and the
// session key (end and start).
func TestWindowedKeySerdeDefault(t *testing.T) {
	b := NewBuilder()
	grouped := From[string, string](b, []string{"in"}).GroupByKey()
	WindowedCount(grouped.WindowedBy(OfSizeWithNoGrace(10 * ms))).ToStream().To("timed")
	SessionCount(grouped.WindowedBySession(OfInactivityGapWithNoGrace(10 * ms))).ToStream().To("sessions")
	d := run(t, b, []pipeRec{{"a", "x", 13}, {"a", "x", 17}})
	timed, err := NewOutputTopic(d, "timed", serde.TimeWindowed(serde.String(), 10), serde.Int64()).ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := NewOutputTopic(d, "sessions", serde.SessionWindowed(serde.String()), serde.Int64()).ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range append(timed, sessions...) {
		v := fmt.Sprint(r.Value)
		if r.NullValue {
			v = "null"
		}
		got = append(got, fmt.Sprintf("%s%v=%s", r.Key.Key, r.Key.Window, v))
	}
	expect(t, "windowed keys", strings.Join(got, " "),
		"a{10 20}=1 a{10 20}=2 a{13 13}=1 a{13 13}=null a{13 17}=2")
}
