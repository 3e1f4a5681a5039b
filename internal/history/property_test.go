package history

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The property test runs producers, transactions and consumers against a
// simple model of a log, so the history it writes is correct by
// construction: Check must report nothing. Then it injects one anomaly of
// a random kind and Check must report it, and nothing it does not imply.

// mEntry is one offset of a modelled partition.
type mEntry struct {
	value, key string
	txn        *mTxn // nil: not transactional
	marker     bool  // a transaction marker: no consumer sees it
	removed    bool  // cleaned away by compaction
}

type mTxn struct {
	key       txnKey
	ended     bool
	committed bool
	mustAbort bool           // a produce of it failed or is unknown
	touched   map[int32]bool // partitions it wrote to
	started   time.Time      // when ending it began
}

type mProducer struct {
	client          string
	idempotent      bool
	transactionalID string
	txns            int64
	open            *mTxn
}

type mConsumer struct {
	name      string
	iso       Isolation
	session   int
	active    bool
	partition int32
	pos       int64
}

type logModel struct {
	t         *rapid.T
	h         *History
	parts     []*mPartition
	producers []*mProducer
	consumers []*mConsumer
	step      int
	seq       int
	dups      map[string]bool // values an at-least-once retry wrote twice
}

type mPartition struct {
	entries   []mEntry
	compacted bool
}

func (p *mPartition) append(e mEntry) int64 {
	p.entries = append(p.entries, e)
	return int64(len(p.entries) - 1)
}

// lso is the last stable offset: the first offset of a transaction still
// open, or the log end.
func (p *mPartition) lso() int64 {
	for i, e := range p.entries {
		if e.txn != nil && !e.txn.ended {
			return int64(i)
		}
	}
	return int64(len(p.entries))
}

func (e *mEntry) visible(iso Isolation) bool {
	if e.marker || e.removed {
		return false
	}
	return iso == ReadUncommitted || e.txn == nil || e.txn.committed
}

var epoch0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (m *logModel) now() time.Time { return epoch0.Add(time.Duration(m.step) * time.Millisecond) }

func newLogModel(t *rapid.T) *logModel {
	m := &logModel{t: t, h: &History{}, dups: map[string]bool{}}
	m.parts = []*mPartition{{}, {compacted: rapid.Bool().Draw(t, "compacted")}}
	m.producers = []*mProducer{
		{client: "p0"},
		{client: "p1", idempotent: true},
		{client: "p2", idempotent: true, transactionalID: "tx-p2"},
		{client: "p3", idempotent: true, transactionalID: "tx-p3"},
	}
	m.consumers = []*mConsumer{{name: "c0", iso: ReadUncommitted}, {name: "c1", iso: ReadCommitted}}
	return m
}

var outcomes = []string{"ack", "ack", "ack", "dup", "unknown", "retriable", "fatal"}

// produce writes one record of a producer without transactions.
func (m *logModel) produce(pr *mProducer, part int32, outcome string) {
	p := m.parts[part]
	ev := Produce{Client: pr.client, Idempotent: pr.idempotent, Topic: "t", Partition: part, Offset: -1, Time: m.now()}
	ev.Value = fmt.Sprintf("%s-%d", pr.client, m.seq)
	m.seq++
	if p.compacted || rapid.Bool().Draw(m.t, "keyed") {
		ev.Key = rapid.SampledFrom([]string{"k0", "k1", "k2"}).Draw(m.t, "key")
	}
	e := mEntry{value: ev.Value, key: ev.Key}
	switch outcome {
	case "dup":
		if !pr.idempotent {
			// The first attempt was written, its answer lost; the retry
			// is written again.
			p.append(e)
			m.dups[ev.Value] = true
		}
		fallthrough
	case "ack":
		ev.Outcome, ev.Offset = OutcomeAck, p.append(e)
	case "unknown", "retriable":
		ev.Outcome = OutcomeUnknown
		if outcome == "retriable" {
			ev.Outcome, ev.Error, ev.Retriable = OutcomeFail, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", true
		}
		if rapid.Bool().Draw(m.t, "written") {
			p.append(e)
		}
	case "fatal":
		ev.Outcome, ev.Error = OutcomeFail, "MESSAGE_TOO_LARGE"
	}
	m.h.Add(ev)
}

