package mirror

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/mirror/mm2"
)

// produceMixed writes plain, idempotent, committed and aborted
// transactional records to topic, so its offsets have gaps (markers,
// aborted batches) a read_committed copy must keep.
func produceMixed(t *testing.T, addr, topic string, round int) {
	t.Helper()
	ctx := context.Background()
	plain := client(t, addr, kgo.DefaultProduceTopic(topic), kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.AllISRAcks()))
	idem := client(t, addr, kgo.DefaultProduceTopic(topic))
	txn := client(t, addr, kgo.DefaultProduceTopic(topic), kgo.TransactionalID(fmt.Sprintf("mixed-%s-%d", topic, round)))
	rec := func(kind string, i int) *kgo.Record {
		return &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i%5)), Value: []byte(fmt.Sprintf("%s-%d-%d", kind, round, i)),
			Headers: []kgo.RecordHeader{{Key: "kind", Value: []byte(kind)}}}
	}
	for i := 0; i < 20; i++ {
		if err := plain.ProduceSync(ctx, rec("plain", i)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 20; i++ {
		if err := idem.ProduceSync(ctx, rec("idem", i)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for n, commit := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort, kgo.TryCommit, kgo.TryAbort} {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10; i++ {
			kind := "committed"
			if !commit {
				kind = "aborted"
			}
			if err := txn.ProduceSync(ctx, rec(kind, n*10+i)).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := txn.EndTransaction(ctx, commit); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPreserveKeepsOffsets mirrors a topic whose offsets have gaps
// (transaction markers, aborted transactions) in offset-preserving mode:
// every record a read_committed consumer reads on A is on B at the same
// offset with the same key, value, headers and timestamp; an ordinary
// producer cannot write the mirror topic; a group's offsets on B are its
// offsets on A; after promotion producers write B and the mirror stops
// copying.
func TestPreserveKeepsOffsets(t *testing.T) {
	t.Parallel()
	a, _ := devcluster.StartTestBroker(t)
	b, _ := devcluster.StartTestBroker(t)
	c := clusters{"A": a, "B": b}
	ctx := context.Background()
	createTopic(t, a, "ledger", 2, nil)
	produceMixed(t, a, "ledger", 0)

	cfg := mm2Config(t, c, "samsa.offset.preserving.enabled = true", "tasks.max = 2")
	m := runMirror(t, cfg, c)

	committed := kgo.FetchIsolationLevel(kgo.ReadCommitted())
	want := readAll(t, a, "ledger", committed)
	check := func() error {
		got := readAll(t, b, "A.ledger", committed)
		if len(got) != len(want) {
			return fmt.Errorf("%d records on B, %d on A", len(got), len(want))
		}
		for i := range want {
			if got[i].Offset != want[i].Offset {
				return fmt.Errorf("record %d at offset %d on B, %d on A", i, got[i].Offset, want[i].Offset)
			}
		}
		return sameRecords(want, got)
	}
	// Trailing aborted batches and markers are gaps: compare what a
	// read_committed consumer reads.
	eventually(t, 30*time.Second, "A.ledger on B at A's offsets", check)
	for _, r := range readAll(t, b, "A.ledger") {
		if string(r.Headers[0].Value) == "aborted" {
			t.Fatalf("an aborted record reached B: %s at %d", r.Value, r.Offset)
		}
	}

	// More, with the mirror running.
	produceMixed(t, a, "ledger", 1)
	want = readAll(t, a, "ledger", committed)
	eventually(t, 30*time.Second, "the second round on B", check)

	// Nobody else writes a mirror topic.
	p := client(t, b, kgo.DefaultProduceTopic("A.ledger"), kgo.RecordRetries(1))
	err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("intruder")}).FirstErr()
	if !errors.Is(err, kerr.InvalidRequest) {
		t.Fatalf("an ordinary produce to a mirror topic: %v, want INVALID_REQUEST", err)
	}

	// A group's offsets arrive verbatim.
	g := client(t, a, kgo.ConsumeTopics("ledger"), kgo.ConsumerGroup("audit"), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), committed)
	for read := 0; read < 30; {
		read += g.PollRecords(ctx, 30-read).NumRecords()
	}
	if err := g.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	g.Close()
	srcOffs, err := kadm.NewClient(client(t, a)).FetchOffsets(ctx, "audit")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "audit's offsets on B", func() error {
		got, err := kadm.NewClient(client(t, b)).FetchOffsets(ctx, "audit")
		if err != nil {
			return err
		}
		var bad error
		srcOffs.Each(func(o kadm.OffsetResponse) {
			d, ok := got.Lookup("A.ledger", o.Partition)
			if !ok || d.At != o.At {
				bad = fmt.Errorf("audit on B at A.ledger[%d] = %+v, on A %d", o.Partition, d, o.At)
			}
		})
		return bad
	})
	var cps int
	for _, r := range readAll(t, b, "A.checkpoints.internal") {
		cp, err := mm2.DecodeCheckpoint(r.Key, r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if cp.Group == "audit" {
			cps++
			if cp.UpstreamOffset != cp.DownstreamOffset {
				t.Errorf("checkpoint %+v: offsets differ in offset-preserving mode", cp)
			}
		}
	}
	if cps == 0 {
		t.Error("no checkpoint for audit")
	}

	// Promote: B's topic takes writes after A's last offset, the mirror
	// stops copying it.
	promoted, err := Promote(ctx, cfg, c.clientFunc(), nil, nil)
	if err != nil || len(promoted) != 1 || promoted[0] != "A.ledger" {
		t.Fatalf("promote: %v, %v", promoted, err)
	}
	end := endOffsets(t, b, "A.ledger")[0]
	out := &kgo.Record{Value: []byte("after failover"), Partition: 0}
	pw := client(t, b, kgo.DefaultProduceTopic("A.ledger"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := pw.ProduceSync(ctx, out).FirstErr(); err != nil {
		t.Fatalf("produce after promotion: %v", err)
	}
	if out.Offset != end {
		t.Errorf("first record after promotion at %d, want the mirror's end %d", out.Offset, end)
	}
	produceMixed(t, a, "ledger", 2)
	eventually(t, 30*time.Second, "the mirror stopping", func() error {
		for _, l := range m.Lag() {
			if l.SourceTopic == "ledger" && l.Partition == 0 && l.Stopped == "" {
				return fmt.Errorf("%+v still copying", l)
			}
		}
		return nil
	})
	lags, err := Status(ctx, cfg, c.clientFunc())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lags {
		if l.SourceTopic == "ledger" && l.Stopped == "" {
			t.Errorf("status %+v: promoted, want stopped", l)
		}
	}
}

// TestPreserveKeepsCompactionGaps mirrors a compacted topic whose cleaner
// already removed superseded records: the target holds the survivors at
// their source offsets, the removed offsets are gaps there too.
func TestPreserveKeepsCompactionGaps(t *testing.T) {
	t.Parallel()
	a, _ := devcluster.StartTestBroker(t, "--override", "log.cleaner.backoff.ms=100")
	b, _ := devcluster.StartTestBroker(t)
	c := clusters{"A": a, "B": b}
	createTopic(t, a, "latest", 1, map[string]*string{"cleanup.policy": ptr("compact"),
		"min.cleanable.dirty.ratio": ptr("0.01"), "segment.ms": ptr("5")})
	// Old timestamps 10 ms apart roll a segment per record (segment.ms=5)
	// and pass min.compaction.lag.ms; a last key keeps the rest out of the
	// active segment, which is never cleaned.
	cl := client(t, a, kgo.DefaultProduceTopic("latest"))
	base := time.Now().Add(-time.Hour)
	for i := 0; i <= 400; i++ {
		key := fmt.Sprintf("k%d", i%5)
		if i == 400 {
			key = "fence"
		}
		r := &kgo.Record{Key: []byte(key), Value: []byte(fmt.Sprintf("v%d", i)), Timestamp: base.Add(time.Duration(i) * 10 * time.Millisecond)}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var want []*kgo.Record
	eventually(t, 60*time.Second, "the cleaner on A", func() error {
		want = readAll(t, a, "latest")
		if len(want) > 200 {
			return fmt.Errorf("%d of 400 records still there", len(want))
		}
		return nil
	})
	runMirror(t, mm2Config(t, c, "samsa.offset.preserving.enabled = true"), c)
	// Record i was produced at offset i with value v<i>. A's cleaner may
	// go on after the copy (and B's, the config copied): every record on
	// B must be at its source offset, and every survivor on A on B.
	eventually(t, 30*time.Second, "the survivors on B at their offsets", func() error {
		got := readAll(t, b, "A.latest")
		onB := map[int64]bool{}
		for _, r := range got {
			if string(r.Value) != fmt.Sprintf("v%d", r.Offset) {
				return fmt.Errorf("B holds %s at offset %d", r.Value, r.Offset)
			}
			onB[r.Offset] = true
		}
		for _, r := range readAll(t, a, "latest") {
			if !onB[r.Offset] {
				return fmt.Errorf("A's %s at %d is not on B (B: %d records)", r.Value, r.Offset, len(got))
			}
		}
		if len(got) > 200 {
			return fmt.Errorf("B holds %d records: the gaps are missing", len(got))
		}
		return nil
	})
}
