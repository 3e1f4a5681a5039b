package history

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The helpers below build small histories on partition t/0 unless told
// otherwise. Records are written "offset=value" or "offset=value/key".

type produceOpt func(*Produce)

func idem(p *Produce)                { p.Idempotent = true }
func inTxn(n int64) produceOpt       { return func(p *Produce) { p.TransactionalID, p.Txn = "tx", n } }
func withKey(k string) produceOpt    { return func(p *Produce) { p.Key = k } }
func onPartition(n int32) produceOpt { return func(p *Produce) { p.Partition = n } }

func produce(o Outcome, value string, off int64, opts ...produceOpt) Produce {
	p := Produce{Client: "p", Topic: "t", Value: value, Outcome: o, Offset: off}
	if o != OutcomeAck {
		p.Offset = -1
	}
	for _, opt := range opts {
		opt(&p)
	}
	return p
}

func ack(value string, off int64, opts ...produceOpt) Produce {
	return produce(OutcomeAck, value, off, opts...)
}

func txnEnd(n int64, s TxnStatus) Txn {
	return Txn{Client: "p", TransactionalID: "tx", Txn: n, Outcome: s}
}

type rec struct {
	off        int64
	value, key string
}

func parseRecords(s string) []rec {
	var out []rec
	for _, f := range strings.Fields(s) {
		o, v, _ := strings.Cut(f, "=")
		v, k, _ := strings.Cut(v, "/")
		off, err := strconv.ParseInt(o, 10, 64)
		if err != nil {
			panic(f)
		}
		out = append(out, rec{off, v, k})
	}
	return out
}

type endOpt func(*FinalEnd)

func compacted(e *FinalEnd)     { e.Compacted = true }
func logStart(off int64) endOpt { return func(e *FinalEnd) { e.LogStartOffset = off } }
func finalOn(n int32) endOpt    { return func(e *FinalEnd) { e.Partition = n } }

// final is a complete final read of t/0 at one isolation level.
func final(iso Isolation, hw int64, records string, opts ...endOpt) []Event {
	end := FinalEnd{Isolation: iso, Topic: "t", HighWatermark: hw}
	for _, o := range opts {
		o(&end)
	}
	var out []Event
	for _, r := range parseRecords(records) {
		out = append(out, Final{Isolation: iso, Topic: "t", Partition: end.Partition, Offset: r.off, Key: r.key, Value: r.value})
	}
	return append(out, end)
}

// both is the same final read under both isolation levels.
func both(hw int64, records string, opts ...endOpt) []Event {
	return append(final(ReadUncommitted, hw, records, opts...), final(ReadCommitted, hw, records, opts...)...)
}

type consumeOpt func(*Consume)

func at(t time.Time) consumeOpt { return func(c *Consume) { c.Time = t } }

// consume is one consumer session reading t/0 in order.
func consume(consumer, session string, iso Isolation, records string, opts ...consumeOpt) []Event {
	var out []Event
	for _, r := range parseRecords(records) {
		c := Consume{Consumer: consumer, Session: session, Isolation: iso, Topic: "t", Offset: r.off, Key: r.key, Value: r.value}
		for _, o := range opts {
			o(&c)
		}
		out = append(out, c)
	}
	return out
}

func build(parts ...any) *History {
	h := &History{}
	for _, p := range parts {
		switch p := p.(type) {
		case Event:
			h.Add(p)
		case []Event:
			for _, e := range p {
				h.Add(e)
			}
		default:
			panic(fmt.Sprintf("build: %T", p))
		}
	}
	return h
}

// summary is an anomaly on one line, its evidence included, for exact
// comparison.
func summary(a Anomaly) string {
	var ev []string
	for _, o := range a.Evidence {
		s := o.Source
		if o.Offset >= 0 {
			s += fmt.Sprintf("@%d", o.Offset)
		}
		if o.Value != "" {
			s += "=" + o.Value
		}
		ev = append(ev, s)
	}
	return fmt.Sprintf("%s %s/%d@%d %s: %s | %s", a.Kind, a.Topic, a.Partition, a.Offset, a.Value, a.Detail, strings.Join(ev, "; "))
}

