package mirror

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/record"
)

// The offset-preserving copier. It reads the source's record batches as a
// follower would (Fetch, read_committed, raw batches), drops what a
// read_committed consumer never sees (aborted transactions' batches and
// transaction markers), strips the producer fields from the rest, and
// appends them to the target's mirror topic at their source offsets with
// Samsa's mirror append (a Produce carrying model.MirrorAppendTag). The
// target's log is the copier's only state: it starts again at the target's
// high watermark, and an append the target already holds is skipped there,
// so a crash neither loses nor duplicates (docs/DESIGN-mirror.md).

// fetchParams are the raw fetches' limits: the source consumer's
// overrides (fetch.max.wait.ms, fetch.min.bytes, fetch.max.bytes,
// max.partition.fetch.bytes), else these defaults.
type fetchParams struct {
	maxWait                          time.Duration
	minBytes, maxBytes, partitionMax int32
}

func (fl *flow) fetchParams() fetchParams {
	f := fetchParams{maxWait: 500 * time.Millisecond, minBytes: 1, maxBytes: 64 << 20, partitionMax: 4 << 20}
	o := fl.overrides(fl.cfg.Source, roleConsumer)
	num := func(k string, dst *int32) {
		if n, err := strconv.ParseInt(o[k], 10, 32); err == nil {
			*dst = int32(n)
		}
	}
	if d, err := ms(o["fetch.max.wait.ms"]); err == nil {
		f.maxWait = d
	}
	num("fetch.min.bytes", &f.minBytes)
	num("fetch.max.bytes", &f.maxBytes)
	num("max.partition.fetch.bytes", &f.partitionMax)
	return f
}

var errReplan = errors.New("mirror: leadership changed")

type preserver struct {
	fl       *flow
	task     int
	src, tgt *kgo.Client

	mu      sync.Mutex
	pos     map[tp]int64 // next source offset, once known
	ids     map[string][16]byte
	tgtIDs  map[string][16]byte // remote topic -> its ID on the target (Produce v13+ names topics by ID)
	tgtLead map[tp]int32        // remote topic partition -> target leader
}

