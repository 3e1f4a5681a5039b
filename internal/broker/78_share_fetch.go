package broker

// ShareFetch (key 78), versions 1-2 (KIP-932; v0 was Kafka 4.0's early
// access and is not served, as Kafka 4.1 and later do not).
//
// A share consumer fetches through a share session (share_sessions.go):
// epoch 0 opens it with the request's partitions, later epochs add and
// forget partitions, -1 closes it after applying the request's
// acknowledgements (and fetches nothing). Acknowledgements ride on the
// request (AcknowledgementBatches, answered in AcknowledgeErrorCode); they
// are applied and written to the share coordinator before any fetching,
// and one on an initial (epoch 0) request is INVALID_REQUEST, as in Kafka.
//
// For each session partition this broker leads, the group's
// share-partition (share_partitions.go) acquires for the member the
// available records from its next fetch offset, at most MaxRecords in all
// (v2's record_limit mode; in the default batch-optimized mode, as in
// Kafka, the batch holding the last record asked for is taken whole),
// under MaxBytes (and at most 1 MiB read per partition and fetch), up to the
// high watermark (the last stable offset, with control and aborted
// records archived unseen, when the group's share.isolation.level is
// read_committed). The response holds the batches with acquired records
// and AcquiredRecords, the ranges acquired with their delivery counts; a
// client keeps only those offsets. With nothing to acquire the request
// waits up to MaxWaitMillis for an append or a release. A partition led
// elsewhere is NOT_LEADER_OR_FOLLOWER with its leader (KIP-951 style
// CurrentLeader and NodeEndpoints).
//
// The share group protocol is on while the finalized share.version is 1
// or more; at 0 every request is UNSUPPORTED_VERSION.
//
// Authorization (authz.go): READ on the group (else
// GROUP_AUTHORIZATION_FAILED for the whole request) and READ on each topic
// (else TOPIC_AUTHORIZATION_FAILED for its partitions).

import (
	"context"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/replication"
	"github.com/samsa-io/samsa/internal/share"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ShareFetch, min: 1, max: 2, handle: typed(handleShareFetch)})
}

// sharePartResult is one partition's answer being built.
type sharePartResult struct {
	key       sharePartKey
	errorCode int16
	errMsg    string
	ackCode   int16
	acked     bool // the request acknowledged on it: it is answered
	acquired  []share.AcquiredRange
	records   []byte
}

