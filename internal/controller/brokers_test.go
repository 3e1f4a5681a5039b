package controller

import (
	"slices"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/model"
)

// expired names the brokers whose session is over and when the first of the
// others ends, which is when the active controller checks next: a dead
// broker is fenced as its session ends, not up to a polling period later.
func TestLivenessExpiredSaysWhenTheNextSessionEnds(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const session = 3 * time.Second
	var l liveness
	l.heard(1, t0)
	l.heard(2, t0.Add(time.Second))
	l.heard(3, t0.Add(2*time.Second))
	for _, c := range []struct {
		now      time.Duration // after t0
		ids      []model.NodeID
		wantGone []model.NodeID
		wantNext time.Duration // after t0; -1 for none
	}{
		{now: 2500 * time.Millisecond, ids: []model.NodeID{1, 2, 3}, wantNext: 3 * time.Second},
		{now: 3 * time.Second, ids: []model.NodeID{1, 2, 3}, wantNext: 3 * time.Second}, // over only past its end
		{now: 3001 * time.Millisecond, ids: []model.NodeID{1, 2, 3}, wantGone: []model.NodeID{1}, wantNext: 4 * time.Second},
		{now: 5500 * time.Millisecond, ids: []model.NodeID{1, 2, 3}, wantGone: []model.NodeID{1, 2, 3}, wantNext: -1},
		{now: 3500 * time.Millisecond, ids: []model.NodeID{2, 3}, wantNext: 4 * time.Second}, // 1 is fenced: not watched
		// A broker never heard from starts its session now.
		{now: 6 * time.Second, ids: []model.NodeID{4}, wantNext: 9 * time.Second},
	} {
		gone, next := l.expired(c.ids, t0.Add(c.now), session)
		wantNext := time.Time{}
		if c.wantNext >= 0 {
			wantNext = t0.Add(c.wantNext)
		}
		if !slices.Equal(gone, c.wantGone) || !next.Equal(wantNext) {
			t.Errorf("at t0+%v of %v: gone %v, next %v; want %v, %v", c.now, c.ids, gone, next.Sub(t0), c.wantGone, c.wantNext)
		}
	}
}
