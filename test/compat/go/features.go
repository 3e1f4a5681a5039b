package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type header struct {
	Key   string
	Value []byte
}

// rec is a record as any client sees it. A nil Key or Value is null.
type rec struct {
	Partition int32
	Offset    int64 // set when consumed
	Key       []byte
	Value     []byte
	Headers   []header
	Timestamp int64 // CreateTime, milliseconds
}

func (r rec) String() string {
	return fmt.Sprintf("p%d@%d key=%s value=%s headers=%d ts=%d", r.Partition, r.Offset,
		showBytes(r.Key), showBytes(r.Value), len(r.Headers), r.Timestamp)
}

func showBytes(b []byte) string {
	switch {
	case b == nil:
		return "null"
	case len(b) > 24:
		return fmt.Sprintf("%q...(%d bytes)", b[:24], len(b))
	}
	return fmt.Sprintf("%q", b)
}

type produceOpts struct {
	codec      string // none, gzip, snappy, lz4, zstd
	acks       int16  // 0, 1, -1
	idempotent bool
}

// family is one client library behind a common interface. Every method
// may return an unsupportedError.
type family interface {
	name() string
	version() string
	// nullAware: the library tells a null key or value from an empty one
	// when consuming.
	nullAware() bool
	createTopic(ctx context.Context, topic string, partitions int32) error
	deleteTopic(ctx context.Context, topic string) error
	// partitions is the topic's partition count in metadata, -1 when the
	// topic is not there.
	partitions(ctx context.Context, topic string) (int32, error)
	// produce writes recs to their partitions and returns once the
	// client reports them written.
	produce(ctx context.Context, topic string, o produceOpts, recs []rec) error
	// consume reads each partition p of ends from offset 0 until it is at
	// ends[p] (see readEnd.reached) and returns every record it read.
	consume(ctx context.Context, topic string, ends map[int32]readEnd, readCommitted bool) (map[int32][]rec, error)
	// join starts a group member subscribed to topic that sends every
	// record it gets to out (auto commit off, reset to earliest).
	join(ctx context.Context, topic, group string, out chan<- rec) (member, error)
	// listOffset is the offset ListOffsets gives for spec: -2 earliest,
	// -1 latest, else a timestamp (ms).
	listOffset(ctx context.Context, topic string, partition int32, spec int64) (int64, error)
	// setGroupOffsets commits offsets for an empty group through the
	// admin API (or the client's tool for it).
	setGroupOffsets(ctx context.Context, group, topic string, offsets map[int32]int64) error
	// topicConfig is a topic config's value as described.
	topicConfig(ctx context.Context, topic, key string) (string, error)
	alterTopicConfig(ctx context.Context, topic, key, value string) error
	// transact produces recs in one transaction and commits or aborts it.
	transact(ctx context.Context, topic, txnID string, commit bool, recs []rec) error
}

// member is one group member started by family.join.
type member interface {
	// commit commits the offsets after every record sent to out so far.
	commit(ctx context.Context) error
	close() error
}

var featureFuncs = map[string]func(ctx context.Context, h *harness, fam family) error{
	"create-topic":          featCreateTopic,
	"delete-topic":          featDeleteTopic,
	"produce-none":          featProduce(produceOpts{codec: "none", acks: -1}),
	"produce-gzip":          featProduce(produceOpts{codec: "gzip", acks: -1}),
	"produce-snappy":        featProduce(produceOpts{codec: "snappy", acks: -1}),
	"produce-lz4":           featProduce(produceOpts{codec: "lz4", acks: -1}),
	"produce-zstd":          featProduce(produceOpts{codec: "zstd", acks: -1}),
	"acks-0":                featProduce(produceOpts{codec: "none", acks: 0}),
	"acks-1":                featProduce(produceOpts{codec: "none", acks: 1}),
	"acks-all":              featProduce(produceOpts{codec: "none", acks: -1}),
	"keys-headers":          featKeysHeaders,
	"group-consume-commit":  featGroupCommit,
	"rebalance-two-members": featRebalance(false),
	"list-offsets":          featListOffsets,
	"reset-offsets":         featResetOffsets,
	"describe-configs":      featDescribeConfigs,
	"idempotent-produce":    featProduce(produceOpts{codec: "none", acks: -1, idempotent: true}),
	"transactions":          featTransactions,

	"rebalance-two-members-kip848": featRebalance(true),
}

// kip848Family is a family that can also join a group with the consumer
// group protocol (KIP-848: ConsumerGroupHeartbeat, server-side assignment).
type kip848Family interface {
	joinKIP848(ctx context.Context, topic, group string, out chan<- rec) (member, error)
}

// harness is a franz-go admin client (newest protocol) the features use
// for setup and for looking at the group: creating a topic is only the
// create-topic feature's business.
type harness struct {
	seed  string
	cl    *kgo.Client
	adm   *kadm.Client
	nonce string
	seq   atomic.Int64
	// sec is the secured listeners and credentials, in the security part.
	sec *secEnv
}

