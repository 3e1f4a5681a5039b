package broker

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/vfs"
)

// waitReadyz polls /readyz until its answer has want's status and
// contains text, and returns the body.
func waitReadyz(t *testing.T, b *Broker, want int, text string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := httpGet(t, b, "/readyz")
		if code == want && strings.Contains(body, text) {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz: %d %q, want %d with %q", code, body, want, text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReadyzPartitionLedHereNotOpen: a partition the metadata has this
// broker lead, whose log cannot be opened for a reason that is not the
// disk's (an I/O error takes the whole directory offline instead, JBOD),
// makes the broker not ready, naming it; the open is tried again with the
// next metadata change, and once it succeeds the broker is ready.
func TestReadyzPartitionLedHereNotOpen(t *testing.T) {
	broken := true
	notTheDisk := errors.New("a log that cannot be opened, not for an I/O error")
	fs := vfs.NewFaulty(vfs.OS, func(op vfs.Op, name string) error {
		if broken && strings.Contains(name, "/broken-0") {
			return notTheDisk
		}
		return nil
	})
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), HTTPListener: "127.0.0.1:0", FS: fs})
	waitReadyz(t, b, http.StatusOK, "ready")
	createTopic(t, b, "broken", 1)
	body := waitReadyz(t, b, http.StatusServiceUnavailable, "partition broken-0, led here, has no open log")
	if !strings.HasPrefix(body, "not ready: ") {
		t.Errorf("/readyz body %q", body)
	}
	fs.SetInjector(nil)
	createTopic(t, b, "another", 1) // the next image retries the open
	waitReadyz(t, b, http.StatusOK, "ready")
	if ts, ok := b.topics.byTopicName("broken"); !ok || ts.partitions[0] == nil || !ts.partitions[0].IsLeader() {
		t.Errorf("broken-0 is not served after the retry")
	}
}

// TestReadyzMetadataLag: while the broker's applied metadata trails what
// the quorum committed by more than maxMetadataLag entries it is not
// ready; once it catches up it is.
func TestReadyzMetadataLag(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), HTTPListener: "127.0.0.1:0"})
	waitReadyz(t, b, http.StatusOK, "ready")
	b.metaMu.Lock() // applyImage waits: the broker falls behind its controller
	locked := true
	defer func() {
		if locked {
			b.metaMu.Unlock()
		}
	}()
	for i := range maxMetadataLag + 1 {
		res := b.ctrl.CreateTopics(t.Context(), []controller.CreateTopic{{Name: "lag-" + string(rune('a'+i)), NumPartitions: 1, ReplicationFactor: -1}}, false)
		if res[0].ErrorCode != 0 {
			t.Fatal(errors.New(res[0].ErrorMessage))
		}
	}
	waitReadyz(t, b, http.StatusServiceUnavailable, "entries behind the committed metadata log (more than 20)")
	b.metaMu.Unlock()
	locked = false
	waitReadyz(t, b, http.StatusOK, "ready")
}

// TestReadyzCoordinatorPartitionNotServed: an internal partition led here
// that its coordinator does not serve (loading, failed, or as here
// unloaded under the broker's feet) makes the broker not ready.
func TestReadyzCoordinatorPartitionNotServed(t *testing.T) {
	values := brokerValuesOf(t, map[string]string{"offsets.topic.num.partitions": "1"})
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), Values: values, HTTPListener: "127.0.0.1:0"})
	r := dialRaw(t, b)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey = "g"
		if r.roundTrip(fc, 1).(*kmsg.FindCoordinatorResponse).ErrorCode == 0 && b.groups.PartitionCode(0) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("__consumer_offsets-0 never loaded")
		}
	}
	waitReadyz(t, b, http.StatusOK, "ready")
	b.groups.Unload(0)
	// Not ready, naming the partition. A metadata change that lands after
	// the unload (the broker's startup may still be writing some) marks
	// the led partition loading again, which the coordinator sync, having
	// loaded it once, leaves so: the reason then reads "loading". Either
	// is the broker telling the truth about a partition it does not serve.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		code, body := httpGet(t, b, "/readyz")
		if code == http.StatusServiceUnavailable && (strings.Contains(body, "the coordinator does not serve partition __consumer_offsets-0: NOT_COORDINATOR") ||
			strings.Contains(body, "the coordinator is loading partition __consumer_offsets-0")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz: %d %q after the unload, want 503 naming __consumer_offsets-0", code, body)
		}
	}
}
