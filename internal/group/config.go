package group

import (
	"math"
	"slices"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/record"
)

// Config holds the coordinator's settings. Each field names the Kafka broker
// config it comes from and its default; ConfigFrom reads them all from the
// broker's resolved config, DefaultConfig returns Kafka's defaults.
type Config struct {
	// MinSessionTimeout and MaxSessionTimeout bound the session timeout a
	// classic member may ask for; outside them JoinGroup answers
	// INVALID_SESSION_TIMEOUT. group.min.session.timeout.ms (6s) and
	// group.max.session.timeout.ms (30m).
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// InitialRebalanceDelay is how long the first rebalance of an empty
	// group waits for more members, extended by the same again each time a
	// new member arrives, up to the rebalance timeout; 0 disables it.
	// group.initial.rebalance.delay.ms (3s).
	InitialRebalanceDelay time.Duration
	// MaxSize is the most members a classic group may have
	// (GROUP_MAX_SIZE_REACHED beyond). group.max.size (MaxInt32).
	MaxSize int
	// OffsetsRetention is how long the offsets of a group stay after the
	// group became empty (KIP-211), or after their commit for a group that
	// never had members. offsets.retention.minutes (7 days).
	OffsetsRetention time.Duration
	// OffsetsRetentionCheckInterval is how often expired offsets are
	// looked for. offsets.retention.check.interval.ms (10m).
	OffsetsRetentionCheckInterval time.Duration
	// OffsetMetadataMaxBytes caps the metadata string of a commit
	// (OFFSET_METADATA_TOO_LARGE beyond). offset.metadata.max.bytes (4096).
	OffsetMetadataMaxBytes int
	// OffsetsTopicCompression is the codec of the batches the coordinator
	// writes to __consumer_offsets. offsets.topic.compression.codec (0,
	// none).
	OffsetsTopicCompression record.Codec
	// OffsetsTopicNumPartitions is the partition count of
	// __consumer_offsets, which PartitionFor hashes group IDs over.
	// offsets.topic.num.partitions (50).
	OffsetsTopicNumPartitions int32
	// CommitTimeout bounds each append to __consumer_offsets.
	// offsets.commit.timeout.ms (5s).
	CommitTimeout time.Duration
	// TickInterval is how often session, rebalance and sync deadlines are
	// checked: the precision of every group timeout. Samsa's own; 100ms.
	TickInterval time.Duration

	// ConsumerSessionTimeout is how long a consumer-protocol (KIP-848)
	// member stays without a heartbeat before it is removed.
	// group.consumer.session.timeout.ms (45s).
	ConsumerSessionTimeout time.Duration
	// ConsumerHeartbeatInterval is the heartbeat interval given to
	// consumer-protocol members. group.consumer.heartbeat.interval.ms (5s).
	ConsumerHeartbeatInterval time.Duration
	// ConsumerMaxSize is the most members a consumer group may have
	// (GROUP_MAX_SIZE_REACHED beyond). group.consumer.max.size (MaxInt32).
	ConsumerMaxSize int
	// ConsumerAssignors are the server-side assignors members may ask for,
	// "uniform" and "range" (or Kafka's class names for them); the first
	// is used when no member asks. group.consumer.assignors
	// (uniform,range).
	ConsumerAssignors []string

	// ShareSessionTimeout, ShareHeartbeatInterval and ShareMaxSize are the
	// share groups' (KIP-932) session timeout, heartbeat interval and
	// most members: group.share.session.timeout.ms (45s),
	// group.share.heartbeat.interval.ms (5s), group.share.max.size (200).
	// ConfigFrom does not read them yet: the broker's config catalog has no
	// group.share.* entries, so Kafka's defaults apply.
	ShareSessionTimeout    time.Duration
	ShareHeartbeatInterval time.Duration
	ShareMaxSize           int
	// Streams are the streams groups' (KIP-1071) settings.
	Streams StreamsConfig
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		MinSessionTimeout:             6 * time.Second,
		MaxSessionTimeout:             30 * time.Minute,
		InitialRebalanceDelay:         3 * time.Second,
		MaxSize:                       math.MaxInt32,
		OffsetsRetention:              7 * 24 * time.Hour,
		OffsetsRetentionCheckInterval: 10 * time.Minute,
		OffsetMetadataMaxBytes:        4096,
		OffsetsTopicNumPartitions:     50,
		CommitTimeout:                 5 * time.Second,
		TickInterval:                  100 * time.Millisecond,
		ConsumerSessionTimeout:        45 * time.Second,
		ConsumerHeartbeatInterval:     5 * time.Second,
		ConsumerMaxSize:               math.MaxInt32,
		ConsumerAssignors:             []string{assignorUniform, assignorRange},
		ShareSessionTimeout:           45 * time.Second,
		ShareHeartbeatInterval:        5 * time.Second,
		ShareMaxSize:                  200,
		Streams:                       defaultStreamsConfig(),
	}
}

