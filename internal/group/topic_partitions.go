package group

import (
	"bytes"
	"slices"
)

// topicPartitions is a set of partitions keyed by topic ID, the way KIP-848
// names them on the wire and in __consumer_offsets: each topic's partitions
// are sorted, without duplicates, and a topic is present only with at least
// one partition. A nil set is empty. Values are treated as immutable once
// built; every operation returns a new set.
type topicPartitions map[[16]byte][]int32

// tpID is one partition of a topic named by ID.
type tpID struct {
	topic     [16]byte
	partition int32
}

// newTopicPartitions normalizes m (sorting, dropping duplicates and empty
// topics) into a set; m's slices are reused.
func newTopicPartitions(m map[[16]byte][]int32) topicPartitions {
	out := make(topicPartitions, len(m))
	for t, ps := range m {
		if len(ps) == 0 {
			continue
		}
		slices.Sort(ps)
		out[t] = slices.Compact(ps)
	}
	return out
}

// partitionsOf builds a set from a list of partitions.
func partitionsOf(tps []tpID) topicPartitions {
	m := make(map[[16]byte][]int32)
	for _, tp := range tps {
		m[tp.topic] = append(m[tp.topic], tp.partition)
	}
	return newTopicPartitions(m)
}

func (a topicPartitions) has(topic [16]byte, partition int32) bool {
	_, ok := slices.BinarySearch(a[topic], partition)
	return ok
}

func (a topicPartitions) count() int {
	n := 0
	for _, ps := range a {
		n += len(ps)
	}
	return n
}

func (a topicPartitions) equal(b topicPartitions) bool {
	if len(a) != len(b) {
		return false
	}
	for t, ps := range a {
		if !slices.Equal(ps, b[t]) {
			return false
		}
	}
	return true
}

// topics lists the topic IDs in byte order, so that everything built from a
// set comes out the same every time.
func (a topicPartitions) topics() [][16]byte {
	ts := make([][16]byte, 0, len(a))
	for t := range a {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(x, y [16]byte) int { return bytes.Compare(x[:], y[:]) })
	return ts
}

// each calls fn for every partition, topics in byte order.
func (a topicPartitions) each(fn func(tp tpID)) {
	for _, t := range a.topics() {
		for _, p := range a[t] {
			fn(tpID{t, p})
		}
	}
}

// union is a ∪ b.
func (a topicPartitions) union(b topicPartitions) topicPartitions {
	m := make(map[[16]byte][]int32, len(a)+len(b))
	for t, ps := range a {
		m[t] = append(m[t], ps...)
	}
	for t, ps := range b {
		m[t] = append(m[t], ps...)
	}
	return newTopicPartitions(m)
}

// overlaps reports whether a and b share a partition.
func (a topicPartitions) overlaps(b topicPartitions) bool {
	for t, ps := range a {
		for _, p := range ps {
			if b.has(t, p) {
				return true
			}
		}
	}
	return false
}

// subsetOf reports whether every partition of a is in b.
func (a topicPartitions) subsetOf(b topicPartitions) bool {
	for t, ps := range a {
		for _, p := range ps {
			if !b.has(t, p) {
				return false
			}
		}
	}
	return true
}
