package replication

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/scripttest"
)

// TestLeaderScripts drives LeaderState from testdata/leader_*.txt. Commands:
//
//	leader self=1 replicas=1,2,3 isr=1,2,3 epoch=5 pepoch=0 end=10 hw=8 [lag=10s]
//	    become leader at log end 10, high watermark 8
//	append end=N        the leader's log end moved to N
//	fetch r=R offset=N  follower R fetched from offset N (its log end)
//	tick D              move the clock by D and check the followers' lag
//	commit isr=1,2 pepoch=N   the controller committed an ISR
//	reject              the controller refused the ISR in flight
//	replicas 1,2,4      the replica set changed within the epoch
//	state               the leader's state
//
// Each command prints what it asks of the broker (hw moved, propose isr)
// and the state after it.
func TestLeaderScripts(t *testing.T) {
	scripttest.Run(t, filepath.Join("testdata", "leader_*.txt"), func(t *testing.T) func(c *scripttest.Case) []string {
		h := &leaderHarness{t: t, now: time.Unix(1_000_000, 0)}
		return h.run
	})
}

type leaderHarness struct {
	t     *testing.T
	now   time.Time
	start time.Time
	s     *LeaderState
}

func (h *leaderHarness) run(c *scripttest.Case) []string {
	fields := strings.Fields(c.Command)
	a := scripttest.ParseArgs(fields[1:])
	var eff LeaderEffects
	switch fields[0] {
	case "leader":
		h.start = h.now
		lag := time.Duration(10 * time.Second)
		if v, ok := a.Opts["lag"]; ok {
			lag = h.dur(c, v)
		}
		l := Leadership{
			Leader: h.int32(c, a, "self"), LeaderEpoch: h.int32(c, a, "epoch"), PartitionEpoch: h.int32(c, a, "pepoch"),
			Replicas: h.ids(c, a.Opts["replicas"]), ISR: h.ids(c, a.Opts["isr"]),
		}
		h.s = NewLeaderState(l.Leader, l, h.int64(c, a, "end"), h.int64(c, a, "hw"), lag, h.now)
	case "append":
		eff = h.s.Appended(h.int64(c, a, "end"))
	case "fetch":
		var ok bool
		eff, ok = h.s.FollowerFetch(h.int32(c, a, "r"), h.int64(c, a, "offset"), h.now)
		if !ok {
			return []string{"not a replica", h.state()}
		}
	case "readers":
		var out []string
		for _, v := range h.s.ReadReplicas(h.int64(c, a, "offset"), h.now) {
			out = append(out, fmt.Sprintf("%d:end=%d,since=%s", v.ID, v.LogEnd, v.SinceCaughtUp))
		}
		return []string{strings.Join(out, " ")}
	case "tick":
		h.now = h.now.Add(h.dur(c, a.Pos[0]))
		eff = h.s.Tick(h.now)
	case "commit":
		eff = h.s.ISRCommitted(h.ids(c, a.Opts["isr"]), h.int32(c, a, "pepoch"))
	case "reject":
		h.s.ISRRejected()
	case "replicas":
		h.s.SetReplicas(h.ids(c, a.Pos[0]))
	case "state":
		return []string{h.state()}
	default:
		h.t.Fatalf("line %d: unknown command %q", c.Line, fields[0])
	}
	return append(formatEffects(eff), h.state())
}

func formatEffects(e LeaderEffects) []string {
	var out []string
	if e.HighWatermarkMoved {
		out = append(out, "hw moved")
	}
	if e.ProposeISR != nil {
		out = append(out, fmt.Sprintf("propose isr=%v", e.ProposeISR))
	}
	return out
}

func (h *leaderHarness) state() string {
	s := h.s
	var fs []string
	for _, r := range s.replicas {
		f, ok := s.followers[r]
		if !ok {
			continue
		}
		caught := "never"
		if !f.lastCaughtUp.IsZero() {
			caught = f.lastCaughtUp.Sub(h.start).String()
		}
		fs = append(fs, fmt.Sprintf("%d:end=%d,caught-up@%s", r, f.logEnd, caught))
	}
	pending := "-"
	if s.pending != nil {
		pending = fmt.Sprint(s.pending)
	}
	return fmt.Sprintf("hw=%d end=%d isr=%v pepoch=%d pending=%s followers=[%s]",
		s.highWatermark, s.logEnd, s.isr, s.partitionEpoch, pending, strings.Join(fs, " "))
}

func (h *leaderHarness) dur(c *scripttest.Case, v string) time.Duration {
	d, err := time.ParseDuration(v)
	if err != nil {
		h.t.Fatalf("line %d: %v", c.Line, err)
	}
	return d
}

func (h *leaderHarness) int64(c *scripttest.Case, a scripttest.Args, k string) int64 {
	return parseInt(h.t, c, a, k)
}

func (h *leaderHarness) int32(c *scripttest.Case, a scripttest.Args, k string) int32 {
	return int32(parseInt(h.t, c, a, k))
}

func (h *leaderHarness) ids(c *scripttest.Case, v string) []int32 {
	return parseIDs(h.t, c, v)
}

func parseInt(t *testing.T, c *scripttest.Case, a scripttest.Args, k string) int64 {
	t.Helper()
	v, ok := a.Opts[k]
	if !ok {
		t.Fatalf("line %d: %s= is missing", c.Line, k)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("line %d: %s=%s: %v", c.Line, k, v, err)
	}
	return n
}

