package mm2

import (
	"cmp"
	"slices"
)

// Checkpoints holds the last checkpoint per consumer group and target
// topic partition, and decides which new ones to emit (Kafka's
// CheckpointStore with MirrorCheckpointTask.checkpointsForGroup). It is not
// safe for concurrent use.
//
// A new checkpoint is emitted when its group and partition have none yet,
// when the group's upstream offset went backwards (the group was reset on
// the source: the checkpoint follows it back, downstream offset included),
// or when its downstream offset is past the last one's. Otherwise it is
// dropped, so that a store translating the same upstream offset to an
// earlier downstream one after it forgot a sync (or after a restart) does
// not move the group backwards on the target.
type Checkpoints struct {
	groups map[string]map[topicPartition]Checkpoint
}

// NewCheckpoints returns an empty store.
func NewCheckpoints() *Checkpoints {
	return &Checkpoints{groups: map[string]map[topicPartition]Checkpoint{}}
}

// Load records a checkpoint read from the checkpoints topic on start; a
// later record for the same group and partition replaces an earlier one.
// As Kafka's CheckpointStore, the caller reads the topic from the beginning
// to its end before the first Next, loads only the groups it checkpoints,
// and skips records DecodeCheckpoint refuses. If it cannot read the topic
// at all, Kafka goes on with an empty store and starts the SyncStore with
// SetInitializationMustReadToEnd(true) instead.
func (c *Checkpoints) Load(cp Checkpoint) {
	c.put(cp)
}

func (c *Checkpoints) put(cp Checkpoint) {
	m := c.groups[cp.Group]
	if m == nil {
		m = map[topicPartition]Checkpoint{}
		c.groups[cp.Group] = m
	}
	m[topicPartition{cp.Topic, cp.Partition}] = cp
}

// Next computes the checkpoint for a group whose committed offset on the
// source cluster's topic and partition is upstreamOffset (with the
// commit's metadata), translated by store. remoteTopic names the topic on
// the target cluster as MirrorCheckpointTask.renameTopicPartition does with
// the replication policy: the source alias prefixed
// (formatRemoteTopic(source, topic)), or, for a topic whose source per the
// policy is the target cluster itself, its original name (originalTopic).
//
// ok is false when Kafka emits nothing: no translation (see
// SyncStore.Translate) or a checkpoint that would not be more recent (see
// Checkpoints). When ok is true the checkpoint is also remembered as the
// last one, as MirrorCheckpointTask does when it hands the record over;
// write it to the checkpoints topic. Partitions without a committed offset
// and topics the topic filter excludes are the caller's to skip first.
func (c *Checkpoints) Next(group, topic string, partition int32, upstreamOffset int64, metadata string, store *SyncStore, remoteTopic func(string) string) (Checkpoint, bool) {
	downstream, ok := store.Translate(topic, partition, upstreamOffset)
	if !ok || downstream < 0 {
		return Checkpoint{}, false
	}
	cp := Checkpoint{
		Group:            group,
		Topic:            remoteTopic(topic),
		Partition:        partition,
		UpstreamOffset:   upstreamOffset,
		DownstreamOffset: downstream,
		Metadata:         metadata,
	}
	if !c.moreRecent(cp) {
		return Checkpoint{}, false
	}
	c.put(cp)
	return cp, true
}

// moreRecent is Kafka's checkpointIsMoreRecent.
func (c *Checkpoints) moreRecent(cp Checkpoint) bool {
	last, ok := c.Get(cp.Group, cp.Topic, cp.Partition)
	switch {
	case !ok:
		return true
	case cp.UpstreamOffset < last.UpstreamOffset:
		return true // the group rewound upstream: follow it
	default:
		return cp.DownstreamOffset > last.DownstreamOffset
	}
}

// Get returns the last checkpoint for a group and target topic partition.
func (c *Checkpoints) Get(group, topic string, partition int32) (Checkpoint, bool) {
	cp, ok := c.groups[group][topicPartition{topic, partition}]
	return cp, ok
}

// All returns every last checkpoint, sorted by group, topic and partition:
// what MM2's group offset sync (sync.group.offsets.enabled) commits for
// each group on the target cluster (CheckpointStore
// .computeConvertedUpstreamOffset).
func (c *Checkpoints) All() []Checkpoint {
	var out []Checkpoint
	for _, m := range c.groups {
		for _, cp := range m {
			out = append(out, cp)
		}
	}
	slices.SortFunc(out, func(a, b Checkpoint) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}
