package broker

import (
	"context"
	"errors"
	"testing"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func initProducerID(r *rawConn, version int16, txnID *string, id int64, epoch int16) *kmsg.InitProducerIDResponse {
	r.t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.TransactionalID, req.TransactionTimeoutMillis = version, txnID, 60000
	req.ProducerID, req.ProducerEpoch = id, epoch
	return r.roundTrip(req, 1).(*kmsg.InitProducerIDResponse)
}

func TestInitProducerIDIdempotent(t *testing.T) {
	b := startBroker(t)
	r := dialRaw(t, b)
	seen := map[int64]bool{}
	for v := int16(0); v <= 5; v++ {
		resp := initProducerID(r, v, nil, -1, -1)
		if resp.ErrorCode != 0 || resp.ProducerID < 0 || resp.ProducerEpoch != 0 || seen[resp.ProducerID] {
			t.Fatalf("v%d: error %d, producer %d epoch %d (seen %v)", v, resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch, seen)
		}
		seen[resp.ProducerID] = true
	}
	// With its current ID and epoch (KIP-360) an idempotent producer still
	// gets a fresh ID, as from Kafka.
	resp := initProducerID(r, 5, nil, 0, 3)
	if resp.ErrorCode != 0 || seen[resp.ProducerID] || resp.ProducerEpoch != 0 {
		t.Fatalf("re-init: error %d, producer %d epoch %d", resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch)
	}
}

func TestInitProducerIDErrors(t *testing.T) {
	b := startBroker(t)
	r := dialRaw(t, b)
	// With no __transaction_state yet this broker leads none of its
	// partitions, so a transactional ID gets NOT_COORDINATOR, as from
	// Kafka (FindCoordinator creates the topic).
	<-b.coordSync.ready
	tests := []struct {
		name  string
		txnID *string
		id    int64
		epoch int16
		want  *kerr.Error
	}{
		{"transactional", ptr("txn"), -1, -1, kerr.NotCoordinator},
		{"empty transactional ID", ptr(""), -1, -1, kerr.InvalidRequest},
		{"ID without epoch", nil, 5, -1, kerr.InvalidRequest},
		{"epoch without ID", nil, -1, 2, kerr.InvalidRequest},
	}
	for _, tt := range tests {
		resp := initProducerID(r, 5, tt.txnID, tt.id, tt.epoch)
		if resp.ErrorCode != tt.want.Code || resp.ProducerID != -1 || resp.ProducerEpoch != -1 {
			t.Errorf("%s: error %d, producer %d epoch %d; want error %d", tt.name, resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch, tt.want.Code)
		}
	}
}

// TestInitProducerIDAfterRestart: blocks are committed before use, so a
// restarted broker never hands out an ID again.
func TestInitProducerIDAfterRestart(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerWith(t, Config{LogDir: dir})
	first := initProducerID(dialRaw(t, b), 4, nil, -1, -1)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = startBrokerWith(t, Config{LogDir: dir})
	again := initProducerID(dialRaw(t, b), 4, nil, -1, -1)
	if first.ErrorCode != 0 || again.ErrorCode != 0 || again.ProducerID <= first.ProducerID {
		t.Fatalf("before restart %d (error %d), after %d (error %d)", first.ProducerID, first.ErrorCode, again.ProducerID, again.ErrorCode)
	}
}

func TestProducerIDAllocatorBlocks(t *testing.T) {
	var a producerIDAllocator
	blocks := 0
	allocate := func(context.Context) (int64, int, error) {
		blocks++
		return int64(blocks) * 10000, controller.ProducerIDBlockSize, nil
	}
	for i := range controller.ProducerIDBlockSize + 1 {
		id, err := a.take(context.Background(), allocate)
		if err != nil {
			t.Fatal(err)
		}
		want := 10000 + int64(i)
		if i == controller.ProducerIDBlockSize {
			want = 20000
		}
		if id != want {
			t.Fatalf("ID %d is %d, want %d", i, id, want)
		}
	}
	if blocks != 2 {
		t.Fatalf("%d blocks allocated, want 2", blocks)
	}
	failing := func(context.Context) (int64, int, error) { return 0, 0, errors.New("no quorum") }
	var b producerIDAllocator
	if id, err := b.take(context.Background(), failing); err == nil || id != -1 {
		t.Fatalf("take without a block: %d, %v", id, err)
	}
}
