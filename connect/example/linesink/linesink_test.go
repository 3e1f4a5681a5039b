package linesink

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/samsa-io/samsa/connect"
)

type sinkContext struct{}

func (sinkContext) Config() map[string]string                          { return nil }
func (sinkContext) Assignment() []connect.TopicPartition               { return nil }
func (sinkContext) Offset(map[connect.TopicPartition]int64)            {}
func (sinkContext) Pause(...connect.TopicPartition)                    {}
func (sinkContext) Resume(...connect.TopicPartition)                   {}
func (sinkContext) RequestCommit()                                     {}
func (sinkContext) ErrantRecordReporter() connect.ErrantRecordReporter { return nil }
func (sinkContext) Logger() *slog.Logger                               { return slog.New(slog.DiscardHandler) }

func record(offset int64, value any) connect.SinkRecord {
	return connect.SinkRecord{Record: connect.Record{Topic: "t", Value: value, KafkaOffset: &offset},
		OriginalTopic: "t", OriginalPartition: 2, OriginalOffset: offset}
}

// Put buffers; the file has the lines once Flush returned.
func TestPutThenFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.txt")
	task := &Task{}
	if err := task.Start(sinkContext{}, map[string]string{"file": path}); err != nil {
		t.Fatal(err)
	}
	if err := task.Put(context.Background(), []connect.SinkRecord{record(5, "a"), record(6, []byte("b")), record(7, nil)}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); len(data) != 0 {
		t.Fatalf("written before Flush: %q", data)
	}
	if err := task.Flush(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "t 2 5 a\nt 2 6 b\nt 2 7 null\n" {
		t.Fatalf("file %q", data)
	}
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}
}

// A full disk is retriable; a file that cannot be opened is not.
func TestErrors(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/dev/full, a disk always full, is Linux's")
	}
	task := &Task{}
	if err := task.Start(sinkContext{}, map[string]string{"file": "/dev/full"}); err != nil {
		t.Fatal(err)
	}
	defer task.Stop()
	if err := task.Put(context.Background(), []connect.SinkRecord{record(1, "x")}); err != nil {
		t.Fatal(err)
	}
	if err := task.Flush(context.Background(), nil); !connect.IsRetriable(err) {
		t.Errorf("Flush to a full disk = %v, want a retriable error", err)
	}
	err := (&Task{}).Start(sinkContext{}, map[string]string{"file": filepath.Join(t.TempDir(), "no", "such", "dir")})
	if err == nil || connect.IsRetriable(err) {
		t.Errorf("Start in a missing directory = %v", err)
	}
}

func TestTaskConfigs(t *testing.T) {
	for _, tc := range []struct {
		file string
		want int
	}{{"", 3}, {"/tmp/x", 1}} {
		c := &Connector{}
		_ = c.Start(nil, map[string]string{"file": tc.file})
		cfgs, _ := c.TaskConfigs(3)
		if len(cfgs) != tc.want {
			t.Errorf("file %q: %d tasks, want %d", tc.file, len(cfgs), tc.want)
		}
	}
}