func summaries(as []Anomaly) []string {
	var out []string
	for _, a := range as {
		out = append(out, summary(a))
	}
	return out
}

type checkCase struct {
	name        string
	history     *History
	want        []string // summaries of the anomalies
	atLeastOnce []string // summaries of the at-least-once duplicates
}

func runCases(t *testing.T, cases []checkCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Check(c.history)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, summaries(r.Anomalies)); d != "" {
				t.Errorf("anomalies (-want +got):\n%s", d)
			}
			if d := cmp.Diff(c.atLeastOnce, summaries(r.AtLeastOnce)); d != "" {
				t.Errorf("at-least-once duplicates (-want +got):\n%s", d)
			}
		})
	}
}

const endRU3 = "final read_uncommitted end: log start 0, high watermark 3"

func TestCheckLostWrites(t *testing.T) {
	runCases(t, []checkCase{{
		name:    "acknowledged and present",
		history: build(ack("a", 0), ack("b", 1), both(2, "0=a 1=b")),
	}, {
		name:    "acknowledged and missing",
		history: build(ack("a", 0), ack("b", 1), ack("c", 2), both(3, "0=a 2=c")),
		want: []string{`lost-write t/0@1 b: acknowledged at offset 1, missing from the final read_uncommitted read | ` +
			`produce by p (ack)@1=b; ` + endRU3},
	}, {
		name:    "offset holds another value",
		history: build(ack("a", 0), ack("b", 1), both(2, "0=a 1=x")),
		want: []string{`divergent-offset t/0@1 : offset 1 observed with 2 values: "x" by 2, "b" by 1 | ` +
			`final read_uncommitted@1=x; produce by p (ack)@1=b`, `lost-write t/0@1 b: acknowledged at offset 1, which the final read_uncommitted read holds "x" | ` +
			`produce by p (ack)@1=b; final read_uncommitted@1=x`},
	}, {
		name:    "value only at another offset",
		history: build(ack("a", 0), ack("b", 1), both(3, "0=a 2=b")),
		want: []string{`lost-write t/0@1 b: acknowledged at offset 1, but the final read_uncommitted read holds it only at [2] | ` +
			`produce by p (ack)@1=b; final read_uncommitted@2=b`},
	}, {
		name: "committed transaction's record not visible to read_committed",
		history: build(ack("a", 0, inTxn(1)), txnEnd(1, TxnCommitted),
			final(ReadUncommitted, 2, "0=a"), final(ReadCommitted, 2, "")),
		want: []string{`lost-write t/0@0 a: acknowledged at offset 0, missing from the final read_committed read, ` +
			`though its transaction tx#1 committed | produce by p (ack)@0=a; ` +
			`final read_committed end: log start 0, high watermark 2; transaction tx#1 committed`},
	}, {
		name: "an unknown transaction read_committed sees in part is committed: the rest is lost",
		history: build(ack("a", 0, inTxn(1)), ack("b", 1, inTxn(1)), txnEnd(1, TxnUnknown),
			final(ReadUncommitted, 3, "0=a 1=b"), final(ReadCommitted, 3, "0=a")),
		want: []string{`lost-write t/0@1 b: acknowledged at offset 1, missing from the final read_committed read, ` +
			`though its transaction tx#1 committed | produce by p (ack)@1=b; ` +
			`final read_committed end: log start 0, high watermark 3; ` +
			`transaction tx#1 unknown, inferred committed: read_committed sees its records`},
	}, {
		name: "aborted transaction's record is not lost from read_committed",
		history: build(ack("a", 0, inTxn(1)), txnEnd(1, TxnAborted),
			final(ReadUncommitted, 2, "0=a"), final(ReadCommitted, 2, "")),
	}, {
		name:    "unknown outcomes present or absent",
		history: build(produce(OutcomeUnknown, "a", 0), produce(OutcomeUnknown, "b", 0), both(1, "0=a")),
	}, {
		name:    "failed retriable write present",
		history: build(produce(OutcomeFail, "a", 0, func(p *Produce) { p.Retriable = true }), both(1, "0=a")),
	}, {
		name: "compaction removed a record superseded by its key",
		history: build(ack("a", 0, withKey("k")), ack("b", 1, withKey("k")), ack("c", 2, withKey("j")),
			both(3, "1=b/k 2=c/j", compacted)),
	}, {
		name:    "compaction does not excuse a record whose key has no later record",
		history: build(ack("a", 0, withKey("k")), ack("b", 1, withKey("j")), both(2, "1=b/j", compacted)),
		want: []string{`lost-write t/0@0 a: acknowledged at offset 0, missing from the final read_uncommitted read | ` +
			`produce by p (ack)@0=a; final read_uncommitted end: log start 0, high watermark 2`},
	}, {
		name:    "compaction removed the acknowledged copy of an at-least-once duplicate, kept the first",
		history: build(ack("a", 1, withKey("k")), ack("b", 2, withKey("k")), both(3, "0=a/k 2=b/k", compacted)),
	}, {
		name: "compaction removed an aborted transaction's records",
		history: build(ack("a", 0, inTxn(1), withKey("k")), txnEnd(1, TxnAborted),
			final(ReadUncommitted, 2, "", compacted), final(ReadCommitted, 2, "", compacted)),
	}, {
		name:    "below the log start offset",
		history: build(ack("a", 0), ack("b", 1), both(2, "1=b", logStart(1))),
	}})
}

