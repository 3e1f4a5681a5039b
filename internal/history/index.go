package history

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
)

type partitionKey struct {
	topic     string
	partition int32
}

func (k partitionKey) String() string { return fmt.Sprintf("%s/%d", k.topic, k.partition) }

func compareKeys(a, b partitionKey) int {
	return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
}

// finalRead is one complete final read of one partition at one isolation
// level.
type finalRead struct {
	end       *FinalEnd
	byOffset  map[int64]*Final
	offsets   []int64 // the offsets present, sorted
	byValue   map[string][]int64
	lastByKey map[string]int64 // the highest offset of each non-null key
}

func newFinalRead(end *FinalEnd) *finalRead {
	return &finalRead{end: end, byOffset: map[int64]*Final{}, byValue: map[string][]int64{}, lastByKey: map[string]int64{}}
}

// add records f, once per offset: a second value at an offset is left to
// the divergence check, which sees every observation.
func (r *finalRead) add(f *Final) {
	if _, ok := r.byOffset[f.Offset]; ok {
		return
	}
	r.byOffset[f.Offset] = f
	r.offsets = append(r.offsets, f.Offset)
	r.byValue[f.Value] = append(r.byValue[f.Value], f.Offset)
	if f.Key != "" {
		r.lastByKey[f.Key] = max(r.lastByKey[f.Key], f.Offset)
	}
}

// between returns how many records the read holds strictly between lo
// and hi, and the first of them.
func (r *finalRead) between(lo, hi int64) (first int64, n int) {
	i := sort.Search(len(r.offsets), func(i int) bool { return r.offsets[i] > lo })
	j := sort.Search(len(r.offsets), func(i int) bool { return r.offsets[i] >= hi })
	if i >= j {
		return -1, 0
	}
	return r.offsets[i], j - i
}

func (r *finalRead) has(value string) bool { return len(r.byValue[value]) > 0 }

// partition is everything the history says about one partition.
type partition struct {
	key partitionKey
	ru  *finalRead // the truth; required
	rc  *finalRead // required when the partition has transactional records
	// produces maps each attempt's value to its event.
	produces      map[string]*Produce
	transactional bool
}

// visible is the final read a consumer at isolation i is held to: without
// transactions, read_committed sees what read_uncommitted sees.
func (p *partition) visible(i Isolation) *finalRead {
	if i == ReadCommitted && p.rc != nil {
		return p.rc
	}
	return p.ru
}

type txnKey struct {
	id  string
	num int64
}

func (k txnKey) String() string { return fmt.Sprintf("%s#%d", k.id, k.num) }

// effect is what a transaction did, as far as the history tells.
type effect int

const (
	undetermined effect = iota
	committed
	aborted
)

type txn struct {
	key   txnKey
	event *Txn // the outcome event; nil if the client wrote none
	// started is the earliest Started of its outcome events: a client may
	// write unknown when EndTxn times out, then the outcome it learns later.
	started  time.Time
	effect   effect
	inferred bool // the effect comes from the final read, not the outcome
	produces []*Produce
}

// status describes the transaction for evidence.
func (t *txn) status() string {
	switch {
	case t.event == nil:
		return "never ended"
	case t.inferred && t.effect == committed:
		return "unknown, inferred committed: read_committed sees its records"
	case t.inferred && t.effect == aborted:
		return "unknown, inferred aborted: only read_uncommitted sees its records"
	}
	return string(t.event.Outcome)
}

func (t *txn) observation() Observation {
	o := Observation{Source: fmt.Sprintf("transaction %s %s", t.key, t.status()), Offset: -1}
	if t.event != nil {
		o.At = t.event.At
	}
	return o
}

// index is the history arranged for checking.
type index struct {
	parts map[partitionKey]*partition
	order []partitionKey // sorted
	txns  map[txnKey]*txn
	errs  []error
}

func (x *index) errorf(format string, args ...any) {
	x.errs = append(x.errs, fmt.Errorf(format, args...))
}

func (x *index) part(topic string, p int32) *partition {
	k := partitionKey{topic, p}
	pt, ok := x.parts[k]
	if !ok {
		pt = &partition{key: k, produces: map[string]*Produce{}}
		x.parts[k] = pt
		x.order = append(x.order, k)
	}
	return pt
}

func (x *index) txnOf(p *Produce) *txn {
	if p.TransactionalID == "" {
		return nil
	}
	return x.txns[txnKey{p.TransactionalID, p.Txn}]
}

