package broker

// Fetch (key 1), versions 4-18.
//
// Reads each requested partition from its fetch offset up to the high
// watermark (read_uncommitted) or the last stable offset (read_committed:
// below the first offset of the oldest open transaction), at most
// PartitionMaxBytes per partition and MaxBytes in all (capped by the
// broker's fetch.max.bytes); the first batch of
// the first partition with data is returned whole even past those limits
// (KIP-74), so a consumer always progresses. Record bytes go from the
// segment files to the socket by sendfile: the response is encoded around
// them (fetch_encode.go).
//
// Long polling: with fewer than MinBytes ready, the fetch waits until a
// requested partition's high watermark moves or MaxWaitMillis passes, then
// reads again. It holds its connection while it waits, as Kafka does, and
// counts in the fetch-purgatory gauge (FetchesWaiting) meanwhile.
//
// Fetch sessions (KIP-227, v7+) are in fetch_session.go. Topic IDs replace
// names from v13 (UNKNOWN_TOPIC_ID). CurrentLeaderEpoch (v9+, KIP-320) is
// checked: newer than ours is UNKNOWN_LEADER_EPOCH, older is
// FENCED_LEADER_EPOCH. Out-of-range offsets get OFFSET_OUT_OF_RANGE with
// the partition's bounds.
//
// read_committed (v4+) reads below the last stable offset and lists the
// aborted transactions in the range, so the client can drop their records
// (KIP-98).
//
// Follower fetches (a broker's replica ID) are fetch_replica.go's.
//
// Authorization (authz.go): a consumer needs READ on each topic, else the
// partition is TOPIC_AUTHORIZATION_FAILED, checked at every fetch of a
// session and before the topic's existence (a topic named by an unknown
// ID is UNKNOWN_TOPIC_ID); a follower needs CLUSTER_ACTION on the cluster,
// else every partition is TOPIC_AUTHORIZATION_FAILED, as in Kafka.
//
// Follower fetching (KIP-392, v11+): a consumer's fetch may be served by a
// follower, below the follower's own high watermark (read_committed: its
// own last stable offset, from its own producer state and aborted
// transactions), as Kafka serves it; below v11 a replica that does not
// lead answers NOT_LEADER_OR_FOLLOWER, as the client did not ask for
// follower reads. A broker that is no replica of the partition answers
// NOT_LEADER_OR_FOLLOWER, and an offset past the follower's log end
// OFFSET_OUT_OF_RANGE (the client then goes back to the leader). With the
// rack-aware selector, a leader sends a consumer of another rack to an
// in-sync follower of its rack: PreferredReadReplica set, no records, and
// the fetch answered at once (replica_selector.go).

import (
	"context"
	"errors"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/replication"
	"github.com/samsa-io/samsa/internal/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.Fetch, min: 4, max: 18, handle: handleFetch})
}

// fetchPart is one partition of a fetch being served.
type fetchPart struct {
	sp        sessionPart // the request's view, copied out of the session
	ts        *topicState
	p         *replication.Partition
	errorCode int16
	// preferred is the replica the client is sent to instead of being
	// answered records (KIP-392), noPreferredReplica when none.
	preferred int32
}

func handleFetch(b *Broker, c *conn, h requestHeader, kreq kmsg.Request) (*frame, error) {
	req := kreq.(*kmsg.FetchRequest)
	if replica := replicaOf(req); replica >= 0 {
		c.replicaFetch = true // replication is never throttled by client quotas
		if !b.authorizeCluster(c, kmsg.ACLOperationClusterAction) {
			return encodeFetchResponse(h.correlationID, refusedReplicaFetch(req), nil), nil
		}
		return b.handleReplicaFetch(c, h, req, replica)
	}
	keyOf := func(t *kmsg.FetchRequestTopic) sessionKey {
		if req.Version >= 13 {
			return sessionKey{id: t.TopicID}
		}
		return sessionKey{topic: t.Topic}
	}
	fs, parts, incremental, code := b.fetchSessions.resolve(req, keyOf)
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	if code != 0 {
		resp.ErrorCode = code
		b.settleQuotas(c, resp)
		return encodeFetchResponse(h.correlationID, resp, nil), nil
	}
	if fs != nil {
		resp.SessionID = fs.id
	}
	fps := b.lookupFetchParts(req.Version, parts, b.authorizeEach(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic))
	b.routeConsumerFetch(c, req, fps)
	b.capFetchBytes(c, req)
	results := b.fetchWithWait(c, req, fps)
	if b.fetchThrottled(c, results) {
		// Answered empty: the records read are not sent, and the session
		// reports nothing as sent, so the next fetch asks for them again.
		b.settleQuotas(c, resp)
		return encodeFetchResponse(h.correlationID, resp, nil), nil
	}
	return b.buildFetchResponse(c, h.correlationID, resp, fs, fps, results, incremental), nil
}

