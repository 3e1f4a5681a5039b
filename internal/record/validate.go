package record

import (
	"errors"
	"fmt"
)

// DefaultMaxDecompressedBytes bounds the decompressed records of one batch
// when ValidateConfig leaves MaxDecompressedBytes at zero. Kafka streams
// records and has no such bound; holding them in memory needs one.
const DefaultMaxDecompressedBytes = 64 << 20

// ValidateConfig says which of Kafka's rules Validate applies. The zero
// value is the strictest: a batch from a producer (AppendOrigin.CLIENT),
// no size limit.
type ValidateConfig struct {
	// MaxMessageBytes is the topic's max.message.bytes: the largest batch
	// accepted, LogOverhead included. Zero or less means no limit.
	MaxMessageBytes int
	// AllowControl accepts control batches, which only the broker writes.
	AllowControl bool

	// FromLog marks bytes that come from a log rather than a producer:
	// fetched from a leader, or read back in recovery. It implies
	// AllowControl and drops the producer-only rules (base offset 0, count
	// equal to the offset range, offset deltas exactly 0..n-1, sequence,
	// keys, timestamps), since compaction leaves batches with gaps and
	// even with no records. Offset deltas must still increase within the
	// offset range, and the records must parse.
	FromLog bool
	// MaxDecompressedBytes bounds the records of a compressed batch once
	// decompressed; zero means DefaultMaxDecompressedBytes.
	MaxDecompressedBytes int
	// CompactedTopic refuses records without a key (cleanup.policy
	// includes compact), as Kafka does.
	CompactedTopic bool
	// TopicLogAppendTime says the topic's message.timestamp.type is
	// LogAppendTime; a producer batch then must not carry the
	// LogAppendTime bit itself.
	TopicLogAppendTime bool
	// NowMs, when positive, turns on the CreateTime window of KIP-937:
	// every record timestamp other than -1 must lie in
	// [NowMs-TimestampBeforeMaxMs, NowMs+TimestampAfterMaxMs]
	// (log.message.timestamp.before.max.ms / after.max.ms).
	NowMs                int64
	TimestampBeforeMaxMs int64
	TimestampAfterMaxMs  int64
	// EachRecord, when set, is called with each record's batch index, key
	// and value once the record has passed its own checks, so that a
	// caller inspecting payloads (the broker's schema ID validation) reads
	// them in this walk instead of decompressing the batch a second time.
	// The slices alias internal buffers and are valid only during the call.
	EachRecord func(index int, key, value []byte)
}

// RecordError is a failure about one record, carrying its index in the
// batch for the produce response's record_errors (KIP-467). It unwraps to
// the marker error (ErrInvalidRecord, ErrInvalidTimestamp ...).
type RecordError struct {
	BatchIndex int
	Err        error
}

// Error is the wrapped error's text, which already names the record.
func (e *RecordError) Error() string { return e.Err.Error() }
func (e *RecordError) Unwrap() error { return e.Err }

// Validate checks that batch is exactly one RecordBatch v2 that a Kafka
// broker would append, in Kafka's order: structure, base offset, size,
// CRC, codec, batch rules, then every record (decompressed when needed).
// It returns the parsed header. See doc.go for the marker errors and the
// Kafka error codes they stand for.
func Validate(batch []byte, cfg ValidateConfig) (Header, error) {
	h, err := parseWhole(batch)
	if err != nil {
		return h, moreThanOneBatch(batch, &h, err)
	}
	if !cfg.FromLog && h.BaseOffset != 0 {
		return h, fmt.Errorf("%w: base offset %d, a producer sends 0", ErrInvalidRecord, h.BaseOffset)
	}
	if cfg.MaxMessageBytes > 0 && h.Size() > cfg.MaxMessageBytes {
		return h, fmt.Errorf("%w: %d bytes, max.message.bytes %d", ErrTooLarge, h.Size(), cfg.MaxMessageBytes)
	}
	if err := CheckCRC(batch); err != nil {
		return h, err
	}
	if h.Codec() > CodecZstd {
		return h, fmt.Errorf("%w: attribute %d", ErrUnsupportedCodec, h.Codec())
	}
	if err := checkBatchRules(&h, &cfg); err != nil {
		return h, err
	}
	return h, validateRecords(batch, &h, &cfg)
}

// moreThanOneBatch refines the error for trailing bytes: when they start a
// whole batch the producer sent several, which Kafka refuses as
// INVALID_RECORD ("exactly one record batch per partition", Produce v3+).
func moreThanOneBatch(batch []byte, h *Header, err error) error {
	if !errors.Is(err, ErrCorrupt) || len(batch) <= h.Size() || h.Size() < HeaderSize {
		return err
	}
	rest := batch[h.Size():]
	next, nerr := ParseHeader(rest)
	if nerr != nil || CheckComplete(&next, rest) != nil {
		return err
	}
	return fmt.Errorf("%w: more than one batch; a produce request carries exactly one per partition", ErrInvalidRecord)
}

