package broker

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/replication"
)

// fetchers are this broker's replica fetchers: one goroutine per leader it
// follows partitions of, each sending one Fetch for all of them in a loop
// (Kafka's ReplicaFetcherThread, with num.replica.fetchers = 1).
type fetchers struct {
	b  *Broker
	mu sync.Mutex
	// byLeader holds each running fetcher; a partition is in at most one.
	byLeader map[model.NodeID]*fetcher
}

type fetcher struct {
	leader model.NodeID
	cancel context.CancelFunc
	// wake ends a back-off early: a partition was added, which may be
	// one the last fetch was refused for and whose leader epoch is now
	// known.
	wake  chan struct{}
	mu    sync.Mutex
	parts map[model.TopicPartition]*replication.Partition
	// interrupt cancels the fetch in flight, nil between fetches: a
	// partition that joins must not wait for a long poll
	// (replica.fetch.wait.max.ms) on the others to end before it is
	// fetched, as its new leader's acks=all writes wait for it.
	interrupt context.CancelFunc
}

func newFetchers(b *Broker) *fetchers {
	return &fetchers{b: b, byLeader: map[model.NodeID]*fetcher{}}
}

// follow makes p fetched from leader (NoLeader: from no one).
func (fs *fetchers) follow(p *replication.Partition, leader model.NodeID) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.removeLocked(p.TP)
	if leader < 0 || int32(leader) == fs.b.cfg.NodeID {
		return
	}
	if f := fs.byLeader[leader]; f != nil {
		f.mu.Lock()
		f.parts[p.TP] = p
		if f.interrupt != nil {
			f.interrupt()
		}
		f.mu.Unlock()
		select {
		case f.wake <- struct{}{}:
		default: // a wake-up is pending already
		}
		return
	}
	// The partition is in the new fetcher before its goroutine starts: a
	// fetcher whose first look finds nothing would end, and the partition
	// would never be fetched.
	ctx, cancel := context.WithCancel(fs.b.tasks.Context())
	f := &fetcher{leader: leader, cancel: cancel, wake: make(chan struct{}, 1), parts: map[model.TopicPartition]*replication.Partition{p.TP: p}}
	fs.byLeader[leader] = f
	fs.b.tasks.Go(func(context.Context) { fs.b.runFetcher(ctx, f) })
}

// stop removes a partition from its fetcher (it leads, or is deleted).
func (fs *fetchers) stop(tp model.TopicPartition) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.removeLocked(tp)
}

func (fs *fetchers) removeLocked(tp model.TopicPartition) {
	for id, f := range fs.byLeader {
		f.mu.Lock()
		delete(f.parts, tp)
		empty := len(f.parts) == 0
		f.mu.Unlock()
		if empty {
			f.cancel()
			delete(fs.byLeader, id)
		}
	}
}

func (f *fetcher) snapshot() []*replication.Partition {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*replication.Partition, 0, len(f.parts))
	for _, p := range f.parts {
		out = append(out, p)
	}
	return out
}

// leaderAddr is the inter-broker listener address of a broker, from the
// metadata: inter.broker.listener.name, else the first client listener.
func (b *Broker) leaderAddr(id model.NodeID) string {
	img := b.meta.Load()
	if img == nil {
		return ""
	}
	br, ok := img.Broker(id)
	if !ok {
		return ""
	}
	ep, ok := metadata.InterBrokerEndpoint(b.cfg.Values.String("inter.broker.listener.name"), br.Endpoints)
	if !ok {
		return ""
	}
	return joinHostPort(ep.Host, ep.Port)
}

