package assign

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// ProtocolName is the group protocol the balancer joins with. Kafka
// Streams joins with "stream"; a different name makes a Java instance of
// the same application.id fail its join with INCONSISTENT_GROUP_PROTOCOL
// instead of either side decoding the other's user data as garbage.
const ProtocolName = "samsa-stream"

// UserDataVersion is the version of the subscription and assignment user
// data this package writes and the newest it reads.
const UserDataVersion = 1

// ErrTruncated and ErrUnknownVersion are the decoders' marker errors.
var (
	ErrTruncated      = errors.New("assign: user data truncated")
	ErrUnknownVersion = errors.New("assign: unknown user data version")
)

// Subscription is one member's user data in its JoinGroup request.
type Subscription struct {
	// LatestSupportedVersion is the newest user data version the member
	// reads (set by the encoder; a leader answers in the oldest its
	// members read).
	LatestSupportedVersion int32
	ProcessID              string
	// PrevActive and PrevStandby are this member's (thread's) tasks
	// before the rebalance.
	PrevActive  []TaskID
	PrevStandby []TaskID
	// OffsetSums covers every task with local state in the process, as
	// Kafka Streams' subscription does (LatestOffset for running tasks).
	OffsetSums map[TaskID]int64
	// Endpoint is the process's host:port for interactive queries, or "".
	Endpoint string
}

// AssignmentError is the error code a leader sends every member when it
// cannot assign: the members stop with it rather than run a partial
// assignment. The codes are Kafka Streams' AssignorError codes.
type AssignmentError int32

const (
	ErrNone                          AssignmentError = 0
	ErrIncompleteSourceTopicMetadata AssignmentError = 1 // a source topic is missing or not co-partitioned
	ErrVersionProbing                AssignmentError = 2 // a member's user data has a version the leader cannot read
	ErrAssignment                    AssignmentError = 3 // any other failure on the leader
	ErrShutdownRequested             AssignmentError = 4 // an instance asked the whole application to stop
)

func (e AssignmentError) Error() string {
	switch e {
	case ErrNone:
		return "NONE"
	case ErrIncompleteSourceTopicMetadata:
		return "INCOMPLETE_SOURCE_TOPIC_METADATA: missing or mismatched metadata for source topics, see the group leader's log"
	case ErrVersionProbing:
		return "VERSION_PROBING: a member's subscription has a user data version the leader cannot read"
	case ErrAssignment:
		return "ASSIGNMENT_ERROR: task assignment failed, see the group leader's log"
	case ErrShutdownRequested:
		return "SHUTDOWN_REQUESTED: an instance requested the application to shut down"
	}
	return fmt.Sprintf("assignment error code %d", int32(e))
}

// MemberUserData is what one member receives in its SyncGroup
// assignment besides its partitions.
type MemberUserData struct {
	LatestSupportedVersion int32
	ErrorCode              AssignmentError
	// Active are the tasks whose partitions the member was assigned (a
	// set, sorted; the runtime maps each partition to its task through
	// its topology). Standby are the member's standby tasks.
	Active  []TaskID
	Standby []TaskID
	// ActiveHosts and StandbyHosts map each process endpoint (host:port)
	// to the partitions of its active (standby) tasks, for interactive
	// queries to find a key's instance. Processes without an endpoint
	// are absent.
	ActiveHosts  map[string][]TopicPartition
	StandbyHosts map[string][]TopicPartition
}

// EncodeSubscription writes a subscription in version UserDataVersion:
//
//	int32 version, int32 latest supported version, string process ID,
//	string endpoint, tasks previous active, tasks previous standby,
//	int32 count then (task, int64 offset sum) sorted by task
//
// with strings as int16 length and bytes, tasks as int32 count then
// (int32 subtopology, int32 partition) each, all big-endian.
func EncodeSubscription(s Subscription) ([]byte, error) {
	var w writer
	w.int32(UserDataVersion)
	w.int32(UserDataVersion)
	w.string(s.ProcessID)
	w.string(s.Endpoint)
	w.tasks(s.PrevActive)
	w.tasks(s.PrevStandby)
	sums := make([]TaskID, 0, len(s.OffsetSums))
	for t := range s.OffsetSums {
		sums = append(sums, t)
	}
	slices.SortFunc(sums, TaskID.Compare)
	w.int32(int32(len(sums)))
	for _, t := range sums {
		w.task(t)
		w.int64(s.OffsetSums[t])
	}
	return w.buf, w.err
}

// DecodeSubscription reads EncodeSubscription's bytes; truncated,
// malformed or trailing data and unknown versions are errors.
func DecodeSubscription(b []byte) (Subscription, error) {
	r := reader{buf: b}
	var s Subscription
	if err := r.version(); err != nil {
		return s, err
	}
	s.LatestSupportedVersion = r.int32()
	s.ProcessID = r.string()
	s.Endpoint = r.string()
	s.PrevActive = r.tasks()
	s.PrevStandby = r.tasks()
	n := r.count(12)
	if n > 0 {
		s.OffsetSums = make(map[TaskID]int64, n)
	}
	for range n {
		t := r.task()
		s.OffsetSums[t] = r.int64()
	}
	return s, r.done("subscription")
}

