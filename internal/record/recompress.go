package record

import (
	"encoding/binary"
	"fmt"
)

// Recompress appends batch, one whole batch, to dst with its records compressed by codec
// at level (CompressLevel's numbers), as Kafka's LogValidator rebuilds a batch whose codec
// is not the topic's compression.type. The records section is the same bytes whatever the
// codec, so only it is recompressed: base offset, offset deltas, timestamps, producer id,
// epoch and base sequence, the transactional and timestamp-type attributes, keys, values
// and headers are kept as they are. The codec bits, the batch length and the CRC are
// rewritten. Records are decompressed into at most maxDecompressed bytes
// (ErrDecompressedTooLarge beyond, as Validate). On error dst is returned unchanged.
func Recompress(dst, batch []byte, codec Codec, level, maxDecompressed int) ([]byte, error) {
	h, err := parseWhole(batch)
	if err != nil {
		return dst, err
	}
	if codec < CodecNone || codec > CodecZstd {
		return dst, fmt.Errorf("record: recompress: %w: %s", ErrUnsupportedCodec, codec)
	}
	if maxDecompressed <= 0 {
		maxDecompressed = DefaultMaxDecompressedBytes
	}
	records, buf, err := recordsSection(batch, &h, maxDecompressed)
	if err != nil {
		return dst, err
	}
	defer putBuffer(buf)
	start := len(dst)
	out := append(dst, batch[:HeaderSize]...)
	out, err = CompressLevel(codec, level, out, records)
	if err != nil {
		return out[:start], err
	}
	p := out[start:]
	if len(p)-LogOverhead > 1<<31-1 {
		return out[:start], fmt.Errorf("record: recompress: batch of %d bytes", len(p))
	}
	be := binary.BigEndian
	be.PutUint32(p[offBatchLength:], uint32(len(p)-LogOverhead))
	attrs := be.Uint16(p[offAttributes:])
	be.PutUint16(p[offAttributes:], attrs&^CompressionMask|uint16(codec))
	be.PutUint32(p[offCRC:], ComputeCRC(p))
	return out, nil
}
