package controller

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// DirAssignment is one partition of an AssignReplicasToDirs request: the
// log directory the broker's replica of it is in (KIP-858).
type DirAssignment struct {
	TopicID   model.TopicID
	Partition int32
	Directory string // Kafka's base64 directory ID
}

// AssignReplicasToDirs records where a broker's replicas are, as Kafka's
// handleAssignReplicasToDirs: each partition's Directories entry for the
// broker becomes the given directory. A stale broker epoch refuses the
// whole request (STALE_BROKER_EPOCH); per partition, an unknown topic is
// UNKNOWN_TOPIC_ID, an unknown partition UNKNOWN_TOPIC_OR_PARTITION, a
// partition the broker does not replicate NOT_LEADER_OR_FOLLOWER. A
// replica assigned to a directory its broker does not have online leaves
// the ISR and its leadership at once, in the same batch.
//
// A replica that moves from a directory that is offline to another (the
// broker restarted without the failed disk and made the replica anew,
// empty) also leaves the ISR, unless it is the last member, so that the
// new empty replica is not counted in sync before it has fetched.
func (c *Controller) AssignReplicasToDirs(ctx context.Context, broker model.NodeID, brokerEpoch int64, as []DirAssignment) ([]*kerr.Error, *kerr.Error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.checkWritableLocked() != nil {
		return nil, kerr.NotController
	}
	img := c.Image()
	b, ok := img.Broker(broker)
	if !ok || b.Epoch != brokerEpoch {
		return nil, kerr.StaleBrokerEpoch
	}
	out := make([]*kerr.Error, len(as))
	var recs []metadata.Record
	elect := false
	for i, a := range as {
		t, ok := img.TopicByID(a.TopicID)
		switch {
		case !ok:
			out[i] = kerr.UnknownTopicID
			continue
		case a.Partition < 0 || int(a.Partition) >= len(t.Partitions):
			out[i] = kerr.UnknownTopicOrPartition
			continue
		}
		p := t.Partitions[a.Partition]
		at := slices.Index(p.Replicas, broker)
		if at < 0 {
			out[i] = kerr.NotLeaderForPartition
			continue
		}
		was := p.Directory(broker)
		if was == a.Directory {
			continue
		}
		dirs := slices.Clone(p.Directories)
		if len(dirs) == 0 {
			dirs = make([]string, len(p.Replicas))
		}
		dirs[at] = a.Directory
		ch := metadata.PartitionChange{TopicID: t.ID, Partition: p.Partition, Directories: dirs}
		if !b.HasOnlineDir(was) && slices.Contains(p.ISR, broker) && len(p.ISR) > 1 {
			isr := slices.DeleteFunc(slices.Clone(p.ISR), func(id model.NodeID) bool { return id == broker })
			ch.ISR = isr
			if p.Leader == broker {
				leader := metadata.NoLeader
				for _, r := range p.Replicas {
					if slices.Contains(isr, r) && c.usable(img, r) && img.ReplicaOnline(p, r) {
						leader = r
						break
					}
				}
				ch.Leader = &leader
			}
		}
		// A replica that goes offline needs its leaderships elected away;
		// one that comes online from a directory unknown or offline (a
		// directory adopted with a new ID, a replica made anew) may be the
		// leader a leaderless partition waits for.
		elect = elect || !b.HasOnlineDir(a.Directory) || !b.HasOnlineDir(was)
		recs = append(recs, ch)
	}
	if len(recs) == 0 {
		return out, nil
	}
	if elect {
		next, err := img.Apply(recs...)
		if err != nil {
			return nil, kerr.UnknownServerError
		}
		recs = append(recs, c.elections(next, func(id model.NodeID) bool { return c.usable(img, id) }, nil)...)
	}
	if err := c.proposeLocked(ctx, recs); err != nil {
		return nil, proposeFailure(err).err
	}
	return out, nil
}
