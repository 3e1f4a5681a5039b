package mm2

// SyncsPerPartition is how many offset syncs the store keeps per source
// partition, one per bit of an offset (OffsetSyncStore.SYNCS_PER_PARTITION).
const SyncsPerPartition = 64

// storedSync is an offset sync with the identity of its arrival: Kafka's
// array compares OffsetSync objects by reference, so two syncs with equal
// offsets read from two records are still distinct entries.
type storedSync struct {
	OffsetSync
	seq uint64
}

// syncArray is one partition's syncs: [0] the latest, later indexes
// exponentially older (see SyncStore).
type syncArray [SyncsPerPartition]storedSync

// SyncStore is the checkpoint side's memory of offset syncs and its
// translation of upstream offsets (Kafka's OffsetSyncStore, as KAFKA-14666
// made it). It is fed every offset sync read from the offset-syncs topic,
// in order, and keeps per source partition 64 of them spaced roughly
// exponentially back from the latest, so that a group far behind the live
// end still translates, less precisely the older it is. For each partition:
//
//   - A: syncs[0] is the latest sync read;
//   - B: for i < j with distinct syncs, syncs[i].upstream <= syncs[j].upstream + 2^j - 2^i;
//   - C: for i < j with distinct syncs, syncs[i].upstream >= syncs[j].upstream + 2^max(i-2,0);
//   - D: syncs[63] is the earliest sync still usable for translation.
//
// An upstream offset going backwards (the source topic was recreated)
// clears the partition to that one sync.
//
// Readiness: Kafka translates nothing until the store has read the
// offset-syncs topic to its end once (OffsetSyncStore.start blocks for it).
// A new store is loading; the caller Adds every record up to the end it
// saw when it started reading, then calls ReadToEnd. While loading, a store
// whose initialization must read to end (the default) keeps only the last
// sync of each partition, so no translation can go behind one a previous
// run of the task may already have checkpointed; MirrorCheckpointTask asks
// for that only when it could not load the checkpoints topic
// (offsetSyncStore.start(!checkpointsReadOk)): with the checkpoints loaded,
// Checkpoints already stops a checkpoint from moving backwards. See
// SetInitializationMustReadToEnd.
//
// It is not safe for concurrent use.
type SyncStore struct {
	syncs                       map[topicPartition]*syncArray
	seq                         uint64
	readToEnd                   bool
	initializationMustReadToEnd bool
}

// NewSyncStore returns a loading store that must read to the end (only the
// last sync per partition is kept until ReadToEnd).
func NewSyncStore() *SyncStore {
	return &SyncStore{syncs: map[topicPartition]*syncArray{}, initializationMustReadToEnd: true}
}

// SetInitializationMustReadToEnd sets Kafka's initializationMustReadToEnd,
// the argument of OffsetSyncStore.start: false when the checkpoints topic
// was loaded into Checkpoints, true (the default) when it was not. Call it
// before the first Add.
func (s *SyncStore) SetInitializationMustReadToEnd(must bool) {
	s.initializationMustReadToEnd = must
}

// ReadToEnd marks the initial read of the offset-syncs topic done: from
// now on Translate answers, and Add keeps history.
func (s *SyncStore) ReadToEnd() { s.readToEnd = true }

// Ready reports whether ReadToEnd was called.
func (s *SyncStore) Ready() bool { return s.readToEnd }

// Add applies one offset sync read from the offset-syncs topic (Kafka's
// handleRecord). Syncs must come in the topic's order.
func (s *SyncStore) Add(sync OffsetSync) {
	s.seq++
	ns := storedSync{OffsetSync: sync, seq: s.seq}
	tp := topicPartition{sync.Topic, sync.Partition}
	arr := s.syncs[tp]
	if arr == nil {
		arr = new(syncArray)
		arr.clear(ns)
		s.syncs[tp] = arr
		return
	}
	// Kafka copies the array so that concurrent readers see a whole one;
	// the copy is also the "original" the update promotes old values from.
	original := *arr
	s.update(arr, &original, ns)
}

func (a *syncArray) clear(s storedSync) {
	for i := range a {
		a[i] = s
	}
}

