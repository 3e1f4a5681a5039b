package balance

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/samsa-io/samsa/internal/model"
)

// Summary renders a plan for people, as `samsa cluster rebalance
// --dry-run` prints it: each broker's load before and after, the moves
// with their reasons, and the notes.
func Summary(p Plan) string {
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BROKER\tRACK\tSTATE\tREPLICAS\tLEADERS\tBYTES")
	after := map[model.NodeID]BrokerLoad{}
	for _, b := range p.After {
		after[b.Broker] = b
	}
	for _, b := range p.Before {
		a := after[b.Broker]
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", b.Broker, rackName(b.Rack), b.State,
			change(fmt.Sprint(b.Replicas), fmt.Sprint(a.Replicas)),
			change(fmt.Sprint(b.Leaders), fmt.Sprint(a.Leaders)),
			change(bytesText(b.Bytes), bytesText(a.Bytes)))
	}
	tw.Flush()
	if len(p.Moves) == 0 {
		sb.WriteString("\nno moves\n")
	} else {
		fmt.Fprintf(&sb, "\n%d moves:\n", len(p.Moves))
	}
	for _, m := range p.Moves {
		fmt.Fprintf(&sb, "  %s\n", m)
	}
	if len(p.Notes) > 0 {
		sb.WriteString("\nnot done:\n")
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&sb, "  %s\n", n)
	}
	return sb.String()
}

func change(before, after string) string {
	if before == after {
		return before
	}
	return before + " -> " + after
}

// bytesText writes a size in binary units, to one decimal.
func bytesText(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), -1
	for ; (v >= unit || v <= -unit) && i < 5; i++ {
		v /= unit
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[i])
}