func newHarness(bootstrap string) (*harness, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(bootstrap)...))
	if err != nil {
		return nil, err
	}
	return &harness{seed: bootstrap, cl: cl, adm: kadm.NewClient(cl), nonce: fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff)}, nil
}

func (h *harness) close() { h.cl.Close() }

// name is a topic, group or transactional id unique to this run, client
// and feature.
func (h *harness) name(fam family, what string) string {
	slug := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return -1
	}, strings.ReplaceAll(strings.ToLower(fam.name()), " ", "-"))
	return fmt.Sprintf("compat-go-%s-%s-%s-%d", slug, what, h.nonce, h.seq.Add(1))
}

// topic creates a fresh topic with the harness.
func (h *harness) topic(ctx context.Context, fam family, what string, partitions int32, configs map[string]*string) (string, error) {
	name := h.name(fam, what)
	return name, h.createTopic(ctx, name, partitions, configs)
}

// createTopic creates topic name with the harness and waits until every
// broker knows it.
func (h *harness) createTopic(ctx context.Context, name string, partitions int32, configs map[string]*string) error {
	resp, err := h.adm.CreateTopic(ctx, partitions, 1, configs, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("harness create topic: %w", err)
	}
	if err := h.awaitEveryBroker(ctx, name, partitions); err != nil {
		return fmt.Errorf("harness create topic: %w", err)
	}
	return nil
}

