package member

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// ProtocolType is the classic group protocol type Connect workers join with.
const ProtocolType = "connect"

// The Connect subprotocol versions: the header of every metadata and
// assignment Kafka's workers write.
const (
	ProtocolV0 int16 = 0 // eager ("default")
	ProtocolV1 int16 = 1 // incremental cooperative ("compatible")
	ProtocolV2 int16 = 2 // v1 plus KIP-507 session keys ("sessioned")
)

// The subprotocol names Kafka's workers offer in JoinGroup.
const (
	ProtocolEager      = "default"
	ProtocolCompatible = "compatible"
	ProtocolSessioned  = "sessioned"
)

// Assignment error codes (ConnectProtocol.Assignment).
const (
	NoError int16 = 0
	// ConfigMismatch: the leader could not catch up with the config offset
	// some member reported; every member reads the config topic to its end
	// and rejoins.
	ConfigMismatch int16 = 1
)

// connectorTask is the task number that stands for the connector itself in
// an assignment's [connector, tasks] entries.
const connectorTask = -1

// WorkerState is a member's JoinGroup metadata: its REST URL, the config
// offset it has read to, and (v1+) what it runs now.
type WorkerState struct {
	URL          string
	ConfigOffset int64
	// Assignment is nil when the worker has none yet (Kafka writes a null
	// allocation then).
	Assignment *ExtendedAssignment
}

// ExtendedAssignment is the assignment the leader sends each member in
// SyncGroup (v0 has no revocations and no delay). With the cooperative
// protocols Connectors and Tasks are only what is newly assigned; the member
// keeps what it had.
type ExtendedAssignment struct {
	Version           int16
	Error             int16
	Leader, LeaderURL string
	ConfigOffset      int64
	Connectors        []string
	Tasks             []api.TaskID
	RevokedConnectors []string
	RevokedTasks      []api.TaskID
	// DelayMillis is the scheduled rebalance delay: members rejoin after it.
	DelayMillis int32
}

// ErrMalformed marks metadata or an assignment that cannot be decoded.
var ErrMalformed = errors.New("member: malformed connect protocol bytes")

// encodeMetadataV0 writes ConnectProtocol's Subscription V0:
// version int16, url string, config-offset int64.
func encodeMetadataV0(url string, offset int64) []byte {
	var w writer
	w.int16(ProtocolV0)
	w.string(url)
	w.int64(offset)
	return w.b
}

// encodeMetadataV1 writes IncrementalCooperativeConnectProtocol's
// Subscription V1 (header 1, or 2 when sessioned): the v0 fields, then the
// current assignment as nullable bytes holding a whole serialized
// assignment.
func encodeMetadataV1(ws WorkerState, sessioned bool) []byte {
	var w writer
	w.int16(headerVersion(sessioned))
	w.string(ws.URL)
	w.int64(ws.ConfigOffset)
	if ws.Assignment == nil {
		w.int32(-1)
	} else {
		b := encodeAssignmentV1(*ws.Assignment, sessioned)
		w.int32(int32(len(b)))
		w.b = append(w.b, b...)
	}
	return w.b
}

func headerVersion(sessioned bool) int16 {
	if sessioned {
		return ProtocolV2
	}
	return ProtocolV1
}

// decodeMetadata reads any version's metadata as Kafka's incremental
// protocol does: a missing allocation (v0, or a v1 writer that stopped
// early) is no assignment; later versions' extra bytes are ignored.
func decodeMetadata(b []byte) (WorkerState, error) {
	r := reader{b: b}
	version := r.int16()
	var ws WorkerState
	ws.URL = r.string()
	ws.ConfigOffset = r.int64()
	if r.err == nil && version < ProtocolV0 {
		return ws, fmt.Errorf("%w: unsupported subscription version %d", ErrMalformed, version)
	}
	if r.err == nil && r.remaining() > 0 {
		alloc, isNull := r.nullableBytes()
		if r.err == nil && !isNull {
			a, err := decodeAssignment(alloc)
			if err != nil {
				return ws, fmt.Errorf("member: metadata allocation: %w", err)
			}
			ws.Assignment = &a
		}
	}
	if r.err != nil {
		return WorkerState{}, fmt.Errorf("member: metadata: %w", r.err)
	}
	return ws, nil
}

// encodeAssignmentV0 writes ConnectProtocol's Complete Assignment V0.
func encodeAssignmentV0(a ExtendedAssignment) []byte {
	var w writer
	w.int16(ProtocolV0)
	w.int16(a.Error)
	w.string(a.Leader)
	w.string(a.LeaderURL)
	w.int64(a.ConfigOffset)
	w.connectorAssignments(a.Connectors, a.Tasks)
	return w.b
}

