package broker

// InitProducerId (key 22), versions 0-5.
//
// Idempotent producers (a null TransactionalID) get a new producer ID with
// epoch 0 (KIP-98), every time they ask, as from Kafka's transaction
// coordinator. That includes v3+ requests that carry the producer's current
// ID and epoch (KIP-360): for a producer without a transactional ID Kafka
// ignores them and hands out a fresh ID; the idempotent producer bumps its
// epoch itself. A request with only one of the two set is INVALID_REQUEST,
// as in Kafka.
//
// IDs come from blocks of controller.ProducerIDBlockSize that the
// controller commits before handing them out (KIP-730), so an ID is never
// given twice, across restarts too; the broker keeps its current block in
// memory and a block cut short by a restart is skipped. When no block can
// be had (the controller is shutting down or cannot commit) the answer is
// COORDINATOR_LOAD_IN_PROGRESS, which clients retry, as Kafka answers while
// its next block is pending.
//
// A transactional ID goes to the transaction coordinator (internal/txn):
// a new ID or an epoch bump that aborts the open transaction and fences the
// zombie (KIP-98, KIP-360), the transaction timeout checked against
// transaction.max.timeout.ms. An empty transactional ID is INVALID_REQUEST,
// as in Kafka. v6 (KIP-939, two-phase commit) is not advertised.
//
// Authorization (authz.go), before the request is checked: WRITE on the
// transactional ID, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED; without
// one, IDEMPOTENT_WRITE on the cluster or WRITE on any topic (KIP-679:
// Authorizer.authorizeByResourceType), else CLUSTER_AUTHORIZATION_FAILED.

import (
	"context"
	"sync"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.InitProducerID, min: 0, max: 5, handle: typed(handleInitProducerID)})
}

func handleInitProducerID(b *Broker, c *conn, req *kmsg.InitProducerIDRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	switch {
	case req.TransactionalID != nil && !b.authorize(c, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, *req.TransactionalID):
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
	case req.TransactionalID == nil && !b.mayProduceIdempotently(c):
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
	case req.Version >= 3 && (req.ProducerID == -1) != (req.ProducerEpoch == -1):
		resp.ErrorCode = kerr.InvalidRequest.Code
	case req.TransactionalID != nil && *req.TransactionalID == "":
		resp.ErrorCode = kerr.InvalidRequest.Code
	case req.TransactionalID != nil:
		return b.txns.InitProducerID(b.tasks.Context(), req), nil
	default:
		id, err := b.producerIDs.take(b.tasks.Context(), b.allocateProducerIDs)
		if err != nil {
			c.log.Warn("no producer ID block", "err", err)
			resp.ErrorCode = kerr.CoordinatorLoadInProgress.Code
			break
		}
		resp.ProducerID, resp.ProducerEpoch = id, 0
	}
	return resp, nil
}

// mayProduceIdempotently: IDEMPOTENT_WRITE on the cluster, or WRITE on
// some topic. A denial is audited as the IDEMPOTENT_WRITE it answers.
func (b *Broker) mayProduceIdempotently(c *conn) bool {
	a := b.authorizer()
	if b.permitsCluster(c, kmsg.ACLOperationIdempotentWrite) ||
		a.AuthorizeAny(c.principal, c.aclHost(), kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTopic) {
		return true
	}
	b.denied(c, kmsg.ACLOperationIdempotentWrite, kmsg.ACLResourceTypeCluster, auth.ClusterName)
	return false
}

// producerIDAllocator hands out the producer IDs of the broker's current
// block and asks the controller for the next block when it runs out.
type producerIDAllocator struct {
	mu sync.Mutex
	// next is the next ID to hand out and end is one past the block's
	// last; next == end means no block. Both guarded by mu.
	next, end int64
}

// take returns an unused producer ID. The controller is asked for a new
// block with mu held: callers that run out together wait for one block
// rather than each taking one, and that happens once per
// ProducerIDBlockSize IDs.
func (a *producerIDAllocator) take(ctx context.Context, allocate func(context.Context) (int64, int, error)) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next >= a.end {
		first, count, err := allocate(ctx)
		if err != nil {
			return -1, err
		}
		a.next, a.end = first, first+int64(count)
	}
	id := a.next
	a.next++
	return id, nil
}
