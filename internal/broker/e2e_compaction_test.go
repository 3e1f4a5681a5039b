package broker

// Log compaction end to end: a real broker with its background cleaner
// looking every 50 ms, franz-go producing keyed updates and tombstones, and
// what consumers then see. The tests steer segment rolls with record
// timestamps: with segment.ms=5 a batch stamped more than 5 ms after the
// first batch of the active segment starts a new one, so every produced
// round is a segment of its own and the last round (a "fence" key written
// once) keeps the rounds before it out of the active segment, which is never
// cleaned. Old timestamps satisfy min.compaction.lag.ms and retention.ms
// without waiting; tombstones stamped near now let a test watch
// delete.retention.ms pass.
//
// The expected state of a cleaned partition is the latest record of every
// key, at its original offset: the tests wait for exactly that (polling
// with a deadline), so a pass that removed too much never matches.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/group"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// compactionWait bounds the wait for one cleaning outcome.
const compactionWait = 10 * time.Second

// compactionValues is the broker config of these tests: the cleaner and
// the retention check run every 50 ms, and the cleaner takes any log with
// dirty bytes (the internal topics have no min.cleanable.dirty.ratio of
// their own), plus extra.
func compactionValues(t testing.TB, extra map[string]string) config.Values {
	t.Helper()
	raw := map[string]string{
		"log.cleaner.backoff.ms":          "50",
		"log.cleaner.min.cleanable.ratio": "0.01",
		"log.retention.check.interval.ms": "50",
	}
	maps.Copy(raw, extra)
	v, err := LoadConfig("", raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// topicConfigs turns name, value pairs into CreateTopics configs, over
// the settings every compaction test wants: rolls steered by timestamps
// (segment.ms=5) and a log cleaned as soon as anything is dirty.
func topicConfigs(pairs ...string) map[string]*string {
	m := map[string]*string{
		"segment.ms":                ptr("5"),
		"min.cleanable.dirty.ratio": ptr("0.01"),
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = ptr(pairs[i+1])
	}
	return m
}

// keyedWriter produces rounds of keyed records to partition 0 of a topic
// and remembers each with the offset the broker gave it.
type keyedWriter struct {
	t       *testing.T
	cl      *kgo.Client
	topic   string
	written []e2eRecord
}

func newKeyedWriter(t *testing.T, b *Broker, topic string) *keyedWriter {
	return &keyedWriter{t: t, topic: topic,
		cl: newFranz(t, b.Addr(), kgo.RecordPartitioner(kgo.ManualPartitioner()))}
}

// round produces recs, all stamped tsMs, in one synchronous produce.
func (w *keyedWriter) round(tsMs int64, recs ...e2eRecord) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	krs := make([]*kgo.Record, len(recs))
	for i := range recs {
		recs[i].Timestamp = tsMs
		krs[i] = toFranz(w.topic, recs[i])
	}
	res := w.cl.ProduceSync(ctx, krs...)
	if err := res.FirstErr(); err != nil {
		w.t.Fatalf("produce to %s: %v", w.topic, err)
	}
	for i, r := range res {
		recs[i].Offset = r.Record.Offset
	}
	w.written = append(w.written, recs...)
}

// kv is a record for keyedWriter.round; a nil value is a tombstone.
func kv(key string, value []byte) e2eRecord {
	return e2eRecord{Key: []byte(key), Value: value}
}

// updates sets every key to "key@tag".
func updates(keys []string, tag string) []e2eRecord {
	recs := make([]e2eRecord, len(keys))
	for i, k := range keys {
		recs[i] = kv(k, []byte(k+"@"+tag))
	}
	return recs
}

func keyNames(prefix string, from, to int) []string {
	var keys []string
	for i := from; i < to; i++ {
		keys = append(keys, fmt.Sprintf("%s-%02d", prefix, i))
	}
	return keys
}

// latestPerKey is the fully compacted view of written: every key's last
// record, in offset order, without tombstones when dropTombstones.
func latestPerKey(written []e2eRecord, dropTombstones bool) []e2eRecord {
	last := map[string]e2eRecord{}
	for _, r := range written {
		if cur, ok := last[string(r.Key)]; !ok || r.Offset > cur.Offset {
			last[string(r.Key)] = r
		}
	}
	var out []e2eRecord
	for _, r := range last {
		if r.Value == nil && dropTombstones {
			continue
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b e2eRecord) int { return int(a.Offset - b.Offset) })
	return out
}

// diffView describes how got differs from want, offsets included ("" when
// equal).
func diffView(got, want []e2eRecord) string {
	var d []string
	if len(got) != len(want) {
		d = append(d, fmt.Sprintf("%d records, want %d", len(got), len(want)))
	}
	for i := range min(len(got), len(want)) {
		if got[i].Offset != want[i].Offset {
			d = append(d, fmt.Sprintf("record %d: offset %d, want %d (%v)", i, got[i].Offset, want[i].Offset, want[i]))
			break
		}
		if s := diffRecord(want[i], got[i], true); s != "" {
			d = append(d, fmt.Sprintf("offset %d: %s", got[i].Offset, s))
		}
	}
	return strings.Join(d, "; ")
}

// storedCompacted reads what a partition holds from its log start offset
// to its high watermark with raw fetches. Unlike storedPartition it starts
// wherever retention left the log and steps over batches that cleaning
// emptied, as clients do.
func storedCompacted(t *testing.T, b *Broker, topic string, p int32) []e2eRecord {
	t.Helper()
	rc := dialRaw(t, b)
	defer rc.nc.Close()
	var recs []e2eRecord
	for offset, corr := int64(0), int32(1); ; corr++ {
		part := rawFetch(t, rc, topic, p, offset, corr)
		if part.ErrorCode == kerr.OffsetOutOfRange.Code && offset < part.LogStartOffset {
			offset = part.LogStartOffset
			continue
		}
		if err := kerr.ErrorForCode(part.ErrorCode); err != nil {
			t.Fatalf("fetch %s/%d at %d: %v", topic, p, offset, err)
		}
		if offset >= part.HighWatermark {
			return recs
		}
		next := offset
		for _, batch := range fetchedBatches(t, part) {
			next = max(next, batch.FirstOffset+int64(batch.LastOffsetDelta)+1)
		}
		for _, r := range fetchedRecords(t, topic, p, offset, part) {
			recs = append(recs, r)
			next = max(next, r.Offset+1)
		}
		if next == offset {
			t.Fatalf("fetch %s/%d at %d below high watermark %d returned nothing", topic, p, offset, part.HighWatermark)
		}
		offset = next
	}
}

// waitCleanerRound waits for the log cleaner's next round to end, failing
// the test at deadline.
func waitCleanerRound(t *testing.T, round <-chan struct{}, deadline <-chan time.Time, what string) {
	t.Helper()
	select {
	case <-round:
	case <-deadline:
		t.Fatalf("%s: gave up after %v", what, compactionWait)
	}
}

// waitStored checks the partition after each round of the log cleaner until
// it holds exactly one of wants and returns which; it fails with the last
// difference after compactionWait.
func waitStored(t *testing.T, b *Broker, topic string, what string, wants ...[]e2eRecord) int {
	t.Helper()
	deadline := time.After(compactionWait)
	for {
		round := b.logs.CleanerRound()
		got := storedCompacted(t, b, topic, 0)
		var diffs []string
		for i, want := range wants {
			d := diffView(got, want)
			if d == "" {
				return i
			}
			diffs = append(diffs, d)
		}
		select {
		case <-round:
		case <-deadline:
			t.Fatalf("%s: partition never reached the expected view: %s", what, strings.Join(diffs, " | or | "))
		}
	}
}

// consumeView reads partition 0 from the beginning up to its end with a
// franz-go consumer and checks it sees exactly want, offsets strictly
// increasing.
func consumeView(t *testing.T, b *Broker, topic string, want []e2eRecord) {
	t.Helper()
	if len(want) == 0 {
		return
	}
	got := franzConsume(t, b.Addr(), topic, map[int32]int{0: len(want)}, map[int32]int64{0: 0})[0]
	for i := 1; i < len(got); i++ {
		if got[i].Offset <= got[i-1].Offset {
			t.Errorf("consumed offset %d after %d", got[i].Offset, got[i-1].Offset)
		}
	}
	if d := diffView(got, want); d != "" {
		t.Errorf("franz-go consumer: %s", d)
	}
}

// A compacted topic with 20 keys updated ten times, some deleted by
// tombstones and some deleted and written again: the cleaner leaves exactly
// the latest record of each key at its original offset, which a franz-go
// consumer reading from the beginning sees (offsets increasing, with gaps).
// Tombstones stay for delete.retention.ms after the first pass that sees
// them (KIP-534: the pass stamps their batch with a delete horizon) and go
// with a pass after it.
func TestCompactionLatestValuePerKey(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), Values: compactionValues(t, nil)})
	const topic = "compacted"
	const deleteRetentionMs = 3000
	createTopicWith(t, b, topic, 1, topicConfigs("cleanup.policy", "compact", "delete.retention.ms", strconv.Itoa(deleteRetentionMs)))
	w := newKeyedWriter(t, b, topic)
	keys := keyNames("key", 0, 20)
	now := time.Now().UnixMilli()
	old := now - time.Hour.Milliseconds()
	for r := range 8 {
		recs := updates(keys, fmt.Sprint(r))
		if r == 5 { // keys 4 and 5 are deleted, then written again in round 7
			recs[4].Value, recs[5].Value = nil, nil
		}
		w.round(old+int64(r)*10, recs...)
	}
	// Round 8 deletes keys 0-3 (tombstones stamped near now), round 9
	// updates the others, and a fence closes round 9's segment.
	tombTs := now - 30
	r8 := updates(keys, "8")
	for i := range 4 {
		r8[i].Value = nil
	}
	w.round(tombTs, r8...)
	w.round(now-20, updates(keys[4:], "9")...)
	w.round(now-10, kv("fence-1", []byte("f1")))
	written := len(w.written)

	withTombs, withoutTombs := latestPerKey(w.written, false), latestPerKey(w.written, true)
	which := waitStored(t, b, topic, "first cleaning", withTombs, withoutTombs)
	readAt := time.Now().UnixMilli()
	t.Logf("%d records written, %d left after cleaning", written, len(withTombs))
	horizon := tombTs + deleteRetentionMs
	switch {
	case which == 1 && readAt < horizon:
		t.Fatalf("tombstones removed %d ms after they were written, before delete.retention.ms=%d", readAt-tombTs, deleteRetentionMs)
	case which == 0:
		consumeView(t, b, topic, withTombs)
	default:
		t.Logf("the first pass ran after delete.retention.ms: tombstones already gone")
	}

	// Once delete.retention.ms has passed since that first pass, a later
	// pass removes the tombstones (the horizon alone makes the log due;
	// the new writes only add dirt).
	if wait := time.Until(time.UnixMilli(horizon + 1)); wait > 0 {
		time.Sleep(wait) // the horizon is wall-clock time: nothing to wait on
	}
	w.round(time.Now().UnixMilli(), updates(keys[10:], "10")...)
	w.round(time.Now().UnixMilli()+10, kv("fence-2", []byte("f2")))
	want := latestPerKey(w.written, true)
	if len(want) != 16+2 { // keys 4-19 and the two fences; keys 0-3 gone
		t.Fatalf("model: %d records, want 18", len(want))
	}
	waitStored(t, b, topic, "tombstones past delete.retention.ms", want)
	consumeView(t, b, topic, want)
}

