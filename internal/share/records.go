package share

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	kmodel "github.com/samsa-io/samsa/internal/model"
)

// The records of __share_group_state, in the formats of Kafka 4.4's share
// coordinator (common/message/Share*.json in kafka-share-coordinator
// 4.4.0; DeliveryCompleteCount came in 4.2):
//
//	key   = int16 record type, then the key struct (not flexible):
//	        ShareSnapshotKey (type 0) / ShareUpdateKey (type 1):
//	        GroupId string, TopicId uuid, Partition int32
//	value = int16 value version (0), then the value struct (flexible):
//	        ShareSnapshotValue: SnapshotEpoch int32, StateEpoch int32,
//	          LeaderEpoch int32, StartOffset int64, CreateTimestamp int64,
//	          WriteTimestamp int64, StateBatches []StateBatch,
//	          tag 0 DeliveryCompleteCount int32 (default -1, KIP-1226)
//	        ShareUpdateValue: SnapshotEpoch int32, LeaderEpoch int32,
//	          StartOffset int64, StateBatches []StateBatch,
//	          tag 0 DeliveryCompleteCount int32 (default -1, KIP-1226)
//	        StateBatch: FirstOffset int64, LastOffset int64,
//	          DeliveryState int8, DeliveryCount int16, tagged fields
//
// Kafka's schema lists DeliveryCompleteCount right after StartOffset, but
// a tagged field is written in the struct's tag section, after every
// untagged field. The encoding is checked against the bytes Apache Kafka
// 4.4.0 writes (test/kafkaref's TestKafkaShareGroupState; two of its
// records are kept in testdata/kafka-4.4-share-group-state.hex).

const (
	snapshotKeyType = 0 // ShareSnapshotKey's coordinator record type
	updateKeyType   = 1 // ShareUpdateKey's
	valueVersion    = 0 // ShareSnapshotValue and ShareUpdateValue: version 0 only
	tagDeliveryDone = 0 // DeliveryCompleteCount's tag
)

// Key names one share-partition's state: a group's view of one topic
// partition.
type Key struct {
	Group     string
	TopicID   [16]byte
	Partition int32
}

// Snapshot is a ShareSnapshotValue: the whole state of a share-partition.
type Snapshot struct {
	SnapshotEpoch, StateEpoch, LeaderEpoch int32
	StartOffset                            int64
	CreateTimestamp, WriteTimestamp        int64 // milliseconds since the epoch
	// DeliveryCompleteCount is the offsets >= StartOffset whose delivery is
	// complete (KIP-1226); -1 when not known (and then not written).
	DeliveryCompleteCount int32
	Batches               []StateBatch
}

// Update is a ShareUpdateValue: state batches that changed since the
// snapshot SnapshotEpoch names, to be merged over it.
type Update struct {
	SnapshotEpoch, LeaderEpoch int32
	StartOffset                int64 // -1: the start offset is not being updated
	DeliveryCompleteCount      int32 // -1: not known (and then not written)
	Batches                    []StateBatch
}

// String is the snapshot on one line, for logs, tests and golden files:
// "snapshot epoch=1 state-epoch=0 leader-epoch=0 start=4 created=...
// written=... delivery-complete=2 batches=[4-5 available x1]".
func (s Snapshot) String() string {
	return fmt.Sprintf("snapshot epoch=%d state-epoch=%d leader-epoch=%d start=%d created=%d written=%d delivery-complete=%d batches=%s",
		s.SnapshotEpoch, s.StateEpoch, s.LeaderEpoch, s.StartOffset, s.CreateTimestamp, s.WriteTimestamp,
		s.DeliveryCompleteCount, formatBatches(s.Batches))
}

// String is the update on one line, as Snapshot.String.
func (u Update) String() string {
	return fmt.Sprintf("update epoch=%d leader-epoch=%d start=%d delivery-complete=%d batches=%s",
		u.SnapshotEpoch, u.LeaderEpoch, u.StartOffset, u.DeliveryCompleteCount, formatBatches(u.Batches))
}

func formatBatches(batches []StateBatch) string {
	b := []byte{'['}
	for i, sb := range batches {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = fmt.Appendf(b, "%d-%d %s x%d", sb.FirstOffset, sb.LastOffset, sb.DeliveryState, sb.DeliveryCount)
	}
	return string(append(b, ']'))
}

