package broker

// Follower fetching (KIP-392), the leader's half: with
// replica.selector.class set to Kafka's RackAwareReplicaSelector, a
// consumer that names its rack (Fetch v11+ RackID, client.rack) and
// fetches from a leader in another rack is sent to an in-sync follower in
// its own rack: the partition is answered with PreferredReadReplica and no
// records, and the client fetches from that replica until its metadata
// refreshes or the replica answers an error. The follower's half, serving
// the fetch below its own high watermark, is 01_fetch.go's. Kafka's
// ReplicaManager.findPreferredReadReplica and RackAwareReplicaSelector are
// the model: the same candidates (replication.Partition.ReadReplicas) and
// the same choice (selectRackAware).

import (
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/replication"
)

// noPreferredReplica is PreferredReadReplica when the client stays where
// it is.
const noPreferredReplica int32 = -1

// preferredReadReplica is the replica the leader sends a consumer in rack
// to, for its fetch of fp, when replica.selector.class is Kafka's
// rack-aware selector and the fetch is v11+ (routeConsumerFetch checks);
// noPreferredReplica when the leader serves it: on a replica that does not
// lead, or when the selector picks the leader.
func (b *Broker) preferredReadReplica(c *conn, rack string, fp *fetchPart, img *metadata.Image) int32 {
	replicas := fp.p.ReadReplicas(fp.sp.fetchOffset, b.cfg.Clock.Now())
	if len(replicas) < 2 {
		return noPreferredReplica
	}
	// A replica counts only if a client can reach it: registered, not
	// fenced, with an endpoint on the listener this client came in on (in
	// Kafka, one without it has no rack and is never picked).
	rackOf := func(id int32) (string, bool) {
		br, ok := img.Broker(model.NodeID(id))
		if !ok || br.Fenced {
			return "", false
		}
		for _, ep := range br.Endpoints {
			if ep.Name == c.listener {
				return br.Rack, true
			}
		}
		return "", false
	}
	if id := selectRackAware(rack, replicas, rackOf); id != replicas[0].ID {
		return id
	}
	return noPreferredReplica
}

// selectRackAware is Kafka's RackAwareReplicaSelector over replicas, the
// leader first: the leader when no reachable replica is in the client's
// rack or the leader is; else the replica of that rack with the highest
// log end, then the one caught up most recently, then the highest ID.
func selectRackAware(clientRack string, replicas []replication.ReplicaView, rackOf func(id int32) (string, bool)) int32 {
	leader := replicas[0]
	best, found := leader, false
	for _, r := range replicas {
		if rack, ok := rackOf(r.ID); !ok || rack != clientRack {
			continue
		}
		if r.ID == leader.ID {
			return leader.ID
		}
		if !found || betterReadReplica(r, best) {
			best, found = r, true
		}
	}
	return best.ID
}

// betterReadReplica orders replicas as Kafka's ReplicaView.comparator
// does, for the most caught-up one.
func betterReadReplica(a, b replication.ReplicaView) bool {
	switch {
	case a.LogEnd != b.LogEnd:
		return a.LogEnd > b.LogEnd
	case a.SinceCaughtUp != b.SinceCaughtUp:
		return a.SinceCaughtUp < b.SinceCaughtUp
	}
	return a.ID > b.ID
}
