package broker

// The leader's side of replication: a Fetch whose replica ID is a broker
// (ReplicaID before v15, ReplicaState from v15, KIP-903) is a follower
// copying the partition. It reads past the high watermark up to the log
// end, reports the follower's progress to the partition (which moves the
// high watermark and may propose an ISR change), and answers a follower
// whose log diverges from the leader's with the diverging epoch (KIP-320)
// and no records. Followers fetch without sessions. Their records go from
// the segment files to the socket by sendfile, as a consumer's do: the
// answer is encoded around them (fetch_encode.go), so the leader copies
// none of the bytes every follower fetches.

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/replication"
	"github.com/samsa-io/samsa/internal/storage"
)

// replicaOf returns the broker a fetch comes from, -1 for a consumer.
func replicaOf(req *kmsg.FetchRequest) int32 {
	if req.Version >= 15 {
		return req.ReplicaState.ID
	}
	return req.ReplicaID
}

// refusedReplicaFetch answers a follower fetch from a principal without
// CLUSTER_ACTION: TOPIC_AUTHORIZATION_FAILED for every partition, as
// Kafka's KafkaApis.handleFetchRequest.
func refusedReplicaFetch(req *kmsg.FetchRequest) *kmsg.FetchResponse {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, fp := range t.Partitions {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition, rp.ErrorCode = fp.Partition, kerr.TopicAuthorizationFailed.Code
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func (b *Broker) handleReplicaFetch(c *conn, h requestHeader, req *kmsg.FetchRequest, replica int32) (*frame, error) {
	f, waited := b.replicaLongPoll(h, req, replica)
	if waited > 0 {
		c.waited(purgatoryFetchFollower, waited)
	}
	return f, nil
}

// replicaLongPoll is handleReplicaFetch, which it also tells how long it
// waited for an append.
func (b *Broker) replicaLongPoll(h requestHeader, req *kmsg.FetchRequest, replica int32) (*frame, time.Duration) {
	var waited time.Duration
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	deadline := time.Now().Add(time.Duration(max(req.MaxWaitMillis, 0)) * time.Millisecond)
	var w *replication.Waiter
	defer func() {
		if w != nil {
			w.Done()
		}
	}()
	var holes fetchHoles
	for {
		// Only the last read is sent: a read the long poll reads past lets
		// go of its ranges here, so their segments can close (a deleted
		// segment's files stay open while a range pins it).
		holes.release()
		parts, n := b.readReplicaFetch(req, resp, replica, &holes)
		if n >= int64(req.MinBytes) || !time.Now().Before(deadline) || len(parts) == 0 {
			b.metrics.replicationBytesOut.Add(uint64(n))
			// The frame holds the reads from here; the connection's writer
			// releases them once they are sent, or the send failed.
			return encodeFetchResponse(h.correlationID, resp, holes), waited
		}
		if w == nil {
			// Registered before the next read, so an append between the
			// read above and now is not missed: read again first.
			w = replication.NewAppendWaiter(parts)
			continue
		}
		// Nothing new: wait for an append (or a high watermark move) on
		// any of the partitions, as a consumer's long poll does.
		ctx, cancel := context.WithDeadline(b.tasks.Context(), deadline)
		waitStart := time.Now()
		w.Wait(ctx)
		waited += time.Since(waitStart)
		cancel()
		if b.tasks.Context().Err() != nil {
			return encodeFetchResponse(h.correlationID, resp, holes), waited
		}
	}
}

// readReplicaFetch fills resp with one read of every requested partition,
// and holes with the records read, and returns the partitions found and
// the record bytes read.
func (b *Broker) readReplicaFetch(req *kmsg.FetchRequest, resp *kmsg.FetchResponse, replica int32, holes *fetchHoles) ([]*replication.Partition, int64) {
	var parts []*replication.Partition
	var n int64
	resp.Topics = resp.Topics[:0]
	*holes = (*holes)[:0]
	for _, t := range req.Topics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		ts, code := b.topics.lookup(req.Version >= 13, t.TopicID, t.Topic) // v13+ names topics by ID
		th := make([]storage.ReadResult, len(t.Partitions))
		for i, fp := range t.Partitions {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition, rp.ErrorCode = fp.Partition, code
			var p *replication.Partition
			if code == 0 {
				p, rp.ErrorCode = ts.partition(fp.Partition)
			}
			if rp.ErrorCode == 0 {
				parts = append(parts, p)
				th[i] = b.fillReplicaPartition(&rp, p, replica, fp)
				n += th[i].Size
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
		*holes = append(*holes, th)
	}
	return parts, n
}

// fillReplicaPartition answers one partition of a follower's fetch and
// returns the records to send with it, an empty range for none.
func (b *Broker) fillReplicaPartition(rp *kmsg.FetchResponseTopicPartition, p *replication.Partition, replica int32, fp kmsg.FetchRequestTopicPartition) storage.ReadResult {
	rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
	rp.PreferredReadReplica = -1
	fr, err := p.FollowerFetch(replica, fp.FetchOffset, fp.LastFetchedEpoch, fp.CurrentLeaderEpoch, fp.PartitionMaxBytes, b.cfg.Clock.Now())
	if fr.HighWatermark > 0 || err == nil {
		rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = fr.HighWatermark, p.LastStableOffset(), fr.LogStartOffset
	}
	if err != nil {
		fr.Records.Release()
		rp.ErrorCode = replicaFetchErrorCode(err)
		return storage.ReadResult{}
	}
	if fr.Diverged {
		fr.Records.Release()
		rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = fr.DivergingEpoch.Epoch, fr.DivergingEpoch.EndOffset
		return storage.ReadResult{}
	}
	return fr.Records
}

func replicaFetchErrorCode(err error) int16 {
	switch {
	case errors.Is(err, replication.ErrFencedLeaderEpoch):
		return kerr.FencedLeaderEpoch.Code
	case errors.Is(err, replication.ErrUnknownLeaderEpoch):
		return kerr.UnknownLeaderEpoch.Code
	case errors.Is(err, replication.ErrNotLeader):
		return kerr.NotLeaderForPartition.Code
	case errors.Is(err, replication.ErrNotReplica):
		return kerr.ReplicaNotAvailable.Code
	case errors.Is(err, storage.ErrOffsetOutOfRange):
		return kerr.OffsetOutOfRange.Code
	}
	return kerr.KafkaStorageError.Code
}
