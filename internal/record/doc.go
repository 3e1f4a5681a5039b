// Package record owns the Kafka RecordBatch v2 format as the broker sees it:
// header parsing, validation (CRC32C, magic, counts, sizes), offset
// assignment in place, compression codecs and record iteration.
//
// It does no I/O and keeps no state beyond pooled codec instances and
// buffers. Everything here works on byte slices that alias a request or a
// segment read buffer; nothing retains them after returning.
//
// # Files
//
//	batch.go     header layout, ParseHeader, CRC, marker errors
//	validate.go  Validate (Kafka's produce-time rules), ForEachBatch
//	assign.go    AssignOffsets, the leader's in-place rewrite
//	records.go   Record, the varint record decoder, Iterate
//	build.go     Batch.AppendTo, the encoder
//	control.go   control records (transaction markers)
//	compress.go  Compress / Decompress for gzip, snappy, lz4, zstd
//	levels.go    CompressLevel, Kafka's compression levels (KIP-390)
//	recompress.go Recompress, a batch rewritten with the topic's codec
//
// # Errors and the Kafka codes they stand for
//
// Validate follows Kafka's order of checks (UnifiedLog.analyzeAndValidateRecords,
// then LogValidator), so the first failing rule decides the code. Test the
// markers with errors.Is in this order, as some wrap others:
//
//	ErrDecompressedTooLarge, ErrTooLarge  MESSAGE_TOO_LARGE
//	ErrControlFromClient, ErrInvalidRecord INVALID_RECORD
//	ErrInvalidTimestamp                    INVALID_TIMESTAMP
//	ErrUnsupportedCodec                    UNSUPPORTED_COMPRESSION_TYPE
//	ErrUnsupportedMagic                    UNSUPPORTED_FOR_MESSAGE_FORMAT (CORRUPT_MESSAGE for garbage)
//	ErrCorrupt, ErrTruncated               CORRUPT_MESSAGE
//
// Record-level failures are *RecordError values carrying the record's index
// for the produce response's record_errors (KIP-467).
//
// Two splits follow Kafka where it matters to producers: CORRUPT_MESSAGE is
// retriable, so it is kept for bytes damaged in transit (framing, CRC,
// compressed data); a well-framed batch that breaks the rules (counts,
// offset deltas, a record that does not parse) is INVALID_RECORD, which a
// producer does not retry. And a batch whose records decompress past the
// bound is MESSAGE_TOO_LARGE, on which the Java producer splits the batch.
//
// # Deliberate differences from Kafka
//
//   - Kafka rewrites a compressed batch whose inner offsets are not 0..n-1
//     (an old-client quirk); Validate refuses it as INVALID_RECORD instead,
//     since rewriting means recompressing on the hot path. Kafka does not
//     check inner offsets of uncompressed batches; Validate does.
//   - Kafka rewrites MaxTimestamp of a CreateTime batch to the largest
//     record timestamp; AssignOffsets keeps the producer's value (every
//     mainstream client computes it), so the CRC stays untouched.
//   - Kafka streams decompressed records; here they are held in a pooled
//     buffer, so their size needs the bound ValidateConfig.MaxDecompressedBytes.
//   - Snappy is decoded strictly: S2 extensions that klauspost's decoder
//     would accept, and Java consumers would not, are refused.
//
// # Decompression bounds
//
// Decompress never appends more than maxOut bytes, and sizes nothing from a
// length header it cannot trust: gzip's trailer and snappy's preamble are
// checked against the format's largest ratio, a zstd frame against its
// declared content size. One exception in memory (not in output): a zstd
// frame without a content size may be decoded up to its window, at most
// 8 MiB, before being refused.
package record
