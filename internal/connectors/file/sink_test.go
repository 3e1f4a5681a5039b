package file

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

func sinkRecords(values ...any) []connect.SinkRecord {
	out := make([]connect.SinkRecord, len(values))
	for i, v := range values {
		off := int64(i)
		out[i] = connect.SinkRecord{Record: connect.Record{Topic: "t", Value: v, KafkaOffset: &off}}
	}
	return out
}

func startSink(t *testing.T, props map[string]string) *SinkTask {
	t.Helper()
	c := NewSinkConnector()
	if err := c.Start(connectorCtx{}, props); err != nil {
		t.Fatal(err)
	}
	cfgs, _ := c.TaskConfigs(1)
	task := c.NewTask().(*SinkTask)
	if err := task.Start(sinkCtx{cfgs[0]}, cfgs[0]); err != nil {
		t.Fatal(err)
	}
	return task
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSinkAppendsLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.txt")
	writeFile(t, path, "before\n")
	task := startSink(t, map[string]string{"file": path})
	if err := task.Put(bg, sinkRecords("a", "b")); err != nil {
		t.Fatal(err)
	}
	if err := task.Put(bg, sinkRecords(nil, int64(3))); err != nil {
		t.Fatal(err)
	}
	if err := task.Flush(bg, nil); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != "before\na\nb\nnull\n3\n" {
		t.Fatalf("file = %q", got)
	}
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}
	again := startSink(t, map[string]string{"file": path})
	again.Put(bg, sinkRecords("c"))
	again.Stop()
	if got := readFile(t, path); got != "before\na\nb\nnull\n3\nc\n" {
		t.Fatalf("file after a second task = %q", got)
	}
}

func TestSinkCreatesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.txt")
	task := startSink(t, map[string]string{"file": path})
	task.Put(bg, sinkRecords("x"))
	task.Flush(bg, nil)
	task.Stop()
	if got := readFile(t, path); got != "x\n" {
		t.Fatalf("file = %q", got)
	}
}

// Flush must reach the disk: with the file's handle closed under it, the
// fsync fails and Flush says so (a Flush that did not fsync would not).
func TestSinkFlushSyncs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.txt")
	task := startSink(t, map[string]string{"file": path})
	task.Put(bg, sinkRecords("x"))
	task.file.Close()
	err := task.Flush(bg, nil)
	if err == nil || !strings.Contains(err.Error(), "fsync") {
		t.Fatalf("flush error = %v, want the fsync's", err)
	}
}

func TestSinkUnwritableFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "no", "such", "dir.txt")
	task := NewSinkTask()
	err := task.Start(sinkCtx{}, map[string]string{"file": path})
	want := "Couldn't find or create file '" + path + "' for FileStreamSinkTask"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("start error = %v, want %q", err, want)
	}
}

func TestSinkStdout(t *testing.T) {
	var out bytes.Buffer
	task := NewSinkTask()
	task.stdout = &out
	if err := task.Start(sinkCtx{}, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	task.Put(bg, sinkRecords("to", "stdout"))
	if err := task.Flush(bg, nil); err != nil {
		t.Fatal(err)
	}
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}
	if out.String() != "to\nstdout\n" {
		t.Fatalf("stdout = %q", out.String())
	}
}

func TestSinkTaskConfigs(t *testing.T) {
	c := NewSinkConnector()
	c.Start(connectorCtx{}, map[string]string{"file": "/x"})
	cfgs, _ := c.TaskConfigs(3)
	if len(cfgs) != 3 || cfgs[2]["file"] != "/x" {
		t.Fatalf("TaskConfigs(3) = %v", cfgs)
	}
	if ok, err := c.AlterOffsets(nil, map[connect.TopicPartition]*int64{{Topic: "t"}: nil}); !ok || err != nil {
		t.Fatalf("AlterOffsets = %v, %v", ok, err)
	}
}

// The sink writes values as Java's String.valueOf prints them.
func TestJavaString(t *testing.T) {
	schema := connect.NewStruct("s").Field("a", connect.Int32Schema).Field("b", connect.OptionalString).MustBuild()
	st := connect.NewStructValue(schema).MustPut("a", int32(1)).MustPut("b", "x")
	for _, tc := range []struct {
		v    any
		want string
	}{
		{nil, "null"},
		{"text", "text"},
		{true, "true"},
		{int8(-3), "-3"},
		{int64(1) << 40, "1099511627776"},
		{1.0, "1.0"},
		{0.5, "0.5"},
		{float32(2.5), "2.5"},
		{1e7, "1.0E7"},
		{1.5e-4, "1.5E-4"},
		{-0.0001, "-1.0E-4"},
		{123456.789, "123456.789"},
		{[]byte("raw"), "raw"},
		{[]any{"a", int32(1), nil}, "[a, 1, null]"},
		{map[string]any{"b": 2.0, "a": "x"}, "{a=x, b=2.0}"},
		{map[any]any{int32(2): "two", int32(1): "one"}, "{1=one, 2=two}"},
		{st, "Struct{a=1,b=x}"},
		{time.Unix(0, 0).UTC(), "Thu Jan 01 00:00:00 UTC 1970"},
	} {
		if got := javaString(tc.v); got != tc.want {
			t.Errorf("javaString(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// What the sink writes, the source reads back.
func TestSinkThenSource(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.txt")
	sink := startSink(t, map[string]string{"file": path})
	sink.Put(bg, sinkRecords("one", "two"))
	sink.Flush(bg, nil)
	sink.Stop()
	task := startSource(t, newSourceCtx(map[string]string{"file": path, "topic": "t"}))
	wantLines(t, poll(t, task), line{"one", int64(4)}, line{"two", int64(8)})
}
