package controller

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/samsa-io/samsa/internal/metadata"
)

func TestFSMRefusesBadBatches(t *testing.T) {
	f := newFSM(testLogger())
	good, err := metadata.EncodeBatch([]metadata.Record{metadata.ClusterRecord{ClusterID: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp := f.Apply(&raft.Log{Index: 3, Type: raft.LogCommand, Data: good}); resp != nil {
		t.Fatalf("good batch: %v", resp)
	}
	img := f.image()
	ch := f.state.Load().changed
	cases := map[string][]byte{
		"not a batch":     []byte("{"),
		"unknown record":  []byte(`[{"type":"acl","v":1,"data":{}}]`),
		"invariant fails": good, // a second cluster ID
	}
	for name, data := range cases {
		if resp, ok := f.Apply(&raft.Log{Index: 4, Type: raft.LogCommand, Data: data}).(error); !ok || resp == nil {
			t.Errorf("%s: applied", name)
		}
	}
	if f.image() != img || img.Offset() != 3 {
		t.Error("refused batches changed the image")
	}
	select {
	case <-ch:
		t.Error("refused batches signalled a change")
	default:
	}
	// Entries that are not commands (no-ops, configuration) are not ours.
	if resp := f.Apply(&raft.Log{Index: 5, Type: raft.LogNoop}); resp != nil || f.image() != img {
		t.Errorf("noop: %v", resp)
	}
}

// memSink is a raft.SnapshotSink over a buffer.
type memSink struct {
	bytes.Buffer
	cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Close() error  { return nil }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }

func TestFSMSnapshotRestore(t *testing.T) {
	f := newFSM(testLogger())
	batch, _ := metadata.EncodeBatch([]metadata.Record{
		metadata.ClusterRecord{ClusterID: "c"},
		metadata.FeatureLevel{Name: metadata.FeatureMetadataVersion, Level: 25},
	})
	f.Apply(&raft.Log{Index: 7, Type: raft.LogCommand, Data: batch})
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink memSink
	if err := snap.Persist(&sink); err != nil || sink.cancelled {
		t.Fatalf("persist: %v", err)
	}
	snap.Release()

	g := newFSM(testLogger())
	if err := g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if img := g.image(); img.ClusterID() != "c" || img.Offset() != 7 || img.Feature(metadata.FeatureMetadataVersion) != 25 {
		t.Errorf("restored image: cluster %q offset %d", img.ClusterID(), img.Offset())
	}
	if err := g.Restore(io.NopCloser(strings.NewReader("garbage"))); err == nil {
		t.Error("restore of garbage succeeded")
	}
}

func TestRaftLoggerLevels(t *testing.T) {
	var buf bytes.Buffer
	l := newRaftLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	l.Info("entering leader state")
	l.Warn("heartbeat timeout reached, starting election")
	l.Warn("failed to contact", "server", hclog.Fmt("%d-%s", 2, "x"))
	l.Named("snapshot").Error("failed to persist")
	out := buf.String()
	for _, hidden := range []string{"entering leader state", "heartbeat timeout"} {
		if strings.Contains(out, hidden) {
			t.Errorf("%q logged at info level:\n%s", hidden, out)
		}
	}
	for _, shown := range []string{"level=WARN msg=\"failed to contact\"", "server=2-x", "level=ERROR", "logger=raft.snapshot", "component=raft"} {
		if !strings.Contains(out, shown) {
			t.Errorf("missing %q in:\n%s", shown, out)
		}
	}
	if l.IsDebug() || !l.IsWarn() || l.GetLevel() != hclog.Warn {
		t.Errorf("levels: debug %v warn %v level %v", l.IsDebug(), l.IsWarn(), l.GetLevel())
	}
}
