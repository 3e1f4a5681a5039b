package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"golang.org/x/term"

	"github.com/samsa-io/samsa/internal/model"
)

// Following moves until they are done: every interval, the partitions
// still moving (ListPartitionReassignments) and the bytes their new
// replicas still lack (DescribeLogDirs: a source replica's size less the
// new replica's), as a progress bar on a terminal and as a line per check
// otherwise (a log, a pipe, a test). Interrupting it leaves the moves
// running.

// moveStatus is one check of the moves followed.
type moveStatus struct {
	left      []kadm.ListPartitionReassignmentsResponse
	bytesLeft int64 // -1: unknown (DescribeLogDirs failed)
}

// bytesLeft is what the adding replicas of moving still lack: for each, the
// largest of the partition's other replicas less its own size.
func bytesLeft(ctx context.Context, adm *kadm.Client, moving []kadm.ListPartitionReassignmentsResponse) int64 {
	if len(moving) == 0 {
		return 0
	}
	set := kadm.TopicsSet{}
	for _, m := range moving {
		set.Add(m.Topic, m.Partition)
	}
	dirs, err := adm.DescribeAllLogDirs(ctx, set)
	if err != nil && len(dirs) == 0 {
		return -1
	}
	// A broker that did not answer (stopped, fenced) counts as holding
	// nothing.
	sizes := map[int32]map[model.TopicPartition]int64{}
	dirs.Each(func(d kadm.DescribedLogDir) {
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			if sizes[p.Broker] == nil {
				sizes[p.Broker] = map[model.TopicPartition]int64{}
			}
			sizes[p.Broker][model.TopicPartition{Topic: p.Topic, Partition: p.Partition}] += p.Size
		})
	})
	var left int64
	for _, m := range moving {
		tp := model.TopicPartition{Topic: m.Topic, Partition: m.Partition}
		var source int64
		for _, r := range m.Replicas {
			if !slices.Contains(m.AddingReplicas, r) {
				source = max(source, sizes[r][tp])
			}
		}
		for _, a := range m.AddingReplicas {
			left += max(0, source-sizes[a][tp])
		}
	}
	return left
}

// checkMoves is one check of the targets' moves.
func checkMoves(ctx context.Context, adm *kadm.Client, set kadm.TopicsSet) (moveStatus, error) {
	res, err := adm.ListPartitionReassignments(ctx, set)
	if err != nil {
		return moveStatus{}, err
	}
	st := moveStatus{left: res.Sorted()}
	st.bytesLeft = bytesLeft(ctx, adm, st.left)
	return st, nil
}

// progressPrinter shows the checks: a bar on a terminal, lines otherwise.
type progressPrinter struct {
	out   io.Writer
	total int // partitions followed
	bar   *progressbar.ProgressBar
	// bytesTotal is the most bytes left seen, the bar's 100%.
	bytesTotal int64
}

func newProgressPrinter(out io.Writer, total int) *progressPrinter {
	p := &progressPrinter{out: out, total: total}
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = newMoveBar(out)
	}
	return p
}

// newMoveBar is the bar of bytes copied.
func newMoveBar(out io.Writer) *progressbar.ProgressBar {
	bar := progressbar.NewOptions64(1,
		progressbar.OptionSetWriter(out),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
	)
	bar.StartWithoutRender()
	return bar
}

func (p *progressPrinter) show(st moveStatus) {
	moving := len(st.left)
	if p.bar != nil {
		if st.bytesLeft > p.bytesTotal {
			p.bytesTotal = st.bytesLeft
			p.bar.ChangeMax64(max(p.bytesTotal, 1))
		}
		p.bar.Describe(fmt.Sprintf("%d of %d partition(s) moving", moving, p.total))
		_ = p.bar.Set64(max(p.bytesTotal-max(st.bytesLeft, 0), 0))
		return
	}
	var names []string
	for _, m := range st.left {
		names = append(names, fmt.Sprintf("%s:%d (adding %s)", m.Topic, m.Partition, idList(m.AddingReplicas)))
	}
	left := ""
	if st.bytesLeft >= 0 {
		left = ", " + formatBytes(st.bytesLeft) + " left to copy"
	}
	fmt.Fprintf(p.out, "%d of %d still moving%s: %s\n", moving, p.total, left, strings.Join(names, ", "))
}

func (p *progressPrinter) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// formatBytes is n in B, KiB, MiB or GiB.
func formatBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}

// waitReassignments follows targets' moves every interval until none is
// left, then prints "done".
func waitReassignments(cmd *cobra.Command, conn *connection, adm *kadm.Client, targets []reassignTarget, interval time.Duration) error {
	set := kadm.TopicsSet{}
	for _, t := range targets {
		set.Add(t.topic, t.partition)
	}
	out := cmd.OutOrStdout()
	p := newProgressPrinter(out, len(targets))
	for {
		ctx, cancel := conn.opContext(cmd.Context())
		st, err := checkMoves(ctx, adm, set)
		cancel()
		if err != nil {
			p.finish()
			return conn.reachErr(cmd, err)
		}
		if len(st.left) == 0 {
			p.finish()
			_, err := fmt.Fprintf(out, "done: %d partition(s) moved\n", len(targets))
			return err
		}
		p.show(st)
		select {
		case <-cmd.Context().Done():
			p.finish()
			return cmd.Context().Err()
		case <-time.After(interval):
		}
	}
}