// runFetcher fetches the fetcher's partitions from their leader until
// cancelled: each answer is appended (or truncated by epoch) and the next
// fetch asks from the new log end, which is also how the leader learns
// this replica's progress.
func (b *Broker) runFetcher(ctx context.Context, f *fetcher) {
	v := b.cfg.Values
	fs := fetchSettings{
		maxWait:        v.Int("replica.fetch.wait.max.ms"),
		minBytes:       v.Int("replica.fetch.min.bytes"),
		maxBytes:       v.Int("replica.fetch.response.max.bytes"),
		partitionBytes: v.Int("replica.fetch.max.bytes"),
		timeout:        millis(int64(v.Int("replica.fetch.wait.max.ms")) + int64(v.Int("replica.socket.timeout.ms"))),
	}
	backoff := millis(int64(v.Int("replica.fetch.backoff.ms")))
	for ctx.Err() == nil {
		// The interrupt is in place before the snapshot: a partition added
		// after it is either in the snapshot or cancels this fetch.
		fctx, cancel := context.WithCancel(ctx)
		f.mu.Lock()
		f.interrupt = cancel
		f.mu.Unlock()
		parts := f.snapshot()
		if len(parts) == 0 {
			cancel()
			return
		}
		out := b.fetchOnce(fctx, fs, f.leader, parts)
		f.mu.Lock()
		f.interrupt = nil
		f.mu.Unlock()
		interrupted := fctx.Err() != nil
		cancel()
		if interrupted && ctx.Err() == nil {
			continue // a partition joined: fetch again at once, with it
		}
		wait := out.after(backoff)
		if out == fetchThrottled {
			// Kafka's fetcher backs off replica.fetch.backoff.ms when the
			// throttle leaves it nothing to fetch; waiting until the rate
			// allows again keeps the throttle's rate at high throttles too.
			wait = min(wait, b.replThrottle.follower.q.Reopens(b.cfg.Clock.Now()))
		}
		if wait == 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		case <-time.After(wait):
		}
	}
}

// fetchOutcome is what a fetch says about the next one.
type fetchOutcome int

const (
	fetchAgain fetchOutcome = iota // at once
	// fetchSoon: the leader does not know its own leadership yet
	// (UNKNOWN_LEADER_EPOCH: it has not applied the metadata this replica
	// has); it will within milliseconds.
	fetchSoon
	fetchBackOff // replica.fetch.backoff.ms: unreachable, or refused
	// fetchThrottled: the follower's replication throttle held back every
	// partition; until it allows again, at most the back-off.
	fetchThrottled
)

// leaderBehindBackoff is the pause after UNKNOWN_LEADER_EPOCH, instead of
// replica.fetch.backoff.ms (1 s): the leader it names is one metadata
// write behind this replica, which Raft brings it at once:
// a controlled shutdown moved a leadership, the follower learned it first,
// and a whole second of back-off kept acks=all writes on the new leader
// waiting for the follower's first fetch (the failover soak's longest
// SIGTERM gaps, 0.7-1.5 s).
const leaderBehindBackoff = 20 * time.Millisecond

// after is how long to wait before the next fetch.
func (o fetchOutcome) after(backoff time.Duration) time.Duration {
	switch o {
	case fetchAgain:
		return 0
	case fetchSoon:
		return min(leaderBehindBackoff, backoff)
	}
	return backoff
}

// fetchSettings are a fetcher's replica.fetch.* configs, read once.
type fetchSettings struct {
	maxWait, minBytes, maxBytes, partitionBytes int32
	timeout                                     time.Duration // one fetch: its wait plus replica.socket.timeout.ms
}

// fetchedPart names a partition in a fetch answer: every Samsa node speaks
// Fetch v13+, which names topics by ID.
type fetchedPart struct {
	topic     model.TopicID
	partition int32
}

