package broker

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/share"
	"github.com/samsa-io/samsa/internal/sharecoord"
)

// The share coordinator (internal/sharecoord) keeps share-partition state
// in __share_group_state; this file builds it, creates its topic, and is
// the share-partition leaders' way to it (Kafka's Persister): a key whose
// __share_group_state partition this broker leads is served here, any
// other is sent to its leader as a Kafka request
// (Read/Write/Initialize/DeleteShareGroupState,
// ReadShareGroupStateSummary over the inter-broker listener).

// startShareCoord builds the share coordinator over __share_group_state.
// The topic is created on first use (a share-partition's first load).
func (b *Broker) startShareCoord() {
	cfg := b.brokerConfig(b.meta.Load())
	b.shareCoord = sharecoord.New(sharecoord.Deps{
		Log:        internalLog{b: b, topic: sharecoord.StateTopic, readSize: cfg.Int("offsets.load.buffer.size")},
		Partitions: cfg.Int("share.coordinator.state.topic.num.partitions"),
		Clock:      b.cfg.Clock,
		Logger:     b.cfg.Logger,
	})
}

// ensureShareStateTopic creates __share_group_state with the
// share.coordinator.state.topic.* settings.
func (b *Broker) ensureShareStateTopic(ctx context.Context) error {
	cfg := b.brokerConfig(b.meta.Load())
	return b.ensureInternalTopic(ctx, sharecoord.StateTopic, cfg.Int("share.coordinator.state.topic.num.partitions"),
		int32(cfg.Int("share.coordinator.state.topic.replication.factor")), cfg.Int("share.coordinator.state.topic.segment.bytes"),
		map[string]string{"min.insync.replicas": fmt.Sprint(cfg.Int("share.coordinator.state.topic.min.isr"))})
}

// errShareRetry wraps the coordinator errors after which a caller looks
// the coordinator up again and retries.
// shareRetryBackoff spaces retries to a share coordinator that moved or
// is loading.
const shareRetryBackoff = 50 * time.Millisecond

var errShareRetry = errors.New("share coordinator moved or loading")

// shareCoordFor is where a key's state lives: this broker (addr "") or
// the inter-broker address of its __share_group_state partition's leader.
func (b *Broker) shareCoordFor(ctx context.Context, k share.Key) (local bool, addr string, err error) {
	if err := b.ensureShareStateTopic(ctx); err != nil {
		return false, "", fmt.Errorf("%w: %v", kerr.CoordinatorNotAvailable, err)
	}
	p := b.shareCoord.PartitionFor(k)
	leader, ok := b.coordinatorNode(b.meta.Load(), sharecoord.StateTopic, p)
	if !ok {
		return false, "", fmt.Errorf("%w: %s-%d has no live leader", kerr.CoordinatorNotAvailable, sharecoord.StateTopic, p)
	}
	if int32(leader) == b.cfg.NodeID {
		return true, "", nil
	}
	addr = b.leaderAddr(leader)
	if addr == "" {
		return false, "", fmt.Errorf("%w: broker %d has no inter-broker endpoint", kerr.CoordinatorNotAvailable, leader)
	}
	return false, addr, nil
}

