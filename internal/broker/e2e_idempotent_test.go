package broker

import (
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/record"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A retried idempotent batch is acknowledged with its original offset and
// stored once; a gap and an old epoch get Kafka's errors.
func TestIdempotentProduceOverTheWire(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "idem", 1)
	rc := dialRaw(t, b)
	batch := func(epoch int16, seq int32) []byte {
		return rawIdempotentBatch(t, 42, epoch, seq, time.Now().UnixMilli())
	}
	for i, c := range []struct {
		batch []byte
		code  int16
		base  int64
	}{
		{batch(0, 0), 0, 0},
		{batch(0, 1), 0, 1},
		{batch(0, 0), 0, 0}, // retry of the first: its offset, not a new one
		{batch(0, 5), kerr.OutOfOrderSequenceNumber.Code, -1},
		{batch(1, 0), 0, 2},
		{batch(0, 2), kerr.InvalidProducerEpoch.Code, -1},
	} {
		sp := rawProducePart(rc, rawProduceReq("idem", 0, -1, c.batch), int32(i))
		if sp.ErrorCode != c.code || (c.code == 0 && sp.BaseOffset != c.base) {
			t.Fatalf("produce %d: error %d base %d, want error %d base %d", i, sp.ErrorCode, sp.BaseOffset, c.code, c.base)
		}
	}
	fp := rawFetchPart(rc, rawFetchReq(12, "idem", [16]byte{}, 0, 0), 99)
	if fp.HighWatermark != 3 {
		t.Fatalf("high watermark %d: the retry was stored twice", fp.HighWatermark)
	}
}

// rawIdempotentBatch is a one-record batch from producer pid.
func rawIdempotentBatch(t *testing.T, pid int64, epoch int16, seq int32, ts int64) []byte {
	t.Helper()
	b := record.Batch{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq,
		Records: []record.Record{{Timestamp: ts, Key: []byte("k"), Value: []byte("v")}}}
	raw, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
