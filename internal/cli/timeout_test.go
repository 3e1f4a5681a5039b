package cli

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/samsa-io/samsa/internal/task"
)

// These tests hold every command to its --timeout whatever the broker does:
// a broker killed mid-run (connections reset, nothing listening), a broker
// frozen mid-run (SIGSTOP: the kernel accepts connections, nobody answers)
// and a plain listener that accepts and never answers.

const shortTimeout = 2 * time.Second

// background runs a command while the test goes on; the result arrives on
// the channel.
func background(t *testing.T, c *testCluster, stdin io.Reader, args ...string) <-chan result {
	t.Helper()
	done := make(chan result, 1)
	g := task.NewGroup(context.Background())
	t.Cleanup(g.Stop)
	g.Go(func(context.Context) { done <- c.runReader(stdin, args...) })
	return done
}

// within waits for a background command, failing the test if it takes
// longer than limit.
func within(t *testing.T, done <-chan result, limit time.Duration) result {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(limit):
		t.Fatalf("the command did not finish within %s", limit)
		return result{}
	}
}

// waitForRecords waits until the topic's partitions hold n records in all.
func waitForRecords(t *testing.T, c *testCluster, topic string, n int64) {
	t.Helper()
	adm := kadm.NewClient(c.client())
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		ends, err := adm.ListEndOffsets(t.Context(), topic)
		var sum int64
		ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
		if err == nil && sum == n {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("topic %q holds %d records, want %d (%v)", topic, sum, n, err)
		}
	}
}

func writeLines(t *testing.T, w io.Writer, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if _, err := fmt.Fprintf(w, "line %d\n", i); err != nil {
			t.Fatal(err)
		}
	}
}

var unackedSummary = regexp.MustCompile(`^produced 10 of 15 records read \(\d+ bytes\) to "t" in [0-9.]+m?s: 0 rejected, 5 unacknowledged \(they may or may not have been written\)\n$`)

// TestProduceWhenTheBrokerGoes kills or freezes the broker while produce
// has records buffered and standard input is still open: the command must
// give up within --timeout and say what was acknowledged.
func TestProduceWhenTheBrokerGoes(t *testing.T) {
	for _, how := range []string{"killed", "frozen"} {
		t.Run(how, func(t *testing.T) {
			b := newSamsaBroker(t)
			c := b.withTimeout(shortTimeout)
			c.ok("", "topic", "create", "t", "-p", "2")
			in, out := io.Pipe()
			done := background(t, c, in, "produce", "t")
			t.Cleanup(func() { out.Close() }) // before background's cleanup waits for the command
			writeLines(t, out, 0, 10)
			waitForRecords(t, c, "t", 10)
			if how == "killed" {
				b.kill()
			} else {
				b.freeze()
			}
			writeLines(t, out, 10, 15)
			r := within(t, done, 2*shortTimeout+time.Second)
			if r.err == nil || !strings.HasPrefix(r.err.Error(), `produce to topic "t": no acknowledgement within 2s (--timeout)`) {
				t.Fatalf("error = %v", r.err)
			}
			if !unackedSummary.MatchString(r.stderr) {
				t.Fatalf("summary = %q", r.stderr)
			}
			t.Logf("%s: %v", how, r.err)
		})
	}
}

// TestCommandsAgainstASilentListener runs every command against a listener
// that accepts connections and never answers, all at once.
func TestCommandsAgainstASilentListener(t *testing.T) {
	c := silentListener(t).withTimeout(shortTimeout)
	want := fmt.Sprintf("no answer from %s within 2s (--timeout)", c.addr)
	commands := [][]string{
		{"topic", "list"}, {"topic", "describe", "t"}, {"topic", "create", "t"}, {"topic", "delete", "t"},
		{"topic", "alter-config", "t", "--set", "retention.ms=1"},
		{"group", "list"}, {"group", "describe", "g"}, {"group", "delete", "g"},
		{"group", "reset-offsets", "g", "--topic", "t", "--to-earliest"},
		{"produce", "t"}, {"consume", "t"}, {"consume", "t", "--follow"}, {"consume", "t", "--group", "g"},
		{"bench", "produce"}, {"bench", "consume"}, {"bench", "e2e"}, {"cluster", "info"},
	}
	var running []<-chan result
	for _, args := range commands {
		running = append(running, background(t, c, strings.NewReader("a\n"), args...))
	}
	for i, done := range running {
		r := within(t, done, shortTimeout+2*time.Second)
		if r.err == nil || r.err.Error() != want {
			t.Errorf("samsa %s: %v, want %q", strings.Join(commands[i], " "), r.err, want)
		}
	}
}

