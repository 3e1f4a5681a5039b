package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/task"
)

// Why the commands watch the cluster themselves: franz-go bounds a record's
// delivery (RecordDeliveryTimeout) only when it gets to look at the record's
// batch, which it does not while the partition's broker is gone and no
// metadata names a new one. Records then stay buffered without end, and
// Produce blocks once the buffer is full; a consumer with --follow keeps
// retrying a dead broker just as quietly. So every loop that waits on the
// cluster for longer than one request runs a watch beside it: a stallWatch
// over a progress counter, checked a few times per --timeout, that stops the
// loop with errStalled.

// errStalled is the cancel cause of a run whose cluster stopped answering.
var errStalled = errors.New("the cluster stopped answering")

// stallWatch is the pure half of a watch: it is told, at each check,
// whether work is pending and how much progress has been made in all, and
// reports a stall once work has been pending for timeout with no progress.
// Time between checks with nothing pending does not count.
type stallWatch struct {
	timeout  time.Duration
	pending  bool
	progress int64
	since    time.Time // when progress last moved, or work became pending
}

func (w *stallWatch) observe(now time.Time, pending bool, progress int64) bool {
	if !pending || !w.pending || progress != w.progress {
		w.pending, w.progress, w.since = pending, progress, now
		return false
	}
	return now.Sub(w.since) >= w.timeout
}

// watchInterval is how often a watch checks: ten times per timeout, at
// most four times a second and at least every 10ms.
func watchInterval(timeout time.Duration) time.Duration {
	return min(max(timeout/10, 10*time.Millisecond), 250*time.Millisecond)
}

// ackCounter counts records handed to the client and records answered
// (acknowledged or failed). The reading loop and the promise goroutine
// update it; the watch reads it.
type ackCounter struct {
	sent, answered atomic.Int64
}

// watchAcks calls stalled (perhaps more than once) when records have been
// in flight for timeout without a single answer.
func watchAcks(g *task.Group, clk clock.Clock, timeout time.Duration, acks *ackCounter, stalled func()) {
	w := stallWatch{timeout: timeout}
	g.Every(watchInterval(timeout), func(context.Context) {
		answered := acks.answered.Load() // before sent: sent >= answered
		if w.observe(clk.Now(), acks.sent.Load() > answered, answered) {
			stalled()
		}
	})
}

// watchContact calls lost (perhaps more than once) when no broker has
// answered for timeout. A consumer that follows a quiet topic hears from the
// cluster only as often as its fetches time out, so the watch asks a broker
// for its API versions, a request every broker answers at once, whenever
// timeout/3 passed without an answer.
func watchContact(g *task.Group, clk clock.Clock, timeout time.Duration, cl *kgo.Client, lost func()) {
	var answers int64
	w := stallWatch{timeout: timeout}
	last := clk.Now()
	g.Every(watchInterval(timeout), func(ctx context.Context) {
		now := clk.Now()
		if now.Sub(last) >= timeout/3 {
			pingCtx, cancel := context.WithTimeout(ctx, timeout/3)
			_, err := kmsg.NewPtrApiVersionsRequest().RequestWith(pingCtx, cl)
			cancel()
			if err == nil {
				answers++
				last = clk.Now()
			}
		}
		if w.observe(clk.Now(), true, answers) {
			lost()
		}
	})
}

// brokerTrouble remembers the last transport failure the client met, so a
// command that gives up can say why: "cannot connect to 127.0.0.1:9092:
// connection refused" rather than only that it waited. It is a kgo hook.
type brokerTrouble struct {
	mu   sync.Mutex
	last string
}

func (b *brokerTrouble) note(s string) {
	b.mu.Lock()
	b.last = s
	b.mu.Unlock()
}

// String is the last failure, or "" when there was none.
func (b *brokerTrouble) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}

func (b *brokerTrouble) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil && !closing(err) {
		b.note(fmt.Sprintf("cannot connect to %s: %s", brokerAddr(meta), dialReason(err)))
	}
}

func (b *brokerTrouble) OnBrokerWrite(meta kgo.BrokerMetadata, _ int16, _ int, _, _ time.Duration, err error) {
	if err != nil && !closing(err) {
		b.note(fmt.Sprintf("write to %s: %v", brokerAddr(meta), err))
	}
}

func (b *brokerTrouble) OnBrokerRead(meta kgo.BrokerMetadata, _ int16, _ int, _, _ time.Duration, err error) {
	if err != nil && !closing(err) {
		b.note(fmt.Sprintf("read from %s: %v", brokerAddr(meta), err))
	}
}

// closing reports errors that only say the client is shutting down.
func closing(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, kgo.ErrClientClosed)
}

func brokerAddr(meta kgo.BrokerMetadata) string {
	return net.JoinHostPort(meta.Host, fmt.Sprint(meta.Port))
}

// dialReason keeps the operating system's words of a dial failure
// ("connection refused") without Go's "dial tcp 127.0.0.1:9092:" prefix,
// which repeats the address.
func dialReason(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return strings.TrimPrefix(op.Err.Error(), "connect: ")
	}
	return err.Error()
}

// lastTrouble renders the last failure as the end of a sentence.
func lastTrouble(b *brokerTrouble) string {
	if b == nil || b.String() == "" {
		return ""
	}
	return "; last error: " + b.String()
}
