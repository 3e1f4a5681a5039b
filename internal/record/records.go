package record

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
)

// Record is one record of a batch, with absolute offset and timestamp.
type Record struct {
	Offset    int64
	Timestamp int64
	// Attributes is the per-record attribute byte; v2 defines no bits in it.
	Attributes int8
	// Key and Value are nil for a null key or value, and non-nil (possibly
	// empty) otherwise: compaction treats a null value as a tombstone.
	Key, Value []byte
	Headers    []RecordHeader
}

// RecordHeader is a record header. Kafka forbids a null key; a nil Value is null.
type RecordHeader struct {
	Key   string
	Value []byte
}

// decoder reads the varint-framed fields of a record. Like kbin it keeps the
// first failure and returns zero values after it, so a parse is a straight
// line of reads with one check at the end. Failures are constant strings so
// the happy path never formats anything.
type decoder struct {
	b   []byte
	err string
}

func (d *decoder) fail(why string) {
	if d.err == "" {
		d.err = why
	}
	d.b = nil
}

func (d *decoder) int8() int8 {
	if len(d.b) < 1 {
		d.fail("truncated attributes")
		return 0
	}
	v := int8(d.b[0])
	d.b = d.b[1:]
	return v
}

// varlong reads a zigzag varint of up to 10 bytes, as Kafka's ByteUtils.readVarlong.
func (d *decoder) varlong() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("malformed varlong")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// varint reads a zigzag varint that must fit an int32 in at most 5 bytes.
func (d *decoder) varint() int32 {
	if len(d.b) > 0 && d.b[0] < 0x80 {
		// One byte holds every small length and delta: skip the loop.
		u := uint32(d.b[0])
		d.b = d.b[1:]
		return int32(u>>1) ^ -int32(u&1)
	}
	u, n := binary.Uvarint(d.b)
	if n <= 0 || n > binary.MaxVarintLen32 || u > math.MaxUint32 {
		d.fail("malformed varint")
		return 0
	}
	d.b = d.b[n:]
	return int32(uint32(u)>>1) ^ -int32(u&1)
}

