package kafkaref

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MirrorMaker 2's internal records, as connect-mirror and
// connect-mirror-client write them with Kafka's protocol types: a STRING
// is an int16 length then UTF-8 bytes, integers are big-endian. Checkpoint
// and heartbeat values open with an int16 version (0); offset-sync values
// have none.

// OffsetSync is a record of mm2-offset-syncs.<target>.internal: the
// source partition's upstream offset was written at offset Downstream of
// the remote topic.
type OffsetSync struct {
	Topic      string // the source topic, not renamed
	Partition  int32
	Upstream   int64
	Downstream int64
}

// Checkpoint is a record of <source>.checkpoints.internal: a group's
// committed offset on the source and its translation.
type Checkpoint struct {
	Group      string
	Topic      string // the remote topic, e.g. A.orders
	Partition  int32
	Upstream   int64
	Downstream int64
	Metadata   string
}

// Heartbeat is a record of heartbeats: the flow SourceAlias->TargetAlias
// was alive at TimestampMillis.
type Heartbeat struct {
	SourceAlias     string
	TargetAlias     string
	TimestampMillis int64
}

// ParseOffsetSync decodes an offset-sync record's key and value.
func ParseOffsetSync(key, value []byte) (OffsetSync, error) {
	k, v := &reader{b: key}, &reader{b: value}
	s := OffsetSync{Topic: k.str(), Partition: k.i32(), Upstream: v.i64(), Downstream: v.i64()}
	return s, errors.Join(k.done("offset-sync key"), v.done("offset-sync value"))
}

// ParseCheckpoint decodes a checkpoint record's key and value.
func ParseCheckpoint(key, value []byte) (Checkpoint, error) {
	k, v := &reader{b: key}, &reader{b: value}
	c := Checkpoint{Group: k.str(), Topic: k.str(), Partition: k.i32()}
	v.version("checkpoint")
	c.Upstream, c.Downstream, c.Metadata = v.i64(), v.i64(), v.str()
	return c, errors.Join(k.done("checkpoint key"), v.done("checkpoint value"))
}

// ParseHeartbeat decodes a heartbeat record's key and value.
func ParseHeartbeat(key, value []byte) (Heartbeat, error) {
	k, v := &reader{b: key}, &reader{b: value}
	h := Heartbeat{SourceAlias: k.str(), TargetAlias: k.str()}
	v.version("heartbeat")
	h.TimestampMillis = v.i64()
	return h, errors.Join(k.done("heartbeat key"), v.done("heartbeat value"))
}

// reader decodes with a sticky error, checked once at the end.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.err = fmt.Errorf("truncated: %d bytes wanted, %d left", n, len(r.b))
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) i16() int16 {
	if p := r.take(2); p != nil {
		return int16(binary.BigEndian.Uint16(p))
	}
	return 0
}

func (r *reader) i32() int32 {
	if p := r.take(4); p != nil {
		return int32(binary.BigEndian.Uint32(p))
	}
	return 0
}

func (r *reader) i64() int64 {
	if p := r.take(8); p != nil {
		return int64(binary.BigEndian.Uint64(p))
	}
	return 0
}

func (r *reader) str() string { return string(r.take(int(r.i16()))) }

// version reads a value's version header; only version 0 exists.
func (r *reader) version(what string) {
	if v := r.i16(); r.err == nil && v != 0 {
		r.err = fmt.Errorf("%s value version %d, only 0 is known", what, v)
	}
}

// done is the decoding's error, or one for bytes left over.
func (r *reader) done(what string) error {
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("%d bytes left over", len(r.b))
	}
	if r.err != nil {
		return fmt.Errorf("%s: %w", what, r.err)
	}
	return nil
}
