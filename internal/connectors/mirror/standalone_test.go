package mirror_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/connectrt"
	"github.com/samsa-io/samsa/internal/connectrt/builtin"
	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/mirror/mm2"
)

// TestStandaloneWorker runs the three connectors in this process on a
// standalone worker (source offsets in a file), by their short names (run
// with -race, it checks the tasks' locking).
func TestStandaloneWorker(t *testing.T) {
	src, _ := devcluster.StartTestBroker(t)
	tgt, _ := devcluster.StartTestBroker(t)
	ctx := context.Background()
	srcCl, err := kgo.NewClient(kgo.SeedBrokers(src), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer srcCl.Close()
	if _, err := kadm.NewClient(srcCl).CreateTopic(ctx, 2, 1, nil, "events"); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := srcCl.ProduceSync(ctx, &kgo.Record{Topic: "events", Partition: int32(i % 2), Value: fmt.Appendf(nil, "e%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := kadm.NewClient(srcCl).CommitOffsets(ctx, "g", kadm.Offsets{"events": {0: {Topic: "events", Partition: 0, At: 3, LeaderEpoch: -1}}}); err != nil {
		t.Fatal(err)
	}
	cfg, err := connectrt.ParseWorkerConfig(map[string]string{
		"bootstrap.servers": tgt, "offset.storage.file.filename": filepath.Join(t.TempDir(), "offsets"),
		"offset.flush.interval.ms": "500",
		"key.converter":            "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w, err := builtin.Start(ctx, builtin.Options{Config: cfg, ClientOpts: []kgo.Opt{kgo.SeedBrokers(tgt)}, Listener: ln,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for name, class := range map[string]string{"src": "MirrorSource", "hb": "MirrorHeartbeatConnector", "ckpt": "MirrorCheckpoint"} {
		body, _ := json.Marshal(map[string]string{
			"connector.class": class, "source.cluster.alias": "east", "target.cluster.alias": "west",
			"source.cluster.bootstrap.servers": src, "target.cluster.bootstrap.servers": tgt,
			"key.converter": "ByteArrayConverter", "value.converter": "ByteArrayConverter", "header.converter": "ByteArrayConverter",
			"replication.factor": "1", "offset-syncs.topic.replication.factor": "1", "heartbeats.topic.replication.factor": "1",
			"sync.topic.acls.enabled": "false", "checkpoints.topic.replication.factor": "1",
			"emit.checkpoints.interval.seconds": "1", "refresh.groups.interval.seconds": "1",
			"sync.group.offsets.enabled": "true", "sync.group.offsets.interval.seconds": "1",
		})
		req, _ := http.NewRequest("PUT", w.URL+"/connectors/"+name+"/config", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("PUT %s: %d %s", name, resp.StatusCode, msg)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(tgt), kgo.ConsumeTopics("east.events", "heartbeats", "east.checkpoints.internal"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	copied, beats, checkpoints := 0, 0, 0
	for copied < 10 || beats < 1 || checkpoints < 1 {
		fs := cl.PollFetches(pctx)
		if pctx.Err() != nil {
			t.Fatalf("%d records copied, %d heartbeats, %d checkpoints", copied, beats, checkpoints)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Topic == "east.checkpoints.internal" {
				cp, err := mm2.DecodeCheckpoint(r.Key, r.Value)
				if err != nil || cp.Group != "g" || cp.Topic != "east.events" || cp.UpstreamOffset != 3 {
					t.Fatalf("checkpoint %+v %v", cp, err)
				}
				checkpoints++
				return
			}
			if r.Topic == "heartbeats" {
				h, err := mm2.DecodeHeartbeat(r.Key, r.Value)
				if err != nil || h.SourceCluster != "east" || h.TargetCluster != "west" {
					t.Fatalf("heartbeat %+v %v", h, err)
				}
				beats++
				return
			}
			copied++
		})
	}
}