// min.compaction.lag.ms keeps records younger than it out of cleaning: the
// old rounds are compacted among themselves, the recent ones stay whole.
func TestCompactionMinLag(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), Values: compactionValues(t, nil)})
	const topic = "compacted-lag"
	createTopicWith(t, b, topic, 1, topicConfigs("cleanup.policy", "compact", "min.compaction.lag.ms", "1800000"))
	w := newKeyedWriter(t, b, topic)
	keys := keyNames("key", 0, 10)
	now := time.Now().UnixMilli()
	for r := range 4 {
		w.round(now-time.Hour.Milliseconds()+int64(r)*10, updates(keys, fmt.Sprint(r))...)
	}
	oldRounds := len(w.written)
	for r := 4; r < 7; r++ {
		w.round(now+int64(r)*10, updates(keys, fmt.Sprint(r))...)
	}
	w.round(now+100, kv("fence", []byte("f")))
	want := append(latestPerKey(w.written[:oldRounds], false), w.written[oldRounds:]...)
	waitStored(t, b, topic, "cleaning below the lag", want)
	consumeView(t, b, topic, want)
}

// A consumer positioned at an offset the cleaner removed continues at the
// next surviving offset, whether it starts there (franz-go with a reset
// offset) or fetches there by hand: the broker answers with the batch that
// covered the offset (or the next one), and the client skips what lies
// below the offset it asked for.
func TestCompactionConsumeFromRemovedOffset(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), Values: compactionValues(t, nil)})
	const topic = "compacted-gaps"
	createTopicWith(t, b, topic, 1, topicConfigs("cleanup.policy", "compact"))
	w := newKeyedWriter(t, b, topic)
	hot := keyNames("hot", 0, 10)
	now := time.Now().UnixMilli()
	old := now - time.Hour.Milliseconds()
	w.round(old, updates(hot, "0")...)
	// Round 1 writes once-only keys between updates of the hot keys, so
	// survivors sit between removed ranges.
	var r1 []e2eRecord
	for i, k := range hot {
		r1 = append(r1, kv(k, []byte(k+"@1")))
		if i%3 == 2 {
			r1 = append(r1, kv(fmt.Sprintf("once-%d", i), []byte("kept")))
		}
	}
	w.round(old+10, r1...)
	for r := 2; r < 6; r++ {
		w.round(old+int64(r)*10, updates(hot, fmt.Sprint(r))...)
	}
	w.round(now, kv("fence", []byte("f")))
	before := slices.Clone(w.written)
	want := latestPerKey(before, false)
	waitStored(t, b, topic, "cleaning", want)

	kept := map[int64]bool{}
	for _, r := range want {
		kept[r.Offset] = true
	}
	nextKept := func(x int64) int64 {
		for _, r := range want {
			if r.Offset >= x {
				return r.Offset
			}
		}
		t.Fatalf("no record kept at or after %d", x)
		return -1
	}
	// Removed offsets worth starting from: the first one, each one right
	// after a survivor, the middle of a removed round, and the last one.
	var removed []int64
	for i, r := range before {
		if kept[r.Offset] {
			continue
		}
		if i == 0 || kept[before[i-1].Offset] || i == len(before)/2 {
			removed = append(removed, r.Offset)
		}
	}
	for i := len(before) - 1; i >= 0; i-- {
		if !kept[before[i].Offset] {
			removed = append(removed, before[i].Offset)
			break
		}
	}
	if len(removed) < 3 {
		t.Fatalf("only %d removed offsets to start from: %v", len(removed), removed)
	}

	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	rc := dialRaw(t, b)
	for _, x := range removed {
		next := nextKept(x)

		cl := newFranz(t, b.Addr(), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().At(x)))
		fs := cl.PollRecords(ctx, 1)
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("consume %s/%d from %d: %v", topic, p, x, err) })
		if recs := fs.Records(); len(recs) == 0 || recs[0].Offset != next {
			t.Errorf("franz-go from removed offset %d: first record %v, want offset %d", x, recs, next)
		}
		cl.Close()

		// A fetch may answer with batches that cleaning emptied (their
		// headers keep the producer's state); the client steps past them.
		pos := x
		for corr := int32(1); ; corr++ {
			part := rawFetch(t, rc, topic, 0, pos, corr)
			if err := kerr.ErrorForCode(part.ErrorCode); err != nil {
				t.Fatalf("fetch at %d: %v", pos, err)
			}
			batches := fetchedBatches(t, part)
			if len(batches) == 0 {
				t.Fatalf("fetch at %d (from removed offset %d): no batch", pos, x)
			}
			first, last := batches[0], batches[len(batches)-1]
			if end := first.FirstOffset + int64(first.LastOffsetDelta); first.FirstOffset > next || end < pos {
				t.Errorf("fetch at %d (from removed offset %d): first batch %d-%d, want one covering %d or starting by %d", pos, x, first.FirstOffset, end, pos, next)
			}
			if recs := fetchedRecords(t, topic, 0, pos, part); len(recs) > 0 {
				if d := diffView(recs[:1], []e2eRecord{want[slices.IndexFunc(want, func(r e2eRecord) bool { return r.Offset == next })]}); d != "" {
					t.Errorf("fetch from removed offset %d: first record: %s", x, d)
				}
				break
			}
			end := last.FirstOffset + int64(last.LastOffsetDelta) + 1
			if end <= pos || end > next {
				t.Fatalf("fetch at %d (from removed offset %d): only empty batches up to %d, next kept record at %d", pos, x, end, next)
			}
			pos = end
		}
	}
}

