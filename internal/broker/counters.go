package broker

import (
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// counters are the broker's event counts that a metrics exporter reads;
// each is a plain atomic so that counting never takes a lock on the
// request path.
type counters struct {
	// handlerPanics counts, per API key, requests whose handler panicked;
	// each closed its connection and nothing else.
	handlerPanics [kmsg.MaxKey + 1]atomic.Int64
	// fetchesWaiting is the number of fetches long-polling for data right
	// now (Kafka's fetch purgatory size).
	fetchesWaiting gauge
	// authzDenials counts, per API key, the authorization checks denied
	// (authz.go).
	authzDenials [kmsg.MaxKey + 1]atomic.Int64
}

// gauge is a level that can be read, and waited on until it changes: a
// test waits for "a fetch is long-polling" as an event instead of polling.
type gauge struct {
	mu struct {
		sync.Mutex
		v       int64
		changed chan struct{} // closed at the next change; nil until asked for
	}
}

func (g *gauge) add(d int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mu.v += d
	if g.mu.changed != nil {
		close(g.mu.changed)
		g.mu.changed = nil
	}
}

// watch returns the current level and a channel closed when it next
// changes.
func (g *gauge) watch() (int64, <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.changed == nil {
		g.mu.changed = make(chan struct{})
	}
	return g.mu.v, g.mu.changed
}

// FetchesWaiting is the number of fetches long-polling right now.
func (b *Broker) FetchesWaiting() int64 {
	v, _ := b.counters.fetchesWaiting.watch()
	return v
}

// HandlerPanics reports how many requests of the API key panicked in their
// handler since the broker started.
func (b *Broker) HandlerPanics(key kmsg.Key) int64 {
	if key < 0 || int(key) >= len(b.counters.handlerPanics) {
		return 0
	}
	return b.counters.handlerPanics[key].Load()
}
