package mm2

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The scenarios below are OffsetSyncStoreTest's: same syncs, same
// expected translations, since the store must keep the same syncs as
// Kafka's to translate as it does.

const tpTopic, tpPartition = "topic1", int32(2)

func addSync(s *SyncStore, up, down int64) {
	s.Add(OffsetSync{Topic: tpTopic, Partition: tpPartition, UpstreamOffset: up, DownstreamOffset: down})
}

func readyStore() *SyncStore {
	s := NewSyncStore()
	s.ReadToEnd()
	return s
}

// expectTranslate checks one translation; want -1 means ok=false.
func expectTranslate(t *testing.T, s *SyncStore, up, want int64) {
	t.Helper()
	got, ok := s.Translate(tpTopic, tpPartition, up)
	if !ok {
		got = -1
	}
	if got != want {
		t.Fatalf("Translate(%d) = %d, want %d (-1: none)", up, got, want)
	}
}

func TestTranslate(t *testing.T) {
	s := readyStore()
	addSync(s, 100, 200)
	expectTranslate(t, s, 150, 201) // one past the sync, no dead reckoning
	addSync(s, 150, 251)
	expectTranslate(t, s, 150, 251) // exact
	expectTranslate(t, s, 5, -1)    // before any sync (Kafka: -1)
	addSync(s, 200, 10)
	expectTranslate(t, s, 200, 10) // downstream reset
	addSync(s, 20, 20)
	expectTranslate(t, s, 20, 20) // upstream reset
	expectTranslate(t, s, 200, 21)
	if got := s.Syncs(tpTopic, tpPartition); len(got) != 1 {
		t.Fatalf("after an upstream rewind the store holds %v, want only the new sync", got)
	}
}

func TestTranslateNotReady(t *testing.T) {
	s := NewSyncStore()
	expectTranslate(t, s, 0, -1)
	addSync(s, 100, 200)
	for _, up := range []int64{0, 100, 200} {
		expectTranslate(t, s, up, -1)
	}
	if s.Ready() {
		t.Fatal("Ready before ReadToEnd")
	}
	s.ReadToEnd()
	expectTranslate(t, s, 0, -1)
	expectTranslate(t, s, 100, 200)
	expectTranslate(t, s, 200, 201)
}

func TestTranslateNoSync(t *testing.T) {
	s := readyStore()
	expectTranslate(t, s, 0, -1)
	s.Add(OffsetSync{Topic: tpTopic, Partition: 0, UpstreamOffset: 3, DownstreamOffset: 4})
	expectTranslate(t, s, 10, -1) // another partition's sync
	if d, ok := s.Translate(tpTopic, 0, 10); !ok || d != 5 {
		t.Fatalf("Translate(partition 0) = %d, %v", d, ok)
	}
}

// expectSparse is assertSparseSync: syncOffset is a stored sync and the
// one stored before it is previous (-1: none).
func expectSparse(t *testing.T, s *SyncStore, syncOffset, previous int64) {
	t.Helper()
	if previous == -1 {
		expectTranslate(t, s, syncOffset-1, -1)
	} else {
		expectTranslate(t, s, syncOffset-1, previous+1)
	}
	expectTranslate(t, s, syncOffset, syncOffset)
	expectTranslate(t, s, syncOffset+1, syncOffset+1)
	expectTranslate(t, s, syncOffset+2, syncOffset+1)
}

func TestPastOffsetTranslation(t *testing.T) {
	s := NewSyncStore()
	for off := int64(0); off <= 1000; off += 10 {
		addSync(s, off, off)
		checkInvariants(t, s)
	}
	s.ReadToEnd()
	// Only the last sync of the initial read was kept.
	expectSparse(t, s, 1000, -1)
	for off := int64(1010); off <= 10000; off += 10 {
		addSync(s, off, off)
		checkInvariants(t, s)
	}
	// Invariant D: the initial read's last sync is still the oldest.
	expectSparse(t, s, 1000, -1)
	// Older offsets translate less precisely.
	for _, c := range [][2]int64{{4840, 1000}, {6760, 4840}, {8680, 6760}, {9160, 8680}, {9640, 9160}, {9880, 9640}, {9940, 9880}, {9970, 9940}, {9990, 9970}, {10000, 9990}} {
		expectSparse(t, s, c[0], c[1])
	}
	addSync(s, 1500, 11000) // upstream rewind forgets the rest
	checkInvariants(t, s)
	expectTranslate(t, s, 1499, -1)
	expectTranslate(t, s, 1500, 11000)
	expectTranslate(t, s, 2000, 11001)
}

