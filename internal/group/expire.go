package group

import (
	"slices"

	"github.com/samsa-io/samsa/internal/model"
)

// expireOffsets is the cleanup Kafka runs every
// offsets.retention.check.interval.ms: it deletes the offsets whose
// retention has passed and the Empty groups left with no offsets, writing
// tombstones so the deletions survive a restart and compaction drops the
// records.
func (c *Coordinator) expireOffsets() {
	for _, g := range c.snapshot(nil) {
		g.mu.Lock()
		if g.removed || g.kind == protocolShare {
			// A share group has no offsets here, and an empty one stays
			// until DeleteGroups, which deletes its share state too.
			g.mu.Unlock()
			continue
		}
		s := c.newStep(g)
		expired := g.expiredOffsets(s)
		g.deleteOffsets(s, expired, func(err error) {
			if err != nil {
				s.log.Warn("writing expired offsets failed; retrying at the next check", "err", err)
			} else if len(expired) > 0 {
				s.stats.offsetExpirations.Add(int64(len(expired)))
				s.log.Info("expired offsets", "partitions", len(expired))
			}
		})
		c.finishTurn(g, s)
	}
}

// expiredOffsets lists the offsets past their retention (KIP-211). The
// retention of an Empty classic group's offsets runs from when it became
// empty; a group that never had members (simple commits) counts from each
// commit; a Stable classic "consumer" group keeps the offsets of the topics
// it subscribes to and counts the others from their commit; any other
// classic group with members keeps everything. A consumer (KIP-848) group
// keeps the offsets of the topics its members subscribe to and counts the
// others from their commit, as Kafka does. A commit that set its own
// retention (OffsetCommit v2-v4) expires when that says.
func (g *group) expiredOffsets(s *step) []model.TopicPartition {
	now, retention := s.now, s.cfg.OffsetsRetention
	fromCommit := func(o committedOffset) int64 { return o.commitTimestamp }
	var base func(committedOffset) int64
	var keep func(topic string) bool
	cg := &g.classic
	switch {
	case g.kind == protocolConsumer:
		base, keep = fromCommit, func(topic string) bool { return g.consumer.subscribes(s, topic) }
	case g.kind == protocolStreams:
		base, keep = fromCommit, g.streams.subscribes
	case cg.protocolType != "" && cg.state == stateEmpty:
		base = func(o committedOffset) int64 {
			if cg.stateTimestamp.IsZero() {
				return o.commitTimestamp // loaded from a value that had no state timestamp
			}
			return cg.stateTimestamp.UnixMilli()
		}
	case cg.protocolType == "consumer" && cg.subscribedTopics != nil && cg.state == stateStable:
		base, keep = fromCommit, cg.subscribes
	case cg.protocolType == "":
		base = fromCommit
	default:
		return nil
	}
	nowMs, retentionMs := now.UnixMilli(), retention.Milliseconds()
	var out []model.TopicPartition
	for _, tp := range sortedPartitions(g.offsets) {
		if keep != nil && keep(tp.Topic) || g.hasPending(tp) {
			// An offset a transaction may still replace is kept, as Kafka
			// does.
			continue
		}
		o := g.offsets[tp]
		if o.expireTimestamp >= 0 {
			if nowMs >= o.expireTimestamp {
				out = append(out, tp)
			}
		} else if nowMs-base(o) >= retentionMs {
			out = append(out, tp)
		}
	}
	return out
}

// deleteOffsets writes tombstones for the offsets tps (distinct, each
// committed or pending in a transaction) and deletes them, committed and
// pending, once durable. If that leaves an Empty group without offsets,
// the group goes too: its metadata gets a tombstone in the
// same batch and it becomes Dead, as in Kafka's cleanupGroupMetadata.
// onDone, if set, learns the append's outcome.
func (g *group) deleteOffsets(s *step, tps []model.TopicPartition, onDone func(error)) {
	dead := g.isEmpty() && g.onlyOffsets(tps)
	records := make([]kv, 0, len(tps)+1)
	for _, tp := range tps {
		records = append(records, kv{key: offsetKey(g.id, tp)})
	}
	if dead {
		records = append(records, g.tombstones()...)
	}
	if len(records) == 0 {
		return
	}
	tps = slices.Clone(tps)
	s.write(records, func(s *step, err error) {
		if err == nil {
			for _, tp := range tps {
				delete(g.offsets, tp)
				g.dropPending(tp)
			}
			if dead {
				g.markDead(s)
			}
		}
		if onDone != nil {
			onDone(err)
		}
	})
}

// onlyOffsets reports whether tps are all the offsets of the group,
// committed and pending.
func (g *group) onlyOffsets(tps []model.TopicPartition) bool {
	set := make(map[model.TopicPartition]struct{}, len(tps))
	for _, tp := range tps {
		set[tp] = struct{}{}
	}
	for tp := range g.offsets {
		if _, ok := set[tp]; !ok {
			return false
		}
	}
	for _, tp := range g.pendingPartitions() {
		if _, ok := set[tp]; !ok {
			return false
		}
	}
	return true
}