// ErrMalformed marks a __share_group_state record that does not decode.
var ErrMalformed = errors.New("share: malformed __share_group_state record")

// EncodeSnapshotKey is the key of a ShareSnapshotValue record.
func EncodeSnapshotKey(k Key) []byte { return appendKey(nil, snapshotKeyType, k) }

// EncodeUpdateKey is the key of a ShareUpdateValue record.
func EncodeUpdateKey(k Key) []byte { return appendKey(nil, updateKeyType, k) }

func appendKey(b []byte, typ int16, k Key) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(typ))
	b = binary.BigEndian.AppendUint16(b, uint16(len(k.Group)))
	b = append(b, k.Group...)
	b = append(b, k.TopicID[:]...)
	return binary.BigEndian.AppendUint32(b, uint32(k.Partition))
}

// EncodeSnapshotValue is a ShareSnapshotValue record's value.
func EncodeSnapshotValue(s Snapshot) []byte {
	b := binary.BigEndian.AppendUint16(nil, valueVersion)
	b = binary.BigEndian.AppendUint32(b, uint32(s.SnapshotEpoch))
	b = binary.BigEndian.AppendUint32(b, uint32(s.StateEpoch))
	b = binary.BigEndian.AppendUint32(b, uint32(s.LeaderEpoch))
	b = binary.BigEndian.AppendUint64(b, uint64(s.StartOffset))
	b = binary.BigEndian.AppendUint64(b, uint64(s.CreateTimestamp))
	b = binary.BigEndian.AppendUint64(b, uint64(s.WriteTimestamp))
	b = appendBatches(b, s.Batches)
	return appendDeliveryDone(b, s.DeliveryCompleteCount)
}

// EncodeUpdateValue is a ShareUpdateValue record's value.
func EncodeUpdateValue(u Update) []byte {
	b := binary.BigEndian.AppendUint16(nil, valueVersion)
	b = binary.BigEndian.AppendUint32(b, uint32(u.SnapshotEpoch))
	b = binary.BigEndian.AppendUint32(b, uint32(u.LeaderEpoch))
	b = binary.BigEndian.AppendUint64(b, uint64(u.StartOffset))
	b = appendBatches(b, u.Batches)
	return appendDeliveryDone(b, u.DeliveryCompleteCount)
}

// appendBatches writes a compact array of StateBatch, each with an empty
// tagged-field section.
func appendBatches(b []byte, batches []StateBatch) []byte {
	b = binary.AppendUvarint(b, uint64(len(batches))+1)
	for _, sb := range batches {
		b = binary.BigEndian.AppendUint64(b, uint64(sb.FirstOffset))
		b = binary.BigEndian.AppendUint64(b, uint64(sb.LastOffset))
		b = append(b, byte(sb.DeliveryState))
		b = binary.BigEndian.AppendUint16(b, uint16(sb.DeliveryCount))
		b = append(b, 0) // no tagged fields
	}
	return b
}

// appendDeliveryDone writes the struct's tagged fields: DeliveryCompleteCount
// only when it is not its default, -1, as Kafka's generated writer does.
func appendDeliveryDone(b []byte, n int32) []byte {
	if n == -1 {
		return append(b, 0)
	}
	b = append(b, 1, tagDeliveryDone, 4)
	return binary.BigEndian.AppendUint32(b, uint32(n))
}