// checkBatchRules applies LogValidator.validateBatch.
func checkBatchRules(h *Header, cfg *ValidateConfig) error {
	if cfg.FromLog {
		if h.LastOffsetDelta < 0 || h.NumRecords < 0 || int64(h.NumRecords) > int64(h.LastOffsetDelta)+1 {
			return fmt.Errorf("%w: %d records in offset range [0, %d]", ErrCorrupt, h.NumRecords, h.LastOffsetDelta)
		}
		return nil
	}
	span := int64(h.LastOffsetDelta) + 1
	switch {
	case span <= 0:
		return fmt.Errorf("%w: last offset delta %d", ErrInvalidRecord, h.LastOffsetDelta)
	case h.NumRecords <= 0:
		return fmt.Errorf("%w: record count %d", ErrInvalidRecord, h.NumRecords)
	case span != int64(h.NumRecords):
		return fmt.Errorf("%w: %d records but last offset delta %d", ErrInvalidRecord, h.NumRecords, h.LastOffsetDelta)
	case h.IsControl() && !cfg.AllowControl:
		return ErrControlFromClient
	case h.ProducerID >= 0 && h.BaseSequence < 0 && !h.IsControl():
		// Transaction markers carry the producer but no sequence.
		return fmt.Errorf("%w: base sequence %d with producer id %d", ErrInvalidRecord, h.BaseSequence, h.ProducerID)
	}
	return nil
}

// validateRecords walks every record: they must parse, and their offset
// deltas, keys and timestamps must follow the rules cfg selects.
func validateRecords(batch []byte, h *Header, cfg *ValidateConfig) error {
	maxOut := cfg.MaxDecompressedBytes
	if maxOut <= 0 {
		maxOut = DefaultMaxDecompressedBytes
	}
	data, buf, err := recordsSection(batch, h, maxOut)
	if err != nil {
		return err
	}
	defer putBuffer(buf)
	// A producer's malformed record is INVALID_RECORD in Kafka
	// (DefaultRecord.readFrom), which the producer does not retry; in a
	// log it is corruption.
	marker := ErrInvalidRecord
	if cfg.FromLog {
		marker = ErrCorrupt
	}
	var rr recordReader
	rr.reset(data, h, false, marker)
	prev := int32(-1)
	for rr.next() {
		if err := checkRecord(&rr, prev, cfg); err != nil {
			return &RecordError{BatchIndex: rr.index, Err: err}
		}
		if cfg.EachRecord != nil {
			cfg.EachRecord(rr.index, rr.rec.Key, rr.rec.Value)
		}
		prev = rr.offDelta
	}
	if err := rr.err(); err != nil {
		return &RecordError{BatchIndex: rr.index, Err: err}
	}
	return nil
}

func checkRecord(rr *recordReader, prev int32, cfg *ValidateConfig) error {
	delta := rr.offDelta
	if cfg.FromLog {
		if delta <= prev || delta > rr.h.LastOffsetDelta {
			return fmt.Errorf("%w: record %d: offset delta %d after %d, last %d",
				ErrCorrupt, rr.index, delta, prev, rr.h.LastOffsetDelta)
		}
		return nil
	}
	if int(delta) != rr.index {
		return fmt.Errorf("%w: record %d: offset delta %d, want %d", ErrInvalidRecord, rr.index, delta, rr.index)
	}
	if cfg.CompactedTopic && rr.rec.Key == nil {
		return fmt.Errorf("%w: record %d: compacted topic cannot accept a record without a key", ErrInvalidRecord, rr.index)
	}
	return checkTimestamp(rr, cfg)
}

// checkTimestamp follows LogValidator.validateTimestamp, quirks included:
// on a CreateTime topic the LogAppendTime bit is refused only when the
// timestamp is -1 (otherwise AssignOffsets clears the bit).
func checkTimestamp(rr *recordReader, cfg *ValidateConfig) error {
	ts := rr.rec.Timestamp
	if !cfg.TopicLogAppendTime && ts != -1 {
		if cfg.NowMs > 0 && outsideWindow(ts, cfg) {
			return fmt.Errorf("%w: record %d: timestamp %d outside [now-%d, now+%d], now %d",
				ErrInvalidTimestamp, rr.index, ts, cfg.TimestampBeforeMaxMs, cfg.TimestampAfterMaxMs, cfg.NowMs)
		}
		return nil
	}
	if rr.h.LogAppendTime() {
		return fmt.Errorf("%w: record %d: a producer must not set the LogAppendTime timestamp type",
			ErrInvalidTimestamp, rr.index)
	}
	return nil
}

// outsideWindow compares through unsigned differences so that extreme
// timestamps and Long.MAX_VALUE bounds (Kafka's default "no limit") cannot overflow.
func outsideWindow(ts int64, cfg *ValidateConfig) bool {
	now := cfg.NowMs
	if ts < now {
		return uint64(now)-uint64(ts) > uint64(max(cfg.TimestampBeforeMaxMs, 0))
	}
	return uint64(ts)-uint64(now) > uint64(max(cfg.TimestampAfterMaxMs, 0))
}

// ForEachBatch calls fn for each batch of a record set holding several
// concatenated batches (a fetch response, a log segment read), with the
// batch's bytes and parsed header. It checks framing only: validate or
// CheckCRC each batch as its origin requires. A trailing partial batch is
// ErrTruncated, a nonsensical length ErrCorrupt. An error from fn stops the
// walk and is returned as is.
func ForEachBatch(b []byte, fn func(batch []byte, h Header) error) error {
	for pos := 0; pos < len(b); {
		rest := b[pos:]
		h, err := ParseHeader(rest)
		if err == nil {
			err = CheckComplete(&h, rest)
		}
		if err != nil {
			return fmt.Errorf("record: batch at byte %d: %w", pos, err)
		}
		n := h.Size()
		if err := fn(rest[:n:n], h); err != nil {
			return err
		}
		pos += n
	}
	return nil
}
