package pgcdc

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
)

// Offset keys, Debezium's names (PostgresOffsetContext, SourceInfo).
const (
	offLSN            = "lsn"
	offTxID           = "txId"
	offTsUsec         = "ts_usec"
	offCommitLSN      = "lsn_commit"
	offProcLSN        = "lsn_proc"
	offEvents         = "lsn_events_processed"
	offSnapshot       = "snapshot"
	offLastSnapshot   = "last_snapshot_record"
	offSnapshotDone   = "snapshot_completed"
	snapshotTypeValue = "INITIAL" // Debezium's SnapshotType for the initial snapshot
)

// position is where an event sits in the change stream, and what the
// source offset after it records.
//
// CommitLSN is the end of the last transaction every record of which was
// emitted before this one (Debezium's lsn_commit: the LSN the Commit
// message arrives at); starting replication there never sends that
// transaction again. A restart streams from CommitLSN and skips,
// in transaction TxID, the events at or before (LSN, Events): the records
// of a partly delivered transaction are not sent twice.
type position struct {
	LSN       uint64
	CommitLSN uint64
	TxID      int64
	TsUsec    int64
	Events    int64 // records already emitted at LSN in TxID (a delete and its tombstone are two)

	Snapshot     bool // the event is a snapshot read
	LastSnapshot bool // ... and the last one
}

// snapshotCompleted reports whether an offset says the snapshot finished:
// a streaming offset, or the snapshot's last record.
func (p position) snapshotCompleted() bool { return !p.Snapshot || p.LastSnapshot }

// offset is the source offset map, with Debezium's keys.
func (p position) offset() map[string]any {
	m := map[string]any{
		offLSN:       int64(p.LSN),
		offCommitLSN: int64(p.CommitLSN),
		offProcLSN:   int64(p.LSN),
		offTsUsec:    p.TsUsec,
	}
	if p.TxID != 0 {
		m[offTxID] = p.TxID
	}
	if p.Events > 0 {
		m[offEvents] = p.Events
	}
	if p.Snapshot {
		m[offSnapshot] = snapshotTypeValue
		m[offLastSnapshot] = p.LastSnapshot
		m[offSnapshotDone] = p.LastSnapshot
	}
	return m
}

// parsePosition reads a stored offset; numbers may come back as any Go
// number or as JSON numbers, depending on how the runtime stored them.
func parsePosition(m map[string]any) (position, error) {
	var p position
	var err error
	get := func(key string) int64 {
		v, ok := m[key]
		if !ok || v == nil || err != nil {
			return 0
		}
		var n int64
		n, err = toInt64(v)
		if err != nil {
			err = fmt.Errorf("pgcdc: offset %s: %w", key, err)
		}
		return n
	}
	p.LSN = uint64(get(offLSN))
	p.CommitLSN = uint64(get(offCommitLSN))
	if p.CommitLSN == 0 {
		p.CommitLSN = uint64(get(offProcLSN))
	}
	p.TxID = get(offTxID)
	p.TsUsec = get(offTsUsec)
	p.Events = get(offEvents)
	if v, ok := m[offSnapshot]; ok && v != nil && v != false && v != "false" {
		p.Snapshot = true // Debezium wrote true before SnapshotType, "INITIAL" since
		p.LastSnapshot = truthy(m[offLastSnapshot]) || truthy(m[offSnapshotDone])
	}
	return p, err
}

func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return x == "true"
	}
	return false
}

func toInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint64:
		return int64(x), nil
	case float64:
		return int64(x), nil
	case json.Number:
		return x.Int64()
	case string:
		return strconv.ParseInt(x, 10, 64)
	}
	return 0, fmt.Errorf("not a number: %T", v)
}

// inflight tracks the records handed to the runtime and not yet
// acknowledged (CommitRecord), in emission order. Everything before the
// first unacknowledged record is in Kafka, so that record's CommitLSN is a
// position the slot may be told about; nothing later is.
type inflight struct {
	mu      sync.Mutex
	entries []inflightEntry
	head    int
	floor   uint64 // CommitLSN of the first unacknowledged record, or of the last one popped
}

type inflightEntry struct {
	key       string
	commitLSN uint64
	acked     bool
}

// offsetKey identifies a record by its offset: records with equal keys
// have equal CommitLSNs, so acknowledging either is the same to the floor.
// It reads the offset as parsePosition does, so a stored offset read back
// with other number types has the same key.
func offsetKey(m map[string]any) string {
	p, _ := parsePosition(m)
	return p.key()
}

func (p position) key() string {
	return fmt.Sprintf("%d/%d/%d/%d/%t/%t", p.LSN, p.CommitLSN, p.TxID, p.Events, p.Snapshot, p.LastSnapshot)
}

func (f *inflight) add(key string, commitLSN uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entries = append(f.entries, inflightEntry{key: key, commitLSN: commitLSN})
}

// ack marks the first unacknowledged record with the key and pops the
// acknowledged prefix.
func (f *inflight) ack(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := f.head; i < len(f.entries); i++ {
		if !f.entries[i].acked && f.entries[i].key == key {
			f.entries[i].acked = true
			break
		}
	}
	for f.head < len(f.entries) && f.entries[f.head].acked {
		f.floor = max(f.floor, f.entries[f.head].commitLSN)
		f.head++
	}
	if f.head == len(f.entries) {
		f.entries, f.head = f.entries[:0], 0
	} else if f.head > 4096 && f.head > len(f.entries)/2 {
		f.entries = append(f.entries[:0], f.entries[f.head:]...)
		f.head = 0
	}
}

// state is the confirmable floor and whether nothing is in flight.
func (f *inflight) state() (floor uint64, empty bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.head < len(f.entries) {
		return f.entries[f.head].commitLSN, false
	}
	return f.floor, true
}