// TestAdminWhenTheBrokerGoes runs an admin command against a broker that
// served a moment ago and is now killed or frozen.
func TestAdminWhenTheBrokerGoes(t *testing.T) {
	b := newSamsaBroker(t)
	c := b.withTimeout(shortTimeout)
	c.ok("", "topic", "create", "t", "-p", "1")
	b.freeze()
	r := within(t, background(t, c, strings.NewReader(""), "topic", "describe", "t"), shortTimeout+time.Second)
	if want := fmt.Sprintf("no answer from %s within 2s (--timeout)", c.addr); r.err == nil || r.err.Error() != want {
		t.Errorf("frozen broker: %v, want %q", r.err, want)
	}
	b.kill()
	r = within(t, background(t, c, strings.NewReader(""), "topic", "describe", "t"), shortTimeout+time.Second)
	if want := fmt.Sprintf("cannot connect to %s: ", c.addr); r.err == nil || !strings.HasPrefix(r.err.Error(), want) {
		t.Errorf("killed broker: %v, want %q...", r.err, want)
	}
}

// waitForAtLeast waits until the topic's partitions hold at least n records.
func waitForAtLeast(t *testing.T, c *testCluster, topic string, n int64) {
	t.Helper()
	adm := kadm.NewClient(c.client())
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		ends, err := adm.ListEndOffsets(t.Context(), topic)
		var sum int64
		ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
		if err == nil && sum >= n {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("topic %q holds %d records, want at least %d (%v)", topic, sum, n, err)
		}
	}
}

// TestBenchWhenTheBrokerGoes kills or freezes the broker under a running
// bench produce or e2e.
func TestBenchWhenTheBrokerGoes(t *testing.T) {
	for _, mode := range []string{"produce", "e2e"} {
		for _, how := range []string{"killed", "frozen"} {
			t.Run(mode+"/"+how, func(t *testing.T) {
				b := newSamsaBroker(t)
				c := b.withTimeout(shortTimeout)
				c.ok("", "topic", "create", "b", "-p", "2")
				done := background(t, c, strings.NewReader(""), "bench", mode, "--topic", "b",
					"--records", "100000000", "--rate", "2000", "--record-size", "16")
				waitForAtLeast(t, c, "b", 100)
				if how == "killed" {
					b.kill()
				} else {
					b.freeze()
				}
				r := within(t, done, 2*shortTimeout+time.Second)
				want := regexp.MustCompile(`^(produce to topic "b": no acknowledgement within 2s \(--timeout\) after \d+ acknowledged records|consume from topic "b": \d+ of 100000000 records read, then nothing for 2s \(--timeout\))`)
				if r.err == nil || !want.MatchString(r.err.Error()) {
					t.Fatalf("error = %v", r.err)
				}
			})
		}
	}
}

// TestConsumeFollowWhenTheBrokerGoes kills or freezes the broker under
// consume --follow, alone and in a group.
func TestConsumeFollowWhenTheBrokerGoes(t *testing.T) {
	for _, group := range []string{"", "g"} {
		for _, how := range []string{"killed", "frozen"} {
			t.Run(fmt.Sprintf("group=%q/%s", group, how), func(t *testing.T) {
				b := newSamsaBroker(t)
				c := b.withTimeout(shortTimeout)
				c.ok("", "topic", "create", "t", "-p", "2")
				c.ok("a\nb\nc\n", "produce", "t")
				args := []string{"consume", "t", "--follow"}
				if group != "" {
					args = append(args, "--group", group)
				}
				stdout := &lineWaiter{lines: make(chan string, 10)}
				done := background(t, c.printingTo(stdout), strings.NewReader(""), args...)
				for range 3 {
					select {
					case <-stdout.lines:
					case <-time.After(30 * time.Second): // joining a group takes seconds
						t.Fatal("consume --follow printed fewer than 3 records")
					}
				}
				if how == "killed" {
					b.kill()
				} else {
					b.freeze()
				}
				r := within(t, done, 3*shortTimeout+time.Second)
				if r.err == nil || r.stderr != "consumed 3 records\n" {
					t.Fatalf("consume --follow: %v\nstderr: %s", r.err, r.stderr)
				}
				t.Log(r.err)
			})
		}
	}
}
