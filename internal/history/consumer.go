package history

import "fmt"

const (
	// ConsumerBackwards: within one consumer session and partition, a
	// record at an offset not above the one received before it.
	ConsumerBackwards Kind = "consumer-backwards"
	// ConsumerSkip: within one consumer session and partition, two
	// consecutive records with an offset between them that holds a record
	// the consumer's isolation level sees in the final read. Gaps of
	// transaction markers, of aborted data under read_committed and of
	// compacted records are not skips: the final read holds nothing
	// visible there.
	ConsumerSkip Kind = "consumer-skip"
)

type sessionKey struct {
	consumer, session string
	partitionKey
}

// checkConsumerOrder walks each consumer session's records of each
// partition in the order they were written.
func (c *checker) checkConsumerOrder(h *History) {
	last := map[sessionKey]*Consume{}
	for i := range h.Consumes {
		e := &h.Consumes[i]
		pk := partitionKey{e.Topic, e.Partition}
		k := sessionKey{e.Consumer, e.Session, pk}
		prev, ok := last[k]
		last[k] = e
		if !ok {
			continue
		}
		if e.Offset <= prev.Offset {
			c.add(Anomaly{
				Kind: ConsumerBackwards, Topic: e.Topic, Partition: e.Partition, Offset: e.Offset, Value: e.Value,
				Detail:   fmt.Sprintf("received offset %d after offset %d in one session", e.Offset, prev.Offset),
				Evidence: []Observation{consumeObservation(prev), consumeObservation(e)},
			})
			continue
		}
		r := c.x.parts[pk].visible(e.Isolation)
		first, n := r.between(prev.Offset, e.Offset)
		if n == 0 {
			continue
		}
		f := r.byOffset[first]
		c.add(Anomaly{
			Kind: ConsumerSkip, Topic: e.Topic, Partition: e.Partition, Offset: first, Value: f.Value,
			Detail: fmt.Sprintf("went from offset %d to %d, skipping %d records the final %s read holds",
				prev.Offset, e.Offset, n, r.end.Isolation),
			Evidence: []Observation{consumeObservation(prev), finalObservation(f), consumeObservation(e)},
		})
	}
}
