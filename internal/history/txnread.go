package history

import (
	"fmt"
	"time"
)

const (
	// AbortedRead: a read_committed observer (a consumer or the final read)
	// saw a record of a transaction that was not committed: aborted, never
	// ended, or of unknown outcome that the final read shows aborted.
	AbortedRead Kind = "aborted-read"
	// UncommittedRead: a read_committed consumer received a record of a
	// committed transaction before the producer began committing it.
	UncommittedRead Kind = "uncommitted-read"
)

// checkCommittedReads holds every read_committed observation of a
// transactional record to its transaction's outcome.
func (c *checker) checkCommittedReads(h *History) {
	for i := range h.Finals {
		if f := &h.Finals[i]; f.Isolation == ReadCommitted {
			c.readCommitted(partitionKey{f.Topic, f.Partition}, finalObservation(f), time.Time{})
		}
	}
	for i := range h.Consumes {
		if e := &h.Consumes[i]; e.Isolation == ReadCommitted {
			c.readCommitted(partitionKey{e.Topic, e.Partition}, consumeObservation(e), e.Time)
		}
	}
}

// readCommitted checks one read_committed observation o, received at
// (zero when unknown). A commit is known to have been asked for only at
// Txn.Started, taken before EndTxn is sent; a consumer's time is taken
// after its poll returns, so on one clock a committed read cannot come
// first.
func (c *checker) readCommitted(k partitionKey, o Observation, at time.Time) {
	pr, ok := c.x.parts[k].produces[o.Value]
	if !ok {
		return
	}
	t := c.x.txnOf(pr)
	if t == nil {
		return
	}
	a := Anomaly{Topic: k.topic, Partition: k.partition, Offset: o.Offset, Value: o.Value,
		Evidence: []Observation{o, produceObservation(pr), t.observation()}}
	switch {
	case t.effect == aborted:
		a.Kind = AbortedRead
		a.Detail = fmt.Sprintf("%s saw a record of transaction %s, which was not committed (%s)", o.Source, t.key, t.status())
	case t.effect == committed && !at.IsZero() && !t.started.IsZero() && at.Before(t.started):
		a.Kind = UncommittedRead
		a.Detail = fmt.Sprintf("%s received it at %s, before the producer began committing transaction %s at %s",
			o.Source, at.Format(time.RFC3339Nano), t.key, t.started.Format(time.RFC3339Nano))
	default:
		return
	}
	c.add(a)
}
