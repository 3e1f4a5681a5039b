package config

import "strconv"

// Topic is the catalog of per-topic configs: Kafka 4.x's documented topic-level configs.
// Each falls back to the broker config named in ServerDefault when a topic does not set it.
var Topic = newCatalog("topic", topicEntries())

// maxLong is Java's Long.MAX_VALUE, Kafka's "never" for sizes and intervals.
var maxLong = strconv.FormatInt(1<<63-1, 10)

// Codec level validators shared by the topic and broker catalogs; the ranges are those of
// the codecs themselves (KIP-390).
var (
	gzipLevel = rangeOr{intRange: intRange{min: 1, max: 9, hasMax: true}, also: -1}
	lz4Level  = between(1, 17)
	zstdLevel = between(-131072, 22)
)

// compressionTypes are the values of compression.type; "producer" keeps the batch as the
// producer compressed it.
var compressionTypes = oneOf{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}

var timestampTypes = oneOf{"CreateTime", "LogAppendTime"}

var cleanupPolicies = listOf{"compact", "delete"}

func topicEntries() []*Entry {
	return []*Entry{
		{Name: "cleanup.policy", Type: TypeList, Default: "delete", Validator: cleanupPolicies, Importance: Medium,
			ServerDefault: "log.cleanup.policy",
			Doc:           "Retention policy for old segments: delete (by time or size), compact (keep the latest value per key), or both."},
		{Name: "compression.gzip.level", Type: TypeInt, Default: "-1", Validator: gzipLevel, Importance: Medium,
			ServerDefault: "compression.gzip.level",
			Doc:           "Level used when compression.type is gzip; -1 is the codec's default."},
		{Name: "compression.lz4.level", Type: TypeInt, Default: "9", Validator: lz4Level, Importance: Medium,
			ServerDefault: "compression.lz4.level",
			Doc:           "Level used when compression.type is lz4."},
		{Name: "compression.type", Type: TypeString, Default: "producer", Validator: compressionTypes, Importance: Medium,
			ServerDefault: "compression.type",
			Doc:           "Final compression of the topic's batches; producer keeps the producer's codec, uncompressed stores them plain."},
		{Name: "compression.zstd.level", Type: TypeInt, Default: "3", Validator: zstdLevel, Importance: Medium,
			ServerDefault: "compression.zstd.level",
			Doc:           "Level used when compression.type is zstd."},
		{Name: "delete.retention.ms", Type: TypeLong, Default: "86400000", Validator: atLeast(0), Importance: Medium,
			ServerDefault: "log.cleaner.delete.retention.ms",
			Doc:           "How long tombstones stay in a compacted topic, so a consumer reading from the start sees deletes."},
		{Name: "file.delete.delay.ms", Type: TypeLong, Default: "60000", Validator: atLeast(0), Importance: Medium,
			ServerDefault: "log.segment.delete.delay.ms",
			Doc:           "Delay between removing a segment from the log and deleting its files."},
		{Name: "flush.messages", Type: TypeLong, Default: maxLong, Validator: atLeast(1), Importance: Medium,
			ServerDefault: "log.flush.interval.messages",
			Doc:           "Force an fsync after this many messages; the default leaves durability to replication and the OS."},
		{Name: "flush.ms", Type: TypeLong, Default: maxLong, Validator: atLeast(0), Importance: Medium,
			ServerDefault: "log.flush.interval.ms",
			Doc:           "Force an fsync when the oldest unflushed message is this old; the default never forces one."},
		{Name: "follower.replication.throttled.replicas", Type: TypeList, Default: "", Validator: throttledReplicas{}, Importance: Medium,
			Doc: "Replicas whose follower-side fetches are throttled, as partition:broker pairs or * for all."},
		{Name: "index.interval.bytes", Type: TypeInt, Default: "4096", Validator: atLeast(0), Importance: Medium,
			ServerDefault: "log.index.interval.bytes",
			Doc:           "Bytes of log between two offset index entries; smaller means a larger index and shorter scans."},
		{Name: "leader.replication.throttled.replicas", Type: TypeList, Default: "", Validator: throttledReplicas{}, Importance: Medium,
			Doc: "Replicas whose leader-side fetch responses are throttled, as partition:broker pairs or * for all."},
		{Name: "local.retention.bytes", Type: TypeLong, Default: "-2", Validator: atLeast(-2), Importance: Medium,
			ServerDefault: "log.local.retention.bytes",
			Doc:           "With tiered storage, bytes kept on local disk per partition; -2 means retention.bytes."},
		{Name: "local.retention.ms", Type: TypeLong, Default: "-2", Validator: atLeast(-2), Importance: Medium,
			ServerDefault: "log.local.retention.ms",
			Doc:           "With tiered storage, how long segments stay on local disk; -2 means retention.ms."},
		{Name: "max.compaction.lag.ms", Type: TypeLong, Default: maxLong, Validator: atLeast(1), Importance: Medium,
			ServerDefault: "log.cleaner.max.compaction.lag.ms",
			Doc:           "Longest time a record may stay ineligible for compaction."},
		{Name: "max.message.bytes", Type: TypeInt, Default: "1048588", Validator: atLeast(0), Importance: Medium,
			ServerDefault: "message.max.bytes",
			Doc:           "Largest record batch the topic accepts, after compression."},
		{Name: "message.downconversion.enable", Type: TypeBoolean, Default: "true", Importance: Low,
			ServerDefault: "log.message.downconversion.enable",
			Doc:           "Deprecated no-op since Kafka 4.0, which never down-converts; accepted so existing topic configs keep working."},
		{Name: "message.timestamp.after.max.ms", Type: TypeLong, Default: "3600000", Validator: atLeast(0), Importance: Medium,
			ServerDefault: "log.message.timestamp.after.max.ms",
			Doc:           "With CreateTime, reject batches whose timestamp is more than this far ahead of the broker's clock."},
		{Name: "message.timestamp.before.max.ms", Type: TypeLong, Default: maxLong, Validator: atLeast(0), Importance: Medium,
			ServerDefault: "log.message.timestamp.before.max.ms",
			Doc:           "With CreateTime, reject batches whose timestamp is more than this far behind the broker's clock."},
		{Name: "message.timestamp.type", Type: TypeString, Default: "CreateTime", Validator: timestampTypes, Importance: Medium,
			ServerDefault: "log.message.timestamp.type",
			Doc:           "Whether record timestamps are the producer's create time or the broker's append time."},
		{Name: "min.cleanable.dirty.ratio", Type: TypeDouble, Default: "0.5", Validator: ratio{}, Importance: Medium,
			ServerDefault: "log.cleaner.min.cleanable.ratio",
			Doc:           "Share of uncompacted bytes a log needs before the cleaner compacts it."},
		{Name: "min.compaction.lag.ms", Type: TypeLong, Default: "0", Validator: atLeast(0), Importance: Medium,
			ServerDefault: "log.cleaner.min.compaction.lag.ms",
			Doc:           "Shortest time a record stays uncompacted."},
		{Name: "min.insync.replicas", Type: TypeInt, Default: "1", Validator: atLeast(1), Importance: Medium,
			ServerDefault: "min.insync.replicas",
			Doc:           "Replicas that must have a write before an acks=all produce succeeds; fewer in sync gives NOT_ENOUGH_REPLICAS."},
		{Name: "preallocate", Type: TypeBoolean, Default: "false", Importance: Medium,
			ServerDefault: "log.preallocate",
			Doc:           "Preallocate segment files on disk when rolling."},
		{Name: "remote.log.copy.disable", Type: TypeBoolean, Default: "false", Importance: Medium,
			Doc: "With tiered storage, stop copying segments to remote storage while still serving what is there."},
		{Name: "remote.log.delete.on.disable", Type: TypeBoolean, Default: "false", Importance: Medium,
			Doc: "With tiered storage, delete the topic's remote data when remote storage is turned off for it."},
		{Name: "remote.storage.enable", Type: TypeBoolean, Default: "false", Importance: Medium,
			Doc: "Turn tiered storage on for the topic."},
		{Name: "retention.bytes", Type: TypeLong, Default: "-1", Importance: Medium,
			ServerDefault: "log.retention.bytes",
			Doc:           "Largest size of a partition before the delete policy drops old segments; -1 means no size limit."},
		{Name: "retention.ms", Type: TypeLong, Default: "604800000", Validator: atLeast(-1), Importance: Medium,
			ServerDefault: "log.retention.ms",
			Doc:           "How long the delete policy keeps a segment after its newest record; -1 means no time limit."},
		{Name: "segment.bytes", Type: TypeInt, Default: "1073741824", Validator: atLeast(1048576), Importance: Medium,
			ServerDefault: "log.segment.bytes",
			Doc:           "Size at which a segment is rolled; retention and compaction work a segment at a time."},
		{Name: "segment.index.bytes", Type: TypeInt, Default: "10485760", Validator: atLeast(4), Importance: Medium,
			ServerDefault: "log.index.size.max.bytes",
			Doc:           "Size preallocated for a segment's offset and time indexes; a full index rolls the segment."},
		{Name: "segment.jitter.ms", Type: TypeLong, Default: "0", Validator: atLeast(0), Importance: Medium,
			ServerDefault: "log.roll.jitter.ms",
			Doc:           "Largest random amount taken off segment.ms so that partitions do not all roll at once."},
		{Name: "segment.ms", Type: TypeLong, Default: "604800000", Validator: atLeast(1), Importance: Medium,
			ServerDefault: "log.roll.ms",
			Doc:           "Roll a segment this long after its first record even if it is not full, so retention can act."},
		{Name: "unclean.leader.election.enable", Type: TypeBoolean, Default: "false", Importance: Medium,
			ServerDefault: "unclean.leader.election.enable",
			Doc:           "Allow a replica outside the ISR to become leader as a last resort, losing acknowledged data."},
	}
}
