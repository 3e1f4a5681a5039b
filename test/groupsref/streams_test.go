package groupsref

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/task"
)

// TestStreamsWordCountKill: a Kafka Streams word count (java/WordCount.java)
// on the streams rebalance protocol under exactly_once_v2, three instances
// (one JVM and one stream thread each) on an input of four partitions; one
// instance is killed (SIGKILL) mid-stream and started again on its state
// directory. Every word's committed counts must be exactly 1, 2, ... n,
// with n its occurrences in the input, and StreamsGroupDescribe must show
// the broker's assignment: three members, one per instance, whose active
// tasks cover every partition of every subtopology exactly once.
func TestStreamsWordCountKill(t *testing.T) {
	onBrokers(t, streamsProps, func(t *testing.T, b *target) {
		const app, input, output = "wordcount", "words-in", "words-out"
		b.requireFeature(t, "streams.version")
		b.createTopic(t, input, 4)
		b.createTopic(t, output, 4)
		// A dead member's tasks move once its session expires: 6 s, not
		// 45 s, keeps the run short.
		b.setGroupConfigs(t, app, map[string]string{"streams.session.timeout.ms": "6000", "streams.heartbeat.interval.ms": "1000"})

		counts := readCounts(t, b, output)
		dirs := make([]string, 3)
		instances := make([]*jvm, 3)
		start := func(i int) {
			instances[i] = startJVM(t, fmt.Sprintf("instance-%d", i), "WordCount",
				b.bootstrap, app, input, output, dirs[i], "1")
		}
		for i := range instances {
			dirs[i] = filepath.Join(t.TempDir(), "state")
			start(i)
		}
		for _, in := range instances {
			awaitRunning(t, in)
		}
		t.Logf("%s: assignment with three instances: %s", b.name, awaitAssignment(t, b, app, 3))

		rng := rand.New(rand.NewPCG(21, 1071))
		expected := map[string]int{}
		b.produceLines(t, input, lines(rng, 0, 400, expected))
		counts.awaitSome(t)
		instances[1].kill()
		t.Logf("%s: instance-1 killed after %d of the first phase's %d counts were read", b.name, 1+len(counts.updates), total(expected))
		b.produceLines(t, input, lines(rng, 400, 400, expected))
		start(1)
		b.produceLines(t, input, lines(rng, 800, 400, expected))
		awaitRunning(t, instances[1])

		counts.awaitFinal(t, expected, 3*time.Minute)
		t.Logf("%s: %d words counted exactly to their totals (%d counts)", b.name, len(expected), total(expected))
		t.Logf("%s: assignment after the restart: %s", b.name, awaitAssignment(t, b, app, 3))
	})
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// vocabulary is the words the input lines are made of.
var vocabulary = strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima")

// lines makes n lines of one to five words, keyed line-<from+i>, adding
// each word's occurrences to expected.
func lines(rng *rand.Rand, from, n int, expected map[string]int) []*kgo.Record {
	recs := make([]*kgo.Record, n)
	for i := range recs {
		words := make([]string, 1+rng.IntN(5))
		for j := range words {
			words[j] = vocabulary[rng.IntN(len(vocabulary))]
			expected[words[j]]++
		}
		recs[i] = &kgo.Record{Key: fmt.Appendf(nil, "line-%d", from+i), Value: []byte(strings.Join(words, " "))}
	}
	return recs
}

func (b *target) produceLines(t *testing.T, topic string, recs []*kgo.Record) {
	t.Helper()
	for _, r := range recs {
		r.Topic = topic
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := b.client(t).ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("%s: produce to %s: %v", b.name, topic, err)
	}
}

// awaitRunning waits until a word count instance reports RUNNING.
func awaitRunning(t *testing.T, in *jvm) {
	t.Helper()
	in.await(t, 2*time.Minute, "RUNNING", func(ev event) bool { return ev.Ev == "state" && ev.State == "RUNNING" })
}

// countLog is every committed count of the output, per word, in order,
// read as it comes by a read_committed consumer.
type countLog struct {
	updates chan [2]string // word, count
	byWord  map[string][]int64
}

func readCounts(t *testing.T, b *target, topic string) *countLog {
	t.Helper()
	cl := b.client(t, kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	c := &countLog{updates: make(chan [2]string, 1<<16), byWord: map[string][]int64{}}
	g := task.NewGroup(t.Context())
	t.Cleanup(g.Stop)
	g.Go(func(ctx context.Context) {
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(func(r *kgo.Record) {
				select {
				case c.updates <- [2]string{string(r.Key), string(r.Value)}:
				case <-ctx.Done():
				}
			})
		}
	})
	return c
}

// take records one update; a value that is not a Long fails the test.
func (c *countLog) take(t *testing.T, u [2]string) {
	t.Helper()
	if len(u[1]) != 8 {
		t.Fatalf("count of %q is %d bytes, want a Long's 8", u[0], len(u[1]))
	}
	c.byWord[u[0]] = append(c.byWord[u[0]], int64(binary.BigEndian.Uint64([]byte(u[1]))))
}

// overcounted names a word with more counts than it occurs in the input
// so far (a repeat under a broken exactly-once), "" when none.
func (c *countLog) overcounted(expected map[string]int) string {
	for w, got := range c.byWord {
		if len(got) > expected[w] {
			return fmt.Sprintf("%s has %d counts, it occurs %d times: %v", w, len(got), expected[w], abbreviate(got))
		}
	}
	return ""
}

// awaitSome waits for the first committed count: processing is under way.
func (c *countLog) awaitSome(t *testing.T) {
	t.Helper()
	select {
	case u := <-c.updates:
		c.take(t, u)
	case <-time.After(2 * time.Minute):
		t.Fatal("no committed count within 2 minutes")
	}
}

// awaitFinal waits until every word's last count is its expected total,
// then checks each word's counts are exactly 1, 2, ... total: under
// exactly-once no update is lost or repeated across the kill.
func (c *countLog) awaitFinal(t *testing.T, expected map[string]int, limit time.Duration) {
	t.Helper()
	done := func() bool {
		for w, n := range expected {
			got := c.byWord[w]
			if len(got) == 0 || got[len(got)-1] != int64(n) {
				return false
			}
		}
		return true
	}
	deadline := time.After(limit)
	for !done() {
		select {
		case u := <-c.updates:
			c.take(t, u)
			if o := c.overcounted(expected); o != "" {
				t.Fatalf("a count was repeated: %s", o)
			}
		case <-deadline:
			t.Fatalf("final counts not reached within %v:\n%s", limit, c.diff(expected))
		}
	}
	// Anything after the final counts would be a repeat.
	for {
		select {
		case u := <-c.updates:
			c.take(t, u)
			continue
		case <-time.After(2 * time.Second):
		}
		break
	}
	if d := c.diff(expected); d != "" {
		t.Fatalf("the committed counts are not exactly 1..n per word:\n%s", d)
	}
}

// diff lists the words whose counts are not exactly 1..expected.
func (c *countLog) diff(expected map[string]int) string {
	var words []string
	for w := range expected {
		words = append(words, w)
	}
	for w := range c.byWord {
		if _, ok := expected[w]; !ok {
			words = append(words, w)
		}
	}
	sort.Strings(words)
	var b strings.Builder
	for _, w := range words {
		got, n := c.byWord[w], expected[w]
		ok := len(got) == n
		for i := 0; ok && i < n; i++ {
			ok = got[i] == int64(i+1)
		}
		if !ok {
			fmt.Fprintf(&b, "  %s: want 1..%d, got %d counts %v\n", w, n, len(got), abbreviate(got))
		}
	}
	return b.String()
}

func abbreviate(v []int64) string {
	if len(v) <= 12 {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%v ... %v", v[:6], v[len(v)-6:])
}

// awaitAssignment waits until StreamsGroupDescribe (key 89, sent raw)
// shows the group Stable with members members of distinct processes, each
// with active tasks, which together cover every partition of every
// subtopology exactly once. A subtopology's partitions are its source
// topics' (input and repartition), read from Metadata. It returns the
// assignment, member by member, for the log.
func awaitAssignment(t *testing.T, b *target, group string, members int) string {
	t.Helper()
	cl := b.client(t)
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(90 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		var summary string
		summary, last = checkAssignment(ctx, cl, adm, group, members)
		cancel()
		if last == "" {
			return summary
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("%s: streams group %s: %s", b.name, group, last)
	return ""
}

// checkAssignment is one look: the assignment and "" when it is as wanted,
// else what is not.
func checkAssignment(ctx context.Context, cl *kgo.Client, adm *kadm.Client, group string, wantMembers int) (summary, problem string) {
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{group}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return "", "StreamsGroupDescribe: " + err.Error()
	}
	if len(resp.Groups) != 1 {
		return "", fmt.Sprintf("StreamsGroupDescribe answered %d groups", len(resp.Groups))
	}
	g := resp.Groups[0]
	if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
		return "", fmt.Sprintf("StreamsGroupDescribe: %v (%s)", err, deref(g.ErrorMessage))
	}
	if g.State != "Stable" || len(g.Members) != wantMembers || g.Topology == nil {
		return "", fmt.Sprintf("state %s, %d members, topology known: %v", g.State, len(g.Members), g.Topology != nil)
	}
	// The partitions of each subtopology.
	var topics []string
	for _, s := range g.Topology.Subtopologies {
		topics = append(topics, s.SourceTopics...)
		for _, r := range s.RepartitionSourceTopics {
			topics = append(topics, r.Topic)
		}
	}
	md, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return "", "metadata: " + err.Error()
	}
	want := map[string]int32{}
	for _, s := range g.Topology.Subtopologies {
		for _, topic := range s.SourceTopics {
			want[s.SubtopologyID] = max(want[s.SubtopologyID], int32(len(md[topic].Partitions)))
		}
		for _, r := range s.RepartitionSourceTopics {
			want[s.SubtopologyID] = max(want[s.SubtopologyID], int32(len(md[r.Topic].Partitions)))
		}
	}
	return assignmentProblems(g.Members, want)
}

// assignmentProblems checks the members' active tasks against the
// partitions of each subtopology (want): every task on exactly one
// member, each member with a task, each member of a process of its own.
// It returns the assignment, member by member, and what is wrong ("" when
// nothing is).
func assignmentProblems(ms []kmsg.StreamsGroupDescribeResponseGroupMember, want map[string]int32) (summary, problem string) {
	owner := map[string]string{} // "subtopology_partition" -> member
	processes := map[string]bool{}
	var problems, members []string
	for _, m := range ms {
		processes[m.ProcessID] = true
		var tasks []string
		for _, task := range m.Assignment.ActiveTasks {
			for _, p := range task.Partitions {
				tasks = append(tasks, fmt.Sprintf("%s_%d", task.SubtopologyID, p))
			}
		}
		slices.Sort(tasks)
		members = append(members, fmt.Sprintf("%s %v", m.ClientID, tasks))
		if len(m.Assignment.ActiveTasks) == 0 {
			problems = append(problems, fmt.Sprintf("member %s has no active task", m.MemberID))
		}
		for _, task := range m.Assignment.ActiveTasks {
			if _, ok := want[task.SubtopologyID]; !ok {
				problems = append(problems, fmt.Sprintf("member %s has a task of unknown subtopology %s", m.MemberID, task.SubtopologyID))
			}
			for _, p := range task.Partitions {
				id := fmt.Sprintf("%s_%d", task.SubtopologyID, p)
				if prev, ok := owner[id]; ok {
					problems = append(problems, fmt.Sprintf("task %s is active on %s and %s", id, prev, m.MemberID))
				}
				owner[id] = m.MemberID
			}
		}
	}
	if len(processes) != len(ms) {
		problems = append(problems, fmt.Sprintf("%d processes among %d members", len(processes), len(ms)))
	}
	var total int32
	for s, n := range want {
		total += n
		if n == 0 {
			problems = append(problems, fmt.Sprintf("subtopology %s has no partitions in metadata", s))
		}
		for p := range n {
			if _, ok := owner[fmt.Sprintf("%s_%d", s, p)]; !ok {
				problems = append(problems, fmt.Sprintf("task %s_%d is on no member", s, p))
			}
		}
	}
	if len(owner) != int(total) {
		problems = append(problems, fmt.Sprintf("%d tasks assigned, the topology has %d", len(owner), total))
	}
	slices.Sort(problems)
	slices.Sort(members)
	return strings.Join(members, ", "), strings.Join(slices.Compact(problems), "; ")
}
