package replication

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/scripttest"
	"github.com/samsa-io/samsa/internal/storage"
)

// TestPartitionScripts drives a partition's replicas, each a Partition on
// a real log, from testdata/partition_*.txt (testCluster). Commands:
//
//	cluster replicas=1,2,3 [durable]   the replicas, with no role yet
//	elect leader=L isr=1,2 [to=1,2]    the controller elects L in a new
//	    leader epoch; the state reaches the replicas in to (default all)
//	deliver [to=1]                     the controller's state reaches them
//	produce r=R n=N [records=K]        N batches of K records (default 1)
//	    on R (acks=1)
//	delete r=R offset=N                DeleteRecords on R up to N
//	acks r=R offset=N min=M            where an acks=all wait for offset N
//	    with min.insync.replicas M stands now: committed, waiting or the
//	    Kafka error it ends with
//	fetch r=R [max=B]                  one fetch of follower R from its
//	    leader, with maxBytes B, and what R does with the answer
//	catchup r=R                        fetch until a round changes nothing
//	restart r=R [lose-epochs]          R's log closed and opened again,
//	    with its leader-epoch checkpoint deleted in between if asked
//	tick D                             move the clock by D, tick the leaders
//	commit                             the controller answers the ISR
//	    proposals made so far: commits a current one, refuses a stale one
//	refuse                             the controller refuses them all
//	state                              every replica's role and offsets
//	logs                               every log's batches by epoch, and
//	    whether the logs are identical, byte for byte
//	batches                            every log's batches, one by one, as
//	    first-last offsets and leader epoch
//
// Proposals print as they are made.
func TestPartitionScripts(t *testing.T) {
	scripttest.Run(t, filepath.Join("testdata", "partition_*.txt"), func(t *testing.T) func(c *scripttest.Case) []string {
		h := &partitionHarness{t: t}
		return h.run
	})
}

type partitionHarness struct {
	t       *testing.T
	c       *testCluster
	pending []proposal // made and not answered yet
}

func (h *partitionHarness) run(sc *scripttest.Case) []string {
	fields := strings.Fields(sc.Command)
	a := scripttest.ParseArgs(fields[1:])
	if fields[0] == "cluster" {
		h.c = newTestCluster(h.t, parseIDs(h.t, sc, a.Opts["replicas"]), slices.Contains(a.Pos, "durable"))
		return h.c.describeAll()
	}
	if h.c == nil {
		h.t.Fatalf("line %d: no cluster yet", sc.Line)
	}
	out := h.command(sc, fields[0], a)
	return append(out, h.takeProposals()...)
}

func (h *partitionHarness) command(sc *scripttest.Case, cmd string, a scripttest.Args) []string {
	c := h.c
	switch cmd {
	case "elect":
		tr := c.elect(int32(parseInt(h.t, sc, a, "leader")), parseIDs(h.t, sc, a.Opts["isr"]), h.to(sc, a)...)
		return append([]string{fmt.Sprintf("epoch=%d pepoch=%d", c.ctl.LeaderEpoch, c.ctl.PartitionEpoch)}, formatTransitions(tr)...)
	case "deliver":
		return formatTransitions(c.deliver(h.to(sc, a)...))
	case "produce":
		k := int64(1)
		if _, ok := a.Opts["records"]; ok {
			k = parseInt(h.t, sc, a, "records")
		}
		first, last, err := c.produceBatches(int32(parseInt(h.t, sc, a, "r")), int(parseInt(h.t, sc, a, "n")), int(k))
		if err != nil {
			return []string{"error: " + kafkaError(err)}
		}
		return []string{fmt.Sprintf("offsets %d-%d", first, last)}
	case "delete":
		start, err := c.parts[int32(parseInt(h.t, sc, a, "r"))].DeleteRecords(parseInt(h.t, sc, a, "offset"))
		if err != nil {
			return []string{"error: " + kafkaError(err)}
		}
		return []string{fmt.Sprintf("log start %d", start)}
	case "acks":
		return []string{h.acks(sc, a)}
	case "fetch":
		maxBytes := int32(1 << 20)
		if _, ok := a.Opts["max"]; ok {
			maxBytes = int32(parseInt(h.t, sc, a, "max"))
		}
		desc, _, err := c.fetchOnce(int32(parseInt(h.t, sc, a, "r")), maxBytes)
		if err != nil {
			desc += ": error: " + kafkaError(err)
		}
		return []string{desc}
	case "catchup":
		return c.catchUp(int32(parseInt(h.t, sc, a, "r")))
	case "restart":
		id := int32(parseInt(h.t, sc, a, "r"))
		tr := h.c.restart(id, slices.Contains(a.Pos, "lose-epochs"))
		return []string{fmt.Sprintf("%d: %s", id, tr), c.describe(id)}
	case "tick":
		c.now = c.now.Add(h.dur(sc, a.Pos[0]))
		for _, id := range c.ids {
			c.parts[id].Tick(c.now)
		}
		return nil
	case "commit":
		return h.commit()
	case "refuse":
		for _, pr := range h.pending {
			h.c.parts[pr.from].AlterPartitionFailed(pr.leaderEpoch, pr.partitionEpoch, pr.isr)
		}
		h.pending = nil
		return nil
	case "state":
		return c.describeAll()
	case "logs":
		return h.logs()
	case "batches":
		return h.batches()
	}
	h.t.Fatalf("line %d: unknown command %q", sc.Line, cmd)
	return nil
}

