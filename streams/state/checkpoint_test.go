package state

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

func TestCheckpointRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), CheckpointFileName)
	offsets := map[TopicPartition]int64{
		{Topic: "app-counts-changelog", Partition: 3}: 42,
		{Topic: "app-counts-changelog", Partition: 0}: 0,
		{Topic: "app-other-changelog", Partition: 1}:  OffsetUnknown,
	}
	must(t, WriteCheckpoint(path, offsets))
	data, err := os.ReadFile(path)
	must(t, err)
	want := "0\n3\napp-counts-changelog 0 0\napp-counts-changelog 3 42\napp-other-changelog 1 -4\n"
	if string(data) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", data, want)
	}
	got, err := ReadCheckpoint(path)
	must(t, err)
	if !maps.Equal(got, offsets) {
		t.Fatalf("read %v; want %v", got, offsets)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary file left: %v", err)
	}
	must(t, WriteCheckpoint(path, nil)) // no offsets: no file, as Kafka's
	if got, err := ReadCheckpoint(path); err != nil || len(got) != 0 {
		t.Fatalf("after an empty write: %v, %v", got, err)
	}
	if err := WriteCheckpoint(path, map[TopicPartition]int64{{Topic: "t"}: -1}); err == nil {
		t.Fatal("negative offset written")
	}
}

func TestReadCheckpointAsKafka(t *testing.T) {
	for _, c := range []struct {
		name, data string
		want       map[TopicPartition]int64 // nil: corrupt
	}{
		{"kafka's file", "0\n2\nt 0 5\nt  1\t7\n", map[TopicPartition]int64{{"t", 0}: 5, {"t", 1}: 7}},
		{"invalid offset skipped", "0\n2\nt 0 5\nt 1 -1\n", map[TopicPartition]int64{{"t", 0}: 5}},
		{"empty file", "", nil},
		{"unknown version", "1\n0\n", nil},
		{"no count", "0\n", nil},
		{"count not a number", "0\nx\n", nil},
		{"fewer entries", "0\n2\nt 0 5\n", nil},
		{"more entries", "0\n1\nt 0 5\nt 1 6\n", nil},
		{"two fields", "0\n1\nt 0\n", nil},
		{"partition not a number", "0\n1\nt x 5\n", nil},
		{"offset not a number", "0\n1\nt 0 x\n", nil},
		{"partition too large", "0\n1\nt 2147483648 5\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), CheckpointFileName)
			must(t, os.WriteFile(path, []byte(c.data), 0o644))
			got, err := ReadCheckpoint(path)
			if c.want == nil {
				if !errors.Is(err, ErrCorruptCheckpoint) {
					t.Fatalf("ReadCheckpoint = %v, %v; want ErrCorruptCheckpoint", got, err)
				}
				return
			}
			if err != nil || !maps.Equal(got, c.want) {
				t.Fatalf("ReadCheckpoint = %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

func FuzzReadCheckpoint(f *testing.F) {
	f.Add([]byte("0\n2\nt 0 5\nt 1 7\n"))
	f.Add([]byte("0\n1\nt 0 -4\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		offsets, err := parseCheckpoint(data)
		if err != nil {
			return
		}
		for tp, o := range offsets { // what parses, writes and reads back alike
			if tp.Topic == "" || !validCheckpointOffset(o) {
				t.Fatalf("parsed %v=%d", tp, o)
			}
		}
	})
}

func TestTaskDirectoryLockAndWipe(t *testing.T) {
	dir, err := OpenStateDirectory(t.TempDir(), "app")
	must(t, err)
	task, err := dir.LockTask("0_1")
	must(t, err)
	if _, err := dir.LockTask("0_1"); !errors.Is(err, ErrTaskLocked) {
		t.Fatalf("second lock of 0_1: %v; want ErrTaskLocked", err)
	}
	other, err := dir.LockTask("0_2")
	must(t, err)
	must(t, other.Unlock())

	storePath, err := task.StorePath("counts")
	must(t, err)
	s, err := OpenPebbleKeyValueStore("counts", storePath, PebbleOptions{})
	must(t, err)
	must(t, s.Put([]byte("k"), []byte("v")))
	must(t, s.Commit())
	must(t, s.Close())
	must(t, WriteCheckpoint(task.CheckpointPath(), map[TopicPartition]int64{{Topic: "app-counts-changelog"}: 1}))

	must(t, task.Wipe())
	entries, err := os.ReadDir(task.Path())
	must(t, err)
	if len(entries) != 1 || entries[0].Name() != lockFileName {
		t.Fatalf("after wipe: %v; want only the lock file", entries)
	}
	if _, err := dir.LockTask("0_1"); !errors.Is(err, ErrTaskLocked) {
		t.Fatalf("lock after wipe: %v; want still held", err)
	}
	ids, err := dir.TaskIDs()
	must(t, err)
	if len(ids) != 2 || ids[0] != "0_1" || ids[1] != "0_2" {
		t.Fatalf("TaskIDs = %v", ids)
	}
	must(t, task.Unlock())
	again, err := dir.LockTask("0_1")
	must(t, err)
	must(t, again.Unlock())

	for _, bad := range []string{"", "..", "a/b"} {
		if _, err := dir.LockTask(bad); err == nil {
			t.Errorf("task id %q accepted", bad)
		}
		if _, err := task.StorePath(bad); err == nil {
			t.Errorf("store name %q accepted", bad)
		}
	}
}
