package txn

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/config"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestPartitionFor(t *testing.T) {
	for _, tc := range []struct {
		id   string
		n    int32
		want int32
	}{
		{"", 50, 0},
		{"a", 50, 97 % 50},
		{"ab", 50, (97*31 + 98) % 50},
		{"x", 0, 0},
	} {
		if got := PartitionFor(tc.id, tc.n); got != tc.want {
			t.Errorf("PartitionFor(%q, %d) = %d, want %d", tc.id, tc.n, got, tc.want)
		}
	}
}

// TestConcurrentEndTxn holds the markers of one EndTxn and checks that a
// second EndTxn meanwhile answers CONCURRENT_TRANSACTIONS, and a retry
// after completion succeeds.
func TestConcurrentEndTxn(t *testing.T) {
	h := newHarness(t)
	defer h.close()
	entered, release := make(chan struct{}), make(chan struct{})
	h.c.deps.WriteMarkers = func(context.Context, int64, int16, bool, int32, []model.TopicPartition) error {
		close(entered)
		<-release
		return nil
	}
	h.run("init tx")
	h.run("add tx 1000 0 t-0")
	end := func() int16 {
		req := kmsg.NewPtrEndTxnRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.Commit = 4, "tx", 1000, true
		return h.c.EndTxn(context.Background(), req).ErrorCode
	}
	first := make(chan int16)
	h.c.tasks.Go(func(context.Context) { first <- end() })
	<-entered
	if code := end(); code != codeConcurrentTransactions {
		t.Fatalf("second EndTxn: %s, want CONCURRENT_TRANSACTIONS", errName(code))
	}
	if got := h.run("add tx 1000 0 t-1"); got[0] != "add: t-1=CONCURRENT_TRANSACTIONS" {
		t.Fatalf("add while completing: %v", got)
	}
	close(release)
	if code := <-first; code != 0 {
		t.Fatalf("first EndTxn: %s", errName(code))
	}
	if code := end(); code != 0 {
		t.Fatalf("retried EndTxn: %s", errName(code))
	}
}

// TestEpochExhaustion: an InitProducerID at the last epoch gets a new
// producer ID, and a version 2 EndTxn at the last epoch hands one out.
func TestEpochExhaustion(t *testing.T) {
	h := newHarness(t)
	defer h.close()
	h.run("init tx")
	set := func(epoch int16) {
		tx, _ := h.c.lockTxn("tx", false)
		tx.st.producerEpoch = epoch
		tx.mu.Unlock()
	}
	set(math.MaxInt16 - 1)
	if got := h.run("init tx"); got[0] != "init tx: NONE pid=1001 epoch=0" {
		t.Fatalf("init at exhausted epoch: %v", got)
	}
	set(math.MaxInt16 - 1)
	h.run("add-broker tx 1001 32766 t-0")
	got := h.run("end tx 1001 32766 commit v=5")
	if got[0] != "end: NONE pid=1002 epoch=0" {
		t.Fatalf("v2 end at exhausted epoch: %v", got)
	}
	if got[1] != "markers: COMMIT pid=1001 epoch=32767 [t-0]" {
		t.Fatalf("markers: %v", got)
	}
	// A retry of that EndTxn, with the old pair.
	if got := h.run("end tx 1001 32766 commit v=5"); got[0] != "end: NONE pid=1002 epoch=0" {
		t.Fatalf("retried v2 end: %v", got)
	}
}

func TestConfigFrom(t *testing.T) {
	v, err := config.Parse(config.Broker, map[string]string{"transaction.max.timeout.ms": "60000"})
	if err != nil {
		t.Fatal(err)
	}
	c := ConfigFrom(v)
	d := DefaultConfig()
	if c.MaxTimeout != time.Minute || c.NumPartitions != d.NumPartitions ||
		c.TransactionalIDExpiration != d.TransactionalIDExpiration || c.AbortTimedOutInterval != d.AbortTimedOutInterval {
		t.Fatalf("ConfigFrom = %+v", c)
	}
}

// TestUnload: IDs of a partition no longer served answer NOT_COORDINATOR.
func TestUnload(t *testing.T) {
	h := newHarness(t)
	defer h.close()
	h.run("init tx")
	h.c.Unload(PartitionFor("tx", 3))
	if got := h.run("init tx"); got[0] != "init tx: NOT_COORDINATOR pid=-1 epoch=-1" {
		t.Fatalf("after unload: %v", got)
	}
	if err := h.c.Load(context.Background(), PartitionFor("tx", 3)); err != nil {
		t.Fatal(err)
	}
	if got := h.run("describe tx"); got[0] != "tx: Empty pid=1000 epoch=0 timeout=60000 start=- []" {
		t.Fatalf("after reload: %v", got)
	}
}
