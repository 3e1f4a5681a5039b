package streamsdiff

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kgo"
)

// base is the inputs' time origin, 2026-01-01T00:00:00Z in ms: a multiple
// of every window size, so windows start at base + n*size. Record times
// are written as seconds after it.
const base int64 = 1767225600000

// at is a record timestamp s seconds after base.
func at(s float64) int64 { return base + int64(s*1000) }

// flushAt is the time of the records that push each partition's stream
// time far past every window's close, so that suppressed windows and
// the non-joined results of left and outer joins are emitted.
const flushAt = 1000

// inputTopics are the input topics and their partition counts. Topics a
// join reads together have the same count (co-partitioned); the
// foreign-key join's two tables deliberately do not.
var inputTopics = map[string]int{
	"wc-in":       3,
	"win-in":      3,
	"sess-in":     2,
	"ssj-left":    2,
	"ssj-right":   2,
	"stj-stream":  3,
	"stj-table":   3,
	"stj-global":  2,
	"fk-orders":   3,
	"fk-products": 2,
}

// outputTopic is one output topic, without its prefix, and how its values
// are encoded.
type outputTopic struct {
	name string
	long bool // 8-byte big-endian longs (Serdes.Long), else UTF-8 strings
}

// outputTopics are every topology's outputs; each is created with
// outputPartitions partitions under each run's prefix.
var outputTopics = []outputTopic{
	{"wc-out", true},
	{"win-out", true}, {"hop-out", true}, {"slide-out", true},
	{"sess-out", true},
	{"ssj-inner", false}, {"ssj-left", false}, {"ssj-outer", false},
	{"stj-inner", false}, {"stj-left", false}, {"stj-global", false},
	{"fk-inner", false}, {"fk-left", false},
}

const outputPartitions = 2

// inRecord is one input record. A null key's partition is given
// (Kafka's default partitioner would pick one at random); a key's
// partition is Kafka's murmur2 of the key, as the Java producer's.
type inRecord struct {
	topic     string
	key       *string // nil: a null key
	value     []byte  // nil: a null value (a tombstone for tables)
	timestamp int64
	partition int32
}

// phase is input produced together; the application settles (all of it
// consumed, outputs stable) before the next phase is produced.
type phase []inRecord

// inputs are the phases in order. Phase 0 holds every topology's input
// and is produced before the application starts; the later phases are
// only the foreign-key join's, whose results depend on the interleaving
// of its internal topics with its inputs (DIFFERENTIAL.md, "the traps").
func inputs() []phase {
	var p0 phase
	for _, part := range [][]inRecord{wordCountInput(), windowedInput(), sessionInput(),
		streamStreamInput(), streamTableInput(), foreignKeyPhase(0)} {
		p0 = append(p0, part...)
	}
	return []phase{p0, foreignKeyPhase(1), foreignKeyPhase(2), foreignKeyPhase(3)}
}

// murmur2Partition is the partition Kafka's default partitioner gives a
// key: murmur2 of its bytes, made positive, modulo the count. franz-go's
// StickyKeyPartitioner(nil) hashes keys the same way (inputs_test.go
// checks it against Kafka's own murmur2 test vectors).
func murmur2Partition(key string, partitions int) int32 {
	p := kgo.StickyKeyPartitioner(nil).ForTopic("")
	return int32(p.Partition(&kgo.Record{Key: []byte(key)}, partitions))
}

// murmur2Positive is Utils.toPositive(Utils.murmur2(key)), read through
// the partitioner with a count no hash reaches.
func murmur2Positive(key []byte) int64 {
	p := kgo.StickyKeyPartitioner(nil).ForTopic("")
	return int64(p.Partition(&kgo.Record{Key: key}, math.MaxInt))
}

// keyIn answers the first of name, name.1, name.2, ... that Kafka's
// partitioner puts in partition p of a topic with n partitions, so the
// data can place keys that must share a task's stream time.
func keyIn(name string, p int32, n int) string {
	for i := 0; ; i++ {
		k := name
		if i > 0 {
			k = fmt.Sprintf("%s.%d", name, i)
		}
		if murmur2Partition(k, n) == p {
			return k
		}
	}
}

func str(s string) *string { return &s }