// DecodeRecord decodes a __share_group_state record: snap or upd is set by
// the key's type; both are nil for a tombstone (value nil). It never panics
// on bad input; it returns an error wrapping ErrMalformed.
func DecodeRecord(key, value []byte) (k Key, snap *Snapshot, upd *Update, err error) {
	kr := reader{b: key}
	typ := kr.int16()
	if kr.err == nil && typ != snapshotKeyType && typ != updateKeyType {
		return k, nil, nil, fmt.Errorf("%w: unknown record type %d", ErrMalformed, typ)
	}
	k.Group = kr.str()
	copy(k.TopicID[:], kr.bytes(16))
	k.Partition = kr.int32()
	if err := kr.done("key"); err != nil {
		return Key{}, nil, nil, err
	}
	if value == nil {
		return k, nil, nil, nil
	}
	vr := reader{b: value}
	if v := vr.int16(); vr.err == nil && v != valueVersion {
		return k, nil, nil, fmt.Errorf("%w: unknown value version %d", ErrMalformed, v)
	}
	if typ == snapshotKeyType {
		s := &Snapshot{SnapshotEpoch: vr.int32(), StateEpoch: vr.int32(), LeaderEpoch: vr.int32(),
			StartOffset: vr.int64(), CreateTimestamp: vr.int64(), WriteTimestamp: vr.int64()}
		s.Batches = vr.batches()
		s.DeliveryCompleteCount = vr.tags()
		if err := vr.done("ShareSnapshotValue"); err != nil {
			return k, nil, nil, err
		}
		return k, s, nil, nil
	}
	u := &Update{SnapshotEpoch: vr.int32(), LeaderEpoch: vr.int32(), StartOffset: vr.int64()}
	u.Batches = vr.batches()
	u.DeliveryCompleteCount = vr.tags()
	if err := vr.done("ShareUpdateValue"); err != nil {
		return k, nil, nil, err
	}
	return k, nil, u, nil
}

// reader is a bounds-checked decoder with a sticky error, checked once at
// the end.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrMalformed, what)
	}
	r.b = nil
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n < 0 || len(r.b) < n {
		r.fail("truncated")
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) int8() int8 {
	if b := r.bytes(1); b != nil {
		return int8(b[0])
	}
	return 0
}

func (r *reader) int16() int16 {
	if b := r.bytes(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) int32() int32 {
	if b := r.bytes(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) int64() int64 {
	if b := r.bytes(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) str() string {
	n := r.int16()
	if n < 0 {
		r.fail("null group id")
		return ""
	}
	return string(r.bytes(int(n)))
}

func (r *reader) batches() []StateBatch {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n == 0 {
		r.fail("null state batches")
		return nil
	}
	n--
	const batchSize = 8 + 8 + 1 + 2 + 1 // the smallest encoded StateBatch
	if n > uint64(len(r.b)/batchSize) {
		r.fail("state batch count past the record's end")
		return nil
	}
	out := make([]StateBatch, 0, n)
	for range n {
		sb := StateBatch{FirstOffset: r.int64(), LastOffset: r.int64(),
			DeliveryState: RecordState(r.int8()), DeliveryCount: r.int16()}
		r.skipTags()
		if r.err != nil {
			return nil
		}
		out = append(out, sb)
	}
	return out
}

// skipTags skips a tagged-field section of which this version knows no tag.
func (r *reader) skipTags() {
	for n := r.uvarint(); n > 0 && r.err == nil; n-- {
		r.uvarint()
		r.bytes(r.size())
	}
}

// tags reads the value struct's tagged fields and returns
// DeliveryCompleteCount (-1 when absent); unknown tags are skipped, as
// Kafka's readers do.
func (r *reader) tags() int32 {
	done := int32(-1)
	for n := r.uvarint(); n > 0 && r.err == nil; n-- {
		tag := r.uvarint()
		size := r.size()
		if tag == tagDeliveryDone && size == 4 {
			done = r.int32()
			continue
		}
		if tag == tagDeliveryDone {
			r.fail("DeliveryCompleteCount of the wrong size")
		}
		r.bytes(size)
	}
	return done
}

func (r *reader) size() int {
	n := r.uvarint()
	if n > math.MaxInt32 {
		r.fail("tagged field too long")
		return 0
	}
	return int(n)
}

func (r *reader) done(what string) error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d bytes after the %s", ErrMalformed, len(r.b), what)
	}
	if r.err != nil && what != "" {
		return fmt.Errorf("share: decode %s: %w", what, r.err)
	}
	return r.err
}

// CoordinatorKey is Kafka's "groupId:topicId:partition" (SharePartitionKey
// .asCoordinatorKey), the topic ID in Kafka's Uuid.toString form: URL-safe
// base64 without padding.
func CoordinatorKey(k Key) string {
	return k.Group + ":" + base64.RawURLEncoding.EncodeToString(k.TopicID[:]) + ":" + strconv.Itoa(int(k.Partition))
}

// PartitionFor is the __share_group_state partition (of n) that holds k's
// state: Utils.abs(coordinatorKey.hashCode()) % n, as Kafka's
// ShareCoordinatorService.partitionFor.
func PartitionFor(k Key, n int32) int32 {
	return kmodel.KeyPartition(CoordinatorKey(k), n)
}
