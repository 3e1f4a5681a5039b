package mm2

import "fmt"

// OffsetSync says that the record at UpstreamOffset of the source cluster's
// Topic and Partition was written at DownstreamOffset of its remote topic
// on the target cluster. MirrorSourceTask writes them to the offset-syncs
// topic ("mm2-offset-syncs.<cluster>.internal", partition 0) and
// MirrorCheckpointTask reads them back to translate group offsets.
//
// Topic is the source cluster's topic name, not the renamed remote topic:
// Kafka takes it from the record's source partition (MirrorUtils
// .unwrapPartition).
//
// Kafka's OffsetSync: key is Struct{topic STRING, partition INT32}, value
// is Struct{upstreamOffset INT64, offset INT64}, with no version header.
type OffsetSync struct {
	Topic            string
	Partition        int32
	UpstreamOffset   int64
	DownstreamOffset int64
}

// Validate reports what Kafka would refuse to serialize: a topic name
// longer than MaxStringLen bytes. Key panics on such a sync.
func (s OffsetSync) Validate() error { return checkString("topic", s.Topic) }

// Key is the record key: int16 topic length, topic, int32 partition.
func (s OffsetSync) Key() []byte {
	b := make([]byte, 0, 2+len(s.Topic)+4)
	b = appendString(b, s.Topic)
	return appendInt32(b, s.Partition)
}

// Value is the record value: int64 upstream offset, int64 downstream
// offset (16 bytes).
func (s OffsetSync) Value() []byte {
	b := make([]byte, 0, 16)
	b = appendInt64(b, s.UpstreamOffset)
	return appendInt64(b, s.DownstreamOffset)
}

// DecodeOffsetSync reads an offset-sync record as Kafka's
// OffsetSync.deserializeRecord does: bytes past the schema are ignored.
func DecodeOffsetSync(key, value []byte) (OffsetSync, error) {
	if key == nil || value == nil {
		return OffsetSync{}, missing("offset sync", key, value)
	}
	var s OffsetSync
	k := structReader{b: key}
	s.Topic = k.string("topic")
	s.Partition = k.int32("partition")
	if k.err != nil {
		return OffsetSync{}, fmt.Errorf("offset sync key: %w", k.err)
	}
	v := structReader{b: value}
	s.UpstreamOffset = v.int64("upstreamOffset")
	s.DownstreamOffset = v.int64("offset")
	if v.err != nil {
		return OffsetSync{}, fmt.Errorf("offset sync value: %w", v.err)
	}
	return s, nil
}

// CheckpointVersion is the version MM2 writes in a checkpoint's value
// header (Checkpoint.VERSION).
const CheckpointVersion int16 = 0

// HeartbeatVersion is the version MM2 writes in a heartbeat's value header
// (Heartbeat.VERSION).
const HeartbeatVersion int16 = 0

// Checkpoint is a consumer group's committed offset on the source cluster
// and its translation to the target cluster, written by
// MirrorCheckpointTask to "<source>.checkpoints.internal" on the target
// cluster (partition 0) and read by RemoteClusterUtils and MM2's group
// offset sync.
//
// Topic is the topic as the group will read it on the target cluster: the
// source topic renamed by the replication policy (MirrorCheckpointTask
// .renameTopicPartition: "topic1" -> "us-west.topic1", or back to
// "topic1" for a topic that came from the target cluster in the first
// place). UpstreamOffset is the group's offset on the source topic,
// DownstreamOffset its translation, Metadata the commit's metadata string
// ("" when none).
//
// Kafka's Checkpoint: key is Struct{group STRING, topic STRING, partition
// INT32}; value is a header Struct{version INT16} followed by, for version
// 0, Struct{upstreamOffset INT64, offset INT64, metadata STRING}.
type Checkpoint struct {
	Group            string
	Topic            string
	Partition        int32
	UpstreamOffset   int64
	DownstreamOffset int64
	Metadata         string
}

// Validate reports what Kafka would refuse to serialize: a group, topic or
// metadata longer than MaxStringLen bytes. Key and Value panic on such a
// checkpoint; Kafka's checkpoint task fails on it.
func (c Checkpoint) Validate() error {
	if err := checkString("group", c.Group); err != nil {
		return err
	}
	if err := checkString("topic", c.Topic); err != nil {
		return err
	}
	return checkString("metadata", c.Metadata)
}