// encodeAssignmentV1 writes IncrementalCooperativeConnectProtocol's
// Complete Assignment V1 (header 2 when sessioned).
func encodeAssignmentV1(a ExtendedAssignment, sessioned bool) []byte {
	var w writer
	w.int16(headerVersion(sessioned))
	w.int16(a.Error)
	w.string(a.Leader)
	w.string(a.LeaderURL)
	w.int64(a.ConfigOffset)
	w.connectorAssignments(a.Connectors, a.Tasks)
	w.connectorAssignments(a.RevokedConnectors, a.RevokedTasks)
	w.int32(a.DelayMillis)
	return w.b
}

// decodeAssignment reads any version's assignment as Kafka's workers do
// (they always read with the v1 schema, which tolerates missing trailing
// fields: no revocations, delay 0).
func decodeAssignment(b []byte) (ExtendedAssignment, error) {
	r := reader{b: b}
	var a ExtendedAssignment
	a.Version = r.int16()
	if r.err == nil && a.Version < ProtocolV0 {
		return a, fmt.Errorf("%w: unsupported assignment version %d", ErrMalformed, a.Version)
	}
	a.Error = r.int16()
	a.Leader = r.string()
	a.LeaderURL = r.string()
	a.ConfigOffset = r.int64()
	if r.remaining() > 0 {
		a.Connectors, a.Tasks = r.connectorAssignments()
	}
	if r.remaining() > 0 {
		a.RevokedConnectors, a.RevokedTasks = r.connectorAssignments()
	}
	if r.remaining() > 0 {
		a.DelayMillis = r.int32()
	}
	if r.err != nil {
		return ExtendedAssignment{}, fmt.Errorf("member: assignment: %w", r.err)
	}
	return a, nil
}

// writer appends Kafka's protocol types (big-endian integers, int16-length
// strings, int32-length arrays and bytes).
type writer struct{ b []byte }

func (w *writer) int16(v int16) { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *writer) int32(v int32) { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *writer) int64(v int64) { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }

// string writes Kafka's STRING; Java would refuse one longer than 32767
// bytes, so it is cut there rather than written with a wrapped length.
func (w *writer) string(s string) {
	if len(s) > math.MaxInt16 {
		s = s[:math.MaxInt16]
	}
	w.int16(int16(len(s)))
	w.b = append(w.b, s...)
}

// connectorAssignments writes [connector string, tasks [int32]] entries,
// the connector itself as task -1 ahead of its tasks, connectors in the
// order they first appear.
func (w *writer) connectorAssignments(connectors []string, tasks []api.TaskID) {
	var order []string
	byConnector := map[string][]int32{}
	add := func(c string, task int32) {
		if _, ok := byConnector[c]; !ok {
			order = append(order, c)
		}
		byConnector[c] = append(byConnector[c], task)
	}
	seen := map[string]bool{}
	for _, c := range connectors {
		if !seen[c] {
			seen[c] = true
			add(c, connectorTask)
		}
	}
	for _, t := range tasks {
		add(t.Connector, int32(t.Task))
	}
	w.int32(int32(len(order)))
	for _, c := range order {
		w.string(c)
		w.int32(int32(len(byConnector[c])))
		for _, task := range byConnector[c] {
			w.int32(task)
		}
	}
}

// reader decodes with a sticky error: after the first short read every
// read answers zero, and the caller checks err once.
type reader struct {
	b   []byte
	err error
}

func (r *reader) remaining() int { return len(r.b) }

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = fmt.Errorf("%w: need %d bytes, %d left", ErrMalformed, n, len(r.b))
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) int16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) int32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) int64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *reader) string() string {
	n := r.int16()
	if r.err == nil && n < 0 {
		r.err = fmt.Errorf("%w: null string", ErrMalformed)
	}
	return string(r.take(int(n)))
}

func (r *reader) nullableBytes() (b []byte, isNull bool) {
	n := r.int32()
	if r.err != nil {
		return nil, false
	}
	if n < 0 {
		return nil, true
	}
	return r.take(int(n)), false
}

// arrayLen reads an array's count, -1 (null) as 0, and refuses a count
// the remaining bytes cannot hold (each element takes minSize bytes at
// least), so a hostile count allocates nothing.
func (r *reader) arrayLen(minSize int) int {
	n := r.int32()
	if r.err != nil || n < 0 {
		return 0
	}
	if int(n) > len(r.b)/minSize {
		r.err = fmt.Errorf("%w: array of %d elements in %d bytes", ErrMalformed, n, len(r.b))
		return 0
	}
	return int(n)
}

func (r *reader) connectorAssignments() ([]string, []api.TaskID) {
	var connectors []string
	var tasks []api.TaskID
	n := r.arrayLen(6) // string length + tasks count
	for range n {
		c := r.string()
		m := r.arrayLen(4)
		for range m {
			task := r.int32()
			if r.err != nil {
				break
			}
			if task == connectorTask {
				connectors = append(connectors, c)
			} else {
				tasks = append(tasks, api.TaskID{Connector: c, Task: int(task)})
			}
		}
		if r.err != nil {
			break
		}
	}
	return connectors, tasks
}
