package group

import "github.com/samsa-io/samsa/internal/model"

// CommittedOffset is one group's committed offset of one partition.
type CommittedOffset struct {
	Group string
	model.TopicPartition
	Offset int64
}

// CommittedOffsets appends to dst the committed offsets of every group this
// coordinator has loaded, for the broker's consumer lag metrics. Offsets of
// open transactions are not committed yet and are left out. Each group is
// locked in turn, never two at once, so a scrape holds up a group's
// requests for one copy of its offsets at most.
func (c *Coordinator) CommittedOffsets(dst []CommittedOffset) []CommittedOffset {
	for _, g := range c.snapshot(nil) {
		g.mu.Lock()
		if !g.removed {
			for tp, o := range g.offsets {
				dst = append(dst, CommittedOffset{Group: g.id, TopicPartition: tp, Offset: o.offset})
			}
		}
		g.mu.Unlock()
	}
	return dst
}