// lookupFetchParts finds each partition of the fetch, which read says
// the principal may read.
func (b *Broker) lookupFetchParts(version int16, parts []sessionPart, read func(topic string) bool) []fetchPart {
	fps := make([]fetchPart, len(parts))
	for i, sp := range parts {
		fp := fetchPart{sp: sp, preferred: noPreferredReplica}
		var ts *topicState
		var ok bool
		if version >= 13 {
			ts, ok = b.topics.byTopicID(sp.key.id)
			fp.errorCode = kerr.UnknownTopicID.Code
			if ok && !read(ts.name) {
				ok, fp.errorCode = false, kerr.TopicAuthorizationFailed.Code
			}
		} else {
			ts, ok = b.topics.byTopicName(sp.key.topic)
			fp.errorCode = kerr.UnknownTopicOrPartition.Code
			if !read(sp.key.topic) {
				ok, fp.errorCode = false, kerr.TopicAuthorizationFailed.Code
			}
		}
		if ok {
			fp.ts = ts
			fp.p, fp.errorCode = ts.partition(sp.key.partition)
		}
		if fp.errorCode == 0 {
			fp.errorCode = checkLeaderEpoch(sp.leaderEpoch, fp.p.LeaderEpoch())
		}
		fps[i] = fp
	}
	return fps
}

// routeConsumerFetch decides, for each partition found, whether this
// replica may serve the consumer (below Fetch v11 only the leader may) and
// whether the leader sends it to another replica (KIP-392).
func (b *Broker) routeConsumerFetch(c *conn, req *kmsg.FetchRequest, fps []fetchPart) {
	var img *metadata.Image // set when the leader may send the client elsewhere
	if req.Version >= 11 && req.Rack != "" && b.cfg.Values.String("replica.selector.class") == config.RackAwareReplicaSelector {
		img = b.ctrl.Image()
	}
	for i := range fps {
		fp := &fps[i]
		switch {
		case fp.errorCode != 0:
		case req.Version < 11 && !fp.p.IsLeader():
			fp.errorCode = kerr.NotLeaderForPartition.Code
		case img != nil:
			fp.preferred = b.preferredReadReplica(c, req.Rack, fp, img)
		}
	}
}

// checkLeaderEpoch applies KIP-320's fencing: -1 means the client does not
// know the epoch.
func checkLeaderEpoch(client, ours int32) int16 {
	switch {
	case client < 0 || client == ours:
		return 0
	case client > ours:
		return kerr.UnknownLeaderEpoch.Code
	}
	return kerr.FencedLeaderEpoch.Code
}

// fetchResult is what one read found for a partition.
type fetchResult struct {
	rr                storage.ReadResult
	errorCode         int16
	hw, lso, logStart int64
	// aborted lists the aborted transactions in the returned range, for
	// read_committed (nil for read_uncommitted: encoded as null).
	aborted []kmsg.FetchResponseTopicPartitionAbortedTransaction
}

// fetchWithWait reads every partition, and while fewer than MinBytes are
// ready, waits for a high watermark to move and reads again.
func (b *Broker) fetchWithWait(c *conn, req *kmsg.FetchRequest, fps []fetchPart) []fetchResult {
	results, waited := b.longPoll(req, fps)
	if waited > 0 {
		c.waited(purgatoryFetchConsumer, waited)
	}
	return results
}