func (h *partitionHarness) to(sc *scripttest.Case, a scripttest.Args) []int32 {
	if v, ok := a.Opts["to"]; ok {
		return parseIDs(h.t, sc, v)
	}
	return nil
}

func (h *partitionHarness) dur(sc *scripttest.Case, v string) time.Duration {
	d, err := time.ParseDuration(v)
	if err != nil {
		h.t.Fatalf("line %d: %v", sc.Line, err)
	}
	return d
}

// acks polls an acks=all wait: WaitCommitted with a context already done
// returns what the wait would end with now, or the context's error while
// it would still wait.
func (h *partitionHarness) acks(sc *scripttest.Case, a scripttest.Args) string {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := h.c.parts[int32(parseInt(h.t, sc, a, "r"))]
	err := p.WaitCommitted(ctx, parseInt(h.t, sc, a, "offset"), int(parseInt(h.t, sc, a, "min")))
	switch {
	case err == nil:
		return "committed"
	case errors.Is(err, context.Canceled):
		return "waiting"
	}
	return kafkaError(err)
}

func (h *partitionHarness) takeProposals() []string {
	var out []string
	for _, pr := range h.c.takeProposals() {
		h.pending = append(h.pending, pr)
		out = append(out, fmt.Sprintf("%d proposes isr=%v at epoch=%d pepoch=%d", pr.from, pr.isr, pr.leaderEpoch, pr.partitionEpoch))
	}
	return out
}

func (h *partitionHarness) commit() []string {
	var out []string
	for _, pr := range h.pending {
		if h.c.commit(pr) {
			out = append(out, fmt.Sprintf("committed isr=%v pepoch=%d", pr.isr, h.c.ctl.PartitionEpoch))
		} else {
			out = append(out, fmt.Sprintf("refused isr=%v: stale epochs", pr.isr))
		}
	}
	h.pending = nil
	return out
}

// logs prints each log as epoch ranges ("E:A-B", from its batches'
// leader epochs) and which logs are identical to the first.
func (h *partitionHarness) logs() []string {
	c := h.c
	var out, same []string
	for _, id := range c.ids {
		out = append(out, fmt.Sprintf("%d: %s", id, epochRanges(logBatches(h.t, c.logs[id]))))
		if c.sameLogs(c.ids[0], id) == "" {
			same = append(same, strconv.Itoa(int(id)))
		}
	}
	return append(out, "identical: "+strings.Join(same, "="))
}

// batches prints each log's batches as "first-last@epoch", in offset
// order, with the log start where it lies inside the first.
func (h *partitionHarness) batches() []string {
	var out []string
	for _, id := range h.c.ids {
		batches := logBatches(h.t, h.c.logs[id])
		var parts []string
		for _, off := range slices.Sorted(maps.Keys(batches)) {
			b, err := record.ParseHeader(batches[off])
			if err != nil {
				h.t.Fatal(err)
			}
			parts = append(parts, fmt.Sprintf("%d-%d@%d", b.BaseOffset, b.LastOffset(), b.PartitionLeaderEpoch))
		}
		out = append(out, fmt.Sprintf("%d: start=%d [%s]", id, h.c.logs[id].LogStartOffset(), strings.Join(parts, " ")))
	}
	return out
}

func epochRanges(batches map[int64][]byte) string {
	offsets := slices.Sorted(maps.Keys(batches))
	var parts []string
	start, epoch, last := int64(-1), int32(-1), int64(-1)
	flush := func() {
		if start >= 0 {
			parts = append(parts, fmt.Sprintf("%d:%d-%d", epoch, start, last))
		}
	}
	for _, off := range offsets {
		h, err := record.ParseHeader(batches[off])
		if err != nil {
			return err.Error()
		}
		if h.PartitionLeaderEpoch != epoch || h.BaseOffset != last+1 {
			flush()
			start, epoch = h.BaseOffset, h.PartitionLeaderEpoch
		}
		last = h.LastOffset()
	}
	flush()
	return "[" + strings.Join(parts, " ") + "]"
}

func (c *testCluster) describeAll() []string {
	var out []string
	for _, id := range c.ids {
		out = append(out, c.describe(id))
	}
	return out
}

func formatTransitions(tr map[int32]Transition) []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(tr)) {
		out = append(out, fmt.Sprintf("%d: %s", id, tr[id]))
	}
	return out
}

// kafkaError names an error by the Kafka error code the broker answers
// with, so the scripts do not depend on messages.
func kafkaError(err error) string {
	for _, e := range []struct {
		err  error
		name string
	}{
		{ErrNotLeader, "NOT_LEADER_OR_FOLLOWER"},
		{ErrNotReplica, "NOT_LEADER_OR_FOLLOWER (not a replica)"},
		{ErrNotFollower, "not a follower"},
		{ErrFencedLeaderEpoch, "FENCED_LEADER_EPOCH"},
		{ErrUnknownLeaderEpoch, "UNKNOWN_LEADER_EPOCH"},
		{ErrNotEnoughReplicasAfterAppend, "NOT_ENOUGH_REPLICAS_AFTER_APPEND"},
		{storage.ErrOffsetOutOfRange, "OFFSET_OUT_OF_RANGE"},
	} {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	return err.Error()
}
