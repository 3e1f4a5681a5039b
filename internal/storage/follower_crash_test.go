package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

// A follower crashes at every sync point of a workload of fetches (random
// chunks of a leader's log with several leader epochs and producers),
// syncs, truncations, full truncations and reopens. Every image reopens to
// a prefix of the leader's log: contiguous batches from its log start,
// each byte for byte the leader's at its offset, holding at least what a
// Sync acknowledged; an epoch cache that is the lineage of those batches;
// producer state that a replay of them gives; and a log that takes the
// leader's next batches and reopens cleanly.

// followerCrashLeader builds the leader's log: batches of plain,
// idempotent and transactional producers over several leader epochs.
func followerCrashLeader(t *testing.T, rng *rand.Rand) (*Log, map[int64][]byte) {
	l, err := Open("/data/leader-0", crashConfig(), Options{FS: vfs.NewMem(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	epoch := int32(0)
	seqs := map[int64]int32{}
	open := map[int64]bool{}
	for i := range 120 {
		if rng.IntN(12) == 0 {
			epoch += 1 + int32(rng.IntN(2))
		}
		pid := int64(rng.IntN(5)) - 1
		op := producerOp{pid: pid, epoch: 0, seq: seqs[pid], n: int32(1 + rng.IntN(4)), txn: pid >= 2}
		switch {
		case pid < 0:
			op.epoch, op.seq = -1, -1
		case op.txn && open[pid] && rng.IntN(3) == 0:
			op = producerOp{pid: pid, marker: true, abort: rng.IntN(2) == 0}
			open[pid] = false
		default:
			seqs[pid] += op.n
			open[pid] = open[pid] || op.txn
		}
		b := buildProducerBatch(t, op, 0)
		if op.pid < 0 {
			b = makeBatch(t, int(op.n), int64(i), fmt.Sprint(i), rng.IntN(200))
		}
		if _, err := l.AppendAsLeader(b, epoch); err != nil {
			t.Fatal(err)
		}
	}
	batches := map[int64][]byte{}
	for _, b := range readBatches(t, l) {
		h, _ := record.ParseHeader(b)
		batches[h.BaseOffset] = b
	}
	return l, batches
}

// cutAt is where a truncation to off cuts a log of batches: the base of
// the batch that holds off, or off.
func cutAt(batches map[int64][]byte, off int64) int64 {
	for base, b := range batches {
		if h, _ := record.ParseHeader(b); base <= off && off <= h.LastOffset() {
			return base
		}
	}
	return off
}

type followerCrashImage struct {
	fs      *vfs.Mem
	point   int
	mode    vfs.CrashMode
	durable int64  // every offset below was acknowledged by a Sync
	doing   string // the step and the log's offsets before it
}

func TestFollowerCrashAtEverySyncPoint(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 12))
			leader, batches := followerCrashLeader(t, rng)
			defer leader.Close()
			mem := vfs.NewMem()
			var images []followerCrashImage
			var durable int64
			point, doing := 0, ""
			fsys := vfs.NewFaulty(mem, func(op vfs.Op, name string) error {
				if op == vfs.OpSync || op == vfs.OpSyncDir {
					point++
					for _, mode := range []vfs.CrashMode{vfs.CrashLoseUnsynced, vfs.CrashTorn, vfs.CrashGarbage} {
						images = append(images, followerCrashImage{mem.CrashClone(mode, rng), point, mode, durable, doing})
					}
				}
				return nil
			})
			open := func() *Log {
				l, err := Open(crashDir, crashConfig(), Options{FS: fsys, Logger: quiet})
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			l := open()
			end := leader.LogEndOffset()
			for range 200 {
				o := l.Offsets()
				r := rng.IntN(40)
				doing = fmt.Sprintf("step %d at %+v", r, o)
				switch {
				case r < 24:
					if o.LogEndOffset < end {
						if _, err := l.AppendAsFollower(readAt(t, leader, o.LogEndOffset, int32(1+rng.IntN(1500)))); err != nil {
							t.Fatal(err)
						}
					}
				case r < 30:
					if err := l.Sync(o.LogEndOffset); err != nil {
						t.Fatal(err)
					}
					durable = o.LogEndOffset
				case r < 34:
					to := o.LogStartOffset + rng.Int64N(o.LogEndOffset-o.LogStartOffset+1)
					durable = min(durable, cutAt(batches, to)) // the batch holding to goes whole
					if err := l.TruncateTo(to); err != nil {
						t.Fatal(err)
					}
					durable = min(durable, l.LogEndOffset())
				case r < 36:
					to := rng.Int64N(end)
					durable = 0
					if err := l.TruncateFullyAndStartAt(to); err != nil {
						t.Fatal(err)
					}
					durable = to
				case r < 38:
					if err := l.Close(); err != nil {
						t.Fatal(err)
					}
					durable = o.LogEndOffset
					l = open()
				default:
					if err := l.Roll(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if len(images) < 300 {
				t.Fatalf("only %d crash images", len(images))
			}
			for _, img := range images {
				checkFollowerImage(t, img, leader, batches)
			}
			t.Logf("%d sync points, %d crash images checked", point, len(images))
		})
	}
}

func checkFollowerImage(t *testing.T, img followerCrashImage, leader *Log, batches map[int64][]byte) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("sync point %d (%s), mode %d: %s", img.point, img.doing, img.mode, fmt.Sprintf(format, args...))
	}
	ft := imageFataler{t, fail}
	l, err := Open(crashDir, crashConfig(), Options{FS: img.fs, Logger: quiet})
	if err != nil {
		fail("reopen: %v", err)
	}
	o := l.Offsets()
	if o.LogEndOffset < img.durable {
		fail("log end %d below the acknowledged %d", o.LogEndOffset, img.durable)
	}
	next := int64(-1)
	var lineage []EpochEntry
	for _, b := range readBatches(ft, l) {
		h, _ := record.ParseHeader(b)
		if want, ok := batches[h.BaseOffset]; !ok || !bytes.Equal(b, want) {
			wh, _ := record.ParseHeader(want)
			fail("batch at %d is not the leader's (the leader has one there: %v; first difference at byte %d; got %+v, want %+v)", h.BaseOffset, ok, firstDifference(b, want), h, wh)
		}
		if next >= 0 && h.BaseOffset != next {
			fail("batch at %d follows a batch ending at %d", h.BaseOffset, next)
		}
		next = h.NextOffset()
		if n := len(lineage); n == 0 || h.PartitionLeaderEpoch > lineage[n-1].Epoch {
			lineage = append(lineage, EpochEntry{h.PartitionLeaderEpoch, max(h.BaseOffset, o.LogStartOffset)})
		}
	}
	if got := l.Epochs(); !slices.Equal(got, lineage) {
		fail("epochs %v, the batches [%d, %d) say %v", got, o.LogStartOffset, o.LogEndOffset, lineage)
	}
	if o.LogStartOffset == 0 {
		checkProducersReplay(ft, l)
	}
	if o.LogEndOffset < leader.LogEndOffset() {
		if _, err := l.AppendAsFollower(readAt(ft, leader, o.LogEndOffset, 4000)); err != nil {
			fail("the leader's next batches after recovery: %v", err)
		}
	}
	want := l.LogEndOffset()
	if err := l.Close(); err != nil {
		fail("close: %v", err)
	}
	if l, err = Open(crashDir, crashConfig(), Options{FS: img.fs, Logger: quiet}); err != nil || l.LogEndOffset() != want {
		fail("clean reopen: %v", err)
	}
	l.Close()
}
