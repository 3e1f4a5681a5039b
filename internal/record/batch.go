package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Byte layout of a RecordBatch v2 header. Offsets are from the start of the
// batch; the batch length field counts the bytes after itself
// (BatchLength = total size - LogOverhead).
const (
	offBaseOffset           = 0
	offBatchLength          = 8
	offPartitionLeaderEpoch = 12
	offMagic                = 16
	offCRC                  = 17
	offAttributes           = 21
	offLastOffsetDelta      = 23
	offBaseTimestamp        = 27
	offMaxTimestamp         = 35
	offProducerID           = 43
	offProducerEpoch        = 51
	offBaseSequence         = 53
	offNumRecords           = 57

	// HeaderSize is the size of a RecordBatch v2 header, up to and
	// including the record count.
	HeaderSize = 61
	// LogOverhead is the size of the baseOffset and batchLength prefix
	// shared by every message format: the minimum needed to find the next
	// batch in a log.
	LogOverhead = 12
	// Magic is the only message format version the broker stores.
	Magic = 2
)

// Attribute bits.
const (
	CompressionMask      = 0x07
	TimestampTypeMask    = 0x08 // set: LogAppendTime
	TransactionalMask    = 0x10
	ControlMask          = 0x20
	DeleteHorizonSetMask = 0x40
)

// Codec is a compression codec from the low attribute bits.
type Codec int8

const (
	CodecNone   Codec = 0
	CodecGzip   Codec = 1
	CodecSnappy Codec = 2
	CodecLZ4    Codec = 3
	CodecZstd   Codec = 4
)

func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecGzip:
		return "gzip"
	case CodecSnappy:
		return "snappy"
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", int8(c))
}

// Marker errors. Callers test them with errors.Is; the broker maps them to
// Kafka error codes (CORRUPT_MESSAGE, INVALID_RECORD, UNSUPPORTED_FOR_MESSAGE_FORMAT ...).
var (
	// ErrCorrupt: the bytes are not a well-formed batch (bad length, bad
	// CRC, counts that disagree). Kafka: CORRUPT_MESSAGE.
	ErrCorrupt = errors.New("record: corrupt batch")
	// ErrTruncated: fewer bytes than the header or the batch length says.
	// In a log tail this is a torn write; in a request it is corruption.
	ErrTruncated = errors.New("record: truncated batch")
	// ErrUnsupportedMagic: a magic byte other than 2. Kafka:
	// UNSUPPORTED_FOR_MESSAGE_FORMAT (or CORRUPT_MESSAGE for garbage).
	ErrUnsupportedMagic = errors.New("record: unsupported magic")
	// ErrInvalidRecord: a well-formed batch that breaks a rule Kafka's
	// LogValidator enforces on producers (base offset not 0, count and
	// offset range disagree, offset deltas not 0..n-1, a record that does
	// not parse, a keyless record on a compacted topic). Kafka:
	// INVALID_RECORD, which producers do not retry.
	ErrInvalidRecord = errors.New("record: invalid record")
	// ErrControlFromClient: a producer sent a control batch. It wraps
	// ErrInvalidRecord because Kafka answers INVALID_RECORD.
	ErrControlFromClient = fmt.Errorf("%w: control batch from a client", ErrInvalidRecord)
	// ErrInvalidTimestamp: a CreateTime timestamp outside the topic's
	// log.message.timestamp.before/after.max.ms window, or a producer that
	// set the LogAppendTime bit where Kafka refuses it. Kafka: INVALID_TIMESTAMP.
	ErrInvalidTimestamp = errors.New("record: invalid timestamp")
	// ErrTooLarge: the batch is over max.message.bytes. Kafka: MESSAGE_TOO_LARGE.
	ErrTooLarge = errors.New("record: batch too large")
	// ErrDecompressedTooLarge: decompressing would exceed the caller's
	// bound (a decompression bomb, or simply a huge batch). It wraps
	// ErrTooLarge so the broker answers MESSAGE_TOO_LARGE, on which the
	// Java producer splits the batch and retries instead of failing.
	ErrDecompressedTooLarge = fmt.Errorf("%w: decompressed size over the limit", ErrTooLarge)
	// ErrUnsupportedCodec: compression attribute 5..7. Kafka:
	// UNSUPPORTED_COMPRESSION_TYPE.
	ErrUnsupportedCodec = errors.New("record: unsupported compression codec")
)

