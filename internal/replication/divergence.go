package replication

// Log divergence between a follower and its leader, found by leader epoch
// (KIP-101, KIP-279, KIP-320), never by the high watermark alone: a
// follower that truncated to its high watermark after a leader change could
// drop committed records or keep records the new leader never had.
//
// A follower fetches with its log end offset and the epoch of its last
// record (LastFetchedEpoch). The leader looks up the end of that epoch in
// its own log; if the follower's epoch ended earlier on the leader, or the
// leader never had it, the fetch answers with the diverging epoch and its
// end offset instead of records. The follower truncates to the smaller of
// that end and the end of the same epoch in its own log, then fetches
// again: when its own epoch there differed from the leader's, the next
// fetch may diverge again, one epoch further back, until the logs agree.

// EpochLookup answers "the largest epoch at or below epoch, and where it
// ended" on one log (storage.Log.EndOffsetForEpoch): an epoch older than
// all the log's gets itself and the start of the log's first epoch, and
// -1, -1 comes only from a log with no epochs.
type EpochLookup func(epoch int32) (int32, int64)

// EpochEndOffset is an epoch and the offset one past its last record.
type EpochEndOffset struct {
	Epoch     int32
	EndOffset int64
}

// DivergingEpoch is the leader's check of a follower's fetch: ok is false
// when the follower's log, ending at fetchOffset with a last record of
// lastFetchedEpoch, is not a prefix of the leader's, and then the answer is
// where the leader's log left the follower's epoch behind. A follower that
// does not send its last epoch (-1: an old fetch version) is not checked.
func DivergingEpoch(leader EpochLookup, fetchOffset int64, lastFetchedEpoch int32) (EpochEndOffset, bool) {
	if lastFetchedEpoch < 0 {
		return EpochEndOffset{}, true
	}
	epoch, end := leader(lastFetchedEpoch)
	if epoch == lastFetchedEpoch && end >= fetchOffset {
		return EpochEndOffset{}, true
	}
	return EpochEndOffset{Epoch: epoch, EndOffset: end}, false
}

// TruncationOffset is where a follower truncates its log after the leader
// answered its fetch with diverging: the smaller of the leader's end of
// that epoch and the follower's own end of it. done is false when the
// follower's epoch there was not the leader's: it must fetch again, and may
// truncate further. A leader whose epochs all began later than the
// follower's answers with the follower's epoch ending where its own first
// epoch starts (storage.Log.EndOffsetForEpoch, as Kafka's), so the follower
// truncates there. When the leader has no epochs at all (diverging.Epoch
// -1), nothing but what was committed can be trusted, and the follower
// truncates to its high watermark, as Kafka does.
func TruncationOffset(follower EpochLookup, followerLogEnd, followerHighWatermark int64, diverging EpochEndOffset) (offset int64, done bool) {
	if diverging.Epoch < 0 {
		return min(followerHighWatermark, followerLogEnd), true
	}
	epoch, end := follower(diverging.Epoch)
	if epoch < 0 {
		// The follower has no epoch at or below the leader's: it holds
		// nothing the leader can vouch for past its high watermark.
		return min(followerHighWatermark, followerLogEnd), true
	}
	return min(diverging.EndOffset, end, followerLogEnd), epoch == diverging.Epoch
}
