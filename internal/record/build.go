package record

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"sync"
)

// The "none" values of a batch's producer fields, for batches written
// without idempotence. The zero value of Batch is not that: it names
// producer 0 with sequence 0.
const (
	NoProducerID    int64 = -1
	NoProducerEpoch int16 = -1
	NoSequence      int32 = -1
)

// Batch is a RecordBatch v2 to encode. Records carry absolute offsets and
// timestamps; AppendTo turns them into deltas.
type Batch struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Codec                Codec
	LogAppendTime        bool
	Transactional        bool
	Control              bool
	// ProducerID, ProducerEpoch and BaseSequence are NoProducerID,
	// NoProducerEpoch and NoSequence when the batch has no idempotent producer.
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	// DeleteHorizonMs, when positive, is written as the batch's base
	// timestamp with the delete-horizon attribute (KIP-534): the log
	// cleaner stamps it on a batch holding tombstones or a transaction
	// marker, and removes them once it has passed. Record timestamps stay
	// right: their deltas are taken from it instead of the first record's.
	DeleteHorizonMs int64
	Records         []Record
}

// Uncompressed record sections are built here before compression.
var scratch = sync.Pool{New: func() any {
	b := make([]byte, 0, 64<<10)
	return &b
}}

// AppendTo appends the encoded batch to dst. BaseTimestamp is the first
// record's timestamp and MaxTimestamp the largest; LastOffsetDelta comes
// from the last record, so a compacted batch keeps its gaps. Offsets must
// increase from BaseOffset within an int32 delta. On error dst is returned
// unchanged.
func (b *Batch) AppendTo(dst []byte) ([]byte, error) {
	if err := b.check(); err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	var err error
	if b.Codec == CodecNone {
		dst = b.appendRecords(dst)
	} else {
		buf := scratch.Get().(*[]byte)
		*buf = b.appendRecords((*buf)[:0])
		dst, err = Compress(b.Codec, dst, *buf)
		putScratch(buf)
	}
	if err != nil {
		return dst[:start], err
	}
	if len(dst)-start-LogOverhead > math.MaxInt32 {
		return dst[:start], fmt.Errorf("record: build: batch of %d bytes", len(dst)-start)
	}
	b.putHeader(dst[start:])
	return dst, nil
}

func putScratch(b *[]byte) {
	if cap(*b) <= maxPooledBuffer {
		scratch.Put(b)
	}
}

// check refuses what would not encode as a valid batch.
func (b *Batch) check() error {
	if b.Codec < CodecNone || b.Codec > CodecZstd {
		return fmt.Errorf("record: build: %w: %s", ErrUnsupportedCodec, b.Codec)
	}
	if len(b.Records) == 0 {
		return fmt.Errorf("record: build: %w: no records", ErrInvalidRecord)
	}
	if len(b.Records) > math.MaxInt32 {
		return fmt.Errorf("record: build: %w: %d records", ErrInvalidRecord, len(b.Records))
	}
	prev := b.BaseOffset - 1
	for i := range b.Records {
		r := &b.Records[i]
		if r.Offset <= prev || r.Offset-b.BaseOffset > math.MaxInt32 {
			return fmt.Errorf("record: build: %w: record %d offset %d after %d, base %d",
				ErrInvalidRecord, i, r.Offset, prev, b.BaseOffset)
		}
		prev = r.Offset
	}
	return nil
}

func (b *Batch) attributes() uint16 {
	a := uint16(b.Codec)
	if b.LogAppendTime {
		a |= TimestampTypeMask
	}
	if b.Transactional {
		a |= TransactionalMask
	}
	if b.Control {
		a |= ControlMask
	}
	if b.DeleteHorizonMs > 0 {
		a |= DeleteHorizonSetMask
	}
	return a
}

// putHeader fills the header of the encoded batch p, CRC last since it
// covers everything from the attributes on.
func (b *Batch) putHeader(p []byte) {
	be := binary.BigEndian
	first, last := &b.Records[0], &b.Records[len(b.Records)-1]
	maxTs := first.Timestamp
	for i := range b.Records {
		maxTs = max(maxTs, b.Records[i].Timestamp)
	}
	be.PutUint64(p[offBaseOffset:], uint64(b.BaseOffset))
	be.PutUint32(p[offBatchLength:], uint32(len(p)-LogOverhead))
	be.PutUint32(p[offPartitionLeaderEpoch:], uint32(b.PartitionLeaderEpoch))
	p[offMagic] = Magic
	be.PutUint16(p[offAttributes:], b.attributes())
	be.PutUint32(p[offLastOffsetDelta:], uint32(last.Offset-b.BaseOffset))
	be.PutUint64(p[offBaseTimestamp:], uint64(b.baseTimestamp()))
	be.PutUint64(p[offMaxTimestamp:], uint64(maxTs))
	be.PutUint64(p[offProducerID:], uint64(b.ProducerID))
	be.PutUint16(p[offProducerEpoch:], uint16(b.ProducerEpoch))
	be.PutUint32(p[offBaseSequence:], uint32(b.BaseSequence))
	be.PutUint32(p[offNumRecords:], uint32(len(b.Records)))
	be.PutUint32(p[offCRC:], ComputeCRC(p))
}

// baseTimestamp is the first record's timestamp, or the delete horizon.
func (b *Batch) baseTimestamp() int64 {
	if b.DeleteHorizonMs > 0 {
		return b.DeleteHorizonMs
	}
	return b.Records[0].Timestamp
}

func (b *Batch) appendRecords(dst []byte) []byte {
	baseTs := b.baseTimestamp()
	for i := range b.Records {
		r := &b.Records[i]
		dst = appendRecord(dst, r, int32(r.Offset-b.BaseOffset), r.Timestamp-baseTs)
	}
	return dst
}

// appendRecord encodes one record: its body size first, so the body can be
// written straight into dst with no second buffer.
func appendRecord(dst []byte, r *Record, offDelta int32, tsDelta int64) []byte {
	size := 1 + varintSize(tsDelta) + varintSize(int64(offDelta)) +
		bytesSize(r.Key) + bytesSize(r.Value) + varintSize(int64(len(r.Headers)))
	for i := range r.Headers {
		h := &r.Headers[i]
		size += varintSize(int64(len(h.Key))) + len(h.Key) + bytesSize(h.Value)
	}
	dst = binary.AppendVarint(dst, int64(size))
	dst = append(dst, byte(r.Attributes))
	dst = binary.AppendVarint(dst, tsDelta)
	dst = binary.AppendVarint(dst, int64(offDelta))
	dst = appendBytes(dst, r.Key)
	dst = appendBytes(dst, r.Value)
	dst = binary.AppendVarint(dst, int64(len(r.Headers)))
	for i := range r.Headers {
		h := &r.Headers[i]
		dst = binary.AppendVarint(dst, int64(len(h.Key)))
		dst = append(dst, h.Key...)
		dst = appendBytes(dst, h.Value)
	}
	return dst
}

// appendBytes writes a varint length and the bytes; nil is null (-1).
func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

func bytesSize(b []byte) int {
	if b == nil {
		return 1
	}
	return varintSize(int64(len(b))) + len(b)
}

// varintSize is the encoded size of a zigzag varint.
func varintSize(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	return (bits.Len64(u|1) + 6) / 7
}