func long(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// rec is a keyed record, partitioned by murmur2.
func rec(topic, key string, value []byte, seconds float64) inRecord {
	return inRecord{topic: topic, key: str(key), value: value, timestamp: at(seconds),
		partition: murmur2Partition(key, inputTopics[topic])}
}

// nullKey is a record with a null key in the given partition.
func nullKey(topic string, p int32, value []byte, seconds float64) inRecord {
	return inRecord{topic: topic, value: value, timestamp: at(seconds), partition: p}
}

// wordCountInput is T1's lines. The repartition topic after groupBy
// interleaves the three input partitions' tasks in an order no one
// controls, so a word's counts have one order only if its occurrences
// come from one input partition, or share one timestamp (the count's
// timestamp is the largest seen so far): "kafka" is in every partition,
// always at 50 s; every other word lives in one partition's lines.
func wordCountInput() []inRecord {
	const t = "wc-in"
	n := inputTopics[t]
	var out []inRecord
	lines := [][]string{
		// Partition 0: upper case, punctuation, a leading separator (an
		// empty first token), a non-ASCII letter (\W splits it: "café"
		// counts "caf").
		{"The quick brown fox", "  the LAZY dog, the end.", "Café au lait!"},
		// Partition 1: underscores and digits are word characters.
		{"streams_2 of data", "OF data, of streams_2", "data"},
		// Partition 2: repeated words within one line.
		{"go go go", "Gopher goes GO", "tables and streams"},
	}
	for p := int32(0); p < int32(n); p++ {
		for i, line := range lines[p] {
			sec := float64(10*int(p) + i + 1)
			if i == 1 {
				sec += 20 // the line after it is out of order
			}
			if i == 2 {
				// A null key: flatMapValues keeps it, groupBy re-keys.
				out = append(out, nullKey(t, p, []byte(line), sec))
				continue
			}
			out = append(out, rec(t, keyIn(fmt.Sprintf("line-%d-%d", p, i), p, n), []byte(line), sec))
		}
		out = append(out, rec(t, keyIn("shared", p, n), []byte("Kafka, kafka!"), 50))
	}
	return out
}

// lateValue marks records that arrive after their window closed: no sum
// may ever include it.
const lateValue = 1_000_000

// windowedInput is T2's records: key a's script with key b sharing its
// partition (stream time is the task's, not the key's), key c alone in
// another partition, a null key and a null value, and a far-future flush
// record in every partition.
func windowedInput() []inRecord {
	const t = "win-in"
	n := inputTopics[t]
	a := keyIn("a", 0, n)
	b := keyIn("b", 0, n)
	c := keyIn("c", 1, n)
	out := []inRecord{
		rec(t, a, long(1), 1),
		rec(t, a, long(2), 3),
		rec(t, a, long(3), 12),
		// Out of order within grace: window [0,10) closes at 10+5 s.
		rec(t, a, long(100), 8),
		rec(t, a, long(4), 16),
		// Late: stream time is 16, window [0,10) closed at 15. Its
		// hopping window [5,15) is still open (closes at 20).
		rec(t, a, long(lateValue), 9),
		nullKey(t, 0, long(7), 17),
		{topic: t, key: str(a), value: nil, timestamp: at(17.5), partition: murmur2Partition(a, n)},
		// b moves partition 0's stream time to 30: a's window [10,20)
		// closes (at 25), so a's record at 18 is late.
		rec(t, b, long(1), 30),
		rec(t, a, long(lateValue), 18),
		rec(t, a, long(5), 27),
		rec(t, c, long(1), 1),
		rec(t, c, long(2), 11),
		rec(t, c, long(3), 6),
		rec(t, c, long(4), 25),
	}
	for p := int32(0); p < int32(n); p++ {
		out = append(out, rec(t, keyIn("flush", p, n), long(1), flushAt))
	}
	return out
}

// sessionInput is T3's records: with a 5 s gap, key s's sessions at 0 and
// 10 merge when a record at 5 bridges them (two tombstones and the
// merged session), a record at 12 after stream time reached 30 is late
// (grace 2 s), and a second key stays in sessions of its own.
func sessionInput() []inRecord {
	const t = "sess-in"
	n := inputTopics[t]
	s := keyIn("s", 0, n)
	u := keyIn("u", 1, n)
	out := []inRecord{
		rec(t, s, long(1), 0),
		rec(t, s, long(1), 10),
		rec(t, s, long(1), 5),
		rec(t, s, long(1), 30),
		rec(t, s, long(1), 12),
		rec(t, s, long(1), 33),
		rec(t, u, long(1), 2),
		rec(t, u, long(1), 4),
		rec(t, u, long(1), 20),
		rec(t, u, long(1), 17), // out of order, merges with 20 (within grace)
	}
	for p := int32(0); p < int32(n); p++ {
		out = append(out, rec(t, keyIn("flush", p, n), long(1), flushAt))
	}
	return out
}

// streamStreamInput is T4's records, the same script in both partitions
// (shifted by 0.1 s in partition 1) so both tasks exercise it. The two
// topics' records of a task never share a timestamp: a task picks the
// partition with the smallest head timestamp, and a tie has no defined
// winner.
func streamStreamInput() []inRecord {
	n := inputTopics["ssj-left"]
	var out []inRecord
	for p := int32(0); p < int32(n); p++ {
		d := 0.1 * float64(p)
		k := func(name string) string { return keyIn(name, p, n) }
		l := func(key, v string, s float64) inRecord { return rec("ssj-left", k(key), []byte(v), s+d) }
		r := func(key, v string, s float64) inRecord { return rec("ssj-right", k(key), []byte(v), s+d) }
		out = append(out,
			l("j1", "L1", 1), r("j1", "R1", 3), // joined
			l("j2", "L2", 2),                                       // never matched: left and outer emit L2+null once the window closes
			r("j3", "R3", 4),                                       // never matched: outer emits null+R3
			l("j4", "L4a", 5), l("j4", "L4b", 6), r("j4", "R4", 8), // two joins
			r("j5", "R5", 14), l("j5", "L5", 20), // 6 s apart: no join
			r("j7", "R7", 12),
			r("j6", "R6", 30), l("j9", "L9", 31),
			l("j6", "L6", 27), // out of order behind L9, within grace: joins R6
			l("j9", "L9b", 40),
			l("j7", "Llate", 10), // late: 10+5+2 < 40, dropped (no join with R7)
			l("flush", "flushL", flushAt), r("flush", "flushR", flushAt+0.5),
		)
	}
	return out
}

// streamTableInput is T5's records. The table is not versioned: a stream
// record joins the table's value as of when the record is processed, and
// the task processes stream and table records by timestamp; the global
// table is read in full before any stream record, so its later updates
// are seen by earlier stream records.
func streamTableInput() []inRecord {
	const st, tt, gt = "stj-stream", "stj-table", "stj-global"
	return []inRecord{
		rec(gt, "de", []byte("Germany"), 0),
		rec(gt, "fr", []byte("France"), 0),
		rec(gt, "it", []byte("Italy"), 0),
		rec(gt, "us", []byte("USA"), 0),
		rec(gt, "us", []byte("United States"), 100),
		rec(gt, "it", nil, 100), // deleted before the application starts

		rec(tt, "u1", []byte("Alice"), 1),
		rec(st, "u1", []byte("de"), 2),
		rec(st, "u2", []byte("fr"), 3), // before u2's table row: no inner result
		rec(tt, "u2", []byte("Bob"), 4),
		rec(st, "u2", []byte("us"), 5),
		rec(tt, "u3", []byte("Carol"), 1),
		rec(tt, "u3", nil, 6), // table tombstone
		rec(st, "u3", []byte("it"), 7),
		rec(st, "u4", []byte("es"), 20),
		rec(st, "u4", []byte("fr"), 9), // out of order: joins Dan, the table's value at 10
		rec(tt, "u4", []byte("Dan"), 10),
		nullKey(st, 1, []byte("de"), 11), // a null key: the table joins drop it, the global join looks up "de"
		{topic: st, key: str("u1"), value: nil, timestamp: at(12), partition: murmur2Partition("u1", 3)},
		rec(st, "u5", []byte("xx"), 13), // no table row, no global row
		rec(tt, "u1", []byte("Alicia"), 14),
		rec(st, "u1", []byte("fr"), 15),
	}
}

// foreignKeyPhase is T6's input, phase by phase: products, then orders,
// then product changes, then order changes. Within a phase no order is
// touched twice (by its own update or its product's): the join drops a
// response whose order changed since (a hash check), so two touches in
// flight would give results that depend on timing.
func foreignKeyPhase(i int) []inRecord {
	const o, p = "fk-orders", "fk-products"
	switch i {
	case 0:
		return []inRecord{
			rec(p, "p1", []byte("Widget"), 1),
			rec(p, "p2", []byte("Gadget"), 2),
			rec(p, "p3", []byte("Doohickey"), 3),
			rec(p, "p4", []byte("Gizmo"), 4),
		}
	case 1:
		return []inRecord{
			rec(o, "o1", []byte("p1:2"), 10),
			rec(o, "o2", []byte("p2:1"), 11),
			rec(o, "o3", []byte("p3:5"), 12),
			rec(o, "o4", []byte("p9:1"), 13), // no such product yet
			rec(o, "o5", []byte("p4:3"), 14),
		}
	case 2:
		return []inRecord{
			rec(p, "p1", []byte("Widget v2"), 20),
			rec(p, "p3", nil, 21), // o3 loses its product
			rec(p, "p9", []byte("Sprocket"), 22),
		}
	case 3:
		return []inRecord{
			rec(o, "o1", []byte("p2:7"), 30), // foreign key change
			rec(o, "o2", nil, 31),            // order deleted
			rec(o, "o5", []byte("p4:9"), 32), // same foreign key, new quantity
			rec(o, "o6", []byte("p1:1"), 33), // new order of p1, which o1 just left
		}
	}
	return nil
}