// EncodeAssignment writes a member's user data in version
// UserDataVersion:
//
//	int32 version, int32 latest supported version, int32 error code,
//	tasks active, tasks standby, hosts active, hosts standby
//
// with hosts as int32 count then (string endpoint, int32 topic count,
// then (string topic, int32 count, int32 partitions...)), sorted.
func EncodeAssignment(a MemberUserData) ([]byte, error) {
	var w writer
	w.int32(UserDataVersion)
	w.int32(UserDataVersion)
	w.int32(int32(a.ErrorCode))
	w.tasks(a.Active)
	w.tasks(a.Standby)
	w.hosts(a.ActiveHosts)
	w.hosts(a.StandbyHosts)
	return w.buf, w.err
}

// DecodeAssignment reads EncodeAssignment's bytes.
func DecodeAssignment(b []byte) (MemberUserData, error) {
	r := reader{buf: b}
	var a MemberUserData
	if err := r.version(); err != nil {
		return a, err
	}
	a.LatestSupportedVersion = r.int32()
	a.ErrorCode = AssignmentError(r.int32())
	a.Active = r.tasks()
	a.Standby = r.tasks()
	a.ActiveHosts = r.hosts()
	a.StandbyHosts = r.hosts()
	return a, r.done("assignment")
}

// writer encodes; the only failure is a string too long for its int16
// length, kept until the end.
type writer struct {
	buf []byte
	err error
}

func (w *writer) int32(v int32) { w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(v)) }
func (w *writer) int64(v int64) { w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(v)) }

func (w *writer) string(s string) {
	if len(s) > math.MaxInt16 {
		if w.err == nil {
			w.err = fmt.Errorf("assign: string of %d bytes is longer than %d", len(s), math.MaxInt16)
		}
		return
	}
	w.buf = binary.BigEndian.AppendUint16(w.buf, uint16(len(s)))
	w.buf = append(w.buf, s...)
}

func (w *writer) task(t TaskID) {
	w.int32(t.Subtopology)
	w.int32(t.Partition)
}

func (w *writer) tasks(ts []TaskID) {
	sorted := slices.Clone(ts)
	slices.SortFunc(sorted, TaskID.Compare)
	w.int32(int32(len(sorted)))
	for _, t := range sorted {
		w.task(t)
	}
}

func (w *writer) hosts(h map[string][]TopicPartition) {
	endpoints := make([]string, 0, len(h))
	for e := range h {
		endpoints = append(endpoints, e)
	}
	slices.Sort(endpoints)
	w.int32(int32(len(endpoints)))
	for _, e := range endpoints {
		w.string(e)
		byTopic := map[string][]int32{}
		var topics []string
		for _, tp := range h[e] {
			if _, ok := byTopic[tp.Topic]; !ok {
				topics = append(topics, tp.Topic)
			}
			byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
		}
		slices.Sort(topics)
		w.int32(int32(len(topics)))
		for _, topic := range topics {
			w.string(topic)
			ps := byTopic[topic]
			slices.Sort(ps)
			w.int32(int32(len(ps)))
			for _, p := range ps {
				w.int32(p)
			}
		}
	}
}

// reader decodes with a sticky error, as kbin does: after the first
// failure every read answers zero, and done reports it.
type reader struct {
	buf []byte
	err error
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.buf = nil
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.buf) < n {
		r.fail(ErrTruncated)
		return nil
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b
}

func (r *reader) int32() int32 {
	b := r.take(4)
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

func (r *reader) int64() int64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

func (r *reader) string() string {
	b := r.take(2)
	if b == nil {
		return ""
	}
	n := int(int16(binary.BigEndian.Uint16(b)))
	if n < 0 {
		r.fail(fmt.Errorf("assign: negative string length %d", n))
		return ""
	}
	return string(r.take(n))
}

// count reads an array length and checks it against the bytes left, each
// element taking at least minSize bytes, so that a corrupt length cannot
// make us allocate gigabytes.
func (r *reader) count(minSize int) int {
	n := int(r.int32())
	if r.err != nil {
		return 0
	}
	if n < 0 {
		r.fail(fmt.Errorf("assign: negative array length %d", n))
		return 0
	}
	if n*minSize > len(r.buf) {
		r.fail(ErrTruncated)
		return 0
	}
	return n
}

func (r *reader) task() TaskID {
	t := TaskID{Subtopology: r.int32(), Partition: r.int32()}
	if r.err == nil && (t.Subtopology < 0 || t.Partition < 0) {
		r.fail(fmt.Errorf("assign: negative task id %d_%d", t.Subtopology, t.Partition))
	}
	return t
}

func (r *reader) tasks() []TaskID {
	n := r.count(8)
	out := make([]TaskID, 0, n)
	for range n {
		out = append(out, r.task())
	}
	return out
}

func (r *reader) hosts() map[string][]TopicPartition {
	n := r.count(6)
	out := make(map[string][]TopicPartition, n)
	for range n {
		endpoint := r.string()
		var tps []TopicPartition
		for range r.count(6) {
			topic := r.string()
			for range r.count(4) {
				tps = append(tps, TopicPartition{Topic: topic, Partition: r.int32()})
			}
		}
		out[endpoint] = tps
	}
	return out
}

func (r *reader) version() error {
	v := r.int32()
	if r.err != nil {
		return r.err
	}
	if v < 1 || v > UserDataVersion {
		return fmt.Errorf("%w %d (this build reads 1 to %d)", ErrUnknownVersion, v, UserDataVersion)
	}
	return nil
}

func (r *reader) done(what string) error {
	if r.err != nil {
		return fmt.Errorf("assign: decode %s: %w", what, r.err)
	}
	if len(r.buf) > 0 {
		return fmt.Errorf("assign: decode %s: %d trailing bytes", what, len(r.buf))
	}
	return nil
}
