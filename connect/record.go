package connect

import "time"

// Header is one record header: a key and a value with an optional schema.
type Header struct {
	Key    string
	Schema *Schema
	Value  any
}

// Headers are a record's headers in order; keys may repeat, as in Kafka.
type Headers []Header

// Last is the last header with the key, as Kafka's Headers.lastWithName.
func (h Headers) Last(key string) (Header, bool) {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Key == key {
			return h[i], true
		}
	}
	return Header{}, false
}

// Without drops every header with one of the keys, in a new slice.
func (h Headers) Without(keys ...string) Headers {
	out := make(Headers, 0, len(h))
next:
	for _, x := range h {
		for _, k := range keys {
			if x.Key == k {
				continue next
			}
		}
		out = append(out, x)
	}
	return out
}

// Clone copies the slice (values are shared).
func (h Headers) Clone() Headers { return append(Headers(nil), h...) }

// TimestampType says what a sink record's timestamp means.
type TimestampType string

const (
	NoTimestampType TimestampType = "NoTimestampType"
	CreateTime      TimestampType = "CreateTime"
	LogAppendTime   TimestampType = "LogAppendTime"
)

// Record is what sources produce, sinks consume and transforms rewrite:
// Kafka's ConnectRecord. Transforms return a changed copy.
type Record struct {
	Topic string
	// Partition is the Kafka partition; nil lets the producer choose.
	Partition   *int32
	KeySchema   *Schema
	Key         any
	ValueSchema *Schema
	Value       any
	// Timestamp is the record's time; the zero time means none.
	Timestamp time.Time
	Headers   Headers
	// KafkaOffset is where a record read from Kafka (a sink record) was
	// read, for transforms such as InsertField's offset.field; nil on
	// source records.
	KafkaOffset *int64
}

// PartitionOf makes a *int32 for Record.Partition.
func PartitionOf(p int32) *int32 { return &p }

// SourceRecord is a record from a source task, with where it came from:
// SourcePartition names a stream in the other system (a file, a table) and
// SourceOffset the position in it after this record. The runtime stores the
// offset once the record is in Kafka, and hands it back to the task on
// restart (SourceTaskContext.Offset).
type SourceRecord struct {
	Record
	SourcePartition map[string]any
	SourceOffset    map[string]any
}

// SinkRecord is a record a sink task receives, with where it was read.
type SinkRecord struct {
	Record
	TimestampType TimestampType
	// OriginalTopic, OriginalPartition and OriginalOffset are where the
	// record was read before transforms changed it (KIP-793).
	OriginalTopic     string
	OriginalPartition int32
	OriginalOffset    int64
}

// Offset is the Kafka offset the record was read at.
func (r SinkRecord) Offset() int64 {
	if r.KafkaOffset == nil {
		return -1
	}
	return *r.KafkaOffset
}

// RecordMetadata is what Kafka answered for a source record (CommitRecord).
type RecordMetadata struct {
	Topic     string
	Partition int32
	Offset    int64
	Timestamp time.Time
}

// TopicPartition names a Kafka partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}
