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
	var w *replication.Waiter
	defer func() {
		if w != nil {
			w.Done()
		}
	}()
	for {
		parts, n := b.readReplicaFetch(req, resp, replica)
		if int32(n) >= req.MinBytes || !time.Now().Before(deadline) || len(parts) == 0 {
			return encodeResponse(h, resp), nil
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
		w.Wait(ctx)
		cancel()
		if b.tasks.Context().Err() != nil {
			return encodeResponse(h, resp), nil
		}
	}
}

// readReplicaFetch fills resp with one read of every requested partition
// and returns the partitions found and the record bytes read.
func (b *Broker) readReplicaFetch(req *kmsg.FetchRequest, resp *kmsg.FetchResponse, replica int32) ([]*replication.Partition, int) {
	var parts []*replication.Partition
	n := 0
	resp.Topics = resp.Topics[:0]
	for _, t := range req.Topics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		ts, code := b.topics.lookup(req.Version >= 13, t.TopicID, t.Topic) // v13+ names topics by ID
		for _, fp := range t.Partitions {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition, rp.ErrorCode = fp.Partition, code
			var p *replication.Partition
			if code == 0 {
				p, rp.ErrorCode = ts.partition(fp.Partition)
			}
			if rp.ErrorCode == 0 {
				parts = append(parts, p)
				n += b.fillReplicaPartition(&rp, p, replica, fp)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return parts, n
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