func handleShareFetch(b *Broker, c *conn, req *kmsg.ShareFetchRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
	group, member := deref(req.GroupID), deref(req.MemberID)
	fail := func(e *kerr.Error, msg string) (kmsg.Response, error) {
		resp.ErrorCode, resp.ErrorMessage = e.Code, kmsg.StringPtr(msg)
		return resp, nil
	}
	if e, msg := b.shareRequestRefusal(c, group, member); e != nil {
		return fail(e, msg)
	}
	settings := b.shareSettings(group)
	resp.AcquisitionLockTimeoutMillis = int32(settings.lock / time.Millisecond)
	hasAcks := false
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			hasAcks = hasAcks || len(p.AcknowledgementBatches) > 0
		}
	}
	if req.ShareSessionEpoch == 0 && hasAcks {
		return fail(kerr.InvalidRequest, "acknowledgements in an initial share fetch (session epoch 0)")
	}

	// The request's partitions: those it may read join the session.
	var results []*sharePartResult
	byKey := map[sharePartKey]*sharePartResult{}
	result := func(k sharePartKey) *sharePartResult {
		r, ok := byKey[k]
		if !ok {
			r = &sharePartResult{key: k}
			byKey[k] = r
			results = append(results, r)
		}
		return r
	}
	var add []sharePartKey
	acks := map[sharePartKey][]share.AckRange{}
	for _, t := range req.Topics {
		ts, ok := b.topics.byTopicID(model.TopicID(t.TopicID))
		code := int16(0)
		switch {
		case !ok:
			code = kerr.UnknownTopicID.Code
		case !b.authorize(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic, ts.name):
			code = kerr.TopicAuthorizationFailed.Code
		}
		for _, p := range t.Partitions {
			k := sharePartKey{group: group, topic: model.TopicID(t.TopicID), partition: p.Partition}
			if code != 0 {
				r := result(k)
				r.errorCode = code
				if len(p.AcknowledgementBatches) > 0 {
					r.acked, r.ackCode = true, code
				}
				continue
			}
			add = append(add, k)
			if len(p.AcknowledgementBatches) > 0 {
				acks[k] = ackRangesOf(p.AcknowledgementBatches)
			}
		}
	}
	var forget []sharePartKey
	for _, t := range req.ForgottenTopicsData {
		for _, p := range t.Partitions {
			forget = append(forget, sharePartKey{group: group, topic: model.TopicID(t.TopicID), partition: p})
		}
	}
	now := b.cfg.Clock.Now()
	parts, dropped, code := b.shareSessions.apply(shareSessionKey{group, member}, c.id,
		shareSessionUpdate{epoch: req.ShareSessionEpoch, add: add, forget: forget}, now)
	if code != 0 {
		e := kerr.ErrorForCode(code).(*kerr.Error)
		return fail(e, e.Description)
	}

	ctx, cancel := context.WithTimeout(b.tasks.Context(), 30*time.Second)
	defer cancel()
	// Acknowledgements first, so what they release can be fetched now.
	for k, ranges := range acks {
		r := result(k)
		r.acked = true
		r.ackCode = b.shareAckOne(ctx, k, member, ranges)
	}
	if len(dropped) > 0 {
		b.releaseShareMember(ctx, group, member, dropped)
		b.dropIdleShareGroup(group)
	}
	if req.ShareSessionEpoch != -1 && !req.IsRenewAck {
		b.shareFetchWait(ctx, req, member, settings, parts, result)
	}

	hints := b.newLeaderHints(c)
	byTopic := map[model.TopicID]int{}
	for _, r := range results {
		if !r.acked && r.errorCode == 0 && len(r.acquired) == 0 {
			continue // nothing to say about it (incremental responses list only news)
		}
		i, ok := byTopic[r.key.topic]
		if !ok {
			i = len(resp.Topics)
			byTopic[r.key.topic] = i
			rt := kmsg.NewShareFetchResponseTopic()
			rt.TopicID = [16]byte(r.key.topic)
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewShareFetchResponseTopicPartition()
		rp.Partition, rp.ErrorCode, rp.AcknowledgeErrorCode = r.key.partition, r.errorCode, r.ackCode
		if r.errMsg != "" {
			rp.ErrorMessage = kmsg.StringPtr(r.errMsg)
		}
		if wantsHint(r.errorCode) || wantsHint(r.ackCode) {
			if l, e, ok := hints.leader(true, "", [16]byte(r.key.topic), r.key.partition); ok {
				rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = l, e
			}
		}
		rp.Records = r.records
		for _, a := range r.acquired {
			ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
			ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = a.FirstOffset, a.LastOffset, a.DeliveryCount
			rp.AcquiredRecords = append(rp.AcquiredRecords, ar)
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	for _, e := range hints.endpoints() {
		ne := kmsg.NewShareFetchResponseNodeEndpoint()
		ne.NodeID, ne.Host, ne.Port, ne.Rack = e.nodeID, e.host, e.port, e.rack
		resp.NodeEndpoints = append(resp.NodeEndpoints, ne)
	}
	return resp, nil
}

// shareRequestRefusal is the error a ShareFetch or ShareAcknowledge gets
// before anything else, nil when it may go on: share groups off, no group
// or member, or no READ on the group.
func (b *Broker) shareRequestRefusal(c *conn, group, member string) (*kerr.Error, string) {
	switch {
	case !b.shareGroupsEnabled():
		return kerr.UnsupportedVersion, "share groups are off: the finalized share.version is 0"
	case group == "" || member == "":
		return kerr.InvalidRequest, "a share request names its group and member"
	case !b.authorize(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, group):
		return kerr.GroupAuthorizationFailed, kerr.GroupAuthorizationFailed.Description
	}
	return nil, ""
}

// ackRangesOf converts a request's acknowledgement batches.
func ackRangesOf[B interface {
	kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch | kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch
}](batches []B) []share.AckRange {
	out := make([]share.AckRange, 0, len(batches))
	for _, ab := range batches {
		var first, last int64
		var types []int8
		switch v := any(ab).(type) {
		case kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch:
			first, last, types = v.FirstOffset, v.LastOffset, v.AcknowledgeTypes
		case kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch:
			first, last, types = v.FirstOffset, v.LastOffset, v.AcknowledgeTypes
		}
		r := share.AckRange{FirstOffset: first, LastOffset: last}
		for _, t := range types {
			r.Types = append(r.Types, share.AckType(t))
		}
		out = append(out, r)
	}
	return out
}

// shareAckOne applies one partition's acknowledgements and returns its
// AcknowledgeErrorCode: the first range's error (Kafka answers one code
// per partition), or the write's.
func (b *Broker) shareAckOne(ctx context.Context, k sharePartKey, member string, ranges []share.AckRange) int16 {
	if code := validAckRanges(ranges); code != 0 {
		return code
	}
	if !b.shareSettings(k.group).renew {
		for _, r := range ranges {
			if slices.Contains(r.Types, share.AckRenew) {
				return kerr.InvalidRequest.Code // the group's share.renew.acknowledge.enable is false
			}
		}
	}
	rp, code := b.sharePartitionLed(k)
	if code != 0 {
		return code
	}
	errs, err := b.shareAck(ctx, b.shareParts.part(k), rp, member, ranges)
	if err != nil {
		return errorCodeOf(shareWriteError(err))
	}
	for _, e := range errs {
		if e != nil {
			return errorCodeOf(e)
		}
	}
	return 0
}

// validAckRanges checks acknowledgement batches as Kafka does: ordered,
// non-overlapping, FirstOffset <= LastOffset, one type or one per offset,
// each a known type; INVALID_REQUEST otherwise.
func validAckRanges(ranges []share.AckRange) int16 {
	prev := int64(-1)
	for _, r := range ranges {
		n := r.LastOffset - r.FirstOffset + 1
		switch {
		case r.FirstOffset < 0 || n <= 0 || r.FirstOffset <= prev:
			return kerr.InvalidRequest.Code
		case len(r.Types) != 1 && int64(len(r.Types)) != n:
			return kerr.InvalidRequest.Code
		}
		for _, t := range r.Types {
			if t < share.AckGap || t > share.AckRenew {
				return kerr.InvalidRequest.Code
			}
		}
		prev = r.LastOffset
	}
	return 0
}

func errorCodeOf(err error) int16 {
	if ke, ok := err.(*kerr.Error); ok {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}

// sharePartitionLed returns the replication partition of a share-partition
// if this broker leads it, else the error its requests get.
func (b *Broker) sharePartitionLed(k sharePartKey) (*replication.Partition, int16) {
	ts, ok := b.topics.byTopicID(k.topic)
	if !ok {
		return nil, kerr.UnknownTopicID.Code
	}
	p, code := ts.partition(k.partition)
	if code != 0 {
		return nil, code
	}
	if !p.IsLeader() {
		return nil, kerr.NotLeaderForPartition.Code
	}
	return p, 0
}

// shareFetchWait acquires records on the session's partitions, waiting up
// to MaxWaitMillis while there are none.
func (b *Broker) shareFetchWait(ctx context.Context, req *kmsg.ShareFetchRequest, member string, settings shareSettings,
	parts []sharePartKey, result func(sharePartKey) *sharePartResult) {
	deadline := b.cfg.Clock.Now().Add(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	maxRecords := int(req.MaxRecords)
	if maxRecords <= 0 {
		maxRecords = 500 // max.poll.records' default
	}
	budget := int64(req.MaxBytes)
	if budget <= 0 {
		budget = 1<<31 - 1
	}
	budget = min(budget, int64(b.cfg.Values.Int("fetch.max.bytes")))
	var waiter *replication.Waiter
	for {
		var led []*replication.Partition
		released := b.shareParts.released.Wait()
		got, bytes := 0, int64(0)
		for _, k := range parts {
			if got >= maxRecords || bytes >= budget {
				break
			}
			rp, code := b.sharePartitionLed(k)
			if code != 0 {
				result(k).errorCode = code
				continue
			}
			led = append(led, rp)
			sp := b.shareParts.part(k)
			sp.mu.Lock()
			err := b.loadSharePart(ctx, sp, rp)
			var acquired []share.AcquiredRange
			var recs []byte
			if err == nil {
				sp.p.SetConfig(settings.partitionConfig()) // a group config changed since the load
				acquired, recs, err = b.shareAcquire(sp, rp, member, int32(min(budget-bytes, 1<<31-1)), maxRecords-got, req.ShareAcquireMode == 1, settings.readCommitted)
			}
			sp.mu.Unlock()
			if err != nil {
				r := result(k)
				r.errorCode, r.errMsg = errorCodeOf(shareWriteError(err)), err.Error()
				continue
			}
			if len(acquired) > 0 {
				r := result(k)
				r.acquired = append(r.acquired, acquired...)
				r.records = append(r.records, recs...)
				for _, a := range acquired {
					got += int(a.LastOffset - a.FirstOffset + 1)
				}
				bytes += int64(len(recs))
			}
		}
		wait := deadline.Sub(b.cfg.Clock.Now())
		if got > 0 && bytes >= int64(req.MinBytes) || wait <= 0 || len(led) == 0 || ctx.Err() != nil {
			return
		}
		if waiter == nil {
			waiter = replication.NewWaiter(led)
			defer waiter.Done()
			continue // read again: an append may have come before the waiter
		}
		wctx, cancel := context.WithTimeout(ctx, wait)
		go func() {
			select {
			case <-released:
				cancel()
			case <-wctx.Done():
			}
		}()
		waiter.Wait(wctx)
		cancel()
	}
}