// produceInTxn writes one record in the producer's open transaction,
// opening one if needed, to part or (part < 0) a partition drawn among
// those not compacted.
func (m *logModel) produceInTxn(pr *mProducer, part int32, acked bool) {
	if pr.open == nil {
		pr.txns++
		pr.open = &mTxn{key: txnKey{pr.transactionalID, pr.txns}, touched: map[int32]bool{}}
	}
	tx := pr.open
	if part < 0 {
		part = 0
		if !m.parts[1].compacted {
			part = int32(rapid.IntRange(0, 1).Draw(m.t, "txnPartition"))
		}
	}
	p := m.parts[part]
	ev := Produce{Client: pr.client, Idempotent: true, TransactionalID: tx.key.id, Txn: tx.key.num,
		Topic: "t", Partition: part, Offset: -1, Value: fmt.Sprintf("%s-%d", pr.client, m.seq), Time: m.now()}
	m.seq++
	e := mEntry{value: ev.Value, txn: tx}
	switch {
	case acked:
		ev.Outcome, ev.Offset = OutcomeAck, p.append(e)
		tx.touched[part] = true
	default:
		ev.Outcome, tx.mustAbort = OutcomeUnknown, true
		if rapid.Bool().Draw(m.t, "written") {
			p.append(e)
			tx.touched[part] = true
		}
	}
	m.h.Add(ev)
}

// endTxn ends the producer's open transaction: committed, aborted, of
// unknown outcome (the coordinator decides), or abandoned (no event: the
// coordinator aborts it on timeout).
func (m *logModel) endTxn(pr *mProducer, how string) {
	tx := pr.open
	if tx == nil {
		return
	}
	pr.open = nil
	tx.started = m.now()
	ev := Txn{Client: pr.client, TransactionalID: tx.key.id, Txn: tx.key.num, Started: tx.started, Time: m.now()}
	switch how {
	case "commit":
		tx.committed = !tx.mustAbort
		ev.Outcome = TxnAborted
		if tx.committed {
			ev.Outcome = TxnCommitted
		}
	case "abort", "abandon":
		ev.Outcome = TxnAborted
	case "unknown":
		ev.Outcome = TxnUnknown
		tx.committed = !tx.mustAbort && rapid.Bool().Draw(m.t, "committed")
	}
	tx.ended = true
	for _, part := range slices.Sorted(maps.Keys(tx.touched)) {
		m.parts[part].append(mEntry{marker: true, txn: tx})
	}
	if how != "abandon" {
		m.h.Add(ev)
	}
}

// poll lets a consumer receive up to a few records; a consumer with no
// session starts one at a random position.
func (m *logModel) poll(c *mConsumer, most int) {
	if !c.active {
		c.active, c.session = true, c.session+1
		c.partition = int32(rapid.IntRange(0, len(m.parts)-1).Draw(m.t, "assign"))
		c.pos = rapid.Int64Range(0, int64(len(m.parts[c.partition].entries))).Draw(m.t, "position")
	}
	p := m.parts[c.partition]
	limit := int64(len(p.entries))
	if c.iso == ReadCommitted {
		limit = p.lso()
	}
	for n := 0; c.pos < limit && n < most; c.pos++ {
		e := &p.entries[c.pos]
		if !e.visible(c.iso) {
			continue
		}
		m.h.Add(Consume{Consumer: c.name, Session: fmt.Sprint(c.session), Isolation: c.iso, Topic: "t",
			Partition: c.partition, Offset: c.pos, Key: e.key, Value: e.value, Time: m.now()})
		n++
	}
}

// compact removes some records a later record of their key supersedes.
func (m *logModel) compact() {
	for _, p := range m.parts {
		if !p.compacted {
			continue
		}
		last := map[string]int{}
		for i, e := range p.entries {
			if !e.marker && !e.removed {
				last[e.key] = i
			}
		}
		for i := range p.entries {
			if e := &p.entries[i]; !e.marker && !e.removed && last[e.key] > i && rapid.Bool().Draw(m.t, "clean") {
				e.removed = true
			}
		}
	}
}

// finish ends every open transaction and reads every partition.
func (m *logModel) finish() {
	for _, pr := range m.producers {
		m.endTxn(pr, rapid.SampledFrom([]string{"commit", "abort", "unknown", "abandon"}).Draw(m.t, "end"))
	}
	for i, p := range m.parts {
		for _, iso := range []Isolation{ReadUncommitted, ReadCommitted} {
			for off, e := range p.entries {
				if e.visible(iso) {
					m.h.Add(Final{Isolation: iso, Topic: "t", Partition: int32(i), Offset: int64(off), Key: e.key, Value: e.value})
				}
			}
			m.h.Add(FinalEnd{Isolation: iso, Topic: "t", Partition: int32(i), HighWatermark: int64(len(p.entries)), Compacted: p.compacted})
		}
	}
}

