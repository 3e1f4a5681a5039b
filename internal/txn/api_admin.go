package txn

import (
	"regexp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeTransactions answers DescribeTransactions (API key 65, KIP-664):
// the state, producer, timeout, start time and partitions of each ID,
// TRANSACTIONAL_ID_NOT_FOUND for an unknown one. The start timestamp is -1
// when no transaction has started.
func (c *Coordinator) DescribeTransactions(req *kmsg.DescribeTransactionsRequest) *kmsg.DescribeTransactionsResponse {
	resp := kmsg.NewPtrDescribeTransactionsResponse()
	resp.Version = req.Version
	for _, id := range req.TransactionalIDs {
		ts := kmsg.NewDescribeTransactionsResponseTransactionState()
		ts.TransactionalID = id
		ts.ProducerID, ts.ProducerEpoch, ts.StartTimestamp = noProducerID, noProducerEpoch, -1
		t, code := c.lockTxn(id, false)
		if t == nil {
			if code == 0 {
				code = codeTransactionalIDNotFound
			}
			ts.ErrorCode = code
			resp.TransactionStates = append(resp.TransactionStates, ts)
			continue
		}
		st := t.st
		t.mu.Unlock()
		ts.State = st.state.String()
		ts.TimeoutMillis = int32(st.timeout.Milliseconds())
		if !st.start.IsZero() && st.running() {
			ts.StartTimestamp = st.start.UnixMilli()
		}
		ts.ProducerID, ts.ProducerEpoch = st.producerID, st.producerEpoch
		for _, t := range topicsOf(st.partitions) {
			ts.Topics = append(ts.Topics, kmsg.DescribeTransactionsResponseTransactionStateTopic{
				Topic: t.Topic, Partitions: t.Partitions})
		}
		resp.TransactionStates = append(resp.TransactionStates, ts)
	}
	return resp
}

// ListTransactions answers ListTransactions (API key 66, KIP-664): the
// transactional IDs of the partitions this broker serves, filtered by state
// (unknown state names are echoed in UnknownStateFilters), by producer ID,
// v1 (KIP-994) by running for at least DurationFilterMillis, and v2
// (KIP-1152) by a regular expression on the ID. While a partition loads the
// answer is COORDINATOR_LOAD_IN_PROGRESS.
func (c *Coordinator) ListTransactions(req *kmsg.ListTransactionsRequest) *kmsg.ListTransactionsResponse {
	resp := kmsg.NewPtrListTransactionsResponse()
	resp.Version = req.Version
	states := make(map[kmsg.TransactionState]bool)
	for _, s := range req.StateFilters {
		st, err := kmsg.ParseTransactionState(s)
		if err != nil || st.String() != s {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, s)
			continue
		}
		states[st] = true
	}
	var pattern *regexp.Regexp
	if req.Version >= 2 && req.TransactionalIDPattern != nil && *req.TransactionalIDPattern != "" {
		re, err := regexp.Compile(*req.TransactionalIDPattern)
		if err != nil {
			resp.ErrorCode = codeInvalidRequest
			return resp
		}
		pattern = re
	}
	c.mu.Lock()
	if c.mu.partitions.AnyLoading() {
		resp.ErrorCode = codeCoordinatorLoadInProgress
	}
	c.mu.Unlock()
	if resp.ErrorCode != 0 {
		return resp
	}
	// Filtering by unknown states only matches nothing.
	if len(req.StateFilters) > 0 && len(states) == 0 {
		return resp
	}
	now := c.clock.Now()
	for _, t := range c.snapshot(nil) {
		t.mu.Lock()
		st, removed := t.st, t.removed
		t.mu.Unlock()
		switch {
		case removed, st.producerID == noProducerID:
		case len(states) > 0 && !states[st.state]:
		case len(req.ProducerIDFilters) > 0 && !slices.Contains(req.ProducerIDFilters, st.producerID):
		case req.Version >= 1 && req.DurationFilterMillis >= 0 &&
			(!st.running() || now.Sub(st.start).Milliseconds() < req.DurationFilterMillis):
		case pattern != nil && !pattern.MatchString(t.id):
		default:
			resp.TransactionStates = append(resp.TransactionStates, kmsg.ListTransactionsResponseTransactionState{
				TransactionalID: t.id, ProducerID: st.producerID, TransactionState: st.state.String()})
		}
	}
	slices.SortFunc(resp.TransactionStates, func(a, b kmsg.ListTransactionsResponseTransactionState) int {
		return strings.Compare(a.TransactionalID, b.TransactionalID)
	})
	return resp
}