// newIndex arranges h and checks what no single event can: one event per
// attempt value, a complete final read of every partition, outcomes that
// agree.
func newIndex(h *History) (*index, error) {
	x := &index{parts: map[partitionKey]*partition{}, txns: map[txnKey]*txn{}}
	for i := range h.FinalEnds {
		x.addEnd(&h.FinalEnds[i])
	}
	for i := range h.Finals {
		x.addFinal(&h.Finals[i])
	}
	for i := range h.Produces {
		x.addProduce(&h.Produces[i])
	}
	for i := range h.Txns {
		x.addTxn(&h.Txns[i])
	}
	for i := range h.Consumes {
		x.part(h.Consumes[i].Topic, h.Consumes[i].Partition)
	}
	slices.SortFunc(x.order, compareKeys)
	for _, k := range x.order {
		p := x.parts[k]
		for _, r := range []*finalRead{p.ru, p.rc} {
			if r != nil {
				slices.Sort(r.offsets)
			}
		}
		switch {
		case p.ru == nil:
			x.errorf("%s: no final read_uncommitted read (no final_end event)", k)
		case p.transactional && p.rc == nil:
			x.errorf("%s: transactional records but no final read_committed read (no final_end event)", k)
		}
	}
	return x, errors.Join(x.errs...)
}

func (x *index) addEnd(e *FinalEnd) {
	p := x.part(e.Topic, e.Partition)
	r := &p.ru
	if e.Isolation == ReadCommitted {
		r = &p.rc
	}
	if *r != nil {
		x.errorf("%s: %s: a second final_end %s (first at %s)", e.At, p.key, e.Isolation, (*r).end.At)
		return
	}
	*r = newFinalRead(e)
}

func (x *index) addFinal(f *Final) {
	p := x.part(f.Topic, f.Partition)
	r := p.ru
	if f.Isolation == ReadCommitted {
		r = p.rc
	}
	switch {
	case r == nil:
		x.errorf("%s: %s: final record with no final_end %s", f.At, p.key, f.Isolation)
	case f.Offset < r.end.LogStartOffset || f.Offset >= r.end.HighWatermark:
		x.errorf("%s: %s: final record at offset %d outside the read [%d, %d)", f.At, p.key, f.Offset, r.end.LogStartOffset, r.end.HighWatermark)
	default:
		r.add(f)
	}
}

func (x *index) addProduce(pr *Produce) {
	p := x.part(pr.Topic, pr.Partition)
	if first, dup := p.produces[pr.Value]; dup {
		x.errorf("%s: %s: value %q produced again (first at %s): values must be unique per attempt", pr.At, p.key, pr.Value, first.At)
		return
	}
	p.produces[pr.Value] = pr
	if pr.TransactionalID == "" {
		return
	}
	p.transactional = true
	k := txnKey{pr.TransactionalID, pr.Txn}
	t, ok := x.txns[k]
	if !ok {
		t = &txn{key: k}
		x.txns[k] = t
	}
	t.produces = append(t.produces, pr)
}

// addTxn merges outcome events: an unknown outcome followed by a definite
// one (a client that learned later) is the definite one; two definite
// outcomes that differ are an error.
func (x *index) addTxn(e *Txn) {
	k := txnKey{e.TransactionalID, e.Txn}
	t, ok := x.txns[k]
	if !ok {
		t = &txn{key: k}
		x.txns[k] = t
	}
	if !e.Started.IsZero() && (t.started.IsZero() || e.Started.Before(t.started)) {
		t.started = e.Started
	}
	switch {
	case t.event == nil || t.event.Outcome == TxnUnknown:
		t.event = e
	case e.Outcome != TxnUnknown && e.Outcome != t.event.Outcome:
		x.errorf("%s: transaction %s %s, but %s at %s", e.At, k, e.Outcome, t.event.Outcome, t.event.At)
	}
}

// resolve decides each transaction's effect. Never ended is never
// committed. An unknown outcome is read from the final read: committed if
// read_committed sees any of its records (then all its acknowledged
// records must be visible), aborted if only read_uncommitted does.
func (x *index) resolve(c *Counts) {
	c.Transactions = len(x.txns)
	for _, t := range x.txns {
		switch {
		case t.event == nil:
			t.effect = aborted
			c.NeverEnded++
		case t.event.Outcome == TxnCommitted:
			t.effect = committed
			c.Committed++
		case t.event.Outcome == TxnAborted:
			t.effect = aborted
			c.Aborted++
		default:
			c.TxnUnknown++
			t.effect, t.inferred = x.inferEffect(t), true
			switch t.effect {
			case committed:
				c.InferredCommitted++
			case aborted:
				c.InferredAborted++
			}
		}
	}
}

func (x *index) inferEffect(t *txn) effect {
	e := undetermined
	for _, pr := range t.produces {
		p := x.parts[partitionKey{pr.Topic, pr.Partition}]
		if p.rc.has(pr.Value) {
			return committed
		}
		if p.ru.has(pr.Value) {
			e = aborted
		}
	}
	return e
}