// shareCall runs one persister operation against the key's coordinator,
// retrying while the coordinator moves or loads, until ctx ends.
func (b *Broker) shareCall(ctx context.Context, k share.Key, local func() int16, remote func(addr string) (int16, error)) error {
	for {
		isLocal, addr, err := b.shareCoordFor(ctx, k)
		var code int16
		if err == nil {
			if isLocal {
				code = local()
			} else {
				code, err = remote(addr)
			}
		}
		if err == nil && code == 0 {
			return nil
		}
		if err == nil {
			switch code {
			case kerr.NotCoordinator.Code, kerr.CoordinatorLoadInProgress.Code, kerr.CoordinatorNotAvailable.Code, kerr.RequestTimedOut.Code:
				err = fmt.Errorf("%w: %w", errShareRetry, kerr.ErrorForCode(code))
			default:
				return kerr.ErrorForCode(code)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("share state of %s: %w (last: %v)", share.CoordinatorKey(k), ctx.Err(), err)
		case <-time.After(shareRetryBackoff):
		}
	}
}

// shareRead reads a share-partition's state as the leader of its topic
// partition in leaderEpoch; found is false when it has none.
func (b *Broker) shareRead(ctx context.Context, k share.Key, leaderEpoch int32) (st sharecoord.State, found bool, err error) {
	err = b.shareCall(ctx, k, func() int16 {
		var code int16
		st, found, code = b.shareCoord.Read(ctx, k, leaderEpoch)
		return code
	}, func(addr string) (int16, error) {
		req := kmsg.NewPtrReadShareGroupStateRequest()
		req.GroupID = k.Group
		rt := kmsg.NewReadShareGroupStateRequestTopic()
		rt.TopicID = k.TopicID
		rp := kmsg.NewReadShareGroupStateRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch = k.Partition, leaderEpoch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		raw, err := b.peers.request(ctx, addr, req)
		if err != nil {
			return 0, err
		}
		resp := raw.(*kmsg.ReadShareGroupStateResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return 0, fmt.Errorf("ReadShareGroupState from %s: malformed response", addr)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode == kerr.UnknownTopicOrPartition.Code {
			found = false
			return 0, nil
		}
		if p.ErrorCode != 0 {
			return p.ErrorCode, nil
		}
		found = true
		st = sharecoord.State{StateEpoch: p.StateEpoch, LeaderEpoch: leaderEpoch, StartOffset: p.StartOffset}
		for _, sb := range p.StateBatches {
			st.Batches = append(st.Batches, share.StateBatch{FirstOffset: sb.FirstOffset, LastOffset: sb.LastOffset,
				DeliveryState: share.RecordState(sb.DeliveryState), DeliveryCount: sb.DeliveryCount})
		}
		return 0, nil
	})
	return st, found, err
}

// shareWrite stores a share-partition leader's state.
func (b *Broker) shareWrite(ctx context.Context, k share.Key, stateEpoch, leaderEpoch int32, st share.State) error {
	return b.shareCall(ctx, k, func() int16 {
		return b.shareCoord.Write(ctx, k, stateEpoch, leaderEpoch, st.StartOffset, st.Batches)
	}, func(addr string) (int16, error) {
		req := kmsg.NewPtrWriteShareGroupStateRequest()
		req.Version = 1
		req.GroupID = k.Group
		rt := kmsg.NewWriteShareGroupStateRequestTopic()
		rt.TopicID = k.TopicID
		rp := kmsg.NewWriteShareGroupStateRequestTopicPartition()
		rp.Partition, rp.StateEpoch, rp.LeaderEpoch, rp.StartOffset = k.Partition, stateEpoch, leaderEpoch, st.StartOffset
		for _, sb := range st.Batches {
			wb := kmsg.NewWriteShareGroupStateRequestTopicPartitionStateBatch()
			wb.FirstOffset, wb.LastOffset, wb.DeliveryState, wb.DeliveryCount = sb.FirstOffset, sb.LastOffset, int8(sb.DeliveryState), sb.DeliveryCount
			if sb.DeliveryState == share.Acknowledged || sb.DeliveryState == share.Archived {
				rp.DeliveryCompleteCount += int32(sb.LastOffset - sb.FirstOffset + 1)
			}
			rp.StateBatches = append(rp.StateBatches, wb)
		}
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		raw, err := b.peers.request(ctx, addr, req)
		if err != nil {
			return 0, err
		}
		return firstWriteCode(raw.(*kmsg.WriteShareGroupStateResponse))
	})
}

func firstWriteCode(resp *kmsg.WriteShareGroupStateResponse) (int16, error) {
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return 0, errors.New("WriteShareGroupState: malformed response")
	}
	return resp.Topics[0].Partitions[0].ErrorCode, nil
}

// shareInitialize (re)starts a share-partition's state at offset.
func (b *Broker) shareInitialize(ctx context.Context, k share.Key, stateEpoch int32, offset int64) error {
	return b.shareCall(ctx, k, func() int16 {
		return b.shareCoord.Initialize(ctx, k, stateEpoch, offset)
	}, func(addr string) (int16, error) {
		req := kmsg.NewPtrInitializeShareGroupStateRequest()
		req.GroupID = k.Group
		rt := kmsg.NewInitializeShareGroupStateRequestTopic()
		rt.TopicID = k.TopicID
		rp := kmsg.NewInitializeShareGroupStateRequestTopicPartition()
		rp.Partition, rp.StateEpoch, rp.StartOffset = k.Partition, stateEpoch, offset
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		raw, err := b.peers.request(ctx, addr, req)
		if err != nil {
			return 0, err
		}
		resp := raw.(*kmsg.InitializeShareGroupStateResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return 0, errors.New("InitializeShareGroupState: malformed response")
		}
		return resp.Topics[0].Partitions[0].ErrorCode, nil
	})
}

// shareDelete forgets a share-partition's state.
func (b *Broker) shareDelete(ctx context.Context, k share.Key) error {
	return b.shareCall(ctx, k, func() int16 {
		return b.shareCoord.Delete(ctx, k)
	}, func(addr string) (int16, error) {
		req := kmsg.NewPtrDeleteShareGroupStateRequest()
		req.GroupID = k.Group
		rt := kmsg.NewDeleteShareGroupStateRequestTopic()
		rt.TopicID = k.TopicID
		rp := kmsg.NewDeleteShareGroupStateRequestTopicPartition()
		rp.Partition = k.Partition
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		raw, err := b.peers.request(ctx, addr, req)
		if err != nil {
			return 0, err
		}
		resp := raw.(*kmsg.DeleteShareGroupStateResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return 0, errors.New("DeleteShareGroupState: malformed response")
		}
		return resp.Topics[0].Partitions[0].ErrorCode, nil
	})
}

// shareSummary reads a share-partition's start offset and
// delivery-complete count (DescribeShareGroupOffsets).
func (b *Broker) shareSummary(ctx context.Context, k share.Key) (st sharecoord.State, found bool, err error) {
	err = b.shareCall(ctx, k, func() int16 {
		var code int16
		st, found, code = b.shareCoord.Summary(k)
		return code
	}, func(addr string) (int16, error) {
		req := kmsg.NewPtrReadShareGroupStateSummaryRequest()
		req.Version = 1
		req.GroupID = k.Group
		rt := kmsg.NewReadShareGroupStateSummaryRequestTopic()
		rt.TopicID = k.TopicID
		rp := kmsg.NewReadShareGroupStateSummaryRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch = k.Partition, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		raw, err := b.peers.request(ctx, addr, req)
		if err != nil {
			return 0, err
		}
		resp := raw.(*kmsg.ReadShareGroupStateSummaryResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return 0, errors.New("ReadShareGroupStateSummary: malformed response")
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode == kerr.UnknownTopicOrPartition.Code {
			return 0, nil
		}
		if p.ErrorCode != 0 {
			return p.ErrorCode, nil
		}
		found = true
		st = sharecoord.State{StateEpoch: p.StateEpoch, LeaderEpoch: p.LeaderEpoch, StartOffset: p.StartOffset,
			DeliveryComplete: int64(p.DeliveryCompleteCount)}
		return 0, nil
	})
	return st, found, err
}

// shareKey is the persister's key of a topic partition's share-partition.
func shareKey(group string, topicID model.TopicID, partition int32) share.Key {
	return share.Key{Group: group, TopicID: [16]byte(topicID), Partition: partition}
}

// validShareCoordinatorKey reports whether a FindCoordinator share key is
// Kafka's "group:topicId:partition": a topic ID in Kafka's base64 form and
// a partition number (the group may hold colons).
func validShareCoordinatorKey(key string) bool {
	i := strings.LastIndexByte(key, ':')
	if i < 0 {
		return false
	}
	if p, err := strconv.ParseInt(key[i+1:], 10, 32); err != nil || p < 0 {
		return false
	}
	j := strings.LastIndexByte(key[:i], ':')
	if j < 0 {
		return false
	}
	id, err := base64.RawURLEncoding.DecodeString(key[j+1 : i])
	return err == nil && len(id) == 16
}