// fetchOnce sends one replica fetch and applies its answer, and says when
// to fetch again: at once, soon, after the back-off (the leader is
// unreachable or refused), or when the throttle allows.
//
// The follower's replication throttle (replication_throttle.go) applies to
// the partitions follower.replication.throttled.replicas lists for this
// broker while this replica is out of sync: past the rate such a partition
// is left out of the fetch (Kafka's shouldFollowerThrottle), below it the
// bytes it asks for are capped at what the rate has left. A fetch that
// leaves some out waits on the others no longer than until the rate
// allows them again.
func (b *Broker) fetchOnce(ctx context.Context, fs fetchSettings, leader model.NodeID, parts []*replication.Partition) fetchOutcome {
	addr := b.leaderAddr(leader)
	if addr == "" {
		return fetchBackOff
	}
	now := b.cfg.Clock.Now()
	// Its grants are the follower's until the answer is recorded below:
	// the fetches to the other leaders share what is left.
	budget := b.replThrottle.follower.q.Budget(now)
	defer budget.Finish()
	held := 0
	// listed is made on the first listed partition: without throttles, the
	// common case, a follower's fetch allocates nothing for them.
	var listed map[fetchedPart]bool
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = b.cfg.NodeID
	req.ReplicaState.ID = b.cfg.NodeID
	req.ReplicaState.Epoch = b.brokerEpoch()
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = fs.maxWait, fs.minBytes, fs.maxBytes
	req.SessionEpoch = -1 // no fetch session
	byID := map[model.TopicID]int{}
	sent := map[fetchedPart]*replication.Partition{}
	for _, p := range parts {
		pos, err := p.FetchState()
		if err != nil || model.NodeID(pos.Leader) != leader {
			b.log.Debug("replica not fetched", "partition", p.TP, "fetcher_leader", leader, "leader", pos.Leader, "err", err)
			continue // it leads now, or follows another: the next snapshot says
		}
		isListed := b.followerListed(p)
		maxBytes, ok := budget.Take(isListed, pos.InSync, fs.partitionBytes)
		if !ok {
			held++
			continue
		}
		if isListed {
			if listed == nil {
				listed = map[fetchedPart]bool{}
			}
			listed[fetchedPart{p.TopicID, p.TP.Partition}] = true
		}
		i, ok := byID[p.TopicID]
		if !ok {
			t := kmsg.NewFetchRequestTopic()
			t.Topic, t.TopicID = p.TP.Topic, p.TopicID
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			byID[p.TopicID] = i
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.LastFetchedEpoch = p.TP.Partition, pos.FetchOffset, pos.LastFetchedEpoch
		rp.CurrentLeaderEpoch, rp.LogStartOffset = pos.LeaderEpoch, -1
		rp.PartitionMaxBytes = maxBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
		sent[fetchedPart{p.TopicID, p.TP.Partition}] = p
	}
	b.replThrottle.follower.record(0, held, now)
	if len(sent) == 0 {
		if held > 0 {
			return fetchThrottled
		}
		return fetchBackOff
	}
	if held > 0 {
		wait := b.replThrottle.follower.q.Reopens(now).Milliseconds()
		req.MaxWaitMillis = int32(min(int64(req.MaxWaitMillis), max(wait, 1)))
	}
	rctx, cancel := context.WithTimeout(ctx, fs.timeout)
	defer cancel()
	kresp, err := fetchRequest(rctx, b.peers, addr, req)
	if err != nil {
		b.log.Debug("replica fetch failed", "leader", leader, "addr", addr, "err", err)
		return fetchBackOff
	}
	resp := kresp.(*kmsg.FetchResponse)
	if resp.ErrorCode != 0 {
		b.log.Debug("replica fetch refused", "leader", leader, "err", kerr.ErrorForCode(resp.ErrorCode))
		return fetchBackOff
	}
	out := fetchAgain
	var listedBytes int64
	for _, t := range resp.Topics {
		for _, rp := range t.Partitions {
			fp := fetchedPart{model.TopicID(t.TopicID), rp.Partition}
			p := sent[fp]
			if p == nil {
				continue
			}
			if listed[fp] {
				listedBytes += int64(len(rp.RecordBatches))
			}
			out = max(out, b.applyFetched(p, rp))
		}
	}
	b.replThrottle.follower.record(listedBytes, 0, b.cfg.Clock.Now())
	return out
}

// fetchRequest sends a replica fetch, and sends it once more at once when it
// failed on the connection and time is left: the pooled connection to a
// node that restarted since the last fetch fails on its first use, and
// backing off replica.fetch.backoff.ms for that kept a new leader's
// acks=all writes waiting a whole second for its follower's first fetch
// (the failover soak's slowest controlled shutdowns). A Fetch is safe to
// send twice: it only reads, and reports the same fetch offset. A leader
// that is really gone fails the second try too, and the fetcher backs off.
func fetchRequest(ctx context.Context, p *peers, addr string, req kmsg.Request) (kmsg.Response, error) {
	resp, err := p.request(ctx, addr, req)
	if err == nil || ctx.Err() != nil || errors.Is(err, errPeersClosed) {
		return resp, err
	}
	return p.request(ctx, addr, req)
}

// applyFetched applies one partition's answer and says when to fetch again.
func (b *Broker) applyFetched(p *replication.Partition, rp kmsg.FetchResponseTopicPartition) fetchOutcome {
	switch rp.ErrorCode {
	case 0:
	case kerr.UnknownLeaderEpoch.Code:
		b.log.Debug("replica fetch from a leader that does not know its epoch yet", "partition", p.TP)
		return fetchSoon
	case kerr.OffsetOutOfRange.Code:
		// Behind the leader's log start (retention or DeleteRecords), or
		// past what it has after an unclean election: start over at its
		// bounds. Its high watermark bounds what it surely has.
		if err := p.TruncateOutOfRange(rp.LogStartOffset, rp.HighWatermark); err != nil {
			b.log.Warn("replica out of range; truncation failed", "partition", p.TP.String(), "err", err)
		}
		return fetchAgain
	default:
		// NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH: this replica's
		// metadata is behind; the change that says who leads moves the
		// partition (follow), which wakes the fetcher.
		b.log.Debug("replica fetch of a partition refused", "partition", p.TP, "err", kerr.ErrorForCode(rp.ErrorCode))
		return fetchBackOff
	}
	if rp.DivergingEpoch.Epoch >= 0 && rp.DivergingEpoch.EndOffset >= 0 {
		end := p.LogEndOffset()
		to, _, err := p.TruncateDiverging(replication.EpochEndOffset{Epoch: rp.DivergingEpoch.Epoch, EndOffset: rp.DivergingEpoch.EndOffset})
		if err != nil {
			b.log.Warn("truncation by leader epoch failed", "partition", p.TP.String(), "err", err)
			return fetchBackOff
		}
		if to < end {
			// What only this replica had, never committed: an operator
			// wants to know, as Kafka logs its truncations.
			b.log.Info("truncated a log tail the leader does not have", "partition", p.TP.String(),
				"from", end, "to", to, "diverging_epoch", rp.DivergingEpoch.Epoch)
		}
		return fetchAgain
	}
	fa, err := p.AppendAsFollower(rp.RecordBatches, rp.HighWatermark, rp.LogStartOffset)
	if err != nil {
		b.log.Warn("replica append failed", "partition", p.TP.String(), "err", err)
		return fetchBackOff
	}
	b.metrics.replicationBytesIn.Add(uint64(len(rp.RecordBatches)))
	if fa.Truncated {
		// Rare (the logs were cut at different points, see
		// replication.startsInsideLog) and it cuts records: an operator
		// wants to know, as for a truncation by epoch.
		b.log.Info("truncated to the base of the leader's batch holding the log end", "partition", p.TP.String(),
			"from", fa.TruncatedFrom, "to", fa.TruncatedTo)
	}
	return fetchAgain
}

// proposeISR sends a leader's ISR proposal to the active controller as an
// AlterPartition and reports the answer to the partition. It runs on a
// goroutine of its own, as the fetch or tick that decided it must not wait
// for Raft; LeaderState keeps at most one proposal of a partition in flight,
// so there are at most as many as partitions led. A change the controller
// commits counts as an ISR shrink or expansion, one it refuses (or that
// does not reach it) as a failed ISR update, as Kafka's leader counts them.
func (b *Broker) proposeISR(p *replication.Partition, leaderEpoch, partitionEpoch int32, isr []int32) {
	if !b.cfg.quorum.cluster() {
		return // a single node's ISR is itself and never changes
	}
	// The committed ISR the proposal changes: LeaderState proposed from it,
	// and keeps one proposal in flight, so only a metadata change racing
	// this call could have moved it.
	from := p.ISRSize()
	b.tasks.Go(func(ctx context.Context) {
		req := kmsg.NewPtrAlterPartitionRequest()
		req.BrokerID = b.cfg.NodeID
		req.BrokerEpoch = b.brokerEpoch()
		t := kmsg.NewAlterPartitionRequestTopic()
		t.TopicID = p.TopicID
		rp := kmsg.NewAlterPartitionRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch, rp.PartitionEpoch = p.TP.Partition, leaderEpoch, partitionEpoch
		rp.NewISR = isr
		for _, id := range isr {
			e := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
			e.BrokerID, e.BrokerEpoch = id, -1
			rp.NewEpochISR = append(rp.NewEpochISR, e)
		}
		t.Partitions = append(t.Partitions, rp)
		req.Topics = append(req.Topics, t)
		// An answer of unknown outcome is asked again, with the same
		// epochs, for as long as the proposal is in flight: a proposal
		// the controller did commit is then refused as stale
		// (INVALID_UPDATE_VERSION), and the metadata settles it.
		var got kmsg.AlterPartitionResponseTopicPartition
		for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
			code, answer := b.sendAlterPartition(ctx, req)
			if code == 0 {
				got = answer
				break
			}
			switch isrAnswerOf(code) {
			case isrRefused:
				b.log.Debug("ISR proposal refused", "partition", p.TP, "isr", isr, "err", kerr.ErrorForCode(code))
				b.metrics.rt.isrUpdateFailures.Add(1)
				p.AlterPartitionFailed(leaderEpoch, partitionEpoch, isr)
				return
			case isrSettledByMetadata:
				// The controller has moved on (or, for
				// NEW_LEADER_ELECTED, committed it with a new leader):
				// the proposal stays in flight until the metadata says
				// what it holds, as Kafka's broker does. Dropping it
				// would count the high watermark over the old ISR,
				// without a replica the controller may hold in sync;
				// with it leading next, records acknowledged meanwhile
				// would be lost.
				if code != kerr.NewLeaderElected.Code {
					b.metrics.rt.isrUpdateFailures.Add(1)
				}
				b.log.Debug("ISR proposal answered by a newer state; waiting for the metadata", "partition", p.TP, "isr", isr, "err", kerr.ErrorForCode(code))
				return
			}
			b.log.Debug("ISR proposal's outcome unknown; asking again", "partition", p.TP, "isr", isr, "err", kerr.ErrorForCode(code))
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			if !p.ProposalInFlight(leaderEpoch, partitionEpoch, isr) {
				return // the metadata settled it meanwhile
			}
		}
		switch {
		case len(isr) < from:
			b.metrics.rt.isrShrinks.Add(1)
		case len(isr) > from:
			b.metrics.rt.isrExpands.Add(1)
		}
		p.ISRCommitted(got.LeaderEpoch, got.PartitionEpoch, got.ISR)
	})
}

