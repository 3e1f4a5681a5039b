package broker

import (
	"testing"
	"time"
)

// In durable mode a produce is acknowledged only once a group commit has
// fsynced it, and consumers see only fsynced data: the high watermark never
// passes the log's recovery point.
func TestDurableModeAcksOnlyFsyncedData(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), Durable: true})
	createTopic(t, b, "durable", 1)
	rc := dialRaw(t, b)
	for i := range 20 {
		batch := rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, rawRecord{Key: []byte("k"), Value: []byte{byte(i)}})
		sp := rawProducePart(rc, rawProduceReq("durable", 0, -1, batch), int32(i))
		if sp.ErrorCode != 0 || sp.BaseOffset != int64(i) {
			t.Fatalf("produce %d: error %d at %d", i, sp.ErrorCode, sp.BaseOffset)
		}
		ts, _ := b.topics.byTopicName("durable")
		p := ts.partitions[0]
		l, _ := b.logs.Log(p.TP)
		if rp := l.Offsets().RecoveryPoint; rp < int64(i+1) || p.HighWatermark() > rp {
			t.Fatalf("after produce %d: recovery point %d, high watermark %d", i, rp, p.HighWatermark())
		}
	}
}
