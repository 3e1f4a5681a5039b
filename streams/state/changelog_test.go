package state

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// changelog collects what a logged store sent, dropping what an abort
// discarded (an aborted transaction's records are never read back).
type changelog struct {
	committed, pending []ChangelogRecord
}

func (c *changelog) logger() ChangeLogger {
	return func(key, value []byte, ts int64) {
		c.pending = append(c.pending, ChangelogRecord{Key: bytes.Clone(key), Value: cloneValue(value), Timestamp: ts})
	}
}

func (c *changelog) commit() { c.committed, c.pending = append(c.committed, c.pending...), nil }
func (c *changelog) abort()  { c.pending = nil }

// compacted keeps the last record per key, as log compaction does.
func (c *changelog) compacted() []ChangelogRecord {
	last := map[string]int{}
	for i, r := range c.committed {
		last[string(r.Key)] = i
	}
	var out []ChangelogRecord
	for i, r := range c.committed {
		if last[string(r.Key)] == i {
			out = append(out, r)
		}
	}
	return out
}

func TestChangelogFormats(t *testing.T) {
	rc := &RecordContext{Timestamp: 42}
	var got []string
	log := func(key, value []byte, ts int64) {
		got = append(got, fmt.Sprintf("%s=%q@%d", hex.EncodeToString(key), value, ts))
	}
	ws, err := NewInMemoryWindowStore("w", WindowOptions{RetentionPeriod: 100, WindowSize: 10, RetainDuplicates: true})
	must(t, err)
	lw, err := LogWindowStore(ws, rc, log)
	must(t, err)
	must(t, lw.Put([]byte("k"), []byte("v"), 5))
	must(t, lw.Put([]byte("k"), []byte("v"), 5))
	ss, err := NewInMemorySessionStore("s", SessionOptions{RetentionPeriod: 100})
	must(t, err)
	must(t, LogSessionStore(ss, rc, log).Put([]byte("k"), Window{Start: 3, End: 7}, []byte("v")))
	kv := LogTimestampedKeyValueStore(NewInMemoryKeyValueStore("t"), rc, log)
	must(t, kv.Put([]byte("k"), ValueWithTimestamp([]byte("v"), 9)))
	_, err = kv.Delete([]byte("k"))
	must(t, err)
	want := []string{
		`6b000000000000000500000001="v"@42`,         // [key][start][seqnum 1]
		`6b000000000000000500000002="v"@42`,         // a duplicate: seqnum 2
		`6b00000000000000070000000000000003="v"@42`, // [key][end][start]
		`6b="v"@9`, // the plain value, its own timestamp
		`6b=""@42`, // a tombstone, the record's timestamp
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("changelog:\n%q\nwant\n%q", got, want)
	}
}

// TestRestoreEqualsOriginal: a store rebuilt from its changelog (whole or
// compacted, onto either engine) equals the store that wrote it.
func TestRestoreEqualsOriginal(t *testing.T) {
	t.Run("keyvalue", func(t *testing.T) {
		for _, timestamped := range []bool{false, true} {
			rapid.Check(t, func(rt *rapid.T) { checkKeyValueRestore(rt, t, timestamped) })
		}
	})
	t.Run("window", func(t *testing.T) {
		for _, dups := range []bool{false, true} {
			rapid.Check(t, func(rt *rapid.T) { checkWindowRestore(rt, t, dups) })
		}
	})
	t.Run("session", func(t *testing.T) {
		rapid.Check(t, func(rt *rapid.T) { checkSessionRestore(rt, t) })
	})
}

// replayed is a tail of the changelog read again, as after a crash between
// a store's commit and the checkpoint that records it: restore must be
// idempotent.
func replayed(rt *rapid.T, records []ChangelogRecord) []ChangelogRecord {
	return records[rapid.IntRange(0, len(records)).Draw(rt, "replay from"):]
}

// txnOp draws commit, abort or a write; both the store and changelog follow.
func txnOp(rt *rapid.T, s Store, c *changelog, write func()) {
	switch rapid.IntRange(0, 9).Draw(rt, "op") {
	case 0:
		must(rt, s.Commit())
		c.commit()
	case 1:
		must(rt, s.Abort())
		c.abort()
	default:
		write()
	}
}