// isrAnswer classifies a refused AlterPartition by what it says of the
// proposal.
type isrAnswer int

const (
	// isrUnknown: no answer, or one that does not say whether the
	// controller committed it (a timeout, a controller that lost its
	// leadership mid-write, an unexpected error): asked again.
	isrUnknown isrAnswer = iota
	// isrRefused: the controller checked it and committed nothing
	// (Kafka's OPERATION_NOT_ATTEMPTED and INELIGIBLE_REPLICA, which reset
	// its pending state; and a malformed or fenced request).
	isrRefused
	// isrSettledByMetadata: the controller holds a newer state than the
	// proposal's (it may even have committed the proposal, then moved
	// on): the metadata on its way settles it.
	isrSettledByMetadata
)

func isrAnswerOf(code int16) isrAnswer {
	switch code {
	case kerr.IneligibleReplica.Code, kerr.OperationNotAttempted.Code, kerr.InvalidRequest.Code, kerr.StaleBrokerEpoch.Code:
		return isrRefused
	case kerr.NewLeaderElected.Code, kerr.InvalidUpdateVersion.Code, kerr.FencedLeaderEpoch.Code,
		kerr.NotLeaderForPartition.Code, kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicID.Code:
		return isrSettledByMetadata
	}
	return isrUnknown
}

