package broker

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/group"
	"github.com/samsa-io/samsa/internal/model"
)

// brokerShareStates is the group coordinator's view of share-partition
// state (group.ShareStates: DescribeShareGroupOffsets,
// AlterShareGroupOffsets, DeleteShareGroupOffsets, DeleteGroups), served
// through the share coordinator wherever it is (share_state.go).
type brokerShareStates struct{ b *Broker }

var _ group.ShareStates = brokerShareStates{}

func (s brokerShareStates) Summary(ctx context.Context, g string, topic [16]byte, partitions []int32) (map[int32]group.ShareSummary, error) {
	out := make(map[int32]group.ShareSummary, len(partitions))
	for _, p := range partitions {
		st, found, err := s.b.shareSummary(ctx, shareKey(g, model.TopicID(topic), p))
		switch {
		case err != nil:
			out[p] = group.ShareSummary{StartOffset: -1, LeaderEpoch: -1, Err: shareStateError(err)}
		case !found:
			out[p] = group.ShareSummary{StartOffset: -1, LeaderEpoch: -1}
		default:
			out[p] = group.ShareSummary{StartOffset: st.StartOffset, LeaderEpoch: st.LeaderEpoch, DeliveryComplete: st.DeliveryComplete}
		}
	}
	return out, nil
}

// Initialize restarts a partition's state at offset with the next state
// epoch, which fences the leader's writes of the old state, and drops the
// leader's copy when it is this broker (another leader drops its copy when
// its group's last share session there closes, or reloads it when its
// next write is fenced).
func (s brokerShareStates) Initialize(ctx context.Context, g string, topic [16]byte, partition int32, offset int64) error {
	k := shareKey(g, model.TopicID(topic), partition)
	st, found, err := s.b.shareSummary(ctx, k)
	if err != nil {
		return shareStateError(err)
	}
	epoch := int32(0)
	if found {
		epoch = st.StateEpoch + 1
	}
	if err := s.b.shareInitialize(ctx, k, epoch, offset); err != nil {
		return shareStateError(err)
	}
	s.b.shareParts.drop(sharePartKey{group: g, topic: model.TopicID(topic), partition: partition})
	return nil
}

func (s brokerShareStates) Delete(ctx context.Context, g string, topic [16]byte, partitions []int32) error {
	var errs []error
	for _, p := range partitions {
		if err := s.b.shareDelete(ctx, shareKey(g, model.TopicID(topic), p)); err != nil {
			errs = append(errs, shareStateError(err))
			continue
		}
		s.b.shareParts.drop(sharePartKey{group: g, topic: model.TopicID(topic), partition: p})
	}
	return errors.Join(errs...)
}

// shareStateError is the kerr error a share-state failure is answered
// with: the coordinator's own, or COORDINATOR_NOT_AVAILABLE when it could
// not be reached in time.
func shareStateError(err error) error {
	var ke *kerr.Error
	if errors.As(err, &ke) && !errors.Is(err, errShareRetry) {
		return ke
	}
	return kerr.CoordinatorNotAvailable
}
