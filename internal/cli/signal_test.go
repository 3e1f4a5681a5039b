package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/task"
)

// TestProduceFlushesOnSignal interrupts the samsa binary's produce while
// standard input is still open and a line it read waits in a lingering
// batch: the record must still be written and the summary printed.
func TestProduceFlushesOnSignal(t *testing.T) {
	b := newSamsaBroker(t)
	for i, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			topic := fmt.Sprintf("s%d", i)
			b.ok("", "topic", "create", topic, "-p", "1")
			// Two 400-byte lines fill a 1024-byte batch; the third does
			// not fit, so its Produce sends the first batch and its own
			// waits out the minute of linger. Two records in the topic
			// thus mean the third line was read.
			proc := exec.Command(samsaBinary(t), "produce", topic, "--bootstrap-server", b.addr,
				"--partition", "0", "--linger", "1m", "--batch-size", "1024")
			var stderr bytes.Buffer
			proc.Stderr = &stderr
			stdin, err := proc.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := proc.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			g := task.NewGroup(context.Background())
			defer g.Stop()
			g.Go(func(context.Context) { exited <- proc.Wait() })
			defer stdin.Close()
			defer proc.Process.Kill()

			line := strings.Repeat("x", 400) + "\n"
			if _, err := stdin.Write([]byte(line + line + line)); err != nil {
				t.Fatal(err)
			}
			waitForRecords(t, b.testCluster, topic, 2)
			if err := proc.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("produce exited with %v\nstderr: %s", err, stderr.String())
				}
			case <-time.After(15 * time.Second):
				t.Fatalf("produce did not exit after %v\nstderr: %s", sig, stderr.String())
			}
			if want := fmt.Sprintf("produced 3 records (1200 bytes) to %q in ", topic); !strings.HasPrefix(stderr.String(), want) {
				t.Fatalf("stderr = %q, want %q...", stderr.String(), want)
			}
			waitForRecords(t, b.testCluster, topic, 3)
		})
	}
}

// TestLineReaderInterrupt interrupts a reader that has read far more lines
// than its queue holds while its input stays open: every line it read
// still comes out, then errInterrupted.
func TestLineReaderInterrupt(t *testing.T) {
	in, out := io.Pipe()
	defer out.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := readLines(ctx, in)
	var sent strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&sent, "%d\n", i)
	}
	if _, err := out.Write([]byte(sent.String())); err != nil {
		t.Fatal(err)
	}
	// A line out of the queue means the reader has the input in hand (a
	// read that is still returning when the interrupt comes counts as
	// input that arrived after it).
	if l := <-r.lines; string(l.text) != "0" {
		t.Fatalf("first line = %q, %v", l.text, l.err)
	}
	if !r.interrupt() {
		t.Fatal("interrupt: no more lines, with 999 read and not queued")
	}
	for i := 1; ; i++ {
		l := <-r.lines
		if l.err != nil {
			if !errors.Is(l.err, errInterrupted) || i != 1000 {
				t.Fatalf("after %d lines: %v", i, l.err)
			}
			break
		}
		if string(l.text) != strconv.Itoa(i) {
			t.Fatalf("line %d = %q", i, l.text)
		}
	}
	<-r.done
	if r.interrupt() {
		t.Fatal("a reader that ended promises more lines")
	}
	cancel()
	r.stop()
}