// Header is a decoded RecordBatch v2 header.
type Header struct {
	BaseOffset           int64
	BatchLength          int32
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// Size is the whole batch size in bytes, LogOverhead included.
func (h *Header) Size() int { return int(h.BatchLength) + LogOverhead }

// LastOffset is the offset of the last record (or the last offset the batch
// ever held, for a compacted batch).
func (h *Header) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// NextOffset is the offset after the batch.
func (h *Header) NextOffset() int64 { return h.LastOffset() + 1 }

func (h *Header) Codec() Codec          { return Codec(h.Attributes & CompressionMask) }
func (h *Header) IsTransactional() bool { return h.Attributes&TransactionalMask != 0 }
func (h *Header) IsControl() bool       { return h.Attributes&ControlMask != 0 }
func (h *Header) LogAppendTime() bool   { return h.Attributes&TimestampTypeMask != 0 }

// DeleteHorizonMs is the delete horizon the log cleaner stamped on the batch
// (KIP-534: its base timestamp, when the attribute says so); ok is false
// when there is none.
func (h *Header) DeleteHorizonMs() (ms int64, ok bool) {
	if h.Attributes&DeleteHorizonSetMask == 0 {
		return 0, false
	}
	return h.BaseTimestamp, true
}

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// ParseHeader decodes the header at the start of b. It checks only what it
// needs to decode safely: enough bytes for a header, magic 2, and a batch
// length that covers the header. b may be longer than the batch (a log
// read) or shorter (a header-only read); use CheckComplete to demand the whole batch.
func ParseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < LogOverhead {
		return h, fmt.Errorf("%w: %d bytes, need %d for the log overhead", ErrTruncated, len(b), LogOverhead)
	}
	h.BaseOffset = int64(binary.BigEndian.Uint64(b[offBaseOffset:]))
	h.BatchLength = int32(binary.BigEndian.Uint32(b[offBatchLength:]))
	if len(b) > offMagic {
		h.Magic = int8(b[offMagic])
		if h.Magic != Magic {
			return h, fmt.Errorf("%w: magic %d", ErrUnsupportedMagic, h.Magic)
		}
	}
	if h.BatchLength < HeaderSize-LogOverhead {
		return h, fmt.Errorf("%w: batch length %d below the header size", ErrCorrupt, h.BatchLength)
	}
	if len(b) < HeaderSize {
		return h, fmt.Errorf("%w: %d bytes, need %d for the header", ErrTruncated, len(b), HeaderSize)
	}
	h.PartitionLeaderEpoch = int32(binary.BigEndian.Uint32(b[offPartitionLeaderEpoch:]))
	h.CRC = binary.BigEndian.Uint32(b[offCRC:])
	h.Attributes = int16(binary.BigEndian.Uint16(b[offAttributes:]))
	h.LastOffsetDelta = int32(binary.BigEndian.Uint32(b[offLastOffsetDelta:]))
	h.BaseTimestamp = int64(binary.BigEndian.Uint64(b[offBaseTimestamp:]))
	h.MaxTimestamp = int64(binary.BigEndian.Uint64(b[offMaxTimestamp:]))
	h.ProducerID = int64(binary.BigEndian.Uint64(b[offProducerID:]))
	h.ProducerEpoch = int16(binary.BigEndian.Uint16(b[offProducerEpoch:]))
	h.BaseSequence = int32(binary.BigEndian.Uint32(b[offBaseSequence:]))
	h.NumRecords = int32(binary.BigEndian.Uint32(b[offNumRecords:]))
	return h, nil
}

// CheckComplete reports ErrTruncated unless b holds the whole batch h describes.
func CheckComplete(h *Header, b []byte) error {
	if len(b) < h.Size() {
		return fmt.Errorf("%w: %d of %d bytes", ErrTruncated, len(b), h.Size())
	}
	return nil
}

// ComputeCRC returns the CRC32C of a whole batch, over attributes..end.
func ComputeCRC(batch []byte) uint32 {
	return crc32.Checksum(batch[offAttributes:], crc32c)
}

// CheckCRC verifies the stored CRC of the whole batch (exactly one batch).
func CheckCRC(batch []byte) error {
	if len(batch) < HeaderSize {
		return fmt.Errorf("%w: %d bytes", ErrTruncated, len(batch))
	}
	stored := binary.BigEndian.Uint32(batch[offCRC:])
	if got := ComputeCRC(batch); got != stored {
		return fmt.Errorf("%w: crc %08x, computed %08x", ErrCorrupt, stored, got)
	}
	return nil
}

// SetBaseOffset rewrites the base offset in place. The CRC does not cover it.
func SetBaseOffset(batch []byte, off int64) {
	binary.BigEndian.PutUint64(batch[offBaseOffset:], uint64(off))
}

// SetPartitionLeaderEpoch rewrites the leader epoch in place. The CRC does not cover it.
func SetPartitionLeaderEpoch(batch []byte, epoch int32) {
	binary.BigEndian.PutUint32(batch[offPartitionLeaderEpoch:], uint32(epoch))
}

// SetLastOffsetDelta rewrites the last offset delta and re-seals the CRC.
// Compaction uses it to keep a rebuilt batch covering its original offsets,
// which Batch.AppendTo would take from the last record kept.
func SetLastOffsetDelta(batch []byte, delta int32) {
	binary.BigEndian.PutUint32(batch[offLastOffsetDelta:], uint32(delta))
	binary.BigEndian.PutUint32(batch[offCRC:], ComputeCRC(batch))
}

// AppendEmptyBatch appends h as a batch with no records, as Kafka's
// writeEmptyHeader does for compaction: the same offsets, producer fields
// and flags, no compression or delete horizon, and both timestamps set to
// the original MaxTimestamp.
func AppendEmptyBatch(dst []byte, h *Header) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	p := dst[start:]
	be := binary.BigEndian
	be.PutUint64(p[offBaseOffset:], uint64(h.BaseOffset))
	be.PutUint32(p[offBatchLength:], uint32(HeaderSize-LogOverhead))
	be.PutUint32(p[offPartitionLeaderEpoch:], uint32(h.PartitionLeaderEpoch))
	p[offMagic] = Magic
	be.PutUint16(p[offAttributes:], uint16(h.Attributes&^(CompressionMask|DeleteHorizonSetMask)))
	be.PutUint32(p[offLastOffsetDelta:], uint32(h.LastOffsetDelta))
	be.PutUint64(p[offBaseTimestamp:], uint64(h.MaxTimestamp))
	be.PutUint64(p[offMaxTimestamp:], uint64(h.MaxTimestamp))
	be.PutUint64(p[offProducerID:], uint64(h.ProducerID))
	be.PutUint16(p[offProducerEpoch:], uint16(h.ProducerEpoch))
	be.PutUint32(p[offBaseSequence:], uint32(h.BaseSequence))
	be.PutUint32(p[offNumRecords:], 0)
	be.PutUint32(p[offCRC:], ComputeCRC(p))
	return dst
}
