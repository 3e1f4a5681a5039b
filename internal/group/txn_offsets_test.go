package group

import (
	"context"
	"log/slog"
	"testing"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// hookLog is a MemLog that runs a hook once ReadAll has read the
// partition, as if a write landed just after the replay passed.
type hookLog struct {
	*MemLog
	afterRead func()
}

func (l *hookLog) ReadAll(ctx context.Context, partition int32, fn func([]byte) error) error {
	err := l.MemLog.ReadAll(ctx, partition, fn)
	if l.afterRead != nil {
		l.afterRead()
	}
	return err
}

// A marker written while the partition loads, after the replay read the
// log: the broker's CompleteTransaction is applied when the load ends.
func TestCompleteTransactionDuringLoad(t *testing.T) {
	log := &hookLog{MemLog: NewMemLog()}
	tp := model.TopicPartition{Topic: "t", Partition: 0}
	raw, err := buildBatch([]kv{offsetRecord("g", "t", 0, 10)}, &txnProducer{id: 7, epoch: 1}, epoch, record.CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Append(context.Background(), 0, raw); err != nil {
		t.Fatal(err)
	}
	c := New(Config{OffsetsTopicNumPartitions: 1}, Deps{Log: log, Clock: clock.NewManual(epoch),
		Logger: slog.New(slog.DiscardHandler)})
	log.afterRead = func() {
		marker := record.Batch{Control: true, Transactional: true, ProducerID: 7, ProducerEpoch: 1,
			BaseSequence: record.NoSequence, Records: []record.Record{record.EndTxnMarker(true, 0)}}
		b, err := marker.AppendTo(nil)
		if err != nil {
			t.Error(err)
			return
		}
		if err := log.Append(context.Background(), 0, b); err != nil {
			t.Error(err)
		}
		c.CompleteTransaction(0, 7, 1, true)
	}
	if err := c.Load(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	g, _ := c.lockGroup("g", false)
	if g == nil {
		t.Fatal("group g not loaded")
	}
	defer g.mu.Unlock()
	if o, ok := g.offsets[tp]; !ok || o.offset != 10 || g.hasPending(tp) {
		t.Errorf("t-0 = %+v (committed %t), pending %+v; want committed 10", o, ok, g.pending)
	}
}

// TxnOffsetCommit and CompleteTransaction from many goroutines, for the
// race detector: every committed transaction's offset ends up visible.
func TestTxnOffsetsConcurrent(t *testing.T) {
	c := New(Config{OffsetsTopicNumPartitions: 1}, Deps{Log: NewMemLog(), Clock: clock.NewManual(epoch),
		Logger: slog.New(slog.DiscardHandler)})
	if err := c.Load(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	const n = 8
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			req := kmsg.NewPtrTxnOffsetCommitRequest()
			req.Group, req.ProducerID = "g", int64(i)
			p := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			p.Partition, p.Offset = int32(i), int64(100+i)
			req.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{p}}}
			if code := c.TxnOffsetCommit(context.Background(), req).Topics[0].Partitions[0].ErrorCode; code != 0 {
				t.Errorf("producer %d: %s", i, errName(code))
			}
			c.CompleteTransaction(0, int64(i), 0, true)
		}()
	}
	for range n {
		<-done
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.RequireStable = 8, true
	req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g"}}
	resp := c.OffsetFetch(context.Background(), req)
	if got := len(resp.Groups[0].Topics); got != 1 || len(resp.Groups[0].Topics[0].Partitions) != n {
		t.Fatalf("fetched %+v, want %d partitions", resp.Groups[0], n)
	}
	for _, p := range resp.Groups[0].Topics[0].Partitions {
		if p.ErrorCode != 0 || p.Offset != int64(100+p.Partition) {
			t.Errorf("t-%d = %d %s", p.Partition, p.Offset, errName(p.ErrorCode))
		}
	}
}

// A completion for a partition this coordinator does not serve is
// ignored, not kept for a load that may never come.
func TestCompleteTransactionUnservedPartition(t *testing.T) {
	c := New(Config{OffsetsTopicNumPartitions: 2}, Deps{Log: NewMemLog(), Clock: clock.NewManual(epoch),
		Logger: slog.New(slog.DiscardHandler)})
	c.CompleteTransaction(1, 7, 0, true)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.mu.late) != 0 || len(c.mu.txns) != 0 {
		t.Errorf("late %v, txns %v: want nothing kept", c.mu.late, c.mu.txns)
	}
}
