package streams

import "fmt"

// ConsumedRecord is what a timestamp extractor sees: the deserialized
// record with where it came from and the timestamp Kafka stored.
type ConsumedRecord struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       any
	Value     any
	Timestamp int64
	Headers   []Header
}

// TimestampExtractor picks a record's event time (Kafka's
// TimestampExtractor). partitionTime is the largest timestamp seen on the
// partition so far, -1 before the first. A negative result drops the
// record (counted as skipped), unless the extractor returns an error,
// which fails the application.
type TimestampExtractor func(r ConsumedRecord, partitionTime int64) (int64, error)

// RecordTimestamp uses the record's timestamp, failing on a negative one
// (Kafka's FailOnInvalidTimestamp, the default).
func RecordTimestamp(r ConsumedRecord, _ int64) (int64, error) {
	if r.Timestamp < 0 {
		return 0, fmt.Errorf("streams: record %s-%d@%d has the invalid timestamp %d; use a TimestampExtractor that handles it (LogAndSkipOnInvalidTimestamp, UsePartitionTimeOnInvalidTimestamp)",
			r.Topic, r.Partition, r.Offset, r.Timestamp)
	}
	return r.Timestamp, nil
}

// LogAndSkipOnInvalidTimestamp uses the record's timestamp and drops
// records whose timestamp is negative.
func LogAndSkipOnInvalidTimestamp(r ConsumedRecord, _ int64) (int64, error) {
	return r.Timestamp, nil
}

// UsePartitionTimeOnInvalidTimestamp gives a record with a negative
// timestamp the partition's time; it fails when there is none yet.
func UsePartitionTimeOnInvalidTimestamp(r ConsumedRecord, partitionTime int64) (int64, error) {
	if r.Timestamp >= 0 {
		return r.Timestamp, nil
	}
	if partitionTime < 0 {
		return 0, fmt.Errorf("streams: record %s-%d@%d has the invalid timestamp %d and the partition has no time yet", r.Topic, r.Partition, r.Offset, r.Timestamp)
	}
	return partitionTime, nil
}

// WallclockTimestamp stamps each record with the system time when it is
// read (processing time semantics).
func WallclockTimestamp(nowMs func() int64) TimestampExtractor {
	return func(ConsumedRecord, int64) (int64, error) { return nowMs(), nil }
}
