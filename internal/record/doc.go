// Package record owns the Kafka RecordBatch v2 format as the broker sees it:
// header parsing, validation (CRC32C, magic, counts, sizes), offset
// assignment in place, compression codecs and record iteration.
//
// It does no I/O and keeps no state beyond pooled codec instances. Everything
// here works on byte slices that alias a request or a segment read buffer;
// nothing retains them after returning.
package record