// Changing cleanup.policy on a live topic takes effect: duplicates written
// under delete are compacted once the policy is compact, and with
// compact,delete retention removes expired segments while new duplicates
// are still compacted.
func TestCompactionPolicyChange(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), Values: compactionValues(t, nil)})
	const topic = "policy-change"
	createTopicWith(t, b, topic, 1, topicConfigs("cleanup.policy", "delete"))
	w := newKeyedWriter(t, b, topic)
	keys := keyNames("key", 0, 10)
	now := time.Now().UnixMilli()
	old := now - 2*time.Hour.Milliseconds()
	for r := range 5 {
		w.round(old+int64(r)*10, updates(keys, fmt.Sprint(r))...)
	}
	w.round(now, kv("fence-1", []byte("f1")))
	if got := storedCompacted(t, b, topic, 0); len(got) != len(w.written) {
		t.Fatalf("under cleanup.policy=delete: %d records stored, want all %d", len(got), len(w.written))
	}

	adm := kadm.NewClient(newFranz(t, b.Addr()))
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	alter := func(configs ...kadm.AlterConfig) {
		t.Helper()
		resp, err := adm.AlterTopicConfigs(ctx, configs, topic)
		if err == nil {
			_, err = resp.On(topic, nil)
		}
		if err == nil {
			err = resp[0].Err
		}
		if err != nil {
			t.Fatalf("alter %s: %v", topic, err)
		}
	}
	alter(kadm.AlterConfig{Name: "cleanup.policy", Value: ptr("compact")})
	want := latestPerKey(w.written, false)
	waitStored(t, b, topic, "after cleanup.policy=compact", want)
	consumeView(t, b, topic, want)

	// compact,delete: every segment but the active one is older than
	// retention.ms and goes; what follows is compacted again.
	alter(kadm.AlterConfig{Name: "cleanup.policy", Value: ptr("compact,delete")},
		kadm.AlterConfig{Name: "retention.ms", Value: ptr("3600000")})
	fence1 := w.written[len(w.written)-1]
	waitStored(t, b, topic, "retention under compact,delete", []e2eRecord{fence1})
	if c := describedTopicConfig(t, adm, ctx, topic, "cleanup.policy"); c.MaybeValue() != "compact,delete" {
		t.Errorf("cleanup.policy %q, want compact,delete", c.MaybeValue())
	}
	mark := len(w.written)
	ts := time.Now().UnixMilli() + 10
	for r := 5; r < 8; r++ {
		w.round(ts+int64(r)*10, updates(keys, fmt.Sprint(r))...)
	}
	w.round(ts+100, kv("fence-2", []byte("f2")))
	want = append([]e2eRecord{fence1}, latestPerKey(w.written[mark:], false)...)
	waitStored(t, b, topic, "compaction under compact,delete", want)
	consumeView(t, b, topic, want)
}

