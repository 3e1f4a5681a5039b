package broker

import (
	"bytes"
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// Forwarding (KIP-590): a metadata write (CreateTopics, DeleteTopics,
// CreatePartitions, AlterConfigs, IncrementalAlterConfigs, ElectLeaders,
// CreateAcls, DeleteAcls, AlterUserScramCredentials, AlterClientQuotas,
// UpdateFeatures, AlterPartitionReassignments, AddRaftVoter,
// RemoveRaftVoter, UnregisterBroker) or DescribeQuorum or ListPartitionReassignments (which
// only the active controller answers), in a quorum, that
// came from a client (not on a controller listener, where it is the
// forwarded copy) to a node that is not the active controller goes on to
// the active controller. So a client may send them to any broker; it sees
// NOT_CONTROLLER only from a stale answer during an election, which
// clients retry.
//
// The handler forwards (forwardOr), after it has authorized the request
// with the client's principal: the copy reaches the controller as the
// peer's ANONYMOUS, not in Kafka's Envelope, which would carry the
// principal (authz.go). The handler sends on only what was allowed.

// forwarding reports whether a request of c must go on to the active
// controller.
func (b *Broker) forwarding(c *conn) bool {
	return b.cfg.quorum.cluster() && !c.controllerListener && !b.ctrl.Active()
}

// forwardOr answers req: on the active controller when this broker must
// forward it, else with here.
func (b *Broker) forwardOr(c *conn, req kmsg.Request, here func() kmsg.Response) (kmsg.Response, error) {
	if !b.forwarding(c) {
		return here(), nil
	}
	return b.forward(req)
}

// forwardTimeout bounds a forwarded request, elections included.
const forwardTimeout = 30 * time.Second

// forward sends req to the active controller and returns its response at
// the client's version (kgo may have sent it at a newer one; each kmsg
// field is written only where the client's version has it). Once the
// controller has committed, the broker waits, briefly, until its own
// image has the change, so a client that asks this broker next sees what
// it just did, as on a single node. An error (no controller within
// forwardTimeout) closes the connection: the client reconnects and
// retries.
func (b *Broker) forward(req kmsg.Request) (kmsg.Response, error) {
	version := req.GetVersion()
	ctx, cancel := context.WithTimeout(b.tasks.Context(), forwardTimeout)
	defer cancel()
	before := b.ctrl.Image()
	resp, err := b.toController(ctx, req, nil)
	req.SetVersion(version)
	if err != nil {
		return nil, err
	}
	resp.SetVersion(version)
	switch resp.(type) {
	case *kmsg.DescribeQuorumResponse, *kmsg.ListPartitionReassignmentsResponse:
	default:
		b.awaitForwarded(ctx, before, req, resp)
	}
	return resp, nil
}

// awaitForwarded waits until the local image shows what a forwarded write
// committed: created topics present, deleted ones gone, elected partitions
// at a leader epoch above the one in before (the local image when the
// request was sent; every election moves the epoch), created ACLs and set
// SCRAM credentials present, deleted ones gone, client quotas and feature
// levels as set, an unregistered broker's registration gone (req, the
// request sent, says which). Others (configs, partition counts) need no
// wait to be answered correctly.
func (b *Broker) awaitForwarded(ctx context.Context, before *metadata.Image, req kmsg.Request, resp kmsg.Response) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	switch r := resp.(type) {
	case *kmsg.CreateTopicsResponse:
		for _, t := range r.Topics {
			if t.ErrorCode == 0 {
				b.awaitImage(ctx, func() bool { _, ok := b.ctrl.Image().Topic(t.Topic); return ok })
			}
		}
	case *kmsg.DeleteTopicsResponse:
		for _, t := range r.Topics {
			if t.ErrorCode == 0 && t.Topic != nil {
				b.awaitImage(ctx, func() bool { _, ok := b.ctrl.Image().Topic(*t.Topic); return !ok })
			}
		}
	case *kmsg.ElectLeadersResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					continue
				}
				tp := model.TopicPartition{Topic: t.Topic, Partition: p.Partition}
				was, _ := before.Partition(tp) // absent: epoch 0, wait for the partition
				b.awaitImage(ctx, func() bool {
					now, ok := b.ctrl.Image().Partition(tp)
					return ok && now.LeaderEpoch > was.LeaderEpoch
				})
			}
		}
	case *kmsg.AlterPartitionAssignmentsResponse:
		// Every successful partition changed (a no-op answers success
		// too, and then waits out the bound: rare, an operator's repeat).
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode == 0 {
					b.awaitPartitionChange(ctx, before, model.TopicPartition{Topic: t.Topic, Partition: p.Partition})
				}
			}
		}
	case *kmsg.CreateACLsResponse, *kmsg.DeleteACLsResponse, *kmsg.AlterUserSCRAMCredentialsResponse:
		b.awaitSecurityWrite(ctx, req, resp)
	case *kmsg.AlterClientQuotasResponse:
		areq, _ := req.(*kmsg.AlterClientQuotasRequest)
		b.awaitClientQuotas(ctx, areq, r)
	case *kmsg.UpdateFeaturesResponse:
		ureq, _ := req.(*kmsg.UpdateFeaturesRequest)
		b.awaitFeatures(ctx, ureq, r)
	case *kmsg.UnregisterBrokerResponse:
		// The registration unregistered is gone: absent, or replaced by
		// the broker registering again (a live one does at once).
		ureq, _ := req.(*kmsg.UnregisterBrokerRequest)
		if r.ErrorCode == 0 && ureq != nil {
			id := model.NodeID(ureq.BrokerID)
			was, _ := before.Broker(id)
			b.awaitImage(ctx, func() bool { now, ok := b.ctrl.Image().Broker(id); return !ok || now.Epoch != was.Epoch })
		}
	}
	b.applyImage(b.ctrl.Image())
}