func TestPastOffsetTranslationKeepingHistory(t *testing.T) {
	s := NewSyncStore()
	s.SetInitializationMustReadToEnd(false)
	for off := int64(0); off <= 1000; off += 10 {
		addSync(s, off, off)
		checkInvariants(t, s)
	}
	s.ReadToEnd()
	expectSparse(t, s, 480, 0)
	expectSparse(t, s, 720, 480)
	expectSparse(t, s, 1000, 990)
	for off := int64(1000); off <= 10000; off += 10 {
		addSync(s, off, off)
		checkInvariants(t, s)
	}
	for _, c := range [][2]int64{{3840, 0}, {7680, 3840}, {8640, 7680}, {9120, 8640}, {9600, 9120}, {9840, 9600}, {9900, 9840}, {9960, 9900}, {9990, 9960}, {10000, 9990}} {
		expectSparse(t, s, c[0], c[1])
	}
	addSync(s, 1500, 11000)
	checkInvariants(t, s)
	expectTranslate(t, s, 1499, -1)
	expectTranslate(t, s, 1500, 11000)
	expectTranslate(t, s, 2000, 11001)
}

func TestConsistentlySpacedSyncs(t *testing.T) {
	const iterations = 100
	for step := int64(1); step < math.MaxInt64/iterations; step = step*2 + 1 {
		for first := int64(0); first < 30; first++ {
			steps := make([]int64, iterations)
			for i := range steps {
				steps[i] = step
			}
			expectBoundedExpirations(t, first, steps, 1)
		}
	}
}

func TestRandomlySpacedSyncs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const iterationBits = 10
	for n := 1; n < 64-iterationBits; n++ {
		// Steps differing in at most n bits expire at most n+2 syncs at once.
		maxDiff := int64(1) << n
		for _, floor := range []int64{0, 1 << 16} {
			steps := make([]int64, 1<<iterationBits)
			for i := range steps {
				steps[i] = floor + r.Int64N(maxDiff)
			}
			expectBoundedExpirations(t, 0, steps, n+2)
		}
	}
}

func TestDroppedSyncsSpacing(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	steps := make([]int64, 10000)
	for i := range steps {
		steps[i] = 100
		if r.Float64() < 0.5 {
			steps[i] = 200 // as if the sync between was lost
		}
	}
	expectBoundedExpirations(t, 0, steps, 2)
}

func expectBoundedExpirations(t *testing.T, first int64, steps []int64, maxExpirations int) {
	t.Helper()
	s := readyStore()
	addSync(s, first, first)
	off, last := first, 1
	for _, step := range steps {
		off += step
		if off < 0 {
			t.Fatal("test overflowed")
		}
		addSync(s, off, off)
		arr := s.syncs[topicPartition{tpTopic, tpPartition}]
		if arr[0].UpstreamOffset != off {
			t.Fatalf("invariant A: syncs[0] = %d, want %d", arr[0].UpstreamOffset, off)
		}
		if arr[63].UpstreamOffset != first {
			t.Fatalf("invariant D: syncs[63] = %d, want %d", arr[63].UpstreamOffset, first)
		}
		count := len(s.Syncs(tpTopic, tpPartition))
		if expired := last - count + 1; expired > maxExpirations {
			t.Fatalf("after %d the store expired %d syncs, more than %d", off, expired, maxExpirations)
		}
		last = count
	}
}

// checkInvariants checks B and C for every pair, as
// assertSparseSyncInvariant.
func checkInvariants(t *testing.T, s *SyncStore) {
	t.Helper()
	arr := s.syncs[topicPartition{tpTopic, tpPartition}]
	for j := range SyncsPerPartition {
		for i := range j {
			iu, ju := arr[i].UpstreamOffset, arr[j].UpstreamOffset
			if iu == ju {
				continue
			}
			if lower := ju + int64(1)<<max(i-2, 0); lower >= 0 && iu < lower {
				t.Fatalf("invariant C(%d,%d): %d < %d", i, j, iu, lower)
			}
			if upper := ju + int64(1)<<j - int64(1)<<i; upper >= 0 && iu > upper {
				t.Fatalf("invariant B(%d,%d): %d > %d", i, j, iu, upper)
			}
		}
	}
}
