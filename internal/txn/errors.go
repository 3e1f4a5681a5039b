package txn

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The Kafka error codes the coordinator answers with, spelled out once so
// the state machine reads as Kafka's documentation does.
var (
	codeNotCoordinator            = kerr.NotCoordinator.Code
	codeCoordinatorLoadInProgress = kerr.CoordinatorLoadInProgress.Code
	codeCoordinatorNotAvailable   = kerr.CoordinatorNotAvailable.Code
	codeConcurrentTransactions    = kerr.ConcurrentTransactions.Code
	codeInvalidTxnState           = kerr.InvalidTxnState.Code
	codeInvalidProducerIDMapping  = kerr.InvalidProducerIDMapping.Code
	codeInvalidProducerEpoch      = kerr.InvalidProducerEpoch.Code
	codeProducerFenced            = kerr.ProducerFenced.Code
	codeInvalidTransactionTimeout = kerr.InvalidTransactionTimeout.Code
	codeTransactionalIDNotFound   = kerr.TransactionalIDNotFound.Code
	codeOperationNotAttempted     = kerr.OperationNotAttempted.Code
	codeUnknownTopicOrPartition   = kerr.UnknownTopicOrPartition.Code
	codeInvalidRequest            = kerr.InvalidRequest.Code
	codeUnknownServerError        = kerr.UnknownServerError.Code
)

// fencedCode is PRODUCER_FENCED (KIP-588) for the request versions that
// know it, INVALID_PRODUCER_EPOCH for older clients.
func fencedCode(version, firstVersion int16) int16 {
	if version >= firstVersion {
		return codeProducerFenced
	}
	return codeInvalidProducerEpoch
}

// writeErrorCode maps a failed append to __transaction_state to the code a
// request answers with, as Kafka's TransactionStateManager does: a
// partition that cannot take writes is COORDINATOR_NOT_AVAILABLE (clients
// retry), one this broker no longer leads is NOT_COORDINATOR (clients look
// the coordinator up again).
func writeErrorCode(err error) int16 {
	var ke *kerr.Error
	switch {
	case errors.As(err, &ke):
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return codeCoordinatorNotAvailable
	default:
		return codeCoordinatorNotAvailable
	}
	switch ke {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend,
		kerr.RequestTimedOut:
		return codeCoordinatorNotAvailable
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
		return codeNotCoordinator
	case kerr.MessageTooLarge, kerr.RecordListTooLarge:
		return codeUnknownServerError
	}
	return ke.Code
}

// errName is a code's Kafka name, for logs and test output.
func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	var ke *kerr.Error
	if errors.As(kerr.ErrorForCode(code), &ke) {
		return ke.Message
	}
	return "UNKNOWN"
}