func TestCheckAckBeyondHighWatermark(t *testing.T) {
	runCases(t, []checkCase{{
		name:    "acknowledged at the high watermark",
		history: build(ack("a", 0), ack("b", 3), both(3, "0=a 1=x 2=y")),
		want: []string{
			`ack-beyond-high-watermark t/0@3 b: acknowledged at offset 3, at or past the final high watermark 3 | ` +
				`produce by p (ack)@3=b; ` + endRU3,
			`lost-write t/0@3 b: acknowledged at offset 3, missing from the final read_uncommitted read | ` +
				`produce by p (ack)@3=b; ` + endRU3,
		},
	}, {
		name:    "just below the high watermark",
		history: build(ack("a", 2), both(3, "2=a", logStart(2))),
	}})
}

func TestCheckRefusesUnusableHistories(t *testing.T) {
	for _, c := range []struct {
		name    string
		history *History
		want    string
	}{
		{"value produced twice", build(ack("a", 0), produce(OutcomeUnknown, "a", 0), both(1, "0=a")), `value "a" produced again`},
		{"no final read", build(ack("a", 0)), "t/0: no final read_uncommitted read"},
		{"consumed partition without final read", build(consume("c", "", ReadUncommitted, "0=a")), "t/0: no final read_uncommitted read"},
		{"transactions without read_committed", build(ack("a", 0, inTxn(1)), final(ReadUncommitted, 1, "0=a")), "no final read_committed read"},
		{"final record past the end", build(both(1, "1=a")), "outside the read [0, 1)"},
		{"final record without end", build(Final{Isolation: ReadCommitted, Topic: "t", Value: "a"}, final(ReadUncommitted, 1, "0=a")), "final record with no final_end read_committed"},
		{"two final ends", build(both(1, "0=a"), FinalEnd{Isolation: ReadCommitted, Topic: "t", HighWatermark: 1}), "a second final_end read_committed"},
		{"contradicting outcomes", build(txnEnd(1, TxnCommitted), txnEnd(1, TxnAborted)), "transaction tx#1 aborted, but committed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Check(c.history)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

func TestCheckCounts(t *testing.T) {
	h := build(
		ack("a", 0, idem), ack("z", 9), produce(OutcomeUnknown, "b", 0), produce(OutcomeUnknown, "c", 0),
		produce(OutcomeFail, "d", 0, func(p *Produce) { p.Retriable = true }), produce(OutcomeFail, "e", 0),
		ack("t1", 3, inTxn(1)), txnEnd(1, TxnCommitted),
		ack("t2", 4, inTxn(2)), txnEnd(2, TxnAborted),
		ack("t3", 5, inTxn(3)), txnEnd(3, TxnUnknown),
		ack("t4", 6, inTxn(4)), txnEnd(4, TxnUnknown),
		ack("t5", 7, inTxn(5)),
		consume("c", "", ReadUncommitted, "0=a 1=b"),
		final(ReadUncommitted, 10, "0=a 1=b 2=d 3=t1 4=t2 5=t3 6=t4 7=t5 8=u 9=z"),
		final(ReadCommitted, 10, "0=a 1=b 2=d 3=t1 5=t3 8=u 9=z"),
	)
	r, err := Check(h)
	if err != nil {
		t.Fatal(err)
	}
	want := Counts{
		Partitions: 1, Produces: 11, Acked: 7, Failed: 2, FailedRetriable: 1, FailedPresent: 1,
		UnknownPresent: 1, UnknownAbsent: 1,
		Transactions: 5, Committed: 1, Aborted: 1, TxnUnknown: 2, InferredCommitted: 1, InferredAborted: 1, NeverEnded: 1,
		Consumed: 2, FinalRecords: 10, Unattributed: 1,
	}
	if d := cmp.Diff(want, r.Counts); d != "" {
		t.Fatalf("counts (-want +got):\n%s", d)
	}
}

func TestCheckDivergentOffsets(t *testing.T) {
	runCases(t, []checkCase{{
		name:    "consumer and final read disagree",
		history: build(ack("a", 0), ack("b", 1), both(2, "0=a 1=b"), consume("c", "", ReadUncommitted, "0=a 1=x")),
		want: []string{`divergent-offset t/0@1 : offset 1 observed with 2 values: "b" by 3, "x" by 1 | ` +
			`final read_uncommitted@1=b; consumer c (read_uncommitted)@1=x`},
	}, {
		name: "two consumers disagree on an offset compaction removed",
		history: build(ack("c", 2, withKey("k")), both(3, "2=c/k", compacted),
			consume("c1", "", ReadUncommitted, "1=a/k"),
			consume("c2", "1", ReadCommitted, "1=b/k", func(c *Consume) { c.LeaderEpoch = ptr[int32](5) })),
		want: []string{`divergent-offset t/0@1 : offset 1 observed with 2 values: "a" by 1, "b" by 1 | ` +
			`consumer c1 (read_uncommitted)@1=a; consumer c2 session 1 (read_committed) leader epoch 5@1=b`},
	}, {
		name:    "two acknowledgements at one offset",
		history: build(ack("a", 0), ack("b", 0), both(1, "0=a")),
		want: []string{
			`divergent-offset t/0@0 : offset 0 observed with 2 values: "a" by 3, "b" by 1 | ` +
				`final read_uncommitted@0=a; produce by p (ack)@0=b`,
			`lost-write t/0@0 b: acknowledged at offset 0, which the final read_uncommitted read holds "a" | ` +
				`produce by p (ack)@0=b; final read_uncommitted@0=a`,
		},
	}, {
		name:    "the two final reads disagree",
		history: build(final(ReadUncommitted, 1, "0=a"), final(ReadCommitted, 1, "0=b")),
		want: []string{`divergent-offset t/0@0 : offset 0 observed with 2 values: "a" by 1, "b" by 1 | ` +
			`final read_uncommitted@0=a; final read_committed@0=b`},
	}, {
		name: "every observer agrees",
		history: build(ack("a", 0), ack("b", 1), both(2, "0=a 1=b"),
			consume("c1", "", ReadUncommitted, "0=a 1=b"), consume("c2", "", ReadCommitted, "1=b")),
	}})
}

func TestCheckDuplicates(t *testing.T) {
	runCases(t, []checkCase{{
		name:    "idempotent producer's value at two offsets",
		history: build(ack("a", 1, idem), both(3, "1=a 2=a")),
		want: []string{`duplicate t/0@1 a: one attempt's value at offsets [1 2] | ` +
			`produce by p (ack)@1=a; final read_uncommitted@1=a; final read_uncommitted@2=a`},
	}, {
		name:    "transactional producer's value consumed at two offsets",
		history: build(ack("a", 1, inTxn(1)), txnEnd(1, TxnCommitted), both(2, "1=a"), consume("c", "", ReadCommitted, "1=a 5=a")),
		want: []string{`duplicate t/0@1 a: one attempt's value at offsets [1 5] | ` +
			`produce by p (ack)@1=a; final read_uncommitted@1=a; consumer c (read_committed)@5=a`},
	}, {
		name:    "an unknown outcome written twice",
		history: build(produce(OutcomeUnknown, "a", 0, idem), both(2, "0=a 1=a")),
		want: []string{`duplicate t/0@0 a: one attempt's value at offsets [0 1] | ` +
			`produce by p (unknown)=a; final read_uncommitted@0=a; final read_uncommitted@1=a`},
	}, {
		name:    "non-idempotent producer's retry written twice is at-least-once",
		history: build(ack("a", 2), both(3, "1=a 2=a")),
		atLeastOnce: []string{`at-least-once-duplicate t/0@1 a: one attempt's value at offsets [1 2] (producer p is not idempotent) | ` +
			`produce by p (ack)@2=a; final read_uncommitted@1=a; final read_uncommitted@2=a`},
	}, {
		name: "idempotent producer's retry deduplicated by the broker",
		history: build(ack("a", 0, idem, func(p *Produce) { p.ProducerID, p.ProducerEpoch = ptr[int64](4), ptr[int16](0) }),
			both(1, "0=a"), consume("c1", "", ReadUncommitted, "0=a"), consume("c1", "2", ReadUncommitted, "0=a")),
	}, {
		name:    "a record no produce event wrote is not judged",
		history: build(both(2, "0=u 1=u")),
	}})
}

func TestReportFailed(t *testing.T) {
	r, err := Check(build(ack("a", 2), both(3, "1=a 2=a")))
	if err != nil {
		t.Fatal(err)
	}
	if r.Failed(false) || !r.Failed(true) {
		t.Fatalf("at-least-once only: Failed(false)=%v Failed(true)=%v, want false, true", r.Failed(false), r.Failed(true))
	}
	if d := cmp.Diff([]Kind{AtLeastOnceDuplicate}, r.Kinds()); d != "" {
		t.Fatal(d)
	}
}

func TestCheckCommittedReads(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	started := func(tx Txn) Txn { tx.Started = t0; return tx }
	const abortedTxn = "produce by p (ack)@0=a; transaction tx#1 aborted"
	runCases(t, []checkCase{{
		name: "read_committed consumer reads an aborted transaction's record",
		history: build(ack("a", 0, inTxn(1)), txnEnd(1, TxnAborted), final(ReadUncommitted, 2, "0=a"), final(ReadCommitted, 2, ""),
			consume("c", "", ReadCommitted, "0=a")),
		want: []string{`aborted-read t/0@0 a: consumer c (read_committed) saw a record of transaction tx#1, which was not committed (aborted) | ` +
			`consumer c (read_committed)@0=a; ` + abortedTxn},
	}, {
		name:    "final read_committed holds an aborted transaction's record",
		history: build(ack("a", 0, inTxn(1)), txnEnd(1, TxnAborted), both(2, "0=a")),
		want: []string{`aborted-read t/0@0 a: final read_committed saw a record of transaction tx#1, which was not committed (aborted) | ` +
			`final read_committed@0=a; ` + abortedTxn},
	}, {
		name:    "a transaction that never ended",
		history: build(ack("a", 0, inTxn(1)), both(2, "0=a")),
		want: []string{`aborted-read t/0@0 a: final read_committed saw a record of transaction tx#1, which was not committed (never ended) | ` +
			`final read_committed@0=a; produce by p (ack)@0=a; transaction tx#1 never ended`},
	}, {
		name: "an unknown transaction the final read shows aborted",
		history: build(ack("a", 0, inTxn(1)), txnEnd(1, TxnUnknown), final(ReadUncommitted, 2, "0=a"), final(ReadCommitted, 2, ""),
			consume("c", "", ReadCommitted, "0=a")),
		want: []string{`aborted-read t/0@0 a: consumer c (read_committed) saw a record of transaction tx#1, which was not committed ` +
			`(unknown, inferred aborted: only read_uncommitted sees its records) | consumer c (read_committed)@0=a; produce by p (ack)@0=a; ` +
			`transaction tx#1 unknown, inferred aborted: only read_uncommitted sees its records`},
	}, {
		name: "read_uncommitted consumers may read aborted data",
		history: build(ack("a", 0, inTxn(1)), txnEnd(1, TxnAborted), final(ReadUncommitted, 2, "0=a"), final(ReadCommitted, 2, ""),
			consume("c", "", ReadUncommitted, "0=a")),
	}, {
		name: "read before the commit was asked for",
		history: build(ack("a", 0, inTxn(1)), started(txnEnd(1, TxnCommitted)), both(2, "0=a"),
			consume("c", "", ReadCommitted, "0=a", at(t0.Add(-time.Millisecond)))),
		want: []string{`uncommitted-read t/0@0 a: consumer c (read_committed) received it at 2026-01-01T00:00:09.999Z, ` +
			`before the producer began committing transaction tx#1 at 2026-01-01T00:00:10Z | ` +
			`consumer c (read_committed)@0=a; produce by p (ack)@0=a; transaction tx#1 committed`},
	}, {
		name: "the commit's start is on the unknown outcome written before the committed one",
		history: build(ack("a", 0, inTxn(1)), started(txnEnd(1, TxnUnknown)), txnEnd(1, TxnCommitted), both(2, "0=a"),
			consume("c", "", ReadCommitted, "0=a", at(t0.Add(-time.Millisecond)))),
		want: []string{`uncommitted-read t/0@0 a: consumer c (read_committed) received it at 2026-01-01T00:00:09.999Z, ` +
			`before the producer began committing transaction tx#1 at 2026-01-01T00:00:10Z | ` +
			`consumer c (read_committed)@0=a; produce by p (ack)@0=a; transaction tx#1 committed`},
	}, {
		name: "read after the commit was asked for, or at an unknown time",
		history: build(ack("a", 0, inTxn(1)), started(txnEnd(1, TxnCommitted)), both(2, "0=a"),
			consume("c", "1", ReadCommitted, "0=a", at(t0.Add(time.Millisecond))), consume("c", "2", ReadCommitted, "0=a")),
	}, {
		name: "read_uncommitted consumers may read before the commit",
		history: build(ack("a", 0, inTxn(1)), started(txnEnd(1, TxnCommitted)), both(2, "0=a"),
			consume("c", "", ReadUncommitted, "0=a", at(t0.Add(-time.Second)))),
	}})
}

func TestCheckConsumerOrder(t *testing.T) {
	onP1 := func(c *Consume) { c.Partition = 1 }
	runCases(t, []checkCase{{
		name:    "a session goes back",
		history: build(both(3, "0=a 1=b 2=c"), consume("c", "1", ReadUncommitted, "0=a 1=b 0=a 1=b 2=c")),
		want: []string{`consumer-backwards t/0@0 a: received offset 0 after offset 1 in one session | ` +
			`consumer c session 1 (read_uncommitted)@1=b; consumer c session 1 (read_uncommitted)@0=a`},
	}, {
		name:    "a session receives one offset twice",
		history: build(both(2, "0=a 1=b"), consume("c", "", ReadCommitted, "0=a 1=b 1=b")),
		want: []string{`consumer-backwards t/0@1 b: received offset 1 after offset 1 in one session | ` +
			`consumer c (read_committed)@1=b; consumer c (read_committed)@1=b`},
	}, {
		name: "a new session, another consumer or another partition starts anywhere",
		history: build(both(3, "0=a 1=b 2=c"), final(ReadUncommitted, 1, "0=d", finalOn(1)),
			consume("c", "1", ReadUncommitted, "1=b 2=c"), consume("c", "2", ReadUncommitted, "0=a 1=b"),
			consume("d", "1", ReadUncommitted, "0=a"), consume("c", "1", ReadUncommitted, "0=d", onP1)),
	}, {
		name:    "read_uncommitted skips a record",
		history: build(both(4, "0=a 1=b 2=c 3=d"), consume("c", "", ReadUncommitted, "0=a 3=d")),
		want: []string{`consumer-skip t/0@1 b: went from offset 0 to 3, skipping 2 records the final read_uncommitted read holds | ` +
			`consumer c (read_uncommitted)@0=a; final read_uncommitted@1=b; consumer c (read_uncommitted)@3=d`},
	}, {
		name: "read_committed skips a committed record",
		history: build(ack("t", 1, inTxn(1)), txnEnd(1, TxnCommitted), both(4, "0=a 1=t 3=d"),
			consume("c", "", ReadCommitted, "0=a 3=d")),
		want: []string{`consumer-skip t/0@1 t: went from offset 0 to 3, skipping 1 records the final read_committed read holds | ` +
			`consumer c (read_committed)@0=a; final read_committed@1=t; consumer c (read_committed)@3=d`},
	}, {
		name:    "read_committed without transactions is held to read_uncommitted",
		history: build(final(ReadUncommitted, 3, "0=a 1=b 2=c"), consume("c", "", ReadCommitted, "0=a 2=c")),
		want: []string{`consumer-skip t/0@1 b: went from offset 0 to 2, skipping 1 records the final read_uncommitted read holds | ` +
			`consumer c (read_committed)@0=a; final read_uncommitted@1=b; consumer c (read_committed)@2=c`},
	}, {
		name: "read_committed passes an aborted record and the markers",
		// 0 a, 1 aborted t, 2 abort marker, 3 d, 4 commit marker of nothing visible here.
		history: build(ack("t", 1, inTxn(1)), txnEnd(1, TxnAborted),
			final(ReadUncommitted, 5, "0=a 1=t 3=d"), final(ReadCommitted, 5, "0=a 3=d"),
			consume("c", "", ReadCommitted, "0=a 3=d")),
	}, {
		name: "read_uncommitted may not pass an aborted record",
		history: build(ack("t", 1, inTxn(1)), txnEnd(1, TxnAborted),
			final(ReadUncommitted, 4, "0=a 1=t 3=d"), final(ReadCommitted, 4, "0=a 3=d"),
			consume("c", "", ReadUncommitted, "0=a 3=d")),
		want: []string{`consumer-skip t/0@1 t: went from offset 0 to 3, skipping 1 records the final read_uncommitted read holds | ` +
			`consumer c (read_uncommitted)@0=a; final read_uncommitted@1=t; consumer c (read_uncommitted)@3=d`},
	}, {
		name: "compaction gaps",
		// b is superseded by c: read before the cleaner ran, then after.
		history: build(ack("a", 0, withKey("j")), ack("b", 1, withKey("k")), ack("c", 2, withKey("k")),
			both(3, "0=a/j 2=c/k", compacted),
			consume("c", "1", ReadUncommitted, "0=a/j 1=b/k 2=c/k"), consume("c", "2", ReadUncommitted, "0=a/j 2=c/k")),
	}})
}
