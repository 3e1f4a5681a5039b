package broker

import (
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
}

// HandlerPanics reports how many requests of the API key panicked in their
// handler since the broker started.
func (b *Broker) HandlerPanics(key kmsg.Key) int64 {
	if key < 0 || int(key) >= len(b.counters.handlerPanics) {
		return 0
	}
	return b.counters.handlerPanics[key].Load()
}
