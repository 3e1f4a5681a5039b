package history

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

const (
	// Duplicate: one attempt's value, from an idempotent producer, at two or
	// more offsets of its partition (in the final read or as consumed).
	Duplicate Kind = "duplicate"
	// AtLeastOnceDuplicate: the same, from a producer without idempotence,
	// whose retries may write a record twice. Reported apart.
	AtLeastOnceDuplicate Kind = "at-least-once-duplicate"
	// DivergentOffset: observers disagree on what one offset holds:
	// acknowledgements, consumers, the final reads.
	DivergentOffset Kind = "divergent-offset"
)

// sighting is the first observation of one value at one offset and how
// many observations there were.
type sighting struct {
	first Observation
	n     int
}

// sightings are one partition's observations, by offset and by value, in
// the order first seen.
type sightings struct {
	byOffset map[int64][]*sighting  // one per distinct value
	byValue  map[string][]*sighting // one per distinct offset; only records read from the log
}

func (s *sightings) see(o Observation, read bool) {
	s.byOffset[o.Offset] = seeOnce(s.byOffset[o.Offset], o, func(x Observation) bool { return x.Value == o.Value })
	if read {
		s.byValue[o.Value] = seeOnce(s.byValue[o.Value], o, func(x Observation) bool { return x.Offset == o.Offset })
	}
}

func seeOnce(ss []*sighting, o Observation, same func(Observation) bool) []*sighting {
	for _, s := range ss {
		if same(s.first) {
			s.n++
			return ss
		}
	}
	return append(ss, &sighting{first: o, n: 1})
}

// checkAgreement finds offsets observed with two values and values
// observed at two offsets. The final reads are seen first, so evidence
// starts with the truth.
func (c *checker) checkAgreement(h *History) {
	parts := map[partitionKey]*sightings{}
	of := func(topic string, p int32) *sightings {
		k := partitionKey{topic, p}
		s, ok := parts[k]
		if !ok {
			s = &sightings{byOffset: map[int64][]*sighting{}, byValue: map[string][]*sighting{}}
			parts[k] = s
		}
		return s
	}
	for i := range h.Finals {
		f := &h.Finals[i]
		of(f.Topic, f.Partition).see(finalObservation(f), true)
	}
	for i := range h.Produces {
		if pr := &h.Produces[i]; pr.Outcome == OutcomeAck {
			of(pr.Topic, pr.Partition).see(produceObservation(pr), false)
		}
	}
	for i := range h.Consumes {
		e := &h.Consumes[i]
		of(e.Topic, e.Partition).see(consumeObservation(e), true)
	}
	for _, k := range c.x.order {
		if s, ok := parts[k]; ok {
			c.divergentOffsets(k, s)
			c.duplicates(k, s)
		}
	}
}

func (c *checker) divergentOffsets(k partitionKey, s *sightings) {
	for _, off := range slices.Sorted(maps.Keys(s.byOffset)) {
		ss := s.byOffset[off]
		if len(ss) < 2 {
			continue
		}
		a := Anomaly{Kind: DivergentOffset, Topic: k.topic, Partition: k.partition, Offset: off}
		var seen []string
		for _, x := range ss {
			seen = append(seen, fmt.Sprintf("%q by %d", x.first.Value, x.n))
			a.Evidence = append(a.Evidence, x.first)
		}
		a.Detail = fmt.Sprintf("offset %d observed with %d values: %s", off, len(ss), strings.Join(seen, ", "))
		c.add(a)
	}
}

func (c *checker) duplicates(k partitionKey, s *sightings) {
	p := c.x.parts[k]
	for _, v := range slices.Sorted(maps.Keys(s.byValue)) {
		ss := s.byValue[v]
		pr, ok := p.produces[v]
		if len(ss) < 2 || !ok {
			continue
		}
		a := Anomaly{Kind: Duplicate, Topic: k.topic, Partition: k.partition, Offset: -1, Value: v,
			Evidence: []Observation{produceObservation(pr)}}
		var offs []int64
		for _, x := range ss {
			offs = append(offs, x.first.Offset)
			a.Evidence = append(a.Evidence, x.first)
		}
		slices.Sort(offs)
		a.Offset = offs[0]
		a.Detail = fmt.Sprintf("one attempt's value at offsets %v", offs)
		if !pr.idempotent() {
			a.Kind = AtLeastOnceDuplicate
			a.Detail += fmt.Sprintf(" (producer %s is not idempotent)", pr.Client)
			c.report.AtLeastOnce = append(c.report.AtLeastOnce, a)
			continue
		}
		c.add(a)
	}
}
