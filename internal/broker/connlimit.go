package broker

import (
	"context"
	"math"
	"strings"
	"sync"

	"github.com/samsa-io/samsa/internal/config"
)

// connLimits caps the connections the broker holds open, as Kafka's
// ConnectionQuotas do: max.connections across every listener and
// listener.name.<listener>.max.connections for one. A listener's acceptor
// takes a slot for each connection it accepts; at either limit it waits,
// holding that connection unread, until a connection closes (or the limits
// rise), and meanwhile new connections wait in the listen backlog
// (socket.listen.backlog.size), as they do in Kafka. Kafka exempts the inter-broker listener from the broker-wide limit;
// a single node has no inter-broker traffic, so no listener is exempt here.
type connLimits struct {
	mu struct {
		sync.Mutex
		open        map[string]int // by listener
		total       int
		max         int            // broker-wide
		maxListener map[string]int // absent: no limit of its own
		// freed is closed and replaced whenever a slot may have freed: a
		// connection closed or the limits changed.
		freed chan struct{}
	}
}

func newConnLimits() *connLimits {
	l := &connLimits{}
	l.mu.open = map[string]int{}
	l.mu.max = math.MaxInt32
	l.mu.freed = make(chan struct{})
	return l
}

// acquire waits for a slot on listener; false when ctx ends first.
func (l *connLimits) acquire(ctx context.Context, listener string) bool {
	for {
		l.mu.Lock()
		if l.fitsLocked(listener) {
			l.mu.open[listener]++
			l.mu.total++
			l.mu.Unlock()
			return true
		}
		freed := l.mu.freed
		l.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return false
		}
	}
}

func (l *connLimits) fitsLocked(listener string) bool {
	if l.mu.total >= l.mu.max {
		return false
	}
	max, ok := l.mu.maxListener[listener]
	return !ok || l.mu.open[listener] < max
}

// release frees a slot taken by acquire.
func (l *connLimits) release(listener string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.open[listener]--
	l.mu.total--
	l.wakeLocked()
}

func (l *connLimits) wakeLocked() {
	close(l.mu.freed)
	l.mu.freed = make(chan struct{})
}

// set applies the limits of a broker config (dynamic updates included) to
// the listeners; connections already open stay open, as in Kafka.
func (l *connLimits) set(v config.Values, listeners []Listener) {
	perListener := map[string]int{}
	for _, ln := range listeners {
		name := "listener.name." + strings.ToLower(ln.Name) + ".max.connections"
		if v.IsSet(name) {
			perListener[ln.Name] = int(v.Int(name))
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.max = int(v.Int("max.connections"))
	l.mu.maxListener = perListener
	l.wakeLocked()
}