// longPoll is fetchWithWait, which it also tells how long it waited.
func (b *Broker) longPoll(req *kmsg.FetchRequest, fps []fetchPart) ([]fetchResult, time.Duration) {
	var waited time.Duration
	var waiter *replication.Waiter
	var parts []*replication.Partition
	for _, fp := range fps {
		if fp.p != nil {
			parts = append(parts, fp.p)
		}
	}
	deadline := b.cfg.Clock.Now().Add(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	for {
		// Registered before reading, so an append between the read and the
		// wait still wakes us.
		if waiter == nil && req.MaxWaitMillis > 0 && len(parts) > 0 {
			waiter = replication.NewWaiter(parts)
			defer waiter.Done()
		}
		results, total, atOnce := b.readFetchParts(req, fps)
		wait := deadline.Sub(b.cfg.Clock.Now())
		if waiter == nil || atOnce || total >= int64(req.MinBytes) || total > 0 && req.MinBytes <= 0 || wait <= 0 {
			return results, waited
		}
		for i := range results {
			results[i].rr.Release()
		}
		ctx, cancel := context.WithTimeout(b.tasks.Context(), wait)
		b.counters.fetchesWaiting.add(1)
		waitStart := time.Now()
		woke := waiter.Wait(ctx)
		waited += time.Since(waitStart)
		b.counters.fetchesWaiting.add(-1)
		cancel()
		if !woke && b.tasks.Context().Err() != nil {
			return make([]fetchResult, len(fps)), waited
		}
	}
}

// readFetchParts reads each partition once. total counts record bytes; a
// partition error or a preferred read replica makes the fetch answer at
// once (atOnce), as Kafka does.
func (b *Broker) readFetchParts(req *kmsg.FetchRequest, fps []fetchPart) ([]fetchResult, int64, bool) {
	results := make([]fetchResult, len(fps))
	budget := int64(req.MaxBytes)
	if req.MaxBytes <= 0 {
		budget = 1<<31 - 1
	}
	// fetch.max.bytes caps what any client may ask for, as in Kafka.
	budget = min(budget, int64(b.cfg.Values.Int("fetch.max.bytes")))
	var total int64
	atOnce := false
	for i, fp := range fps {
		r := &results[i]
		if fp.errorCode != 0 {
			r.errorCode, atOnce = fp.errorCode, true
			continue
		}
		r.hw = fp.p.HighWatermark()
		r.logStart = fp.p.LogStartOffset()
		if fp.preferred != noPreferredReplica {
			// Sent elsewhere: no read, the leader's bounds only.
			r.lso, atOnce = fp.p.LastStableOffset(), true
			continue
		}
		limit := min(int64(fp.sp.maxBytes), budget-total)
		if limit <= 0 && total > 0 {
			continue
		}
		var rr storage.ReadResult
		var err error
		if req.IsolationLevel == 1 {
			rr, r.lso, err = fp.p.ReadCommitted(fp.sp.fetchOffset, int32(max(limit, 0)), total == 0)
			r.aborted = abortedIn(fp.p, fp.sp.fetchOffset, r.lso)
		} else {
			rr, r.hw, err = fp.p.Read(fp.sp.fetchOffset, int32(max(limit, 0)), total == 0)
			r.lso = fp.p.LastStableOffset()
		}
		if err != nil {
			r.errorCode, atOnce = fetchErrorCode(err), true
			continue
		}
		r.rr = rr
		total += rr.Size
	}
	return results, total, atOnce
}

// abortedIn lists the aborted transactions a read_committed consumer must
// filter out of [from, lso) (KIP-98): producer ID and first offset.
func abortedIn(p *replication.Partition, from, lso int64) []kmsg.FetchResponseTopicPartitionAbortedTransaction {
	out := []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
	for _, a := range p.AbortedTransactions(from, lso) {
		at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		at.ProducerID, at.FirstOffset = a.ProducerID, a.FirstOffset
		out = append(out, at)
	}
	return out
}

func fetchErrorCode(err error) int16 {
	switch {
	case errors.Is(err, storage.ErrOffsetOutOfRange):
		return kerr.OffsetOutOfRange.Code
	case errors.Is(err, storage.ErrClosed):
		return kerr.NotLeaderForPartition.Code
	}
	return kerr.KafkaStorageError.Code
}

// buildFetchResponse lays the results out by topic in request (or session)
// order. An incremental response lists only partitions with records, an
// error, or bounds that changed since the session last reported them; what
// it reports is written back to the session (fs, nil when sessionless).
func (b *Broker) buildFetchResponse(c *conn, corr int32, resp *kmsg.FetchResponse, fs *fetchSession, fps []fetchPart, results []fetchResult, incremental bool) *frame {
	var holes fetchHoles
	index := map[sessionKey]int{}
	for i, fp := range fps {
		r := &results[i]
		fp.countFetch(r)
		sp := fp.sp
		lso := r.lso
		changed := !sp.sent || r.hw != sp.lastHW || lso != sp.lastLSO || r.logStart != sp.lastLogStart
		if incremental && r.rr.Size == 0 && r.errorCode == 0 && !changed && fp.preferred == noPreferredReplica {
			continue
		}
		if fs != nil {
			fs.reported(sp.key, r.hw, lso, r.logStart)
		}
		tk := sp.key
		tk.partition = 0
		ti, ok := index[tk]
		if !ok {
			ti = len(resp.Topics)
			index[tk] = ti
			t := kmsg.NewFetchResponseTopic()
			t.Topic, t.TopicID = tk.topic, tk.id
			resp.Topics = append(resp.Topics, t)
			holes = append(holes, nil)
		}
		p := kmsg.NewFetchResponseTopicPartition()
		p.Partition, p.ErrorCode = sp.key.partition, r.errorCode
		p.HighWatermark, p.LastStableOffset, p.LogStartOffset = -1, -1, -1
		if r.errorCode == 0 || r.errorCode == kerr.OffsetOutOfRange.Code {
			p.HighWatermark, p.LastStableOffset, p.LogStartOffset = r.hw, lso, r.logStart
			p.AbortedTransactions = r.aborted
		}
		if r.errorCode == 0 {
			p.PreferredReadReplica = fp.preferred
		}
		resp.Topics[ti].Partitions = append(resp.Topics[ti].Partitions, p)
		holes[ti] = append(holes[ti], r.rr)
	}
	b.hintFetch(c, resp)
	b.settleQuotas(c, resp)
	return encodeFetchResponse(corr, resp, holes)
}
