package broker

// FindCoordinator (key 10), versions 0-6.
//
// This node coordinates every group (and will coordinate every
// transactional ID): the answer is always our advertised endpoint on the
// caller's listener. v4+ looks up several keys at once (KIP-699).
//
// For a group key, __consumer_offsets is created on first use with the
// offsets.topic.* configs, as Kafka creates it, and for a transactional ID
// __transaction_state with the transaction.state.log.* configs; if that
// fails the key gets COORDINATOR_NOT_AVAILABLE and the client retries. The
// empty group ID is a group like any other (old simple consumers commit
// under it); an empty transactional ID is INVALID_REQUEST.
//
// Not yet: share groups (type 2) are not supported (INVALID_REQUEST).

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.FindCoordinator, min: 0, max: 6, handle: typed(handleFindCoordinator)})
}

const (
	coordinatorGroup       = 0
	coordinatorTransaction = 1
)

func handleFindCoordinator(b *Broker, c *conn, req *kmsg.FindCoordinatorRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	keys := req.CoordinatorKeys
	if req.Version < 4 {
		keys = []string{req.CoordinatorKey}
	}
	self := b.advertised(c.listener)
	for _, key := range keys {
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key, co.NodeID, co.Host, co.Port = key, -1, "", -1
		if code, msg := b.coordinatorFor(req.CoordinatorType, key); code != 0 {
			co.ErrorCode, co.ErrorMessage = code, kmsg.StringPtr(msg)
		} else {
			co.NodeID, co.Host, co.Port = b.cfg.NodeID, self.Host, int32(self.Port)
		}
		resp.Coordinators = append(resp.Coordinators, co)
	}
	if req.Version < 4 {
		co := resp.Coordinators[0]
		resp.Coordinators = nil
		resp.ErrorCode, resp.NodeID, resp.Host, resp.Port = co.ErrorCode, co.NodeID, co.Host, co.Port
		if req.Version >= 1 {
			resp.ErrorMessage = co.ErrorMessage
		}
	}
	return resp, nil
}

func (b *Broker) coordinatorFor(keyType int8, key string) (int16, string) {
	switch keyType {
	case coordinatorGroup:
		ctx, cancel := context.WithTimeout(b.tasks.Context(), 10*time.Second)
		defer cancel()
		if err := b.ensureOffsetsTopic(ctx); err != nil {
			return kerr.CoordinatorNotAvailable.Code, err.Error()
		}
		return 0, ""
	case coordinatorTransaction:
		if key == "" {
			return kerr.InvalidRequest.Code, "empty transactional ID"
		}
		ctx, cancel := context.WithTimeout(b.tasks.Context(), 10*time.Second)
		defer cancel()
		if err := b.ensureTxnStateTopic(ctx); err != nil {
			return kerr.CoordinatorNotAvailable.Code, err.Error()
		}
		return 0, ""
	}
	return kerr.InvalidRequest.Code, "unsupported coordinator type"
}
