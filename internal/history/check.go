package history

import (
	"fmt"
)

// Check reads h for anomalies. It returns an error, and no report, when
// the history itself is unusable: a value produced twice, a partition
// without a complete final read, transaction outcomes that contradict
// each other.
func Check(h *History) (*Report, error) {
	x, err := newIndex(h)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	c := &checker{x: x}
	x.resolve(&c.report.Counts)
	c.count(h)
	for i := range h.Produces {
		c.checkProduce(&h.Produces[i])
	}
	c.checkAgreement(h)
	c.checkCommittedReads(h)
	c.checkConsumerOrder(h)
	sortAnomalies(c.report.Anomalies)
	sortAnomalies(c.report.AtLeastOnce)
	return &c.report, nil
}

type checker struct {
	x      *index
	report Report
}

func (c *checker) add(a Anomaly) { c.report.Anomalies = append(c.report.Anomalies, a) }

func (c *checker) count(h *History) {
	n := &c.report.Counts
	n.Partitions = len(c.x.parts)
	n.Produces = len(h.Produces)
	n.Consumed = len(h.Consumes)
	for _, k := range c.x.order {
		p := c.x.parts[k]
		n.FinalRecords += len(p.ru.offsets)
		for _, off := range p.ru.offsets {
			if _, ok := p.produces[p.ru.byOffset[off].Value]; !ok {
				n.Unattributed++
			}
		}
	}
	for i := range h.Produces {
		pr := &h.Produces[i]
		present := c.x.parts[partitionKey{pr.Topic, pr.Partition}].ru.has(pr.Value)
		switch pr.Outcome {
		case OutcomeAck:
			n.Acked++
		case OutcomeFail:
			n.Failed++
			if pr.Retriable {
				n.FailedRetriable++
			}
			if present {
				n.FailedPresent++
			}
		case OutcomeUnknown:
			if present {
				n.UnknownPresent++
			} else {
				n.UnknownAbsent++
			}
		}
	}
}

func produceObservation(pr *Produce) Observation {
	return Observation{Source: fmt.Sprintf("produce by %s (%s)", pr.Client, pr.Outcome), Offset: pr.Offset, Value: pr.Value, At: pr.At}
}

func finalObservation(f *Final) Observation {
	return Observation{Source: "final " + string(f.Isolation), Offset: f.Offset, Value: f.Value, At: f.At}
}

func endObservation(e *FinalEnd) Observation {
	return Observation{
		Source: fmt.Sprintf("final %s end: log start %d, high watermark %d", e.Isolation, e.LogStartOffset, e.HighWatermark),
		Offset: -1, At: e.At,
	}
}

func consumeObservation(e *Consume) Observation {
	s := "consumer " + e.Consumer
	if e.Session != "" {
		s += " session " + e.Session
	}
	s += " (" + string(e.Isolation) + ")"
	if e.LeaderEpoch != nil {
		s += fmt.Sprintf(" leader epoch %d", *e.LeaderEpoch)
	}
	return Observation{Source: s, Offset: e.Offset, Value: e.Value, At: e.At}
}

// checkProduce holds an acknowledged record to the final read: below the
// high watermark, at its offset under read_uncommitted, and visible to
// read_committed if its transaction committed.
func (c *checker) checkProduce(pr *Produce) {
	if pr.Outcome != OutcomeAck {
		return
	}
	p := c.x.parts[partitionKey{pr.Topic, pr.Partition}]
	if pr.Offset < p.ru.end.LogStartOffset {
		c.report.Counts.BelowLogStart++
		return
	}
	if pr.Offset >= p.ru.end.HighWatermark {
		c.add(Anomaly{
			Kind: AckBeyondHighWatermark, Topic: pr.Topic, Partition: pr.Partition, Offset: pr.Offset, Value: pr.Value,
			Detail:   fmt.Sprintf("acknowledged at offset %d, at or past the final high watermark %d", pr.Offset, p.ru.end.HighWatermark),
			Evidence: []Observation{produceObservation(pr), endObservation(p.ru.end)},
		})
	}
	t := c.x.txnOf(pr)
	if a, lost := c.lostFrom(p.ru, pr, t); lost {
		c.add(a)
		return
	}
	if t != nil && t.effect == committed {
		if a, lost := c.lostFrom(p.rc, pr, t); lost {
			a.Detail += fmt.Sprintf(", though its transaction %s committed", t.key)
			a.Evidence = append(a.Evidence, t.observation())
			c.add(a)
		}
	}
}

// lostFrom says whether the acknowledged record pr is lost from the final
// read r: not at its offset, unless that offset is empty and a compacted
// topic's cleaner may have emptied it (a later record has its key, or
// under read_uncommitted its transaction was not committed). The cleaner
// may keep an older copy of an at-least-once duplicate and remove the
// acknowledged one, so a compacted record found only elsewhere is not
// lost either.
func (c *checker) lostFrom(r *finalRead, pr *Produce, t *txn) (Anomaly, bool) {
	a := Anomaly{Kind: LostWrite, Topic: pr.Topic, Partition: pr.Partition, Offset: pr.Offset, Value: pr.Value}
	a.Evidence = []Observation{produceObservation(pr)}
	iso := r.end.Isolation
	f, ok := r.byOffset[pr.Offset]
	switch {
	case ok && f.Value == pr.Value:
		return a, false
	case ok:
		a.Detail = fmt.Sprintf("acknowledged at offset %d, which the final %s read holds %q", pr.Offset, iso, f.Value)
		a.Evidence = append(a.Evidence, finalObservation(f))
	case r.end.Compacted && pr.Key != "" && r.lastByKey[pr.Key] > pr.Offset:
		return a, false // superseded by a later record of its key
	case r.end.Compacted && iso == ReadUncommitted && t != nil && t.effect != committed:
		return a, false // the cleaner removes aborted data
	case r.has(pr.Value):
		a.Detail = fmt.Sprintf("acknowledged at offset %d, but the final %s read holds it only at %v", pr.Offset, iso, r.byValue[pr.Value])
		for _, off := range r.byValue[pr.Value] {
			a.Evidence = append(a.Evidence, finalObservation(r.byOffset[off]))
		}
	default:
		a.Detail = fmt.Sprintf("acknowledged at offset %d, missing from the final %s read", pr.Offset, iso)
		a.Evidence = append(a.Evidence, endObservation(r.end))
	}
	return a, true
}
