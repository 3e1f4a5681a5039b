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
//
// The leader's replication throttle (replication_throttle.go) applies to
// the partitions leader.replication.throttled.replicas lists for this
// broker, for a follower outside the ISR: past the rate such a partition
// is answered without records (its fetch offset still counts as the
// follower's progress, as in Kafka), and below it the records are capped
// at what the rate has left. A long poll held only by throttled partitions
// wakes when the rate allows them again, not at its max wait.

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/quota"
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
		rr := b.readReplicaFetch(req, resp, replica, &holes)
		n := rr.bytes
		if n >= int64(req.MinBytes) || !time.Now().Before(deadline) || len(rr.parts) == 0 {
			b.metrics.replicationBytesOut.Add(uint64(n))
			b.replThrottle.leader.record(rr.listedBytes, rr.held, b.cfg.Clock.Now())
			rr.budget.Finish()
			// The frame holds the reads from here; the connection's writer
			// releases them once they are sent, or the send failed.
			return encodeFetchResponse(h.correlationID, resp, holes), waited
		}
		rr.budget.Finish() // this read is not sent: the next one counts
		if w == nil {
			// Registered before the next read, so an append between the
			// read above and now is not missed: read again first.
			w = replication.NewAppendWaiter(rr.parts)
			continue
		}
		// Nothing new: wait for an append (or a high watermark move) on
		// any of the partitions, as a consumer's long poll does, or for
		// the throttle to let a held partition through again.
		until := deadline
		if rr.held > 0 {
			until = minTime(until, time.Now().Add(b.replThrottle.leader.q.Reopens(b.cfg.Clock.Now())))
		}
		ctx, cancel := context.WithDeadline(b.tasks.Context(), until)
		waitStart := time.Now()
		w.Wait(ctx)
		waited += time.Since(waitStart)
		cancel()
		if b.tasks.Context().Err() != nil {
			return encodeFetchResponse(h.correlationID, resp, holes), waited
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// replicaRead is what one read of a follower's fetch found.
type replicaRead struct {
	parts []*replication.Partition // the partitions found
	bytes int64                    // record bytes read
	// listedBytes are the record bytes of the partitions the leader's
	// throttle lists, held the partitions it held back.
	listedBytes int64
	held        int
	// budget holds what the throttle granted the read until it is sent,
	// or read again (Finish).
	budget quota.Budget
}

// readReplicaFetch fills resp with one read of every requested partition,
// and holes with the records read.
func (b *Broker) readReplicaFetch(req *kmsg.FetchRequest, resp *kmsg.FetchResponse, replica int32, holes *fetchHoles) replicaRead {
	var out replicaRead
	now := b.cfg.Clock.Now()
	out.budget = b.replThrottle.leader.q.Budget(now)
	budget := &out.budget
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
				out.parts = append(out.parts, p)
				listed := ts.throttles.leader.Has(fp.Partition)
				var held bool
				th[i], held = b.fillReplicaPartition(&rp, p, replica, fp, listed, budget, now)
				out.bytes += th[i].Size
				if listed {
					out.listedBytes += th[i].Size
				}
				if held {
					out.held++
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
		*holes = append(*holes, th)
	}
	return out
}

// fillReplicaPartition answers one partition of a follower's fetch and
// returns the records to send with it, an empty range for none, and
// whether the throttle held records back: listed says the leader's
// throttle lists the partition, budget is what the fetch may still bring
// of such partitions.
func (b *Broker) fillReplicaPartition(rp *kmsg.FetchResponseTopicPartition, p *replication.Partition, replica int32, fp kmsg.FetchRequestTopicPartition,
	listed bool, budget *quota.Budget, now time.Time) (storage.ReadResult, bool) {
	rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
	rp.PreferredReadReplica = -1
	// The ISR is asked only of listed partitions: the others never wait.
	capped := listed && !p.InISR(replica)
	maxBytes, granted := budget.Take(listed, !capped, fp.PartitionMaxBytes)
	// A held partition is read all the same: the fetch offset is the
	// follower's progress, which may take it into the ISR.
	fr, err := p.FollowerFetch(replica, fp.FetchOffset, fp.LastFetchedEpoch, fp.CurrentLeaderEpoch, maxBytes, now)
	if fr.HighWatermark > 0 || err == nil {
		rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = fr.HighWatermark, p.LastStableOffset(), fr.LogStartOffset
	}
	if err != nil {
		fr.Records.Release()
		rp.ErrorCode = replicaFetchErrorCode(err)
		return storage.ReadResult{}, false
	}
	if fr.Diverged {
		fr.Records.Release()
		rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = fr.DivergingEpoch.Epoch, fr.DivergingEpoch.EndOffset
		return storage.ReadResult{}, false
	}
	if !granted {
		// Held back: counted only when there was something to hold.
		held := fr.Records.Size > 0
		fr.Records.Release()
		return storage.ReadResult{}, held
	}
	if capped {
		budget.Settle(maxBytes, fr.Records.Size)
	}
	return fr.Records, false
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
