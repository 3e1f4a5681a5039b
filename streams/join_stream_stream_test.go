package streams_test

import (
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/streams"
)

func streamStreamTopology(kind string, w streams.JoinWindows) *streams.Builder {
	b := streams.NewBuilder()
	l := streams.From[string, string](b, []string{"L"})
	r := streams.From[string, string](b, []string{"R"})
	var out *streams.Stream[string, string]
	switch kind {
	case "inner":
		out = streams.StreamStreamJoin(l, r, func(k, a, c string) string { return a + "/" + c }, w)
	case "left":
		out = streams.StreamStreamLeftJoin(l, r, func(k, a string, c *string) string { return a + "/" + orNull(c) }, w)
	default:
		out = streams.StreamStreamOuterJoin(l, r, func(k string, a, c *string) string { return orNull(a) + "/" + orNull(c) }, w)
	}
	out.To("out")
	return b
}

func (h *joinHarness) advance() {
	h.t.Helper()
	if err := h.d.AdvanceWallClockTime(time.Second); err != nil {
		h.t.Fatal(err)
	}
}

// Kafka's KStreamKStreamJoin, inner: a result per pair within the window,
// timestamped with the later record; the other side's matches come in
// timestamp order; a late record still joins what its window store holds
// (the stores keep before+after+grace behind their stream time), and
// nothing beyond.
func TestStreamStreamJoin(t *testing.T) {
	h := newJoinHarness(t, streamStreamTopology("inner", streams.JoinWindowsOfTimeDifferenceWithNoGrace(10*time.Millisecond)), "out")
	h.pipe("L", "a", "L1", 0)
	h.expect("")
	h.pipe("R", "a", "R1", 5)
	h.expect("a=L1/R1@5")
	h.pipe("L", "a", "L2", 20)
	h.expect("")
	h.pipe("R", "a", "R2", 15)
	h.expect("a=L2/R2@20")
	h.pipe("R", "a", "R3", 12) // out of order
	h.expect("a=L2/R3@20")
	h.pipe("L", "a", "L4", 20) // a duplicate timestamp: both kept
	h.expect("a=L4/R3@20 a=L4/R2@20")
	h.pipe("R", "a", "R4", 0) // late; left store keeps 1..20 only
	h.expect("")
	h.pipe("L", "a", "L5", 9)
	h.expect("a=L5/R4@9 a=L5/R1@9 a=L5/R3@12 a=L5/R2@15")
	h.pipe("R", "b", "Rx", 40) // right store now keeps 21..40
	h.pipe("L", "a", "L6", 0)  // beyond the retention: joins nothing, not kept
	h.pipe("R", "a", "R5", 5)
	h.pipe("L", "null", "L7", 41)
	h.pipe("L", "a", "null", 41)
	h.expect("a=L5/R5@9")
}

// Left join with grace (Kafka 3.1+): a left record without partner waits
// in the shared store and is emitted, with its own timestamp, once stream
// time passes its window end plus grace; a partner arriving in time
// removes it (no spurious result); a record whose window is already
// behind stream time is emitted at once. The TestDriver scans the shared
// store on every record, as Kafka's TopologyTestDriver (emit interval 0);
// the wall-clock advances of the Java run are kept to show they change
// nothing.
func TestStreamStreamLeftJoin(t *testing.T) {
	w := streams.JoinWindowsOfTimeDifferenceAndGrace(10*time.Millisecond, 5*time.Millisecond)
	h := newJoinHarness(t, streamStreamTopology("left", w), "out")
	h.pipe("L", "a", "L1", 0)
	h.pipe("R", "a", "R1", 3)
	h.expect("a=L1/R1@3")
	h.pipe("L", "b", "L2", 10)
	h.pipe("L", "c", "L3", 12)
	h.pipe("R", "x", "Rx", 30) // b and c expired
	h.expect("b=L2/null@10 c=L3/null@12")
	h.advance()
	h.pipe("R", "y", "Ry", 30)
	h.expect("")
	h.pipe("L", "d", "L4", 14) // its window closed before it came
	h.expect("d=L4/null@14")
	h.pipe("L", "e", "L5", 25)
	h.pipe("R", "e", "R2", 33)
	h.expect("e=L5/R2@33")
	h.advance()
	h.pipe("L", "f", "L6", 50)
	h.expect("")
	h.pipe("R", "null", "R7", 51) // a right null key: dropped in a left join
	h.expect("")
}