// awaitEveryBroker waits until every broker's own metadata has the topic
// with a leader for each partition. A cluster's brokers learn of a new
// topic a moment after CreateTopics answers (in Kafka as in Samsa), and a
// client that is sent to one that has not yet (kafka-go's writer does not
// retry UNKNOWN_TOPIC_OR_PARTITION) would fail on the test's account, not
// its own: Kafka's integration tests wait the same way
// (waitForAllPartitionsMetadata). With one broker it returns at once.
func (h *harness) awaitEveryBroker(ctx context.Context, topic string, partitions int32) error {
	brokers, err := h.adm.BrokerMetadata(ctx)
	if err != nil {
		return err
	}
	for _, b := range brokers.Brokers {
		for {
			req := kmsg.NewPtrMetadataRequest()
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(topic)
			req.Topics = append(req.Topics, rt)
			resp, err := h.cl.Broker(int(b.NodeID)).Request(ctx, req)
			if err == nil {
				mr := resp.(*kmsg.MetadataResponse)
				ok := len(mr.Topics) == 1 && mr.Topics[0].ErrorCode == 0 && int32(len(mr.Topics[0].Partitions)) == partitions
				for i := 0; ok && i < len(mr.Topics[0].Partitions); i++ {
					ok = mr.Topics[0].Partitions[i].Leader >= 0
				}
				if ok {
					break
				}
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("broker %d never listed %s with %d led partitions: %w", b.NodeID, topic, partitions, ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}

// waitGroup waits until group is stable with n members that each have
// partitions of topic assigned.
func (h *harness) waitGroup(ctx context.Context, group string, n int) error {
	var last string
	for {
		dg, err := h.adm.DescribeGroups(ctx, group)
		if err == nil {
			g := dg[group]
			last = fmt.Sprintf("state %s, %d members", g.State, len(g.Members))
			ok := g.Err == nil && g.State == "Stable" && len(g.Members) == n
			for _, m := range g.Members {
				c, isc := m.Assigned.AsConsumer()
				if !isc || len(c.Topics) == 0 || len(c.Topics[0].Partitions) == 0 {
					ok = false
				}
			}
			if ok {
				return nil
			}
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("group %s not stable with %d assigned members: %s", group, n, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitConsumerGroup waits until a KIP-848 group (ConsumerGroupDescribe) is
// stable with n members, each holding its target assignment, none empty.
func (h *harness) waitConsumerGroup(ctx context.Context, group string, n int) error {
	var last string
	for {
		dg, err := h.adm.DescribeConsumerGroups(ctx, group)
		if err == nil {
			g := dg[group]
			last = fmt.Sprintf("state %s, %d members", g.State, len(g.Members))
			ok := g.Err == nil && g.State == "Stable" && len(g.Members) == n
			for _, m := range g.Members {
				if len(m.Assignment) == 0 || !maps.EqualFunc(m.Assignment, m.TargetAssignment, maps.Equal) {
					ok = false
				}
			}
			if ok {
				return nil
			}
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("consumer group %s not stable with %d assigned members: %s", group, n, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// readEnd is where a read of one partition ends.
type readEnd struct {
	// end is the end offset ListOffsets gives: the high watermark, or the
	// last stable offset for read_committed.
	end int64
	// last is the offset of the last record below end that a reader at
	// the isolation level gets (-1: none). It differs from end-1 when
	// transaction markers or aborted records sit at the tail; the harness
	// finds it with a reader that keeps control records.
	last int64
}

// reached says whether a reader of the partition is at its end: its
// position (the next offset it would read, past control records where the
// client tells; -1 when the client does not) has reached end, or it has
// delivered the record at last (lastRead is the offset of the last record
// it delivered, -1 if none). The second serves the clients that hide
// control records without telling their position (sarama): after the last
// record below end there is nothing more for them to read.
func (e readEnd) reached(position, lastRead int64) bool {
	return position >= e.end || lastRead >= e.last
}

// behind describes the partitions of ends not reached yet, for an error.
func behind(ends map[int32]readEnd, position, lastRead map[int32]int64) string {
	var b []string
	for _, p := range slices.Sorted(maps.Keys(ends)) {
		e := ends[p]
		pos, last := int64(-1), int64(-1)
		if v, ok := position[p]; ok {
			pos = v
		}
		if v, ok := lastRead[p]; ok {
			last = v
		}
		if !e.reached(pos, last) {
			b = append(b, fmt.Sprintf("partition %d at %d (last read %d), end %d (last record %d)", p, pos, last, e.end, e.last))
		}
	}
	return strings.Join(b, "; ")
}

// readEnds is where reads of topic's partitions 0..partitions-1 end at the
// isolation level, as of now.
func (h *harness) readEnds(ctx context.Context, topic string, partitions int32, readCommitted bool) (map[int32]readEnd, error) {
	list := h.adm.ListEndOffsets
	iso := kgo.ReadUncommitted()
	if readCommitted {
		list, iso = h.adm.ListCommittedOffsets, kgo.ReadCommitted()
	}
	lo, err := list(ctx, topic)
	if err == nil {
		err = lo.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("harness list end offsets: %w", err)
	}
	ends := map[int32]readEnd{}
	at := map[int32]kgo.Offset{}
	for p := range partitions {
		o, ok := lo.Lookup(topic, p)
		if !ok {
			return nil, fmt.Errorf("harness list end offsets: partition %d not in the answer", p)
		}
		ends[p] = readEnd{end: o.Offset, last: -1}
		if o.Offset > 0 {
			at[p] = kgo.NewOffset().At(0)
		}
	}
	if len(at) == 0 {
		return ends, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(h.seed)...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: at}),
		kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords(), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	next := map[int32]int64{}
	for {
		done := true
		for p := range at {
			if next[p] < ends[p].end {
				done = false
			}
		}
		if done {
			return ends, nil
		}
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("harness read to the end offsets of %s: %w", topic, ctx.Err())
		}
		var ferr error
		fs.EachError(func(_ string, p int32, err error) { ferr = fmt.Errorf("harness read partition %d: %w", p, err) })
		if ferr != nil {
			return nil, ferr
		}
		fs.EachRecord(func(kr *kgo.Record) {
			e := ends[kr.Partition]
			if kr.Offset >= e.end {
				return
			}
			next[kr.Partition] = kr.Offset + 1
			if !kr.Attrs.IsControl() {
				e.last = kr.Offset
				ends[kr.Partition] = e
			}
		})
	}
}

// settle waits (up to 10 s) until topic's high watermarks add up to n
// records: acks=0 gets no answer to wait for.
func (h *harness) settle(ctx context.Context, topic string, n int) {
	until := time.Now().Add(10 * time.Second)
	for time.Now().Before(until) && ctx.Err() == nil {
		lo, err := h.adm.ListEndOffsets(ctx, topic)
		sum := int64(0)
		lo.Each(func(o kadm.ListedOffset) { sum += o.Offset })
		if err == nil && sum >= int64(n) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// injectDuplicate is the reviewers' mutation hook (test/compat/README.md):
// with COMPAT_INJECT_DUPLICATE set, after each measured produce a plain
// producer of its own writes one more copy of the last record of the lowest
// partition that got any, and the checker is not told. Every consume check
// must then fail.
var injectDuplicate = !slices.Contains([]string{"", "0"}, os.Getenv("COMPAT_INJECT_DUPLICATE"))

func (h *harness) inject(ctx context.Context, topic string, recs []rec) error {
	if !injectDuplicate || len(recs) == 0 {
		return nil
	}
	low := recs[0].Partition
	for _, r := range recs {
		low = min(low, r.Partition)
	}
	var last rec
	for _, r := range recs {
		if r.Partition == low {
			last = r
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(h.seed)...), kgo.DisableIdempotentWrite(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, toFranz(topic, last)).FirstErr(); err != nil {
		return fmt.Errorf("inject a duplicate: %w", err)
	}
	return nil
}

// makeRecords builds n keyed records over partitions 0..partitions-1 in
// turn, with values, one header, and timestamps that mostly step forward.
func makeRecords(tag string, n int, partitions int32, baseMs int64) []rec {
	recs := make([]rec, n)
	for i := range recs {
		recs[i] = rec{
			Partition: int32(i) % partitions,
			Key:       fmt.Appendf(nil, "%s-key-%04d", tag, i),
			Value:     []byte(strings.Repeat(fmt.Sprintf("%s value %d; ", tag, i), 1+i%20)),
			Headers:   []header{{"seq", fmt.Appendf(nil, "%d", i)}},
			Timestamp: baseMs + int64(i)*10,
		}
		if i%4 == 3 {
			recs[i].Timestamp -= 25
		}
	}
	return recs
}

// oddRecords are records with a null key, null, empty and binary values,
// no headers, and headers with empty, binary and repeated keys.
func oddRecords(tag string, n int, partitions int32, baseMs int64) []rec {
	recs := makeRecords(tag, n, partitions, baseMs)
	for i := range recs {
		r := &recs[i]
		switch {
		case i == 7:
			r.Key = nil
		case i%11 == 4:
			r.Key = append([]byte{0, 0xff, byte(i)}, r.Key...)
		}
		switch i % 6 {
		case 0:
			r.Value = nil
		case 1:
			r.Value = []byte{}
		case 2:
			r.Value = make([]byte, 256)
			for j := range r.Value {
				r.Value[j] = byte(j + i)
			}
		}
		r.Headers = nil
		if i%5 != 0 {
			r.Headers = []header{
				{"trace", fmt.Appendf(nil, "%s-%d", tag, i)},
				{"empty", []byte{}},
				{"bin", []byte{0, byte(i), 0xff}},
				{"trace", []byte("second value of a repeated key")},
			}
		}
	}
	return recs
}

// diffRecord says how got differs from want ("" when equal).
func diffRecord(want, got rec, nullAware bool) string {
	var d []string
	same := func(name string, w, g []byte) {
		if !bytes.Equal(w, g) || nullAware && (w == nil) != (g == nil) {
			d = append(d, fmt.Sprintf("%s %s, want %s", name, showBytes(g), showBytes(w)))
		}
	}
	same("key", want.Key, got.Key)
	same("value", want.Value, got.Value)
	if want.Timestamp != got.Timestamp {
		d = append(d, fmt.Sprintf("timestamp %d, want %d", got.Timestamp, want.Timestamp))
	}
	if len(want.Headers) != len(got.Headers) {
		d = append(d, fmt.Sprintf("%d headers, want %d", len(got.Headers), len(want.Headers)))
	} else {
		for i := range want.Headers {
			if want.Headers[i].Key != got.Headers[i].Key {
				d = append(d, fmt.Sprintf("header %d key %q, want %q", i, got.Headers[i].Key, want.Headers[i].Key))
			}
			same(fmt.Sprintf("header %d value", i), want.Headers[i].Value, got.Headers[i].Value)
		}
	}
	return strings.Join(d, "; ")
}

// checkConsumed checks each partition holds exactly want's records for
// it in produce order; at offsets first[p], first[p]+1, ... unless
// first is nil (transactional partitions have markers in between).
func checkConsumed(want []rec, got map[int32][]rec, first map[int32]int64, nullAware bool) error {
	byPart := map[int32][]rec{}
	for _, r := range want {
		byPart[r.Partition] = append(byPart[r.Partition], r)
	}
	var errs []string
	for p := range got {
		if _, ok := byPart[p]; !ok && len(got[p]) > 0 {
			errs = append(errs, fmt.Sprintf("partition %d: %d records, want none", p, len(got[p])))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(byPart)) {
		ws, gs := byPart[p], got[p]
		switch {
		case len(gs) > len(ws):
			errs = append(errs, fmt.Sprintf("partition %d: read %d records to the end offset, produced %d; extra from offset %d: %v",
				p, len(gs), len(ws), gs[len(ws)].Offset, gs[len(ws)]))
		case len(gs) < len(ws):
			errs = append(errs, fmt.Sprintf("partition %d: read %d records to the end offset, produced %d", p, len(gs), len(ws)))
		}
		for i := range min(len(gs), len(ws)) {
			if first != nil {
				if wantOff := first[p] + int64(i); gs[i].Offset != wantOff {
					errs = append(errs, fmt.Sprintf("partition %d record %d: offset %d, want %d", p, i, gs[i].Offset, wantOff))
				}
			}
			if d := diffRecord(ws[i], gs[i], nullAware); d != "" {
				errs = append(errs, fmt.Sprintf("partition %d offset %d: %s", p, gs[i].Offset, d))
			}
		}
	}
	if len(errs) > 4 {
		errs = append(errs[:4], fmt.Sprintf("and %d more", len(errs)-4))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func zero() map[int32]int64 { return map[int32]int64{} }

func nowMs() int64 { return time.Now().UnixMilli() }

func featCreateTopic(ctx context.Context, h *harness, fam family) error {
	topic := h.name(fam, "create")
	if err := fam.createTopic(ctx, topic, 3); err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	return waitPartitions(ctx, fam, topic, 3)
}

// waitPartitions waits until the client's metadata shows topic with n
// partitions (-1: gone).
func waitPartitions(ctx context.Context, fam family, topic string, n int32) error {
	var last string
	for {
		got, err := fam.partitions(ctx, topic)
		if err == nil && got == n {
			return nil
		}
		if err != nil {
			if _, ok := err.(unsupportedError); ok {
				return err
			}
			last = err.Error()
		} else {
			last = fmt.Sprintf("%d partitions", got)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("metadata for %s: %s, want %d partitions", topic, last, n)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func featDeleteTopic(ctx context.Context, h *harness, fam family) error {
	topic, err := h.topic(ctx, fam, "delete", 3, nil)
	if err != nil {
		return err
	}
	if err := waitPartitions(ctx, fam, topic, 3); err != nil {
		return err
	}
	if err := fam.deleteTopic(ctx, topic); err != nil {
		return fmt.Errorf("delete topic: %w", err)
	}
	return waitPartitions(ctx, fam, topic, -1)
}

func featProduce(o produceOpts) func(ctx context.Context, h *harness, fam family) error {
	return func(ctx context.Context, h *harness, fam family) error {
		what := "produce-" + o.codec
		if o.idempotent {
			what = "idempotent"
		} else if o.acks != -1 {
			what = fmt.Sprintf("acks%d", o.acks)
		}
		topic, err := h.topic(ctx, fam, what, 3, nil)
		if err != nil {
			return err
		}
		recs := makeRecords(topic, 100, 3, nowMs())
		if err := fam.produce(ctx, topic, o, recs); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		if o.acks == 0 {
			h.settle(ctx, topic, len(recs))
		}
		if err := h.inject(ctx, topic, recs); err != nil {
			return err
		}
		got, err := consumeToEnd(ctx, h, fam, topic, 3, false)
		if err != nil {
			return err
		}
		return checkConsumed(recs, got, zero(), fam.nullAware())
	}
}

func featKeysHeaders(ctx context.Context, h *harness, fam family) error {
	topic, err := h.topic(ctx, fam, "keys-headers", 3, nil)
	if err != nil {
		return err
	}
	recs := oddRecords(topic, 60, 3, nowMs())
	if err := fam.produce(ctx, topic, produceOpts{codec: "none", acks: -1}, recs); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	if err := h.inject(ctx, topic, recs); err != nil {
		return err
	}
	got, err := consumeToEnd(ctx, h, fam, topic, 3, false)
	if err != nil {
		return err
	}
	if err := checkConsumed(recs, got, zero(), fam.nullAware()); err != nil {
		return err
	}
	if !fam.nullAware() {
		return passNote{"null and empty compared as equal: the client reads an empty header value as null"}
	}
	return nil
}

// consumeToEnd takes the read ends of topic now and has fam consume to them.
func consumeToEnd(ctx context.Context, h *harness, fam family, topic string, partitions int32, readCommitted bool) (map[int32][]rec, error) {
	ends, err := h.readEnds(ctx, topic, partitions, readCommitted)
	if err != nil {
		return nil, err
	}
	got, err := fam.consume(ctx, topic, ends, readCommitted)
	if err != nil {
		return got, fmt.Errorf("consume to the end offsets: %w", err)
	}
	return got, nil
}

// collect reads the records a group member sends to ch until, in every
// partition of ends, it has delivered the last record (the group's topics
// hold no transaction markers: position = last record read + 1), starting
// at from[p]; fails at ctx's deadline.
func collect(ctx context.Context, ch <-chan rec, ends map[int32]readEnd, from map[int32]int64) ([]rec, error) {
	var got []rec
	pos, last := map[int32]int64{}, map[int32]int64{}
	for p := range ends {
		pos[p], last[p] = from[p], from[p]-1
	}
	for behind(ends, pos, last) != "" {
		select {
		case r := <-ch:
			got = append(got, r)
			pos[r.Partition] = max(pos[r.Partition], r.Offset+1)
			last[r.Partition] = max(last[r.Partition], r.Offset)
		case <-ctx.Done():
			return got, fmt.Errorf("%d records read, not at the end offsets: %s: %w", len(got), behind(ends, pos, last), ctx.Err())
		}
	}
	return got, nil
}

// committedAtEnd checks the group's committed offsets of topic are the end
// offsets (none where a partition is empty).
func committedAtEnd(ctx context.Context, h *harness, group, topic string, ends map[int32]readEnd) error {
	committed, err := h.adm.FetchOffsets(ctx, group)
	if err != nil {
		return fmt.Errorf("harness fetch offsets: %w", err)
	}
	for _, p := range slices.Sorted(maps.Keys(ends)) {
		e := ends[p]
		o, ok := committed.Lookup(topic, p)
		if e.end == 0 && !ok {
			continue
		}
		if !ok || o.Err != nil || o.At != e.end {
			return fmt.Errorf("committed offset of partition %d: %+v, want the end offset %d", p, o, e.end)
		}
	}
	return nil
}

// groupRecords checks a group member's records: exactly want, each once,
// in offset order per partition, starting at from[p].
func groupRecords(want []rec, got []rec, from map[int32]int64) error {
	byPart := map[int32][]rec{}
	for _, r := range got {
		byPart[r.Partition] = append(byPart[r.Partition], r)
	}
	return checkConsumed(want, byPart, from, false)
}

func featGroupCommit(ctx context.Context, h *harness, fam family) error {
	topic, err := h.topic(ctx, fam, "group", 3, nil)
	if err != nil {
		return err
	}
	group := topic
	first := makeRecords(topic+"-a", 60, 3, nowMs())
	if err := fam.produce(ctx, topic, produceOpts{codec: "none", acks: -1}, first); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	if err := h.inject(ctx, topic, first); err != nil {
		return err
	}
	ends, err := h.readEnds(ctx, topic, 3, false)
	if err != nil {
		return err
	}
	ch := make(chan rec, 1000)
	m1, err := fam.join(ctx, topic, group, ch)
	if err != nil {
		return fmt.Errorf("first member: %w", err)
	}
	got, err := collect(ctx, ch, ends, zero())
	if err != nil {
		m1.close()
		return fmt.Errorf("first member: %w", err)
	}
	if err := groupRecords(first, got, zero()); err != nil {
		m1.close()
		return fmt.Errorf("first member: %w", err)
	}
	if err := m1.commit(ctx); err != nil {
		m1.close()
		return fmt.Errorf("first member commit: %w", err)
	}
	if err := m1.close(); err != nil {
		return fmt.Errorf("first member close: %w", err)
	}
	// The commit is what the broker holds: the end offsets.
	if err := committedAtEnd(ctx, h, group, topic, ends); err != nil {
		return fmt.Errorf("after the first member: %w", err)
	}
	from := map[int32]int64{}
	for p, e := range ends {
		from[p] = e.end
	}
	second := makeRecords(topic+"-b", 40, 3, nowMs())
	if err := fam.produce(ctx, topic, produceOpts{codec: "none", acks: -1}, second); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	if err := h.inject(ctx, topic, second); err != nil {
		return err
	}
	ends2, err := h.readEnds(ctx, topic, 3, false)
	if err != nil {
		return err
	}
	ch2 := make(chan rec, 1000)
	m2, err := fam.join(ctx, topic, group, ch2)
	if err != nil {
		return fmt.Errorf("second member: %w", err)
	}
	defer m2.close()
	got, err = collect(ctx, ch2, ends2, from)
	if err != nil {
		return fmt.Errorf("second member: %w", err)
	}
	if err := groupRecords(second, got, from); err != nil {
		return fmt.Errorf("second member: %w", err)
	}
	if err := m2.commit(ctx); err != nil {
		return fmt.Errorf("second member commit: %w", err)
	}
	if err := m2.close(); err != nil {
		return fmt.Errorf("second member close: %w", err)
	}
	if err := committedAtEnd(ctx, h, group, topic, ends2); err != nil {
		return fmt.Errorf("after the second member: %w", err)
	}
	return nil
}

// featRebalance: two members of one group split the partitions and read
// every record once, with the classic protocol or with KIP-848's.
func featRebalance(kip848 bool) func(ctx context.Context, h *harness, fam family) error {
	return func(ctx context.Context, h *harness, fam family) error {
		join, wait := fam.join, h.waitGroup
		if kip848 {
			kf, ok := fam.(kip848Family)
			if !ok {
				return unsupported("%s has no consumer group protocol (KIP-848) client", fam.name())
			}
			join, wait = kf.joinKIP848, h.waitConsumerGroup
		}
		return rebalance(ctx, h, fam, join, wait)
	}
}

func rebalance(ctx context.Context, h *harness, fam family,
	join func(ctx context.Context, topic, group string, out chan<- rec) (member, error),
	wait func(ctx context.Context, group string, n int) error) error {
	topic, err := h.topic(ctx, fam, "rebalance", 3, nil)
	if err != nil {
		return err
	}
	group := topic
	type tagged struct {
		member int
		r      rec
	}
	all := make(chan tagged, 1000)
	var members []member
	defer func() {
		var wg sync.WaitGroup
		for _, m := range members {
			wg.Go(func() { m.close() })
		}
		wg.Wait()
	}()
	for i := range 2 {
		ch := make(chan rec, 1000)
		m, err := join(ctx, topic, group, ch)
		if err != nil {
			return fmt.Errorf("member %d: %w", i, err)
		}
		members = append(members, m)
		go func() {
			for r := range ch {
				all <- tagged{i, r}
			}
		}()
	}
	if err := wait(ctx, group, 2); err != nil {
		return err
	}
	recs := makeRecords(topic, 100, 3, nowMs())
	if err := fam.produce(ctx, topic, produceOpts{codec: "none", acks: -1}, recs); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	if err := h.inject(ctx, topic, recs); err != nil {
		return err
	}
	ends, err := h.readEnds(ctx, topic, 3, false)
	if err != nil {
		return err
	}
	// Read until the group's position in every partition, whichever member
	// holds it, is at the end offset.
	byMember := [2]map[int32][]rec{{}, {}}
	partOwner := map[int32]int{}
	pos, last := map[int32]int64{}, map[int32]int64{}
	for p := range ends {
		pos[p], last[p] = 0, -1
	}
	n := 0
	for behind(ends, pos, last) != "" {
		select {
		case t := <-all:
			if o, ok := partOwner[t.r.Partition]; ok && o != t.member {
				return fmt.Errorf("partition %d read by both members", t.r.Partition)
			}
			partOwner[t.r.Partition] = t.member
			byMember[t.member][t.r.Partition] = append(byMember[t.member][t.r.Partition], t.r)
			pos[t.r.Partition] = max(pos[t.r.Partition], t.r.Offset+1)
			last[t.r.Partition] = max(last[t.r.Partition], t.r.Offset)
			n++
		case <-ctx.Done():
			return fmt.Errorf("%d records read, not at the end offsets: %s: %w", n, behind(ends, pos, last), ctx.Err())
		}
	}
	merged := map[int32][]rec{}
	for i, bm := range byMember {
		if len(bm) == 0 {
			return fmt.Errorf("member %d read nothing: the partitions were not split", i)
		}
		maps.Copy(merged, bm)
	}
	// Exactly the records produced: none read twice, by a member or across the two.
	if err := checkConsumed(recs, merged, zero(), false); err != nil {
		return err
	}
	for i, m := range members {
		if err := m.commit(ctx); err != nil {
			return fmt.Errorf("member %d commit: %w", i, err)
		}
	}
	return committedAtEnd(ctx, h, group, topic, ends)
}

func featListOffsets(ctx context.Context, h *harness, fam family) error {
	topic, err := h.topic(ctx, fam, "list-offsets", 3, nil)
	if err != nil {
		return err
	}
	base := nowMs() - 3_600_000
	var recs []rec
	for p := range int32(3) {
		for i := range 30 {
			recs = append(recs, rec{Partition: p, Key: fmt.Appendf(nil, "k%d", i), Value: []byte("v"),
				Timestamp: base + int64(i)*1000})
		}
	}
	if err := fam.produce(ctx, topic, produceOpts{codec: "none", acks: -1}, recs); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	type query struct {
		what string
		spec int64
		want []int64 // any of
	}
	queries := []query{
		{"earliest", -2, []int64{0}},
		{"latest", -1, []int64{30}},
		{"timestamp of offset 10", base + 10_000, []int64{10}},
		{"timestamp between offsets 11 and 12", base + 11_500, []int64{12}},
		{"timestamp before all", base - 5000, []int64{0}},
		// Kafka answers -1; some clients turn that into the end offset.
		{"timestamp after all", base + 100_000, []int64{-1, 30}},
	}
	for p := range int32(3) {
		for _, q := range queries {
			got, err := fam.listOffset(ctx, topic, p, q.spec)
			if err != nil {
				return fmt.Errorf("partition %d %s: %w", p, q.what, err)
			}
			if !slices.Contains(q.want, got) {
				return fmt.Errorf("partition %d %s: offset %d, want %v", p, q.what, got, q.want)
			}
		}
	}
	return nil
}

func featResetOffsets(ctx context.Context, h *harness, fam family) error {
	topic, err := h.topic(ctx, fam, "reset", 3, nil)
	if err != nil {
		return err
	}
	group := topic
	recs := makeRecords(topic, 90, 3, nowMs())
	if err := fam.produce(ctx, topic, produceOpts{codec: "none", acks: -1}, recs); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	if err := h.inject(ctx, topic, recs); err != nil {
		return err
	}
	ends, err := h.readEnds(ctx, topic, 3, false)
	if err != nil {
		return err
	}
	// A member reads everything and commits it.
	ch := make(chan rec, 1000)
	m1, err := fam.join(ctx, topic, group, ch)
	if err != nil {
		return fmt.Errorf("first member: %w", err)
	}
	got, err := collect(ctx, ch, ends, zero())
	if err == nil {
		err = groupRecords(recs, got, zero())
	}
	if err != nil {
		m1.close()
		return fmt.Errorf("first member: %w", err)
	}
	if err := m1.commit(ctx); err != nil {
		m1.close()
		return fmt.Errorf("first member commit: %w", err)
	}
	if err := m1.close(); err != nil {
		return fmt.Errorf("first member close: %w", err)
	}
	// Reset to 10, 20, 25 through the admin API.
	reset := map[int32]int64{0: 10, 1: 20, 2: 25}
	if err := fam.setGroupOffsets(ctx, group, topic, reset); err != nil {
		return fmt.Errorf("reset offsets: %w", err)
	}
	committed, err := h.adm.FetchOffsets(ctx, group)
	if err != nil {
		return fmt.Errorf("harness fetch offsets: %w", err)
	}
	for p, want := range reset {
		if o, ok := committed.Lookup(topic, p); !ok || o.Err != nil || o.At != want {
			return fmt.Errorf("after reset, committed offset of partition %d: %+v, want %d", p, o, want)
		}
	}
	var want []rec
	idx := map[int32]int64{}
	for _, r := range recs {
		if idx[r.Partition] >= reset[r.Partition] {
			want = append(want, r)
		}
		idx[r.Partition]++
	}
	ch2 := make(chan rec, 1000)
	m2, err := fam.join(ctx, topic, group, ch2)
	if err != nil {
		return fmt.Errorf("second member: %w", err)
	}
	defer m2.close()
	got, err = collect(ctx, ch2, ends, reset)
	if err != nil {
		return fmt.Errorf("second member: %w", err)
	}
	if err := groupRecords(want, got, reset); err != nil {
		return fmt.Errorf("second member: %w", err)
	}
	if err := m2.commit(ctx); err != nil {
		return fmt.Errorf("second member commit: %w", err)
	}
	if err := m2.close(); err != nil {
		return fmt.Errorf("second member close: %w", err)
	}
	return committedAtEnd(ctx, h, group, topic, ends)
}

func featDescribeConfigs(ctx context.Context, h *harness, fam family) error {
	v := "123456789"
	topic, err := h.topic(ctx, fam, "configs", 3, map[string]*string{"retention.ms": &v})
	if err != nil {
		return err
	}
	got, err := fam.topicConfig(ctx, topic, "retention.ms")
	if err != nil {
		return fmt.Errorf("describe: %w", err)
	}
	if got != v {
		return fmt.Errorf("described retention.ms %q, want the override %q", got, v)
	}
	if err := fam.alterTopicConfig(ctx, topic, "retention.ms", "987654321"); err != nil {
		if _, ok := err.(unsupportedError); ok {
			return nil // describing passes; the client cannot alter
		}
		return fmt.Errorf("alter: %w", err)
	}
	// Every broker answers DescribeConfigs from its own metadata, which in
	// a cluster learns of the alter a moment after the alter's answer (as
	// in Kafka): a client sent to another broker may read the old value
	// for that moment, so the check allows 5 s for the new one.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got, err = fam.topicConfig(ctx, topic, "retention.ms")
		if err != nil {
			return fmt.Errorf("describe after alter: %w", err)
		}
		if got == "987654321" || time.Now().After(deadline) {
			break
		}
	}
	if got != "987654321" {
		return fmt.Errorf("after alter, described retention.ms %q, want %q", got, "987654321")
	}
	if f, ok := fam.(*franzFamily); ok && f.old {
		return passNote{"altered with the legacy AlterConfigs: IncrementalAlterConfigs is Kafka 2.3"}
	}
	return nil
}

func featTransactions(ctx context.Context, h *harness, fam family) error {
	topic, err := h.topic(ctx, fam, "txn", 3, nil)
	if err != nil {
		return err
	}
	txnID := topic
	a := makeRecords(topic+"-committed1", 30, 3, nowMs())
	b := makeRecords(topic+"-aborted", 30, 3, nowMs())
	c := makeRecords(topic+"-committed2", 30, 3, nowMs())
	for i, step := range []struct {
		recs   []rec
		commit bool
	}{{a, true}, {b, false}, {c, true}} {
		if err := fam.transact(ctx, topic, txnID, step.commit, step.recs); err != nil {
			return fmt.Errorf("transaction %d: %w", i+1, err)
		}
	}
	if err := h.inject(ctx, topic, c); err != nil {
		return err
	}
	committed := append(append([]rec{}, a...), c...)
	got, err := consumeToEnd(ctx, h, fam, topic, 3, true)
	if err != nil {
		return fmt.Errorf("read_committed: %w", err)
	}
	if err := checkConsumed(ordered(committed), got, nil, fam.nullAware()); err != nil {
		return fmt.Errorf("read_committed: %w", err)
	}
	everything := append(append(append([]rec{}, a...), b...), c...)
	got, err = consumeToEnd(ctx, h, fam, topic, 3, false)
	if err != nil {
		return fmt.Errorf("read_uncommitted: %w", err)
	}
	if err := checkConsumed(ordered(everything), got, nil, fam.nullAware()); err != nil {
		return fmt.Errorf("read_uncommitted: %w", err)
	}
	return nil
}

// ordered is recs in produce order per partition (a stable copy).
func ordered(recs []rec) []rec { return slices.Clone(recs) }
