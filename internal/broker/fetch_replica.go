package broker

// The leader's side of replication: a Fetch whose replica ID is a broker
// (ReplicaID before v15, ReplicaState from v15, KIP-903) is a follower
// copying the partition. It reads past the high watermark up to the log
// end, reports the follower's progress to the partition (which moves the
// high watermark and may propose an ISR change), and answers a follower
// whose log diverges from the leader's with the diverging epoch (KIP-320)
// and no records. Followers fetch without sessions; the answer copies the
// records (no sendfile), as the fetcher appends them in memory.

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

func (b *Broker) handleReplicaFetch(h requestHeader, req *kmsg.FetchRequest, replica int32) (*frame, error) {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	deadline := time.Now().Add(time.Duration(max(req.MaxWaitMillis, 0)) * time.Millisecond)
	for {
		var parts []*replication.Partition
		resp.Topics = resp.Topics[:0]
		bytes := 0
		for _, t := range req.Topics {
			rt := kmsg.NewFetchResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			var ts *topicState
			var ok bool
			if req.Version >= 13 {
				ts, ok = b.topics.byTopicID(t.TopicID)
			} else {
				ts, ok = b.topics.byTopicName(t.Topic)
			}
			for _, p := range t.Partitions {
				rp := kmsg.NewFetchResponseTopicPartition()
				rp.Partition = p.Partition
				if !ok {
					rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
					if req.Version >= 13 {
						rp.ErrorCode = kerr.UnknownTopicID.Code
					}
					rt.Partitions = append(rt.Partitions, rp)
					continue
				}
				part, code := ts.partition(p.Partition)
				if code != 0 {
					rp.ErrorCode = code
					rt.Partitions = append(rt.Partitions, rp)
					continue
				}
				parts = append(parts, part)
				bytes += b.fillReplicaPartition(&rp, part, replica, p)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		if int32(bytes) >= req.MinBytes || !time.Now().Before(deadline) || len(parts) == 0 {
			return encodeResponse(h, resp), nil
		}
		// Nothing new: wait for an append (or a high watermark move) on
		// any of the partitions, as a consumer's long poll does.
		w := replication.NewWaiter(parts)
		ctx, cancel := context.WithDeadline(b.tasks.Context(), deadline)
		w.Wait(ctx)
		cancel()
		w.Done()
		if b.tasks.Context().Err() != nil {
			return encodeResponse(h, resp), nil
		}
	}
}

// fillReplicaPartition answers one partition of a follower's fetch and
// returns the record bytes it carries.
func (b *Broker) fillReplicaPartition(rp *kmsg.FetchResponseTopicPartition, p *replication.Partition, replica int32, fp kmsg.FetchRequestTopicPartition) int {
	rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
	rp.PreferredReadReplica = -1
	fr, err := p.FollowerFetch(replica, fp.FetchOffset, fp.LastFetchedEpoch, fp.CurrentLeaderEpoch, fp.PartitionMaxBytes, b.cfg.Clock.Now())
	defer fr.Records.Release()
	if fr.HighWatermark > 0 || err == nil {
		rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = fr.HighWatermark, p.LastStableOffset(), fr.LogStartOffset
	}
	if err != nil {
		rp.ErrorCode = replicaFetchErrorCode(err)
		return 0
	}
	if fr.Diverged {
		rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = fr.DivergingEpoch.Epoch, fr.DivergingEpoch.EndOffset
		return 0
	}
	data, err := fr.Records.ReadAll()
	if err != nil {
		rp.ErrorCode = kerr.KafkaStorageError.Code
		return 0
	}
	rp.RecordBatches = data
	return len(data)
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