func parseIDs(t *testing.T, c *scripttest.Case, v string) []int32 {
	t.Helper()
	out := []int32{}
	if v == "" {
		return out
	}
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.ParseInt(f, 10, 32)
		if err != nil {
			t.Fatalf("line %d: replica %q: %v", c.Line, f, err)
		}
		out = append(out, int32(n))
	}
	slices.Sort(out)
	return out
}

// TestDivergenceScripts drives DivergingEpoch and TruncationOffset from
// testdata/divergence_*.txt over modelled logs. Commands:
//
//	log NAME [hw=N]     input: one line per record range, "E: A-B" (epoch E
//	                    wrote offsets A to B); output: the log
//	reconcile follower=F leader=L
//	    F fetches from L until their logs agree: each round prints the
//	    fetch (offset, last epoch), the leader's answer (diverging epoch
//	    and end, or ok) and the truncation; then F copies L's records
//	    past its end, as the fetches would
func TestDivergenceScripts(t *testing.T) {
	scripttest.Run(t, filepath.Join("testdata", "divergence_*.txt"), func(t *testing.T) func(c *scripttest.Case) []string {
		logs := map[string]*modelLog{}
		return func(c *scripttest.Case) []string { return runDivergence(t, logs, c) }
	})
}

// modelLog is a log as a list of record epochs, offset by offset.
type modelLog struct {
	epochs []int32
	hw     int64
}

func (l *modelLog) end() int64 { return int64(len(l.epochs)) }

// endOffsetForEpoch is storage.Log.EndOffsetForEpoch's rule: the largest
// epoch at or below epoch, and the first offset of the next epoch after it
// (the log end for the last one); an epoch older than every one the log
// has gets itself and the offset where the log's first epoch starts (0),
// as in Kafka; an empty log, or epoch -1, gets -1, -1.
func (l *modelLog) endOffsetForEpoch(epoch int32) (int32, int64) {
	found := int32(-1)
	for _, e := range l.epochs {
		if e <= epoch {
			found = max(found, e)
		}
	}
	if found < 0 {
		if len(l.epochs) > 0 && epoch >= 0 {
			return epoch, 0
		}
		return -1, -1
	}
	for off, e := range l.epochs {
		if e > found {
			return found, int64(off)
		}
	}
	return found, l.end()
}

func (l *modelLog) lastEpoch() int32 {
	if len(l.epochs) == 0 {
		return -1
	}
	return l.epochs[len(l.epochs)-1]
}

func (l *modelLog) String() string {
	var parts []string
	for start := 0; start < len(l.epochs); {
		end := start
		for end+1 < len(l.epochs) && l.epochs[end+1] == l.epochs[start] {
			end++
		}
		parts = append(parts, fmt.Sprintf("%d:%d-%d", l.epochs[start], start, end))
		start = end + 1
	}
	return fmt.Sprintf("end=%d hw=%d [%s]", l.end(), l.hw, strings.Join(parts, " "))
}

func runDivergence(t *testing.T, logs map[string]*modelLog, c *scripttest.Case) []string {
	fields := strings.Fields(c.Command)
	a := scripttest.ParseArgs(fields[1:])
	switch fields[0] {
	case "log":
		l := &modelLog{}
		for _, in := range c.Input {
			var e, from, to int
			if _, err := fmt.Sscanf(in, "%d: %d-%d", &e, &from, &to); err != nil || from != len(l.epochs) || to < from {
				t.Fatalf("line %d: record range %q must be 'E: A-B' continuing at %d", c.Line, in, len(l.epochs))
			}
			for range to - from + 1 {
				l.epochs = append(l.epochs, int32(e))
			}
		}
		if _, ok := a.Opts["hw"]; ok {
			l.hw = parseInt(t, c, a, "hw")
		}
		logs[a.Pos[0]] = l
		return []string{l.String()}
	case "reconcile":
		f, l := logs[a.Opts["follower"]], logs[a.Opts["leader"]]
		if f == nil || l == nil {
			t.Fatalf("line %d: unknown log", c.Line)
		}
		var out []string
		for round := 1; ; round++ {
			if round > 10 {
				t.Fatalf("line %d: no agreement after 10 rounds", c.Line)
			}
			fetch, last := f.end(), f.lastEpoch()
			div, ok := DivergingEpoch(l.endOffsetForEpoch, fetch, last)
			if ok {
				out = append(out, fmt.Sprintf("fetch offset=%d epoch=%d: ok", fetch, last))
				break
			}
			to, done := TruncationOffset(f.endOffsetForEpoch, f.end(), f.hw, div)
			out = append(out, fmt.Sprintf("fetch offset=%d epoch=%d: diverging epoch=%d end=%d -> truncate to %d done=%v",
				fetch, last, div.Epoch, div.EndOffset, to, done))
			f.epochs = f.epochs[:to]
			f.hw = min(f.hw, to)
		}
		// Copy what the leader has past the follower's end.
		for off := f.end(); off < l.end(); off++ {
			f.epochs = append(f.epochs, l.epochs[off])
		}
		f.hw = l.hw
		agree := slices.Equal(f.epochs, l.epochs)
		return append(out, "follower "+f.String(), fmt.Sprintf("logs agree: %v", agree))
	}
	t.Fatalf("line %d: unknown command %q", c.Line, fields[0])
	return nil
}
