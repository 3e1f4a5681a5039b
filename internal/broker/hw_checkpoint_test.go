package broker

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/model"
)

func TestHighWatermarkCheckpointFormat(t *testing.T) {
	hws := map[model.TopicPartition]int64{{Topic: "b", Partition: 1}: 7, {Topic: "a", Partition: 10}: 0, {Topic: "a", Partition: 2}: 42}
	data := encodeHighWatermarks(hws)
	if want := "0\n3\na 2 42\na 10 0\nb 1 7\n"; string(data) != want {
		t.Errorf("encoded %q, want %q (Kafka's format, partitions in order)", data, want)
	}
	got, err := decodeHighWatermarks(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(hws, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"", "1\n0\n", "0\n", "0\n2\na 1 3\n", "0\n1\na 1\n", "0\n1\na -1 3\n", "0\n1\na 1 x\n"} {
		if _, err := decodeHighWatermarks([]byte(bad)); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// TestClusterCheckpointsHighWatermarks: a broker of a quorum that stops
// writes every hosted partition's high watermark to
// replication-offset-checkpoint, where its replicas start on the next
// start (replication.Options.HighWatermark).
func TestClusterCheckpointsHighWatermarks(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	adm, ctx := c.admin()
	if resp, err := adm.CreateTopic(ctx, 3, 3, map[string]*string{"min.insync.replicas": kmsg.StringPtr("2")}, "hw"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	c.produceN("hw", 30, "r")
	deadline := time.Now().Add(10 * time.Second)
	for _, n := range c.nodes { // every replica knows the high watermark
		for p := range int32(3) {
			for {
				ts, _ := n.get().topics.byTopicName("hw")
				if ts != nil && ts.partitions[p] != nil && ts.partitions[p].HighWatermark() == 10 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("node %d never learned hw-%d's high watermark", n.id, p)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	n := c.nodes[0]
	c.stop(n)
	data, err := os.ReadFile(filepath.Join(n.dir, hwCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	hws, err := decodeHighWatermarks(data)
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(3) {
		if got := hws[model.TopicPartition{Topic: "hw", Partition: p}]; got != 10 {
			t.Errorf("checkpointed hw-%d at %d, want 10", p, got)
		}
	}
	c.start(n)
	ts, _ := n.get().topics.byTopicName("hw")
	for p := range int32(3) {
		if hw := ts.partitions[p].HighWatermark(); hw < 10 {
			t.Errorf("restarted: hw-%d's high watermark %d, want at least the checkpointed 10", p, hw)
		}
	}
}