// span returns the next n bytes. A length that runs past the data is
// refused before anything is sliced or allocated from it.
func (d *decoder) span(n int32, why string) []byte {
	if n < 0 || int(n) > len(d.b) {
		d.fail(why)
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

// nullableBytes reads a varint length and that many bytes. Any negative
// length is null, as Kafka's DefaultRecord reads it.
func (d *decoder) nullableBytes(why string) []byte {
	n := d.varint()
	if n < 0 {
		return nil
	}
	return d.span(n, why)
}

// recordReader walks the records section of one batch.
type recordReader struct {
	d         decoder
	h         Header
	left      int32 // records still promised by NumRecords
	index     int   // index of rec within the batch
	rec       Record
	offDelta  int32
	headers   bool // build rec.Headers; validation only checks them
	hdrs      []RecordHeader
	marker    error // what a malformed record is: ErrCorrupt, or ErrInvalidRecord from a producer
	corrupted error
}

// reset points rr at the records of a batch, keeping its header buffer.
func (rr *recordReader) reset(data []byte, h *Header, headers bool, marker error) {
	*rr = recordReader{d: decoder{b: data}, h: *h, left: h.NumRecords, index: -1,
		headers: headers, hdrs: rr.hdrs[:0], marker: marker}
}

// Iterate hands fn a pointer into its reader, which therefore lives on the
// heap: pooled, it costs no allocation per batch and keeps its header slice.
var recordReaders = sync.Pool{New: func() any { return new(recordReader) }}

func putRecordReader(rr *recordReader) {
	clear(rr.hdrs) // drop the references into the batch
	rr.reset(nil, &Header{}, false, nil)
	recordReaders.Put(rr)
}

// next decodes the next record into rr.rec. It returns false at the end of
// the batch or on the first malformed record; err tells which.
func (rr *recordReader) next() bool {
	if rr.left <= 0 || rr.corrupted != nil {
		return false
	}
	rr.left--
	rr.index++
	length := rr.d.varint()
	body := decoder{b: rr.d.span(length, "record length past the end of the batch")}
	if rr.d.err != "" {
		rr.corrupted = rr.errorf(rr.d.err)
		return false
	}
	rr.parseBody(&body)
	if body.err == "" && len(body.b) != 0 {
		body.fail("record length longer than its fields")
	}
	if body.err != "" {
		rr.corrupted = rr.errorf(body.err)
		return false
	}
	return true
}

func (rr *recordReader) parseBody(d *decoder) {
	r := &rr.rec
	r.Attributes = d.int8()
	tsDelta := d.varlong()
	rr.offDelta = d.varint()
	r.Key = d.nullableBytes("key past the end of the record")
	r.Value = d.nullableBytes("value past the end of the record")
	rr.parseHeaders(d)
	r.Offset = rr.h.BaseOffset + int64(rr.offDelta)
	r.Timestamp = rr.h.BaseTimestamp + tsDelta
	if rr.h.LogAppendTime() {
		// Kafka reports the broker's append time for every record of a
		// LogAppendTime batch, whatever the producer wrote.
		r.Timestamp = rr.h.MaxTimestamp
	}
}

func (rr *recordReader) parseHeaders(d *decoder) {
	n := d.varint()
	// Each header takes at least two bytes (two varint lengths): a count
	// beyond that is a lie, refused before it sizes any allocation.
	if n < 0 || int(n) > len(d.b)/2 {
		d.fail("bad header count")
		return
	}
	rr.hdrs = rr.hdrs[:0]
	for range n {
		klen := d.varint()
		if klen < 0 {
			d.fail("null header key")
			return
		}
		key := d.span(klen, "header key past the end of the record")
		value := d.nullableBytes("header value past the end of the record")
		if rr.headers && d.err == "" {
			rr.hdrs = append(rr.hdrs, RecordHeader{Key: string(key), Value: value})
		}
	}
	rr.rec.Headers = nil
	if len(rr.hdrs) > 0 {
		rr.rec.Headers = rr.hdrs
	}
}

func (rr *recordReader) errorf(why string) error {
	return fmt.Errorf("%w: record %d: %s", rr.marker, rr.index, why)
}

// err reports why the walk stopped early, or bytes left after the last
// record (Kafka: "records still remaining"). Call it after next returns false.
func (rr *recordReader) err() error {
	if rr.corrupted != nil {
		return rr.corrupted
	}
	if rr.left == 0 && len(rr.d.b) != 0 {
		return fmt.Errorf("%w: %d bytes after the last of %d records", rr.marker, len(rr.d.b), rr.h.NumRecords)
	}
	return nil
}

// Iterate calls fn for each record of one whole batch, in order, until fn
// returns false. It decompresses into a pooled buffer bounded by
// maxDecompressed bytes (ErrDecompressedTooLarge beyond it). The *Record
// and every slice in it alias internal buffers and are valid only during
// fn: copy what you keep.
//
// Iterate checks the structure it decodes (lengths, varints, counts) but
// not the CRC; call CheckCRC for bytes of unknown provenance.
func Iterate(batch []byte, maxDecompressed int, fn func(r *Record) bool) error {
	h, err := parseWhole(batch)
	if err != nil {
		return err
	}
	if h.NumRecords < 0 {
		return fmt.Errorf("%w: record count %d", ErrCorrupt, h.NumRecords)
	}
	data, buf, err := recordsSection(batch, &h, maxDecompressed)
	if err != nil {
		return err
	}
	defer putBuffer(buf)
	rr := recordReaders.Get().(*recordReader)
	defer putRecordReader(rr)
	rr.reset(data, &h, true, ErrCorrupt)
	for rr.next() {
		if !fn(&rr.rec) {
			return nil
		}
	}
	return rr.err()
}

// parseWhole parses the header of a slice that must hold exactly one batch.
func parseWhole(batch []byte) (Header, error) {
	h, err := ParseHeader(batch)
	if err != nil {
		return h, err
	}
	if err := CheckComplete(&h, batch); err != nil {
		return h, err
	}
	if len(batch) > h.Size() {
		return h, fmt.Errorf("%w: %d bytes after a %d-byte batch", ErrCorrupt, len(batch)-h.Size(), h.Size())
	}
	return h, nil
}

// recordsSection returns the records of a complete batch, decompressed into
// a pooled buffer (returned for putBuffer; nil when nothing was pooled).
func recordsSection(batch []byte, h *Header, maxDecompressed int) ([]byte, *[]byte, error) {
	raw := batch[HeaderSize:h.Size()]
	codec := h.Codec()
	if codec == CodecNone || (len(raw) == 0 && h.NumRecords == 0) {
		// Compaction leaves emptied batches with no records section at all.
		return raw, nil, nil
	}
	buf := getBuffer()
	out, err := Decompress(codec, raw, (*buf)[:0], maxDecompressed)
	if err != nil {
		putBuffer(buf)
		return nil, nil, err
	}
	*buf = out
	return out, buf, nil
}