// update is Kafka's updateSyncArray: put the new sync at [0], then walk
// down the array restoring invariant B, preferring to keep old values
// (promoted from original) that still satisfy B and C at an index over
// the new one, so that more distinct syncs survive.
func (s *SyncStore) update(syncs, original *syncArray, sync storedSync) {
	onlyLoadLast := !s.readToEnd && s.initializationMustReadToEnd
	upstreamRewind := sync.UpstreamOffset < syncs[0].UpstreamOffset
	if onlyLoadLast || upstreamRewind {
		syncs.clear(sync)
		return
	}
	replacement := sync
	replacementIndex := 0
	syncs[0] = replacement
	for current := 1; current < SyncsPerPartition; current++ {
		previous := current - 1
		for {
			old := original[replacementIndex]
			isRecent := invariantB(syncs[previous], old, previous, current)
			separatedFromPrevious := invariantC(syncs[previous], old, previous)
			next := current + 1
			separatedFromNext := next >= SyncsPerPartition || invariantC(old, syncs[next], current)
			nextReplacement := replacementIndex + 1
			duplicate := nextReplacement < SyncsPerPartition && old.seq == original[nextReplacement].seq
			promote := isRecent && separatedFromPrevious && separatedFromNext
			if promote {
				replacement = old
			}
			skip := duplicate || !separatedFromPrevious
			if promote || skip {
				replacementIndex++
			}
			if !(replacementIndex < current && skip) {
				break
			}
		}
		if invariantB(syncs[previous], syncs[current], previous, current) {
			// B holds here, so it holds for every later index too.
			break
		}
		syncs[current] = replacement
	}
}

func invariantB(iSync, jSync storedSync, i, j int) bool {
	bound := jSync.UpstreamOffset + (int64(1) << j) - (int64(1) << i)
	return iSync.seq == jSync.seq || bound < 0 || iSync.UpstreamOffset <= bound
}

func invariantC(iSync, jSync storedSync, i int) bool {
	bound := jSync.UpstreamOffset + (int64(1) << max(i-2, 0))
	return iSync.seq == jSync.seq || (bound >= 0 && iSync.UpstreamOffset >= bound)
}

// Translate is Kafka's OffsetSyncStore.translateDownstream: the offset on
// the target cluster's remote topic for a group at upstreamOffset of the
// source topic and partition (topic is the source cluster's name, as in
// OffsetSync). It uses the latest stored sync at or before upstreamOffset:
// its downstream offset if the group is exactly at it, else one past it.
// One past and no further, because the records between that sync and the
// group may or may not have been mirrored (filters, compaction,
// transaction markers) and guessing more could skip records; a group
// before every stored sync, or at the end of the topic, is thus never put
// ahead of where its next record really is, at the price of re-reading
// up to offset.lag.max records.
//
// ok is false where no checkpoint can be made: the store is not Ready, it
// has no sync for the partition (Kafka: empty), or every sync it still
// holds is after upstreamOffset (the group is older than the syncs kept,
// or replication started after its position; Kafka returns -1, which
// MirrorCheckpointTask drops like empty).
func (s *SyncStore) Translate(topic string, partition int32, upstreamOffset int64) (downstream int64, ok bool) {
	if !s.readToEnd {
		return 0, false
	}
	arr := s.syncs[topicPartition{topic, partition}]
	if arr == nil {
		return 0, false
	}
	sync := arr[SyncsPerPartition-1]
	for i := range arr {
		if arr[i].UpstreamOffset <= upstreamOffset {
			sync = arr[i]
			break
		}
	}
	if sync.UpstreamOffset > upstreamOffset {
		return 0, false
	}
	if upstreamOffset == sync.UpstreamOffset {
		return sync.DownstreamOffset, true
	}
	return sync.DownstreamOffset + 1, true
}

// Syncs returns the partition's stored syncs, latest first, with the
// repeats of Kafka's fixed-size array left out (for diagnostics).
func (s *SyncStore) Syncs(topic string, partition int32) []OffsetSync {
	arr := s.syncs[topicPartition{topic, partition}]
	if arr == nil {
		return nil
	}
	var out []OffsetSync
	for i := range arr {
		if i == 0 || arr[i].seq != arr[i-1].seq {
			out = append(out, arr[i].OffsetSync)
		}
	}
	return out
}