// ConfigFrom reads the coordinator's settings from the broker's config.
func ConfigFrom(v config.Values) Config {
	ms := func(name string) time.Duration { return time.Duration(v.Int(name)) * time.Millisecond }
	c := DefaultConfig()
	c.MinSessionTimeout = ms("group.min.session.timeout.ms")
	c.MaxSessionTimeout = ms("group.max.session.timeout.ms")
	c.InitialRebalanceDelay = ms("group.initial.rebalance.delay.ms")
	c.MaxSize = int(v.Int("group.max.size"))
	c.OffsetsRetention = time.Duration(v.Int("offsets.retention.minutes")) * time.Minute
	c.OffsetsRetentionCheckInterval = time.Duration(v.Long("offsets.retention.check.interval.ms")) * time.Millisecond
	c.OffsetMetadataMaxBytes = int(v.Int("offset.metadata.max.bytes"))
	c.OffsetsTopicNumPartitions = v.Int("offsets.topic.num.partitions")
	c.OffsetsTopicCompression = record.Codec(v.Int("offsets.topic.compression.codec"))
	c.CommitTimeout = ms("offsets.commit.timeout.ms")
	c.ConsumerSessionTimeout = ms("group.consumer.session.timeout.ms")
	c.ConsumerHeartbeatInterval = ms("group.consumer.heartbeat.interval.ms")
	c.ConsumerMaxSize = int(v.Int("group.consumer.max.size"))
	c.ConsumerAssignors = v.List("group.consumer.assignors")
	c.ShareSessionTimeout = ms("group.share.session.timeout.ms")
	c.ShareHeartbeatInterval = ms("group.share.heartbeat.interval.ms")
	c.ShareMaxSize = int(v.Int("group.share.max.size"))
	c.Streams = streamsConfigFrom(v)
	return c
}

// fill replaces unusable values with defaults, so a zero Config works.
func (c *Config) fill() {
	d := DefaultConfig()
	if c.MaxSessionTimeout <= 0 {
		c.MinSessionTimeout, c.MaxSessionTimeout = d.MinSessionTimeout, d.MaxSessionTimeout
	}
	if c.MaxSize <= 0 {
		c.MaxSize = d.MaxSize
	}
	if c.OffsetsRetention <= 0 {
		c.OffsetsRetention = d.OffsetsRetention
	}
	if c.OffsetsRetentionCheckInterval <= 0 {
		c.OffsetsRetentionCheckInterval = d.OffsetsRetentionCheckInterval
	}
	if c.OffsetsTopicNumPartitions <= 0 {
		c.OffsetsTopicNumPartitions = d.OffsetsTopicNumPartitions
	}
	if c.CommitTimeout <= 0 {
		c.CommitTimeout = d.CommitTimeout
	}
	if c.TickInterval <= 0 {
		c.TickInterval = d.TickInterval
	}
	if c.ConsumerSessionTimeout <= 0 {
		c.ConsumerSessionTimeout = d.ConsumerSessionTimeout
	}
	if c.ConsumerHeartbeatInterval <= 0 {
		c.ConsumerHeartbeatInterval = d.ConsumerHeartbeatInterval
	}
	if c.ConsumerMaxSize <= 0 {
		c.ConsumerMaxSize = d.ConsumerMaxSize
	}
	if c.ShareSessionTimeout <= 0 {
		c.ShareSessionTimeout = d.ShareSessionTimeout
	}
	if c.ShareHeartbeatInterval <= 0 {
		c.ShareHeartbeatInterval = d.ShareHeartbeatInterval
	}
	if c.ShareMaxSize <= 0 {
		c.ShareMaxSize = d.ShareMaxSize
	}
	// Assignors are kept by their short names; unknown entries are
	// dropped (the broker's config validation is where to refuse them).
	var names []string
	for _, entry := range c.ConsumerAssignors {
		if name := assignorName(entry); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		names = d.ConsumerAssignors
	}
	c.ConsumerAssignors = names
	c.Streams.fill()
	// A negative metadata cap would refuse every commit; Kafka treats it
	// the same way, so only the zero value of an unset Config is fixed.
	if c.OffsetMetadataMaxBytes == 0 {
		c.OffsetMetadataMaxBytes = d.OffsetMetadataMaxBytes
	}
}
