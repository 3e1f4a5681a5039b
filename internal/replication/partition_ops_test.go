package replication

import (
	"errors"
	"testing"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/storage"
	"github.com/samsa-io/samsa/internal/vfs"
)

// testPartition is a leader replica over an in-memory log holding n
// one-record batches with timestamps 1000, 1001, ...; in durable mode its
// high watermark stays at the recovery point.
func testPartition(t *testing.T, n int, durable bool) *Partition {
	t.Helper()
	cfg := storage.DefaultConfig()
	cfg.RetentionMs = -1
	l, err := storage.Open("/p/t-0", cfg, storage.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	p := NewPartition(model.TopicPartition{Topic: "t", Partition: 0}, model.TopicID{1}, l, 1, 3, durable)
	for i := range n {
		b := record.Batch{ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence,
			Records: []record.Record{{Offset: 0, Timestamp: int64(1000 + i), Value: []byte{byte(i)}}}}
		raw, err := b.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Append(raw); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func TestListOffsetSeesOnlyVisibleRecords(t *testing.T) {
	p := testPartition(t, 5, false)
	cases := []struct {
		timestamp          int64
		wantOffset, wantTS int64
	}{
		{LatestTimestamp, 5, -1},
		{EarliestTimestamp, 0, -1},
		{EarliestLocalTimestamp, 0, -1},
		{MaxTimestamp, 4, 1004},
		{1002, 2, 1002},
		{999, 0, 1000},
		{2000, -1, -1}, // after every record
		{-7, -1, -1},   // an unknown special timestamp
	}
	for _, c := range cases {
		off, ts, epoch, err := p.ListOffset(c.timestamp, false)
		if err != nil || off != c.wantOffset || ts != c.wantTS {
			t.Errorf("ListOffset(%d) = %d, %d, %v; want %d, %d", c.timestamp, off, ts, err, c.wantOffset, c.wantTS)
		}
		if wantEpoch := int32(3); off >= 0 && epoch != wantEpoch || off < 0 && epoch != -1 {
			t.Errorf("ListOffset(%d): epoch %d", c.timestamp, epoch)
		}
	}
	// Records above the high watermark are invisible to ListOffsets.
	p.highWatermark.Store(2)
	if off, _, _, _ := p.ListOffset(LatestTimestamp, false); off != 2 {
		t.Errorf("latest with the high watermark at 2: %d", off)
	}
	if off, _, _, _ := p.ListOffset(MaxTimestamp, false); off != -1 {
		t.Errorf("max timestamp above the high watermark: offset %d, want -1", off)
	}
	if off, _, _, _ := p.ListOffset(1003, false); off != -1 {
		t.Errorf("timestamp of a record above the high watermark: offset %d, want -1", off)
	}
}

func TestDeleteRecordsBoundedByHighWatermark(t *testing.T) {
	p := testPartition(t, 5, false)
	p.highWatermark.Store(3)
	if _, err := p.DeleteRecords(4); !errors.Is(err, storage.ErrOffsetOutOfRange) {
		t.Fatalf("delete past the high watermark: %v", err)
	}
	if _, err := p.DeleteRecords(-2); !errors.Is(err, storage.ErrOffsetOutOfRange) {
		t.Fatalf("delete to -2: %v", err)
	}
	if start, err := p.DeleteRecords(2); err != nil || start != 2 {
		t.Fatalf("delete to 2: %d, %v", start, err)
	}
	if start, err := p.DeleteRecords(-1); err != nil || start != 3 || p.LogStartOffset() != 3 {
		t.Fatalf("delete to the high watermark: %d, %v", start, err)
	}
	if off, _, _, _ := p.ListOffset(EarliestTimestamp, false); off != 3 {
		t.Fatalf("earliest after deleting: %d", off)
	}
}