// __consumer_offsets is compacted: a group committing the same partitions
// over and over leaves one record per partition after cleaning, and a
// restarted broker loads the latest commits from the cleaned log.
func TestCompactionConsumerOffsets(t *testing.T) {
	dir := t.TempDir()
	values := compactionValues(t, map[string]string{
		"offsets.topic.num.partitions": "1",
		// The offsets topic's segment.bytes cannot go below the topic
		// minimum (1 MiB); rolling by time (its segment.ms default)
		// makes segments small instead.
		"log.roll.ms": "100",
	})
	start := func() *Broker {
		b := startBrokerWith(t, Config{LogDir: dir, Values: values})
		select {
		case <-b.coordSync.ready:
		case <-time.After(e2eTimeout):
			t.Fatal("group coordinator did not load __consumer_offsets")
		}
		return b
	}
	b := start()
	const topic, groupID = "committed", "compacted-group"
	createTopic(t, b, topic, 3)
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()

	const commits = 150
	var last kadm.Offsets
	for i := range commits + 1 {
		if i == commits {
			// The segments roll by time (log.roll.ms): a last commit
			// after a pause opens a segment of its own, so everything
			// before it is cleanable.
			time.Sleep(101 * time.Millisecond)
		}
		last = kadm.Offsets{}
		for p := range int32(3) {
			last.AddOffset(topic, p, int64(i*10)+int64(p), -1)
		}
		resp, err := adm.CommitOffsets(ctx, groupID, last)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	if c := describedTopicConfig(t, adm, ctx, group.OffsetsTopic, "cleanup.policy"); c.MaybeValue() != "compact" {
		t.Errorf("%s cleanup.policy %q, want compact", group.OffsetsTopic, c.MaybeValue())
	}
	// Each commit writes one record per partition; once cleaned, what is
	// left is the latest record of each partition below the last commit,
	// and the last commit.
	n := waitFewRecords(t, b, group.OffsetsTopic, 6)
	t.Logf("%s-0: %d records left of %d committed", group.OffsetsTopic, n, (commits+1)*3)
	checkCommitted := func(b *Broker, when string) {
		t.Helper()
		adm := kadm.NewClient(newFranz(t, b.Addr()))
		got, err := adm.FetchOffsets(ctx, groupID)
		if err != nil {
			t.Fatalf("%s: fetch offsets: %v", when, err)
		}
		for p := range int32(3) {
			o, ok := got.Lookup(topic, p)
			if w, _ := last.Lookup(topic, p); !ok || o.Err != nil || o.At != w.At {
				t.Errorf("%s: partition %d committed %d (%v), want %d", when, p, o.At, o.Err, w.At)
			}
		}
	}
	checkCommitted(b, "after cleaning")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = start()
	checkCommitted(b, "after restart")
}

// waitFewRecords waits until partition 0 of an internal topic holds at
// most limit records and returns how many it holds.
func waitFewRecords(t *testing.T, b *Broker, topic string, limit int) int {
	t.Helper()
	deadline := time.After(compactionWait)
	for {
		round := b.logs.CleanerRound()
		n := len(storedCompacted(t, b, topic, 0))
		if n <= limit {
			return n
		}
		waitCleanerRound(t, round, deadline, fmt.Sprintf("%s-0 still holds %d records, want at most %d after cleaning", topic, n, limit))
	}
}

// __transaction_state is compacted too: one transactional ID running many
// transactions leaves a few records after cleaning, and after a restart
// the coordinator still knows the ID (InitProducerId keeps its producer ID
// and bumps the epoch) and the committed data reads back.
func TestCompactionTransactionState(t *testing.T) {
	dir := t.TempDir()
	values := compactionValues(t, map[string]string{
		"transaction.state.log.num.partitions": "1",
		"log.roll.ms":                          "100", // see TestCompactionConsumerOffsets
	})
	b := startBrokerWith(t, Config{LogDir: dir, Values: values})
	const topic, txnID, txns = "txn-compacted", "compacted-txn", 40
	createTopic(t, b, topic, 1)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	producer := func(b *Broker) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.TransactionalID(txnID), kgo.DefaultProduceTopic(topic))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	cl := producer(b)
	for i := range txns {
		if i == txns-1 {
			time.Sleep(101 * time.Millisecond) // see the last commit in TestCompactionConsumerOffsets
		}
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "txn-%d", i)}).FirstErr(); err != nil {
			t.Fatalf("produce in transaction %d: %v", i, err)
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatalf("commit transaction %d: %v", i, err)
		}
	}
	id, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cl.Close()
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	if c := describedTopicConfig(t, adm, ctx, "__transaction_state", "cleanup.policy"); c.MaybeValue() != "compact" {
		t.Errorf("__transaction_state cleanup.policy %q, want compact", c.MaybeValue())
	}
	// Every transaction writes state records (ongoing, prepare,
	// complete) under the one key: once cleaned, one is left below the
	// last transaction's.
	n := waitFewRecords(t, b, "__transaction_state", 8)
	t.Logf("__transaction_state-0: %d records left after %d transactions", n, txns)

	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = startBrokerWith(t, Config{LogDir: dir, Values: values})
	id2, epoch2, err := producer(b).ProducerID(ctx)
	if err != nil {
		t.Fatalf("InitProducerId after restart: %v", err)
	}
	if id2 != id || epoch2 <= epoch {
		t.Errorf("after restart: producer %d epoch %d, want producer %d with an epoch above %d", id2, epoch2, id, epoch)
	}
	committed := newFranz(t, b.Addr(), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) < txns {
		fs := committed.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read committed: %d of %d records: %v", len(got), txns, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("consume %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	for i, v := range got {
		if want := fmt.Sprintf("txn-%d", i); v != want {
			t.Errorf("committed record %d: %q, want %q", i, v, want)
		}
	}
}
