package storage

import (
	"sync"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
)

// throttleCheck is how often a Throttle measures its rate (Kafka's
// Throttler checks every 300 ms).
const throttleCheck = 300 * time.Millisecond

// Throttle paces disk I/O to a rate in bytes per second, Kafka's
// log.cleaner.io.max.bytes.per.second: callers report the bytes they are
// about to read or write and are put to sleep when the rate over the
// current period runs ahead. One Throttle is shared by every cleaning pass.
// A nil *Throttle does not throttle.
type Throttle struct {
	rate  float64 // bytes per second
	clock clock.Clock
	sleep func(time.Duration)

	mu          sync.Mutex
	periodStart time.Time
	bytes       float64
}

// NewThrottle returns a Throttle at bytesPerSecond, or nil (no throttling)
// when it is not positive or is +Inf.
func NewThrottle(bytesPerSecond float64, clk clock.Clock) *Throttle {
	if !(bytesPerSecond > 0) || bytesPerSecond > 1e300 {
		return nil
	}
	if clk == nil {
		clk = clock.Real
	}
	return &Throttle{rate: bytesPerSecond, clock: clk, sleep: time.Sleep, periodStart: clk.Now()}
}

// Wait accounts n bytes and sleeps as long as it takes to bring the
// period's rate down to the limit.
func (t *Throttle) Wait(n int64) {
	if t == nil || n <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.bytes += float64(n)
	elapsed := t.clock.Now().Sub(t.periodStart)
	if elapsed < throttleCheck && t.bytes < t.rate*throttleCheck.Seconds() {
		return
	}
	want := time.Duration(t.bytes / t.rate * float64(time.Second))
	if want > elapsed {
		t.sleep(want - elapsed)
	}
	t.periodStart = t.clock.Now()
	t.bytes = 0
}
