package group

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The Kafka error codes the coordinator answers with, spelled out once so
// the state machine reads as Kafka's documentation does.
var (
	codeCoordinatorNotAvailable   = kerr.CoordinatorNotAvailable.Code
	codeNotCoordinator            = kerr.NotCoordinator.Code
	codeCoordinatorLoadInProgress = kerr.CoordinatorLoadInProgress.Code
	codeInvalidGroupID            = kerr.InvalidGroupID.Code
	codeGroupIDNotFound           = kerr.GroupIDNotFound.Code
	codeNonEmptyGroup             = kerr.NonEmptyGroup.Code
	codeUnknownMemberID           = kerr.UnknownMemberID.Code
	codeMemberIDRequired          = kerr.MemberIDRequired.Code
	codeFencedInstanceID          = kerr.FencedInstanceID.Code
	codeIllegalGeneration         = kerr.IllegalGeneration.Code
	codeRebalanceInProgress       = kerr.RebalanceInProgress.Code
	codeInconsistentGroupProtocol = kerr.InconsistentGroupProtocol.Code
	codeInvalidSessionTimeout     = kerr.InvalidSessionTimeout.Code
	codeGroupMaxSizeReached       = kerr.GroupMaxSizeReached.Code
	codeUnknownTopicOrPartition   = kerr.UnknownTopicOrPartition.Code
	codeUnknownTopicID            = kerr.UnknownTopicID.Code
	codeOffsetMetadataTooLarge    = kerr.OffsetMetadataTooLarge.Code
	codeInvalidCommitOffsetSize   = kerr.InvalidCommitOffsetSize.Code
	codeGroupSubscribedToTopic    = kerr.GroupSubscribedToTopic.Code
	codeUnknownServerError        = kerr.UnknownServerError.Code
	codeInvalidRequest            = kerr.InvalidRequest.Code
	codeUnsupportedVersion        = kerr.UnsupportedVersion.Code
	codeFencedMemberEpoch         = kerr.FencedMemberEpoch.Code
	codeStaleMemberEpoch          = kerr.StaleMemberEpoch.Code
	codeUnreleasedInstanceID      = kerr.UnreleasedInstanceID.Code
	codeUnsupportedAssignor       = kerr.UnsupportedAssignor.Code
	codeInvalidRegularExpression  = kerr.InvalidRegularExpression.Code
	codeUnstableOffsetCommit      = kerr.UnstableOffsetCommit.Code
)

// appendError is the Kafka error an append to __consumer_offsets failed
// with. A Log adapter reports a Kafka condition by returning (or wrapping)
// the kerr error; a deadline is REQUEST_TIMED_OUT; anything else is taken
// as the partition being unavailable, which clients retry.
func appendError(err error) *kerr.Error {
	var ke *kerr.Error
	switch {
	case errors.As(err, &ke):
		return ke
	case errors.Is(err, context.DeadlineExceeded):
		return kerr.RequestTimedOut
	}
	return kerr.CoordinatorNotAvailable
}

// commitErrorCode maps a failed offset-commit append to the code the commit
// answers with, as Kafka's GroupMetadataManager.storeOffsets does.
func commitErrorCode(err error) int16 {
	switch ke := appendError(err); ke {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend,
		kerr.RequestTimedOut:
		return codeCoordinatorNotAvailable
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
		return codeNotCoordinator
	case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
		return codeInvalidCommitOffsetSize
	default:
		return ke.Code
	}
}

// groupStoreErrorCode maps a failed group-metadata append to the code a
// SyncGroup (or a static member's JoinGroup) answers with, as Kafka's
// GroupMetadataManager.storeGroup does: a timeout becomes
// REBALANCE_IN_PROGRESS so that members simply rejoin.
func groupStoreErrorCode(err error) int16 {
	switch ke := appendError(err); ke {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend:
		return codeCoordinatorNotAvailable
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
		return codeNotCoordinator
	case kerr.RequestTimedOut:
		return codeRebalanceInProgress
	case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
		return codeUnknownServerError
	default:
		return ke.Code
	}
}

// consumerStoreErrorCode maps a failed append of a consumer group's records
// to the code ConsumerGroupHeartbeat answers with, as Kafka's group
// coordinator normalizes write errors.
func consumerStoreErrorCode(err error) int16 {
	switch ke := appendError(err); ke {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend,
		kerr.RequestTimedOut:
		return codeCoordinatorNotAvailable
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
		return codeNotCoordinator
	case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
		return codeUnknownServerError
	default:
		return ke.Code
	}
}

// logStoreError is the done callback of a write nobody waits on: a failure
// is logged, and the state stands (Kafka does the same when the metadata of
// a group that became empty cannot be stored).
func logStoreError(generation int32) func(*step, error) {
	return func(s *step, err error) {
		if err != nil {
			s.log.Warn("storing group metadata failed", "generation", generation, "err", err)
		}
	}
}

// errName is a code's Kafka name, for logs and test output.
func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if err := kerr.ErrorForCode(code); err != nil {
		var ke *kerr.Error
		if errors.As(err, &ke) {
			return ke.Message
		}
	}
	return "UNKNOWN"
}