// Outer join: either side's unjoined records are emitted when their
// windows close, in the shared store's order (timestamp, right before
// left, key); a null key on either side is emitted at once (KIP-962).
func TestStreamStreamOuterJoin(t *testing.T) {
	h := newJoinHarness(t, streamStreamTopology("outer", streams.JoinWindowsOfTimeDifferenceWithNoGrace(10*time.Millisecond)), "out")
	h.pipe("L", "a", "L1", 0)
	h.pipe("R", "b", "R1", 5)
	h.pipe("L", "z", "Lz", 5)
	h.pipe("R", "a", "R2", 8)
	h.expect("a=L1/R2@8")
	h.advance()
	h.pipe("L", "c", "L2", 30)
	h.expect("b=null/R1@5 z=Lz/null@5")
	h.pipe("R", "null", "R3", 31)
	h.expect("null=null/R3@31")
	h.advance()
	h.pipe("R", "d", "Rd", 45)
	h.expect("c=L2/null@30")
	h.advance()
	h.pipe("L", "e", "Le", 100)
	h.expect("d=null/Rd@45")
}

// An asymmetric window with grace: a left record at t joins right records
// in [t, t+10] (a right record at u joins left ones in [u-10, u]); a left
// record without partner waits until stream time passes t+10+5.
func TestStreamStreamLeftJoinAsymmetricGrace(t *testing.T) {
	w := streams.JoinWindowsOfTimeDifferenceAndGrace(0, 5*time.Millisecond).After(10 * time.Millisecond)
	h := newJoinHarness(t, streamStreamTopology("left", w), "out")
	h.pipe("L", "a", "L1", 0)
	h.advance()
	h.pipe("R", "x", "Rx", 15) // a's window plus grace ends at 15: still open
	h.expect("")
	h.pipe("R", "w", "Rw", 20)
	h.expect("a=L1/null@0")
	h.advance()
	h.pipe("L", "y", "Ly", 18)
	h.pipe("R", "v", "Rv", 21)
	h.expect("")
	h.pipe("R", "y", "Ry", 25)
	h.pipe("R", "y", "Ry2", 29)
	h.pipe("L", "q", "Lq", 30)
	h.pipe("R", "q", "Rq", 29)
	h.expect("y=Ly/Ry@25")
}

// Both sides re-keyed: each goes through its repartition topic
// (<name>-left-repartition, <name>-right-repartition) before the windowed
// nodes, then joins as usual; without a StoreName the stores keep the
// generated names, as Kafka.
func TestStreamStreamJoinAfterKeyChange(t *testing.T) {
	b := streams.NewBuilder()
	l := streams.SelectKey(streams.From[string, string](b, []string{"L"}), func(_, v string) string { return v[:1] })
	r := streams.SelectKey(streams.From[string, string](b, []string{"R"}), func(_, v string) string { return v[:1] })
	w := streams.JoinWindowsOfTimeDifferenceWithNoGrace(10 * time.Millisecond)
	streams.StreamStreamJoin(l, r, func(k, a, c string) string { return a + "/" + c }, w,
		streams.StreamJoined[string, string, string]{Name: "j"}).To("out")
	h := newJoinHarness(t, b, "out")
	h.pipe("L", "k1", "x1", 1)
	h.pipe("R", "k2", "x2", 2)
	h.pipe("R", "k3", "y3", 3)
	h.expect("x=x1/x2@2")
	topo, _ := b.Build()
	d, _ := topo.Describe()
	for _, want := range []string{"Sink: j-left-repartition-sink (topic: j-left-repartition)", "Processor: j-this-join (stores: [KSTREAM-JOINOTHER-0000000011-store])", "Source: j-right-repartition-source (topics: [j-right-repartition])"} {
		if !strings.Contains(d.String(), want) {
			t.Fatalf("no %q in\n%s", want, d)
		}
	}
}
