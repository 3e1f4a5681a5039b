package member

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestAssignorProperty drives a simulated group through random joins,
// leaves, returns of departed workers with their old work, and config
// changes; after each it lets the group settle (rejoining after
// revocations and after scheduled delays) and checks that every
// configured connector and task runs exactly once and that members are
// balanced within one.
func TestAssignorProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		maxDelay := rapid.SampledFrom([]time.Duration{0, time.Second, 5 * time.Minute}).Draw(t, "maxDelay")
		s := newSim(maxDelay)
		config := map[string]int{}
		nextWorker := 0
		join := func() {
			s.join(fmt.Sprintf("w%02d", nextWorker))
			nextWorker++
		}
		join()
		steps := rapid.IntRange(1, 25).Draw(t, "steps")
		for range steps {
			switch op := rapid.IntRange(0, 5).Draw(t, "op"); op {
			case 0:
				join()
			case 1:
				if len(s.members) > 1 {
					s.leave(rapid.SampledFrom(s.members).Draw(t, "leave"))
				}
			case 2:
				if len(s.away) > 0 {
					s.returnAway(rapid.SampledFrom(sortedKeys(s.away)).Draw(t, "return"))
				}
			case 3:
				c := fmt.Sprintf("c%d", rapid.IntRange(0, 7).Draw(t, "connector"))
				config[c] = rapid.IntRange(0, 6).Draw(t, "tasks")
				s.setConfig(config)
			case 4:
				if len(config) > 0 {
					delete(config, rapid.SampledFrom(sortedKeys(config)).Draw(t, "delete"))
					s.setConfig(config)
				}
			case 5:
				// a rebalance with nothing changed (a member's Rejoin)
			}
			if err := s.settle(); err != nil {
				t.Fatal(err)
			}
			if err := s.checkStable(); err != nil {
				t.Fatalf("after %d rounds: %v", s.rounds, err)
			}
		}
	})
}
