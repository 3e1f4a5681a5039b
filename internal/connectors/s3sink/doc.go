// Package s3sink is an S3-compatible object-store sink with Confluent's
// class name (io.confluent.connect.s3.S3SinkConnector) and configs: records
// of each Kafka partition go into files (JSON lines, Avro container files,
// Parquet, raw bytes) laid out by a partitioner (Default, TimeBased, Field),
// named <topics.dir>/<topic>/<encoded partition>/<topic>+<partition>+<start
// offset>.<ext>, and committed together when flush.size, rotate.interval.ms
// or rotate.schedule.interval.ms says.
//
// Exactly once: an object is uploaded whole (one PUT, or a multipart upload
// visible only when completed); the consumer offset is committed (PreCommit)
// only up to the last committed file; each object carries its commit's
// offsets so that, on Open, the task finds the last whole commit in the
// bucket, deletes a commit a crash cut short, and asks the runtime to read
// from the offset after it. docs/connect/s3-sink.md has the argument.
package s3sink
