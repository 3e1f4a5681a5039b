package mirror

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/mirror/mirrorconf"
	"github.com/samsa-io/samsa/internal/record"
)

// batch encodes one batch of n records from base; pid < 0 means no
// producer.
func batch(t *testing.T, base int64, n int, pid int64, txn, control bool) []byte {
	t.Helper()
	b := record.Batch{BaseOffset: base, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Transactional: txn, Control: control}
	if pid >= 0 {
		b.ProducerID, b.ProducerEpoch, b.BaseSequence = pid, 3, 7
	}
	for i := 0; i < n; i++ {
		r := record.Record{Offset: base + int64(i), Timestamp: 1000 + base + int64(i), Key: []byte("k"), Value: []byte(fmt.Sprint(base + int64(i)))}
		if control {
			r = record.EndTxnMarker(false, 0)
			r.Offset, r.Timestamp = base, 1000+base
		}
		b.Records = append(b.Records, r)
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func bases(t *testing.T, data []byte) []int64 {
	t.Helper()
	var out []int64
	for len(data) > 0 {
		h, err := record.ParseHeader(data)
		if err != nil {
			t.Fatal(err)
		}
		if err := record.CheckCRC(data[:h.Size()]); err != nil {
			t.Fatalf("batch %d: %v", h.BaseOffset, err)
		}
		if h.ProducerID != -1 || h.ProducerEpoch != -1 || h.BaseSequence != -1 || h.IsTransactional() || h.IsControl() {
			t.Fatalf("batch %d keeps producer state: %+v", h.BaseOffset, h)
		}
		out = append(out, h.BaseOffset)
		data = data[h.Size():]
	}
	return out
}

// TestFilterBatches: what the offset-preserving copier keeps of a fetch:
// the batches a read_committed consumer reads, whole, producer fields
// cleared; aborted transactions' batches and markers dropped, their offsets
// passed over; a partial batch at the end left for the next fetch; the
// batch holding the position skipped when it ends before it; a batch across
// the position refused.
func TestFilterBatches(t *testing.T) {
	var data []byte
	data = append(data, batch(t, 0, 3, -1, false, false)...)  // 0-2 plain
	data = append(data, batch(t, 3, 2, 9, false, false)...)   // 3-4 idempotent
	data = append(data, batch(t, 5, 2, 11, true, false)...)   // 5-6 txn 11, aborted
	data = append(data, batch(t, 7, 2, 12, true, false)...)   // 7-8 txn 12, committed
	data = append(data, batch(t, 9, 1, 11, true, true)...)    // 9 abort marker of 11
	data = append(data, batch(t, 10, 1, 12, true, true)...)   // 10 marker of 12 (commit or abort alike: dropped)
	data = append(data, batch(t, 20, 2, -1, false, false)...) // 20-21 after a gap
	last := batch(t, 22, 2, -1, false, false)
	data = append(data, last[:len(last)-5]...) // partial
	aborted := []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 11, FirstOffset: 5}}

	a, err := filterBatches(data, 0, aborted)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(bases(t, a.records)), "[0 3 7 20]"; got != want {
		t.Errorf("kept batches %s, want %s", got, want)
	}
	if a.next != 22 || a.count != 9 {
		t.Errorf("next %d count %d, want 22 and 9", a.next, a.count)
	}

	// From inside the log: batches ending before the position are passed.
	a, err = filterBatches(data, 7, aborted)
	if err != nil || fmt.Sprint(bases(t, a.records)) != "[7 20]" {
		t.Errorf("from 7: %v %v", bases(t, a.records), err)
	}
	// Only dropped batches: nothing to append, the position still moves.
	a, err = filterBatches(batch(t, 9, 1, 11, true, true), 9, nil)
	if err != nil || len(a.records) != 0 || a.next != 10 {
		t.Errorf("a lone marker: %d bytes, next %d, %v", len(a.records), a.next, err)
	}
	// A batch across the position: refused.
	if _, err := filterBatches(batch(t, 0, 3, -1, false, false), 1, nil); err == nil {
		t.Error("a batch across the position was taken")
	}
	// A corrupt batch: refused, with the record package's error.
	bad := batch(t, 0, 3, -1, false, false)
	bad[len(bad)-1] ^= 0xff
	if _, err := filterBatches(bad, 0, nil); !errors.Is(err, record.ErrCorrupt) {
		t.Errorf("a corrupt batch: %v", err)
	}
}

// TestTasksSplitPartitions: with tasks.max = n every partition belongs to
// exactly one copier task, a topic's partitions spread over all of them,
// and the split of a topic does not depend on the other topics.
func TestTasksSplitPartitions(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4} {
		fl := &flow{cfg: &mirrorconf.Flow{TasksMax: n}}
		for _, topic := range []string{"orders", "users", "a.b"} {
			per := make([]int, n)
			for p := int32(0); p < 12; p++ {
				owners := 0
				for task := 0; task < n; task++ {
					if fl.owns(task, topic, p) {
						owners++
						per[task]++
					}
				}
				if owners != 1 {
					t.Fatalf("tasks.max=%d: %s[%d] has %d owners", n, topic, p, owners)
				}
			}
			for task, k := range per {
				if k != 12/n {
					t.Errorf("tasks.max=%d: task %d copies %d of %s's 12 partitions", n, task, k, topic)
				}
			}
		}
	}
}
