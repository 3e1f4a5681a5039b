package member

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// w builds Work from names: "a" is connector a, "a-0" its task 0.
func w(names ...string) Work {
	var out Work
	for _, n := range names {
		if i := strings.LastIndexByte(n, '-'); i > 0 {
			task, err := strconv.Atoi(n[i+1:])
			if err != nil {
				panic(n)
			}
			out.Tasks = append(out.Tasks, api.TaskID{Connector: n[:i], Task: task})
			continue
		}
		out.Connectors = append(out.Connectors, n)
	}
	return out
}

var t0 = time.Unix(1_700_000_000, 0)

// round is one call of AssignIncremental and what it must answer.
type round struct {
	members      map[string]Work
	configured   Work
	now          time.Time
	lastComplete int32 // -2: the generation the previous round assigned
	wantAssigned map[string]Work
	wantRevoked  map[string]Work
	wantDelay    time.Duration
}

func TestAssignIncremental(t *testing.T) {
	ab := w("a", "a-0", "a-1", "b", "b-0", "b-1")
	tests := []struct {
		name   string
		rounds []round
	}{{
		name: "first assignment splits connectors and tasks evenly",
		rounds: []round{{
			members:      map[string]Work{"w1": {}, "w2": {}},
			configured:   ab,
			wantAssigned: map[string]Work{"w1": w("a", "a-0", "b-0"), "w2": w("b", "a-1", "b-1")},
		}},
	}, {
		name: "a joining worker gets the excess only in the rebalance after the revocation",
		rounds: []round{{
			members:    map[string]Work{"w1": w("a", "a-0", "a-1", "b-1"), "w2": w("b", "b-0"), "w3": {}},
			configured: ab,
			// w1 holds 3 tasks of 4: the balanced share is 1 or 2 each.
			wantRevoked: map[string]Work{"w1": w("b-1")},
		}, {
			members:      map[string]Work{"w1": w("a", "a-0", "a-1"), "w2": w("b", "b-0"), "w3": {}},
			configured:   ab,
			wantAssigned: map[string]Work{"w3": w("b-1")},
		}},
	}, {
		name: "a departed worker's work is held for the max delay, then given away",
		rounds: []round{{
			members:      map[string]Work{"w1": {}, "w2": {}},
			configured:   ab,
			wantAssigned: map[string]Work{"w1": w("a", "a-0", "b-0"), "w2": w("b", "a-1", "b-1")},
		}, {
			members:    map[string]Work{"w1": w("a", "a-0", "b-0")},
			configured: ab,
			wantDelay:  time.Minute,
		}, {
			members:    map[string]Work{"w1": w("a", "a-0", "b-0")},
			configured: ab,
			now:        t0.Add(40 * time.Second),
			wantDelay:  20 * time.Second,
		}, {
			members:      map[string]Work{"w1": w("a", "a-0", "b-0")},
			configured:   ab,
			now:          t0.Add(time.Minute),
			wantAssigned: map[string]Work{"w1": w("b", "a-1", "b-1")},
		}},
	}, {
		name: "a worker that returns within the delay keeps its work",
		rounds: []round{{
			members:      map[string]Work{"w1": {}, "w2": {}},
			configured:   ab,
			wantAssigned: map[string]Work{"w1": w("a", "a-0", "b-0"), "w2": w("b", "a-1", "b-1")},
		}, {
			members:    map[string]Work{"w1": w("a", "a-0", "b-0")},
			configured: ab,
			wantDelay:  time.Minute,
		}, {
			members:    map[string]Work{"w1": w("a", "a-0", "b-0"), "w2": w("b", "a-1", "b-1")},
			configured: ab,
			now:        t0.Add(10 * time.Second),
		}},
	}, {
		name: "a worker that joins empty during the delay takes the lost work when it ends",
		rounds: []round{{
			members:      map[string]Work{"w1": {}, "w2": {}},
			configured:   ab,
			wantAssigned: map[string]Work{"w1": w("a", "a-0", "b-0"), "w2": w("b", "a-1", "b-1")},
		}, {
			members:    map[string]Work{"w1": w("a", "a-0", "b-0")},
			configured: ab,
			wantDelay:  time.Minute,
		}, {
			members:    map[string]Work{"w1": w("a", "a-0", "b-0"), "w3": {}},
			configured: ab,
			now:        t0.Add(30 * time.Second),
			wantDelay:  30 * time.Second,
		}, {
			members:      map[string]Work{"w1": w("a", "a-0", "b-0"), "w3": {}},
			configured:   ab,
			now:          t0.Add(time.Minute),
			wantAssigned: map[string]Work{"w3": w("b", "a-1", "b-1")},
		}},
	}, {
		name: "deleted connectors and tasks are revoked",
		rounds: []round{{
			members:      map[string]Work{"w1": {}, "w2": {}},
			configured:   ab,
			wantAssigned: map[string]Work{"w1": w("a", "a-0", "b-0"), "w2": w("b", "a-1", "b-1")},
		}, {
			members:     map[string]Work{"w1": w("a", "a-0", "b-0"), "w2": w("b", "a-1", "b-1")},
			configured:  w("a", "a-0", "a-1"),
			wantRevoked: map[string]Work{"w1": w("b-0"), "w2": w("b", "b-1")},
		}},
	}, {
		name: "work two members run is revoked from both and assigned in the next round",
		rounds: []round{{
			members:     map[string]Work{"w1": w("a", "a-0"), "w2": w("a-0", "a-1")},
			configured:  w("a", "a-0", "a-1"),
			wantRevoked: map[string]Work{"w1": w("a-0"), "w2": w("a-0")},
		}, {
			members:      map[string]Work{"w1": w("a"), "w2": w("a-1")},
			configured:   w("a", "a-0", "a-1"),
			wantAssigned: map[string]Work{"w1": w("a-0")},
		}},
	}, {
		name: "revoking rounds that follow each other back off",
		rounds: []round{{
			members:     map[string]Work{"w1": w("a", "a-0", "a-1", "a-2", "a-3", "a-4", "a-5"), "w2": {}},
			configured:  w("a", "a-0", "a-1", "a-2", "a-3", "a-4", "a-5"),
			wantRevoked: map[string]Work{"w1": w("a-3", "a-4", "a-5")},
		}, {
			// w3 joins before the follow-up: revoking from w1 again right
			// away would churn, so that revocation waits 40ms.
			members:      map[string]Work{"w1": w("a", "a-0", "a-1", "a-2"), "w2": {}, "w3": {}},
			configured:   w("a", "a-0", "a-1", "a-2", "a-3", "a-4", "a-5"),
			wantAssigned: map[string]Work{"w2": w("a-3", "a-5"), "w3": w("a-4")},
			wantDelay:    40 * time.Millisecond,
		}},
	}, {
		name: "a leader that did not complete its last generation forgets what it assigned",
		rounds: []round{{
			members:      map[string]Work{"w1": {}, "w2": {}},
			configured:   w("a"),
			wantAssigned: map[string]Work{"w1": w("a")},
		}, {
			// w1 left and the leader missed a generation: with no trusted
			// previous assignment, a is simply unassigned and given away.
			members:      map[string]Work{"w2": {}},
			configured:   w("a"),
			lastComplete: 7,
			wantAssigned: map[string]Work{"w2": w("a")},
		}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := NewAssignorState()
			for i, r := range tt.rounds {
				in := AssignInput{
					Members: r.members, Configured: r.configured,
					LastCompletedGeneration: int32(i), Generation: int32(i + 1),
					Now: t0, MaxDelay: time.Minute,
				}
				if i == 0 {
					in.LastCompletedGeneration = -1
				}
				if r.lastComplete != 0 {
					in.LastCompletedGeneration = r.lastComplete
				}
				if !r.now.IsZero() {
					in.Now = r.now
				}
				var res AssignResult
				res, st = AssignIncremental(st, in)
				if diff := cmp.Diff(r.wantAssigned, nonEmpty(res.Assigned), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("round %d assigned (-want +got):\n%s", i, diff)
				}
				if diff := cmp.Diff(r.wantRevoked, nonEmpty(res.Revoked), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("round %d revoked (-want +got):\n%s", i, diff)
				}
				if res.Delay != r.wantDelay {
					t.Errorf("round %d delay %v, want %v", i, res.Delay, r.wantDelay)
				}
			}
		})
	}
}

func nonEmpty(m map[string]Work) map[string]Work {
	out := map[string]Work{}
	for k, v := range m {
		if !v.Empty() {
			out[k] = v
		}
	}
	return out
}

func TestAssignEager(t *testing.T) {
	got := AssignEager([]string{"w2", "w1"}, w("b", "a", "a-1", "a-0", "b-0", "gone-0"))
	want := map[string]Work{"w1": w("a", "a-0", "b-0"), "w2": w("b", "a-1")}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRevokingBackoff(t *testing.T) {
	for _, tt := range []struct {
		n    int
		max  time.Duration
		want time.Duration
	}{
		{1, 5 * time.Minute, 40 * time.Millisecond},
		{2, 5 * time.Minute, 1600 * time.Millisecond},
		{3, 5 * time.Minute, 64 * time.Second},
		{4, 5 * time.Minute, 5 * time.Minute},
		{1, 0, 0},
	} {
		if got := revokingBackoff(tt.n, tt.max); got != tt.want {
			t.Errorf("revokingBackoff(%d, %v) = %v, want %v", tt.n, tt.max, got, tt.want)
		}
	}
}