// sendAlterPartition sends one AlterPartition of one partition to the
// active controller and returns its error code (the request's, else the
// partition's; REQUEST_TIMED_OUT when none answered in time) and, when 0,
// the partition's answer.
func (b *Broker) sendAlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) (int16, kmsg.AlterPartitionResponseTopicPartition) {
	rctx, cancel := context.WithTimeout(ctx, controllerRequestTimeout)
	defer cancel()
	resp, err := b.toController(rctx, req, func(r kmsg.Response) bool {
		return r.(*kmsg.AlterPartitionResponse).ErrorCode == kerr.NotController.Code
	})
	if err != nil {
		return kerr.RequestTimedOut.Code, kmsg.AlterPartitionResponseTopicPartition{}
	}
	r := resp.(*kmsg.AlterPartitionResponse)
	switch {
	case r.ErrorCode != 0:
		return r.ErrorCode, kmsg.AlterPartitionResponseTopicPartition{}
	case len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1:
		return kerr.UnknownServerError.Code, kmsg.AlterPartitionResponseTopicPartition{}
	}
	got := r.Topics[0].Partitions[0]
	return got.ErrorCode, got
}

// tickLeaders runs each led partition's ISR check every quarter of
// replica.lag.time.max.ms, so a follower that stopped fetching leaves the
// ISR after about that long.
func (b *Broker) tickLeaders(ctx context.Context) {
	every := max(millis(b.cfg.Values.Long("replica.lag.time.max.ms"))/4, 10*time.Millisecond)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := b.cfg.Clock.Now()
		for _, ts := range b.topics.all() {
			for _, p := range ts.partitions {
				if p != nil && p.IsLeader() {
					p.Tick(now)
				}
			}
		}
	}
}

func joinHostPort(host string, port int32) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}
