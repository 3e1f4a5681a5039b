package controller

import (
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/hashicorp/raft"

	"github.com/samsa-io/samsa/internal/metadata"
)

// fsm is the Raft state machine: committed entries are batches of metadata
// records applied to the image. Raft calls Apply, Snapshot and Restore from
// one goroutine; readers take the published image lock-free.
type fsm struct {
	log   *slog.Logger
	state atomic.Pointer[published]
}

// published is one image and the channel closed when a newer one replaces
// it. Keeping both in one pointer means a reader that takes Changed and then
// Image can never miss an update: the channel it holds is closed by any
// image newer than the one it read.
type published struct {
	img     *metadata.Image
	changed chan struct{}
}

func newFSM(log *slog.Logger) *fsm {
	f := &fsm{log: log}
	f.state.Store(&published{img: metadata.Empty(), changed: make(chan struct{})})
	return f
}

func (f *fsm) image() *metadata.Image { return f.state.Load().img }

func (f *fsm) install(img *metadata.Image) {
	old := f.state.Swap(&published{img: img, changed: make(chan struct{})})
	close(old.changed)
}

// Apply applies one committed batch. A batch the image refuses is skipped,
// and the error goes back to the proposer: every node refuses it the same
// way on replay, so skipping keeps them in step. The controller validates
// before proposing, so a refusal here is a bug, logged loudly.
func (f *fsm) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	recs, err := metadata.DecodeBatch(l.Data)
	if err == nil {
		var next *metadata.Image
		next, err = f.image().ApplyAt(int64(l.Index), recs...)
		if err == nil {
			f.install(next)
			return nil
		}
	}
	f.log.Error("metadata batch refused", "index", l.Index, "err", err)
	return fmt.Errorf("controller: apply raft entry %d: %w", l.Index, err)
}

// Snapshot captures the current image; it is immutable, so Persist can write
// it while Apply goes on.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	return imageSnapshot{img: f.image()}, nil
}

// Restore replaces the image with a snapshot's.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	img, err := metadata.ReadSnapshot(rc)
	if err != nil {
		return fmt.Errorf("controller: restore snapshot: %w", err)
	}
	f.install(img)
	return nil
}

type imageSnapshot struct{ img *metadata.Image }

func (s imageSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := metadata.WriteSnapshot(sink, s.img); err != nil {
		sink.Cancel()
		return fmt.Errorf("controller: persist snapshot: %w", err)
	}
	return sink.Close()
}

func (imageSnapshot) Release() {}
