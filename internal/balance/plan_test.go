package balance

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/scripttest"
)

// TestScripts runs the named scenarios of testdata/*.txt. Commands:
//
//	plan [options]      plan once over the cluster given as input; prints Summary
//	converge [options]  plan and apply until a plan has no moves; prints the
//	                    rounds, every move and the final loads
//
// Options are those of parseOptions, from DefaultOptions.
func TestScripts(t *testing.T) {
	scripttest.Run(t, "testdata/*.txt", func(t *testing.T) func(c *scripttest.Case) []string {
		return func(c *scripttest.Case) []string {
			f := strings.Fields(c.Command)
			opts, err := parseOptions(scripttest.ParseArgs(f[1:]))
			if err != nil {
				return []string{"error: " + err.Error()}
			}
			st, err := parseState(c.Input)
			if err != nil {
				return []string{"error: " + err.Error()}
			}
			switch f[0] {
			case "plan":
				return lines(Summary(Propose(st, opts)))
			case "converge":
				return converge(st, opts)
			}
			return []string{"unknown command " + f[0]}
		}
	})
}

func converge(st ClusterState, opts Options) []string {
	var out []string
	for round := 1; round <= 100; round++ {
		plan := Propose(st, opts)
		if len(plan.Moves) == 0 && len(opts.InProgress) == 0 {
			out = append(out, fmt.Sprintf("converged after %d rounds", round-1))
			return append(out, lines(Summary(plan))...)
		}
		out = append(out, fmt.Sprintf("round %d:", round))
		for _, m := range plan.Moves {
			out = append(out, fmt.Sprintf("  %s %s %v -> %v", m.TopicPartition, m.Kind, m.From, m.To))
		}
		st = applyPlan(st, plan)
		opts.InProgress = nil // the reassignments in progress finished too
	}
	return append(out, "did not converge in 100 rounds")
}

// lines splits text for a script's output, which ends at a blank line.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func TestMoveLogValue(t *testing.T) {
	var buf strings.Builder
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	m := Move{Kind: MoveReplicas, TopicPartition: model.TopicPartition{Topic: "t", Partition: 2},
		From: []model.NodeID{3, 1}, To: []model.NodeID{4, 1}, Leader: 4, Reason: "broker 3 is draining"}
	log.Info("balancer move", "move", m)
	want := `level=INFO msg="balancer move" move.partition=t-2 move.kind=replicas move.from="[3 1]" move.to="[4 1]" move.reason="broker 3 is draining"` + "\n"
	if buf.String() != want {
		t.Errorf("got  %s\nwant %s", buf.String(), want)
	}
}