// run writes a prelude that gives every kind of anomaly something to be
// injected into, then random steps, then the final read.
func (m *logModel) run() {
	m.produce(m.producers[1], 0, "ack")
	m.produce(m.producers[0], 0, "ack")
	m.produceInTxn(m.producers[2], 0, true)
	m.step++
	m.endTxn(m.producers[2], "commit")
	m.produceInTxn(m.producers[3], 0, true)
	m.endTxn(m.producers[3], "abort")
	m.step++
	m.consumers[0].active, m.consumers[0].session = true, 1
	m.poll(m.consumers[0], 1)
	steps := rapid.IntRange(0, 40).Draw(m.t, "steps")
	for range steps {
		m.step++
		switch rapid.IntRange(0, 6).Draw(m.t, "action") {
		case 0, 1:
			pr := m.producers[rapid.IntRange(0, 1).Draw(m.t, "producer")]
			part := int32(rapid.IntRange(0, len(m.parts)-1).Draw(m.t, "partition"))
			m.produce(pr, part, rapid.SampledFrom(outcomes).Draw(m.t, "outcome"))
		case 2:
			m.produceInTxn(m.producers[rapid.IntRange(2, 3).Draw(m.t, "producer")], -1, rapid.IntRange(0, 4).Draw(m.t, "txnOutcome") > 0)
		case 3:
			m.endTxn(m.producers[rapid.IntRange(2, 3).Draw(m.t, "producer")],
				rapid.SampledFrom([]string{"commit", "commit", "abort", "unknown", "abandon"}).Draw(m.t, "end"))
		case 4:
			m.poll(m.consumers[rapid.IntRange(0, 1).Draw(m.t, "consumer")], rapid.IntRange(1, 3).Draw(m.t, "most"))
		case 5:
			m.consumers[rapid.IntRange(0, 1).Draw(m.t, "consumer")].active = false
		case 6:
			m.compact()
		}
	}
	m.step++
	m.finish()
}

// injection is an anomaly the test put into a history: Check must report
// an anomaly of kind about value (or, for a divergent offset, at offset),
// and may also report the kinds in also.
type injection struct {
	kind   Kind
	value  string
	offset int64
	also   []Kind
}

var injectable = []Kind{LostWrite, AckBeyondHighWatermark, Duplicate, AtLeastOnceDuplicate, DivergentOffset,
	AbortedRead, UncommittedRead, ConsumerBackwards, ConsumerSkip}

func TestCheckProperty(t *testing.T) {
	injected := map[Kind]int{}
	rapid.Check(t, func(t *rapid.T) {
		m := newLogModel(t)
		m.run()
		h := roundTrip(t, m.h)
		r, err := Check(h)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Anomalies) > 0 {
			t.Fatalf("a correct history has anomalies:\n%s", reportText(r))
		}
		for _, a := range r.AtLeastOnce {
			if !m.dups[a.Value] {
				t.Fatalf("at-least-once duplicate %q the model did not write twice:\n%s", a.Value, reportText(r))
			}
		}
		before := len(r.AtLeastOnce)
		in := inject(t, m, h, rapid.SampledFrom(injectable).Draw(t, "inject"))
		injected[in.kind]++
		if r, err = Check(h); err != nil {
			t.Fatal(err)
		}
		found := slices.ContainsFunc(slices.Concat(r.Anomalies, r.AtLeastOnce), func(a Anomaly) bool {
			return a.Kind == in.kind && a.Value == in.value && (in.kind != DivergentOffset || a.Offset == in.offset)
		})
		if !found {
			t.Fatalf("injected %s of %q, not reported:\n%s", in.kind, in.value, reportText(r))
		}
		for _, a := range r.Anomalies {
			if a.Kind != in.kind && !slices.Contains(in.also, a.Kind) {
				t.Fatalf("injected %s of %q, and %s reported too:\n%s", in.kind, in.value, a.Kind, reportText(r))
			}
		}
		if in.kind == AtLeastOnceDuplicate && (len(r.Anomalies) > 0 || len(r.AtLeastOnce) != before+1) {
			t.Fatalf("injected an at-least-once duplicate of %q:\n%s", in.value, reportText(r))
		}
	})
	t.Logf("injected: %v", injected)
}

func reportText(r *Report) string {
	var b bytes.Buffer
	_ = r.WriteText(&b)
	return b.String()
}