func checkKeyValueRestore(rt *rapid.T, t *testing.T, timestamped bool) {
	rc := &RecordContext{}
	c := &changelog{}
	wrap := LogKeyValueStore
	if timestamped {
		wrap = LogTimestampedKeyValueStore
	}
	orig := wrap(NewInMemoryKeyValueStore("kv"), rc, c.logger())
	for range rapid.IntRange(1, 50).Draw(rt, "ops") {
		txnOp(rt, orig, c, func() {
			rc.Timestamp = rapid.Int64Range(0, 100).Draw(rt, "ts")
			k, v := genKey.Draw(rt, "k"), genValue().Draw(rt, "v")
			if v != nil && timestamped {
				v = ValueWithTimestamp(v, rc.Timestamp)
			}
			if rapid.Bool().Draw(rt, "delete") {
				_, err := orig.Delete(k)
				must(rt, err)
			} else {
				must(rt, orig.Put(k, v))
			}
		})
	}
	must(rt, orig.Abort())
	c.abort()
	it, err := orig.All()
	want := collect(rt, it, err)
	for name, records := range map[string][]ChangelogRecord{"whole": c.committed, "compacted": c.compacted()} {
		for variant, open := range kvVariants(t) {
			restored := wrap(open(), &RecordContext{}, func([]byte, []byte, int64) { rt.Fatal("restore logged") })
			must(rt, restored.RestoreBatch(records))
			must(rt, restored.RestoreBatch(replayed(rt, records)))
			must(rt, restored.Commit())
			it, err := restored.All()
			if got := collect(rt, it, err); !equalKVs(got, want) {
				rt.Fatalf("%s changelog onto %s: %q; want %q", name, variant, got, want)
			}
			restored.Close()
		}
	}
}

func checkWindowRestore(rt *rapid.T, t *testing.T, dups bool) {
	o := testWindowOptions
	o.RetainDuplicates = dups
	rc := &RecordContext{}
	c := &changelog{}
	inner, err := NewInMemoryWindowStore("w", o)
	must(rt, err)
	orig, err := LogWindowStore(inner, rc, c.logger())
	must(rt, err)
	for range rapid.IntRange(1, 50).Draw(rt, "ops") {
		txnOp(rt, orig, c, func() {
			k, v, start := genKey.Draw(rt, "k"), genValue().Draw(rt, "v"), rapid.Int64Range(0, 60).Draw(rt, "start")
			must(rt, orig.Put(k, v, start))
		})
	}
	must(rt, orig.Abort())
	c.abort()
	it, err := orig.All()
	want := collectWindows(rt, it, err)
	for name, records := range map[string][]ChangelogRecord{"whole": c.committed, "compacted": c.compacted()} {
		for variant, open := range windowVariants(t, o) {
			restored, err := LogWindowStore(open(), &RecordContext{}, func([]byte, []byte, int64) { rt.Fatal("restore logged") })
			must(rt, err)
			must(rt, restored.RestoreBatch(records))
			must(rt, restored.RestoreBatch(replayed(rt, records)))
			must(rt, restored.Commit())
			it, err := restored.All()
			if got := collectWindows(rt, it, err); !sameWindows(got, want) {
				rt.Fatalf("%s changelog onto %s: %v; want %v", name, variant, got, want)
			}
			restored.Close()
		}
	}
}

func checkSessionRestore(rt *rapid.T, t *testing.T) {
	rc := &RecordContext{}
	c := &changelog{}
	inner, err := NewInMemorySessionStore("s", testSessionOptions)
	must(rt, err)
	orig := LogSessionStore(inner, rc, c.logger())
	for range rapid.IntRange(1, 50).Draw(rt, "ops") {
		txnOp(rt, orig, c, func() {
			start := rapid.Int64Range(0, 60).Draw(rt, "start")
			w := Window{Start: start, End: start + rapid.Int64Range(0, 15).Draw(rt, "length")}
			must(rt, orig.Put(genKey.Draw(rt, "k"), w, genValue().Draw(rt, "v")))
		})
	}
	must(rt, orig.Abort())
	c.abort()
	it, err := orig.FetchRange(nil, nil)
	want := collectSessions(rt, it, err)
	for name, records := range map[string][]ChangelogRecord{"whole": c.committed, "compacted": c.compacted()} {
		for variant, open := range sessionVariants(t, testSessionOptions) {
			restored := LogSessionStore(open(), &RecordContext{}, func([]byte, []byte, int64) { rt.Fatal("restore logged") })
			must(rt, restored.RestoreBatch(records))
			must(rt, restored.RestoreBatch(replayed(rt, records)))
			must(rt, restored.Commit())
			it, err := restored.FetchRange(nil, nil)
			if got := collectSessions(rt, it, err); !sameSessions(got, want) {
				rt.Fatalf("%s changelog onto %s: %v; want %v", name, variant, got, want)
			}
			restored.Close()
		}
	}
}

func TestRestoreRefusesMalformedRecords(t *testing.T) {
	ws, err := NewInMemoryWindowStore("w", testWindowOptions)
	must(t, err)
	lw, err := LogWindowStore(ws, &RecordContext{}, func([]byte, []byte, int64) {})
	must(t, err)
	if err := lw.RestoreBatch([]ChangelogRecord{{Key: []byte("short")}}); err == nil {
		t.Fatal("a window changelog key of 5 bytes restored")
	}
	ss, err := NewInMemorySessionStore("s", testSessionOptions)
	must(t, err)
	if err := LogSessionStore(ss, &RecordContext{}, nil).RestoreBatch([]ChangelogRecord{{Key: []byte("short")}}); err == nil {
		t.Fatal("a session changelog key of 5 bytes restored")
	}
}
