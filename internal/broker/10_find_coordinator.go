package broker

// FindCoordinator (key 10), versions 0-6.
//
// The coordinator of a key is the leader of its partition of the internal
// topic (__consumer_offsets for a group, __transaction_state for a
// transactional ID), as Kafka places it; the answer is that broker's
// endpoint on the caller's listener. The broker there loads the partition
// when it becomes its leader (coordinators.go), so a client may first get
// COORDINATOR_LOAD_IN_PROGRESS from it, and NOT_COORDINATOR from a broker
// that just lost it. When the coordinator named is this broker's own and
// still loading, the answer waits for the load (up to 2 s, awaitLoaded). v4+ looks up several keys at once (KIP-699).
//
// For a group key, __consumer_offsets is created on first use with the
// offsets.topic.* configs, as Kafka creates it, and for a transactional ID
// __transaction_state with the transaction.state.log.* configs; if that
// fails (too few brokers for the replication factor, no quorum) the key
// gets COORDINATOR_NOT_AVAILABLE with the reason, and the client retries.
// So does a key whose partition has no live leader. The empty group ID is
// a group like any other (old simple consumers commit under it); an empty
// transactional ID is INVALID_REQUEST.
//
// Authorization (authz.go), per key and before anything is created:
// DESCRIBE on the group (else GROUP_AUTHORIZATION_FAILED) or on the
// transactional ID (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
//
// A share key (type 2, KIP-932) is "group:topicId:partition", the key of a
// share-partition's state: its coordinator leads the partition of
// __share_group_state the key hashes to (created on first use with the
// share.coordinator.state.topic.* configs). Brokers ask it, not clients:
// it needs CLUSTER_ACTION on the cluster (else
// CLUSTER_AUTHORIZATION_FAILED), and a key not of that form is
// INVALID_REQUEST.

import (
	"context"
	"fmt"
	"time"

	"github.com/samsa-io/samsa/internal/group"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/sharecoord"
	"github.com/samsa-io/samsa/internal/txn"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.FindCoordinator, min: 0, max: 6, handle: typed(handleFindCoordinator)})
}

const (
	coordinatorGroup       = 0
	coordinatorTransaction = 1
	coordinatorShare       = 2
)

func handleFindCoordinator(b *Broker, c *conn, req *kmsg.FindCoordinatorRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	keys := req.CoordinatorKeys
	if req.Version < 4 {
		keys = []string{req.CoordinatorKey}
	}
	for _, key := range keys {
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key, co.NodeID, co.Host, co.Port = key, -1, "", -1
		if refused := b.authorizeCoordinatorKey(c, req.CoordinatorType, key); refused != nil {
			co.ErrorCode, co.ErrorMessage = refused.Code, kmsg.StringPtr(refused.Description)
		} else if code, msg := b.coordinatorFor(req.CoordinatorType, key); code != 0 {
			co.ErrorCode, co.ErrorMessage = code, kmsg.StringPtr(msg)
		} else if node, host, port, msg := b.coordinatorEndpoint(req.CoordinatorType, key, c.listener); msg != "" {
			co.ErrorCode, co.ErrorMessage = kerr.CoordinatorNotAvailable.Code, kmsg.StringPtr(msg)
		} else {
			co.NodeID, co.Host, co.Port = node, host, port
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

// authorizeCoordinatorKey is the error of a key the principal may not
// DESCRIBE, nil when it may.
func (b *Broker) authorizeCoordinatorKey(c *conn, keyType int8, key string) *kerr.Error {
	switch keyType {
	case coordinatorGroup:
		if !b.authorize(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup, key) {
			return kerr.GroupAuthorizationFailed
		}
	case coordinatorTransaction:
		if !b.authorize(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTransactionalId, key) {
			return kerr.TransactionalIDAuthorizationFailed
		}
	case coordinatorShare:
		if !b.authorizeCluster(c, kmsg.ACLOperationClusterAction) {
			return kerr.ClusterAuthorizationFailed
		}
	}
	return nil
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
	case coordinatorShare:
		if !validShareCoordinatorKey(key) {
			return kerr.InvalidRequest.Code, fmt.Sprintf("share coordinator key %q is not group:topicId:partition", key)
		}
		ctx, cancel := context.WithTimeout(b.tasks.Context(), 10*time.Second)
		defer cancel()
		if err := b.ensureShareStateTopic(ctx); err != nil {
			return kerr.CoordinatorNotAvailable.Code, err.Error()
		}
		return 0, ""
	}
	return kerr.InvalidRequest.Code, "unsupported coordinator type"
}

// coordinatorEndpoint is the endpoint, on the caller's listener, of the
// broker leading the key's partition; msg says why there is none.
func (b *Broker) coordinatorEndpoint(keyType int8, key, listener string) (node int32, host string, port int32, msg string) {
	img := b.meta.Load()
	cfg := b.brokerConfig(img)
	topic, partition := group.OffsetsTopic, group.PartitionFor(key, cfg.Int("offsets.topic.num.partitions"))
	switch keyType {
	case coordinatorTransaction:
		topic, partition = txn.StateTopic, txn.PartitionFor(key, cfg.Int("transaction.state.log.num.partitions"))
	case coordinatorShare:
		topic, partition = sharecoord.StateTopic, model.KeyPartition(key, cfg.Int("share.coordinator.state.topic.num.partitions"))
	}
	leader, ok := b.coordinatorNode(img, topic, partition)
	if !ok {
		return -1, "", -1, fmt.Sprintf("%s-%d has no live leader", topic, partition)
	}
	if int32(leader) == b.cfg.NodeID {
		b.awaitLoaded(topic, partition)
		self := b.advertised(listener)
		return b.cfg.NodeID, self.Host, int32(self.Port), ""
	}
	br, _ := img.Broker(leader)
	for _, ep := range br.Endpoints {
		if ep.Name == listener {
			return int32(leader), ep.Host, ep.Port, ""
		}
	}
	return -1, "", -1, fmt.Sprintf("broker %d, the leader of %s-%d, has no listener %s", leader, topic, partition, listener)
}