// awaitPartitionChange waits until the local image has a newer partition
// epoch of tp than before had: every partition change moves it.
func (b *Broker) awaitPartitionChange(ctx context.Context, before *metadata.Image, tp model.TopicPartition) {
	was, _ := before.Partition(tp)
	b.awaitImage(ctx, func() bool {
		now, ok := b.ctrl.Image().Partition(tp)
		return ok && now.PartitionEpoch > was.PartitionEpoch
	})
}

// awaitSecurityWrite is awaitForwarded for the ACL and SCRAM writes.
func (b *Broker) awaitSecurityWrite(ctx context.Context, req kmsg.Request, resp kmsg.Response) {
	switch r := resp.(type) {
	case *kmsg.CreateACLsResponse:
		creq, _ := req.(*kmsg.CreateACLsRequest)
		for i, res := range r.Results {
			if res.ErrorCode == 0 && creq != nil && i < len(creq.Creations) {
				a := aclFromCreation(creq.Creations[i])
				b.awaitImage(ctx, func() bool { return imageHasACL(b.ctrl.Image(), a) })
			}
		}
	case *kmsg.DeleteACLsResponse:
		for _, res := range r.Results {
			for _, m := range res.MatchingACLs {
				a := metadata.ACL{ResourceType: int8(m.ResourceType), ResourceName: m.ResourceName, PatternType: int8(m.ResourcePatternType),
					Principal: m.Principal, Host: m.Host, Operation: int8(m.Operation), PermissionType: int8(m.PermissionType)}
				b.awaitImage(ctx, func() bool { return !imageHasACL(b.ctrl.Image(), a) })
			}
		}
	case *kmsg.AlterUserSCRAMCredentialsResponse:
		areq, _ := req.(*kmsg.AlterUserSCRAMCredentialsRequest)
		if areq == nil {
			return
		}
		done := map[string]bool{}
		for _, res := range r.Results {
			done[res.User] = res.ErrorCode == 0
		}
		for _, d := range areq.Deletions {
			if done[d.Name] {
				b.awaitImage(ctx, func() bool { _, ok := b.ctrl.Image().ScramCredential(d.Name, d.Mechanism); return !ok })
			}
		}
		for _, u := range areq.Upsertions {
			if done[u.Name] {
				b.awaitImage(ctx, func() bool {
					cr, ok := b.ctrl.Image().ScramCredential(u.Name, u.Mechanism)
					return ok && bytes.Equal(cr.Salt, u.Salt) && cr.Iterations == u.Iterations
				})
			}
		}
	}
}

// awaitImage waits until cond holds on the controller's image or ctx ends.
func (b *Broker) awaitImage(ctx context.Context, cond func() bool) {
	for {
		ch := b.ctrl.Changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// createTopics creates topics through the active controller: here, when
// this node is active (or the single node), else as a CreateTopics request
// on the active controller's listener, where internal topics may be
// created (the broker's coordinators create theirs this way).
func (b *Broker) createTopics(ctx context.Context, topics []controller.CreateTopic) []controller.CreateTopicResult {
	if !b.cfg.quorum.cluster() || b.ctrl.Active() {
		return b.ctrl.CreateTopics(ctx, topics, false)
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	for _, t := range topics {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = t.Name, t.NumPartitions, t.ReplicationFactor
		for k, v := range t.Configs {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = k, v
			rt.Configs = append(rt.Configs, c)
		}
		req.Topics = append(req.Topics, rt)
	}
	out := make([]controller.CreateTopicResult, len(topics))
	resp, err := b.toController(ctx, req, func(r kmsg.Response) bool {
		for _, t := range r.(*kmsg.CreateTopicsResponse).Topics {
			if t.ErrorCode == kerr.NotController.Code {
				return true
			}
		}
		return false
	})
	for i, t := range topics {
		out[i].Name = t.Name
		if err != nil {
			out[i].ErrorCode, out[i].ErrorMessage = kerr.RequestTimedOut.Code, err.Error()
		}
	}
	if err != nil {
		return out
	}
	for i, t := range resp.(*kmsg.CreateTopicsResponse).Topics {
		if i < len(out) {
			out[i].ErrorCode = t.ErrorCode
			if t.ErrorMessage != nil {
				out[i].ErrorMessage = *t.ErrorMessage
			}
		}
	}
	b.awaitForwarded(ctx, b.ctrl.Image(), req, resp)
	return out
}

// allocateProducerIDs takes a block of producer IDs from the active
// controller (AllocateProducerIds in a quorum).
func (b *Broker) allocateProducerIDs(ctx context.Context) (int64, int, error) {
	if !b.cfg.quorum.cluster() {
		return b.ctrl.AllocateProducerIDs(ctx)
	}
	req := kmsg.NewPtrAllocateProducerIDsRequest()
	req.BrokerID = b.cfg.NodeID
	req.BrokerEpoch = b.brokerEpoch()
	resp, err := b.toController(ctx, req, func(r kmsg.Response) bool {
		return r.(*kmsg.AllocateProducerIDsResponse).ErrorCode == kerr.NotController.Code
	})
	if err != nil {
		return 0, 0, err
	}
	r := resp.(*kmsg.AllocateProducerIDsResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return 0, 0, err
	}
	return r.ProducerIDStart, int(r.ProducerIDLen), nil
}