// runPreserve plans the partitions by source leader, runs one fetch loop per
// leader, and plans again when the topics grow or leadership moves.
func (fl *flow) runPreserve(ctx context.Context, task int) error {
	if err := fl.waitTopics(ctx); err != nil {
		return err
	}
	src, err := fl.roleClient(fl.cfg.Source, roleConsumer)
	if err != nil {
		return err
	}
	defer src.Close()
	tgt, err := fl.roleClient(fl.cfg.Target, roleProducer)
	if err != nil {
		return err
	}
	defer tgt.Close()
	p := &preserver{fl: fl, src: src, tgt: tgt, pos: map[tp]int64{}, ids: map[string][16]byte{}, tgtIDs: map[string][16]byte{}, tgtLead: map[tp]int32{}}
	p.task = task
	for ctx.Err() == nil {
		grew := fl.topicsGrew()
		plan, err := p.plan(ctx)
		if err != nil {
			return err
		}
		rctx, cancel := context.WithCancel(ctx)
		errs := make(chan error, len(plan)+1)
		var wg sync.WaitGroup
		for leader, parts := range plan {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- p.fetchLoop(rctx, leader, parts)
			}()
		}
		var first error
		select {
		case <-ctx.Done():
		case <-grew:
		case first = <-errs:
		}
		cancel()
		wg.Wait()
		close(errs)
		if first != nil && !errors.Is(first, errReplan) && !errors.Is(first, context.Canceled) {
			return first
		}
		if first != nil {
			fl.log.Debug("mirror: planning again", "why", first)
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}

// plan returns the partitions to copy grouped by source leader, first
// learning the start position of new ones from the target's high watermark.
func (p *preserver) plan(ctx context.Context) (map[int32][]tp, error) {
	topics := p.fl.mirrored()
	names := sortedKeys(topics)
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range names {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, p.src)
	if err != nil {
		return nil, fmt.Errorf("metadata of %s: %w", p.fl.cfg.Source, err)
	}
	plan := map[int32][]tp{}
	var fresh []tp
	p.mu.Lock()
	for _, t := range resp.Topics {
		if t.Topic == nil || kerr.ErrorForCode(t.ErrorCode) != nil {
			continue
		}
		p.ids[*t.Topic] = t.TopicID
		for _, part := range t.Partitions {
			k := tp{*t.Topic, part.Partition}
			if part.Partition >= topics[*t.Topic] || part.Leader < 0 || !p.fl.owns(p.task, k.topic, k.partition) {
				continue
			}
			if s := p.fl.state(k.topic, k.partition); s.stopped != "" {
				continue
			}
			if _, ok := p.pos[k]; !ok {
				fresh = append(fresh, k)
			}
			plan[part.Leader] = append(plan[part.Leader], k)
		}
	}
	p.mu.Unlock()
	if len(fresh) > 0 {
		if err := p.startPositions(ctx, fresh); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// startPositions sets new partitions' positions to the target's high
// watermark: everything below it is acknowledged there.
func (p *preserver) startPositions(ctx context.Context, parts []tp) error {
	var remotes []string
	seen := map[string]bool{}
	for _, k := range parts {
		r := p.fl.remote(k.topic)
		if !seen[r] {
			seen[r] = true
			remotes = append(remotes, r)
		}
	}
	ends, err := kadm.NewClient(p.tgt).ListEndOffsets(ctx, remotes...)
	if err != nil {
		return fmt.Errorf("end offsets on %s: %w", p.fl.cfg.Target, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range parts {
		o, ok := ends.Lookup(p.fl.remote(k.topic), k.partition)
		if !ok || o.Err != nil {
			continue // planned again next time
		}
		p.pos[k] = o.Offset
		p.fl.setNext(k.topic, k.partition, o.Offset, -1)
	}
	return nil
}

func (p *preserver) position(k tp) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	off, ok := p.pos[k]
	return off, ok
}

func (p *preserver) advance(k tp, next, sourceEnd int64) {
	p.mu.Lock()
	if next > p.pos[k] {
		p.pos[k] = next
	}
	next = p.pos[k]
	p.mu.Unlock()
	p.fl.setNext(k.topic, k.partition, next, sourceEnd)
}

// fetchLoop fetches the partitions a source broker leads and appends what
// it gets, until the context ends or leadership moves.
func (p *preserver) fetchLoop(ctx context.Context, leader int32, parts []tp) error {
	sort.Slice(parts, func(i, j int) bool {
		if parts[i].topic != parts[j].topic {
			return parts[i].topic < parts[j].topic
		}
		return parts[i].partition < parts[j].partition
	})
	br := p.src.Broker(int(leader))
	fp := p.fl.fetchParams()
	for ctx.Err() == nil {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis = int32(fp.maxWait / time.Millisecond)
		req.MinBytes = fp.minBytes
		req.MaxBytes = fp.maxBytes
		req.IsolationLevel = 1
		req.SessionEpoch = -1
		byTopic := map[string]int{}
		for _, k := range parts {
			off, ok := p.position(k)
			if !ok {
				continue
			}
			if p.fl.state(k.topic, k.partition).stopped != "" {
				continue
			}
			i, ok := byTopic[k.topic]
			if !ok {
				rt := kmsg.NewFetchRequestTopic()
				rt.Topic = k.topic
				p.mu.Lock()
				rt.TopicID = p.ids[k.topic]
				p.mu.Unlock()
				req.Topics = append(req.Topics, rt)
				i = len(req.Topics) - 1
				byTopic[k.topic] = i
			}
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition = k.partition
			rp.FetchOffset = off
			rp.CurrentLeaderEpoch = -1
			rp.LogStartOffset = -1
			rp.PartitionMaxBytes = fp.partitionMax
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
		}
		if len(req.Topics) == 0 {
			return errReplan
		}
		kresp, err := br.Request(ctx, req)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("fetch from %s broker %d: %w: %w", p.fl.cfg.Source, leader, err, errReplan)
		}
		resp := kresp.(*kmsg.FetchResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return fmt.Errorf("fetch from %s broker %d: %w", p.fl.cfg.Source, leader, err)
		}
		if err := p.handleFetch(ctx, resp); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// appendTo is one target partition's batches of a fetch.
type appendTo struct {
	k       tp
	records []byte
	next    int64 // the source position after these batches
	end     int64 // the source's last stable offset
	count   int64
}

func (p *preserver) handleFetch(ctx context.Context, resp *kmsg.FetchResponse) error {
	var todo []appendTo
	for _, t := range resp.Topics {
		topic := t.Topic
		if topic == "" {
			p.mu.Lock()
			for name, id := range p.ids {
				if id == t.TopicID {
					topic = name
				}
			}
			p.mu.Unlock()
		}
		for _, part := range t.Partitions {
			k := tp{topic, part.Partition}
			from, ok := p.position(k)
			if !ok {
				continue
			}
			switch err := kerr.ErrorForCode(part.ErrorCode); {
			case err == nil:
			case errors.Is(err, kerr.OffsetOutOfRange):
				if err := p.outOfRange(ctx, k, from); err != nil {
					return err
				}
				continue
			case errors.Is(err, kerr.NotLeaderForPartition), errors.Is(err, kerr.FencedLeaderEpoch),
				errors.Is(err, kerr.UnknownLeaderEpoch), errors.Is(err, kerr.UnknownTopicOrPartition),
				errors.Is(err, kerr.UnknownTopicID), errors.Is(err, kerr.LeaderNotAvailable):
				return fmt.Errorf("fetch %s[%d] from %s: %w: %w", k.topic, k.partition, p.fl.cfg.Source, err, errReplan)
			default:
				return fmt.Errorf("fetch %s[%d] from %s: %w", k.topic, k.partition, p.fl.cfg.Source, err)
			}
			a, err := filterBatches(part.RecordBatches, from, part.AbortedTransactions)
			if err != nil {
				p.fl.stop(k.topic, k.partition, err.Error())
				p.fl.log.Error("mirror: partition stopped", "topic", k.topic, "partition", k.partition, "err", err)
				continue
			}
			a.k, a.end = k, part.LastStableOffset
			if a.next <= from {
				p.advance(k, from, a.end)
				continue
			}
			todo = append(todo, a)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	return p.appendAll(ctx, todo)
}

// outOfRange: the source no longer has the position (retention moved its
// start past it) or never had it. Kafka's consumer would reset; the mirror
// goes on from the source's start, leaving a gap, when that is ahead.
func (p *preserver) outOfRange(ctx context.Context, k tp, from int64) error {
	adm := kadm.NewClient(p.src)
	starts, err := adm.ListStartOffsets(ctx, k.topic)
	if err != nil {
		return fmt.Errorf("start offsets of %s on %s: %w", k.topic, p.fl.cfg.Source, err)
	}
	o, ok := starts.Lookup(k.topic, k.partition)
	if !ok || o.Err != nil {
		return fmt.Errorf("start offset of %s[%d] on %s: %w", k.topic, k.partition, p.fl.cfg.Source, errReplan)
	}
	if o.Offset > from {
		p.fl.log.Warn("mirror: source records deleted before they were copied; going on from the source's start",
			"topic", k.topic, "partition", k.partition, "from", from, "start", o.Offset)
		p.advance(k, o.Offset, -1)
		return nil
	}
	why := fmt.Sprintf("%s[%d]: the target is at offset %d, past the source's end: the source lost records (unclean election?) or the target is not this source's copy", k.topic, k.partition, from)
	p.fl.stop(k.topic, k.partition, why)
	p.fl.log.Error("mirror: partition stopped", "why", why)
	return nil
}

// filterBatches keeps the whole batches at or after from that a
// read_committed consumer would read, with their producer fields cleared.
// The returned next is the position after every batch looked at (dropped
// ones included): their offsets are gaps on the target.
func filterBatches(data []byte, from int64, aborted []kmsg.FetchResponseTopicPartitionAbortedTransaction) (appendTo, error) {
	a := appendTo{next: from}
	sort.Slice(aborted, func(i, j int) bool { return aborted[i].FirstOffset < aborted[j].FirstOffset })
	abortedPIDs := map[int64]bool{}
	for len(data) > 0 {
		h, err := record.ParseHeader(data)
		if errors.Is(err, record.ErrTruncated) {
			break // a partial batch at the end of a fetch
		}
		if err != nil {
			return a, fmt.Errorf("source batch at offset %d: %w", a.next, err)
		}
		size := h.Size()
		if size > len(data) {
			break
		}
		batch := data[:size]
		data = data[size:]
		if h.LastOffset() < from {
			continue
		}
		if h.BaseOffset < from {
			return a, fmt.Errorf("source batch %d..%d straddles the mirror's position %d", h.BaseOffset, h.LastOffset(), from)
		}
		for len(aborted) > 0 && aborted[0].FirstOffset <= h.LastOffset() {
			abortedPIDs[aborted[0].ProducerID] = true
			aborted = aborted[1:]
		}
		a.next = h.NextOffset()
		switch {
		case h.IsControl():
			delete(abortedPIDs, h.ProducerID) // a marker ends its transaction
			continue
		case h.IsTransactional() && abortedPIDs[h.ProducerID]:
			continue
		}
		if err := record.CheckCRC(batch); err != nil {
			return a, fmt.Errorf("source batch at offset %d: %w", h.BaseOffset, err)
		}
		out := len(a.records)
		a.records = append(a.records, batch...)
		record.ClearProducer(a.records[out:])
		a.count += int64(h.NumRecords)
	}
	return a, nil
}

// appendAll sends each partition's batches to its target leader, one
// Produce per leader, and advances the positions of the appended ones.
func (p *preserver) appendAll(ctx context.Context, todo []appendTo) error {
	byLeader := map[int32][]appendTo{}
	for _, a := range todo {
		if len(a.records) == 0 {
			p.advance(a.k, a.next, a.end)
			continue
		}
		l, err := p.targetLeader(ctx, a.k, false)
		if err != nil {
			return err
		}
		byLeader[l] = append(byLeader[l], a)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(byLeader))
	for l, as := range byLeader {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- p.appendOnce(ctx, l, as)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (p *preserver) appendOnce(ctx context.Context, leader int32, as []appendTo) error {
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = 30_000
	req.UnknownTags.Set(model.MirrorAppendTag, []byte{model.MirrorAppendValue})
	byTopic := map[string]int{}
	for _, a := range as {
		r := p.fl.remote(a.k.topic)
		i, ok := byTopic[r]
		if !ok {
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = r
			p.mu.Lock()
			rt.TopicID = p.tgtIDs[r]
			p.mu.Unlock()
			req.Topics = append(req.Topics, rt)
			i = len(req.Topics) - 1
			byTopic[r] = i
		}
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = a.k.partition
		rp.Records = a.records
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	kresp, err := p.tgt.Broker(int(leader)).Request(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p.forgetLeaders()
		return fmt.Errorf("mirror append to %s broker %d: %w: %w", p.fl.cfg.Target, leader, err, errReplan)
	}
	if resp := kresp.(*kmsg.ProduceResponse); resp != nil {
		byKey := map[tp]appendTo{}
		for _, a := range as {
			byKey[tp{p.fl.remote(a.k.topic), a.k.partition}] = a
		}
		for _, t := range resp.Topics {
			if t.Topic == "" {
				p.mu.Lock()
				for name, id := range p.tgtIDs {
					if id == t.TopicID {
						t.Topic = name
					}
				}
				p.mu.Unlock()
			}
			for _, part := range t.Partitions {
				a, ok := byKey[tp{t.Topic, part.Partition}]
				if !ok {
					continue
				}
				err := kerr.ErrorForCode(part.ErrorCode)
				switch {
				case err == nil:
					p.advance(a.k, a.next, a.end)
					p.fl.records.Add(a.count)
					p.fl.bytes.Add(int64(len(a.records)))
				case errors.Is(err, kerr.NotLeaderForPartition), errors.Is(err, kerr.NotEnoughReplicas),
					errors.Is(err, kerr.NotEnoughReplicasAfterAppend), errors.Is(err, kerr.RequestTimedOut),
					errors.Is(err, kerr.LeaderNotAvailable), errors.Is(err, kerr.UnknownTopicOrPartition):
					p.forgetLeaders()
					return fmt.Errorf("mirror append to %s[%d] on %s: %w: %w", t.Topic, part.Partition, p.fl.cfg.Target, err, errReplan)
				case errors.Is(err, kerr.InvalidRequest), errors.Is(err, kerr.OffsetOutOfRange):
					// InvalidRequest: promoted (no longer a mirror topic) or
					// never one. OffsetOutOfRange: a source batch straddles
					// the target's log end, which only a source that rewrote
					// its log under the mirror causes.
					// Either way: stop copying this partition, as the broker
					// said why.
					msg := err.Error()
					if part.ErrorMessage != nil {
						msg = *part.ErrorMessage
					}
					p.fl.stop(a.k.topic, a.k.partition, msg)
					p.fl.log.Warn("mirror: partition stopped", "topic", t.Topic, "partition", part.Partition, "why", msg)
				default:
					msg := ""
					if part.ErrorMessage != nil {
						msg = *part.ErrorMessage
					}
					return fmt.Errorf("mirror append to %s[%d] on %s: %w %s", t.Topic, part.Partition, p.fl.cfg.Target, err, msg)
				}
			}
		}
	}
	return nil
}

func (p *preserver) forgetLeaders() {
	p.mu.Lock()
	p.tgtLead = map[tp]int32{}
	p.mu.Unlock()
}

// targetLeader is the target broker leading a source partition's remote
// partition, from a metadata request when not known.
func (p *preserver) targetLeader(ctx context.Context, k tp, refresh bool) (int32, error) {
	r := tp{p.fl.remote(k.topic), k.partition}
	p.mu.Lock()
	l, ok := p.tgtLead[r]
	p.mu.Unlock()
	if ok && !refresh {
		return l, nil
	}
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(r.topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, p.tgt)
	if err != nil {
		return 0, fmt.Errorf("metadata of %s on %s: %w", r.topic, p.fl.cfg.Target, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != r.topic {
			continue
		}
		p.tgtIDs[r.topic] = t.TopicID
		for _, part := range t.Partitions {
			if part.Leader >= 0 {
				p.tgtLead[tp{r.topic, part.Partition}] = part.Leader
			}
		}
	}
	l, ok = p.tgtLead[r]
	if !ok {
		return 0, fmt.Errorf("%s[%d] has no leader on %s: %w", r.topic, r.partition, p.fl.cfg.Target, errReplan)
	}
	return l, nil
}
