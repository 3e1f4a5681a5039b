package quota

import (
	"math"
	"sync"
	"time"
)

// Limiter measures one rate against a limit that may change: the
// connection creation rates (KIP-612), of a listener, of the broker, or of
// one IP. It is Kafka's sensor with a quota: a recorded event over the
// limit gets a throttle time by Kafka's estimate, (O - T) / T × W, bounded
// by one window, as Kafka bounds connection throttles.
type Limiter struct {
	cfg Config
	mu  sync.Mutex
	r   rate
}

// NewLimiter returns a limiter measuring over cfg's windows.
func NewLimiter(cfg Config) *Limiter { return &Limiter{cfg: cfg} }

// Record adds v at now and returns how long until the rate is back within
// limit (per second): 0 when it is within.
func (l *Limiter) Record(v, limit float64, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	ms := now.UnixMilli()
	l.r.record(l.cfg, v, ms)
	measured := l.r.measure(l.cfg, ms)
	if measured <= limit {
		return 0
	}
	d := time.Duration(math.Round((measured-limit)/limit*float64(l.r.windowMs(l.cfg, ms)))) * time.Millisecond
	return min(d, l.cfg.Window)
}

// Unrecord takes back v recorded at now: a connection refused for another
// limit was never made.
func (l *Limiter) Unrecord(v float64, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.r.record(l.cfg, -v, now.UnixMilli())
}