// roundTrip writes h as JSON lines and reads it back.
func roundTrip(t *rapid.T, h *History) *History {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, e := range events(h) {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := &History{}
	if err := ReadAll(out, &buf, "h"); err != nil {
		t.Fatal(err)
	}
	return out
}

func events(h *History) []Event {
	var out []Event
	for _, e := range h.Produces {
		out = append(out, e)
	}
	for _, e := range h.Txns {
		out = append(out, e)
	}
	for _, e := range h.Consumes {
		out = append(out, e)
	}
	for _, e := range h.Finals {
		out = append(out, e)
	}
	for _, e := range h.FinalEnds {
		out = append(out, e)
	}
	return out
}

// inject changes h, the model's correct history, so that it holds one
// anomaly of kind k.
func inject(t *rapid.T, m *logModel, h *History, k Kind) injection {
	finalAt := func(part int32, iso Isolation) []int {
		var out []int
		for i, f := range h.Finals {
			if f.Partition == part && f.Isolation == iso {
				out = append(out, i)
			}
		}
		return out
	}
	inRU := func(pr Produce) bool {
		return slices.ContainsFunc(finalAt(pr.Partition, ReadUncommitted), func(i int) bool {
			return h.Finals[i].Offset == pr.Offset && h.Finals[i].Value == pr.Value
		})
	}
	pick := func(label string, ok func(Produce) bool) Produce {
		var cands []Produce
		for _, pr := range h.Produces {
			if pr.Outcome == OutcomeAck && !m.parts[pr.Partition].compacted && inRU(pr) && ok(pr) {
				cands = append(cands, pr)
			}
		}
		if len(cands) == 0 {
			t.Fatalf("nothing to inject %s into", label)
		}
		return rapid.SampledFrom(cands).Draw(t, label)
	}
	txnOf := func(pr Produce) *Txn {
		for i := range h.Txns {
			if x := &h.Txns[i]; x.TransactionalID == pr.TransactionalID && x.Txn == pr.Txn {
				return x
			}
		}
		return nil
	}
	model := func(pr Produce) *mEntry { return &m.parts[pr.Partition].entries[pr.Offset] }
	end := m.now().Add(time.Second)
	switch k {
	case LostWrite:
		pr := pick("lost", func(Produce) bool { return true })
		h.Finals = slices.DeleteFunc(h.Finals, func(f Final) bool { return f.Partition == pr.Partition && f.Value == pr.Value })
		return injection{kind: k, value: pr.Value}
	case AckBeyondHighWatermark:
		off := int64(len(m.parts[0].entries)) + rapid.Int64Range(0, 2).Draw(t, "beyond")
		h.Add(Produce{Client: "p1", Idempotent: true, Topic: "t", Value: "injected", Outcome: OutcomeAck, Offset: off})
		return injection{kind: k, value: "injected", also: []Kind{LostWrite}}
	case Duplicate, AtLeastOnceDuplicate:
		idempotent := k == Duplicate
		pr := pick("duplicate", func(pr Produce) bool {
			return pr.idempotent() == idempotent && pr.TransactionalID == "" && !m.dups[pr.Value]
		})
		for i := range h.FinalEnds {
			if e := &h.FinalEnds[i]; e.Partition == pr.Partition {
				h.Add(Final{Isolation: e.Isolation, Topic: "t", Partition: pr.Partition, Offset: e.HighWatermark, Key: pr.Key, Value: pr.Value})
				e.HighWatermark++
			}
		}
		return injection{kind: k, value: pr.Value}
	case DivergentOffset:
		var cands []int
		for i, c := range h.Consumes {
			if !m.parts[c.Partition].compacted {
				cands = append(cands, i)
			}
		}
		c := &h.Consumes[rapid.SampledFrom(cands).Draw(t, "divergent")]
		c.Value = "injected"
		return injection{kind: k, offset: c.Offset}
	case AbortedRead:
		pr := pick("aborted", func(pr Produce) bool { return pr.TransactionalID != "" && !model(pr).txn.committed })
		h.Add(Consume{Consumer: "injected", Isolation: ReadCommitted, Topic: "t", Partition: pr.Partition, Offset: pr.Offset, Value: pr.Value, Time: end})
		return injection{kind: k, value: pr.Value}
	case UncommittedRead:
		pr := pick("uncommitted", func(pr Produce) bool { return pr.TransactionalID != "" && model(pr).txn.committed })
		at := txnOf(pr).Started.Add(-time.Nanosecond)
		h.Add(Consume{Consumer: "injected", Isolation: ReadCommitted, Topic: "t", Partition: pr.Partition, Offset: pr.Offset, Value: pr.Value, Time: at})
		return injection{kind: k, value: pr.Value}
	case ConsumerBackwards:
		c := rapid.SampledFrom(h.Consumes).Draw(t, "backwards")
		h.Add(c)
		return injection{kind: k, value: c.Value}
	case ConsumerSkip:
		iso := rapid.SampledFrom([]Isolation{ReadUncommitted, ReadCommitted}).Draw(t, "isolation")
		fs := finalAt(0, iso)
		if len(fs) < 3 {
			iso, fs = ReadUncommitted, finalAt(0, ReadUncommitted)
		}
		i := rapid.IntRange(0, len(fs)-3).Draw(t, "skip")
		a, b, c := h.Finals[fs[i]], h.Finals[fs[i+1]], h.Finals[fs[i+2]]
		for _, f := range []Final{a, c} {
			h.Add(Consume{Consumer: "injected", Isolation: iso, Topic: "t", Offset: f.Offset, Key: f.Key, Value: f.Value, Time: end})
		}
		return injection{kind: k, value: b.Value}
	}
	t.Fatalf("cannot inject %s", k)
	return injection{}
}