// Key is the record key: group, topic (both int16 length + UTF-8), int32
// partition.
func (c Checkpoint) Key() []byte {
	b := make([]byte, 0, 2+len(c.Group)+2+len(c.Topic)+4)
	b = appendString(b, c.Group)
	b = appendString(b, c.Topic)
	return appendInt32(b, c.Partition)
}

// Value is the record value: int16 version 0, int64 upstream offset, int64
// downstream offset, metadata (int16 length + UTF-8).
func (c Checkpoint) Value() []byte {
	b := make([]byte, 0, 2+8+8+2+len(c.Metadata))
	b = appendInt16(b, CheckpointVersion)
	b = appendInt64(b, c.UpstreamOffset)
	b = appendInt64(b, c.DownstreamOffset)
	return appendString(b, c.Metadata)
}

// DecodeCheckpoint reads a checkpoint record as Kafka's
// Checkpoint.deserializeRecord does. Like Kafka 4.x (whose version check is
// a Java assert, off in production), it reads any version's value with
// version 0's schema, so a later version that appends fields still decodes;
// bytes past the schema are ignored.
func DecodeCheckpoint(key, value []byte) (Checkpoint, error) {
	if key == nil || value == nil {
		return Checkpoint{}, missing("checkpoint", key, value)
	}
	var c Checkpoint
	v := structReader{b: value}
	v.int16("version")
	c.UpstreamOffset = v.int64("upstreamOffset")
	c.DownstreamOffset = v.int64("offset")
	c.Metadata = v.string("metadata")
	if v.err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint value: %w", v.err)
	}
	k := structReader{b: key}
	c.Group = k.string("group")
	c.Topic = k.string("topic")
	c.Partition = k.int32("partition")
	if k.err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint key: %w", k.err)
	}
	return c, nil
}

// Heartbeat is MirrorHeartbeatTask's record, written to the target
// cluster's "heartbeats" topic every emit.heartbeats.interval.seconds and
// mirrored onward, so that RemoteClusterUtils can find which clusters
// reach this one and how many hops away. Timestamp is milliseconds since
// the epoch.
//
// Kafka's Heartbeat: key is Struct{sourceClusterAlias STRING,
// targetClusterAlias STRING}; value is a header Struct{version INT16}
// followed by, for version 0, Struct{timestamp INT64}.
type Heartbeat struct {
	SourceCluster string
	TargetCluster string
	Timestamp     int64
}

// Validate reports what Kafka would refuse to serialize: an alias longer
// than MaxStringLen bytes. Key panics on such a heartbeat.
func (h Heartbeat) Validate() error {
	if err := checkString("sourceClusterAlias", h.SourceCluster); err != nil {
		return err
	}
	return checkString("targetClusterAlias", h.TargetCluster)
}

// Key is the record key: source alias, target alias (each int16 length +
// UTF-8).
func (h Heartbeat) Key() []byte {
	b := make([]byte, 0, 2+len(h.SourceCluster)+2+len(h.TargetCluster))
	b = appendString(b, h.SourceCluster)
	return appendString(b, h.TargetCluster)
}

// Value is the record value: int16 version 0, int64 timestamp (10 bytes).
func (h Heartbeat) Value() []byte {
	b := make([]byte, 0, 10)
	b = appendInt16(b, HeartbeatVersion)
	return appendInt64(b, h.Timestamp)
}

// DecodeHeartbeat reads a heartbeat record as Kafka's
// Heartbeat.deserializeRecord does; versions as DecodeCheckpoint.
func DecodeHeartbeat(key, value []byte) (Heartbeat, error) {
	if key == nil || value == nil {
		return Heartbeat{}, missing("heartbeat", key, value)
	}
	var h Heartbeat
	v := structReader{b: value}
	v.int16("version")
	h.Timestamp = v.int64("timestamp")
	if v.err != nil {
		return Heartbeat{}, fmt.Errorf("heartbeat value: %w", v.err)
	}
	k := structReader{b: key}
	h.SourceCluster = k.string("sourceClusterAlias")
	h.TargetCluster = k.string("targetClusterAlias")
	if k.err != nil {
		return Heartbeat{}, fmt.Errorf("heartbeat key: %w", k.err)
	}
	return h, nil
}

// missing reports a record without a key or value (a tombstone, say),
// which Kafka's deserializers cannot read either (ByteBuffer.wrap(null)).
func missing(what string, key, value []byte) error {
	part := "key"
	if key != nil {
		part = "value"
	}
	return fmt.Errorf("%s: %w: no %s", what, ErrMalformed, part)
}
