package quota

// bucket is a token bucket as Kafka's TokenBucket: tokens come back at the
// quota's rate per second up to a burst of quota × Samples × Window, and
// a record takes its tokens even when that leaves the bucket below zero;
// the debt is paid back before the next admission. It starts full.
type bucket struct {
	tokens  float64
	last    int64 // ms of the last refill
	started bool
}

func burst(c Config, quota float64) float64 {
	return float64(c.Samples) * c.Window.Seconds() * quota
}

// refill brings the tokens up to now.
func (b *bucket) refill(c Config, quota float64, now int64) {
	top := burst(c, quota)
	if !b.started {
		b.tokens, b.last, b.started = top, now, true
		return
	}
	if now > b.last {
		b.tokens = min(top, b.tokens+quota*float64(now-b.last)/1000)
		b.last = now
	}
	b.tokens = min(top, b.tokens)
}

// take removes n tokens at now.
func (b *bucket) take(c Config, quota, n float64, now int64) {
	b.refill(c, quota, now)
	b.tokens = min(burst(c, quota), b.tokens-n)
}

// debtMs is how long the bucket needs to come back to zero at the quota's
// rate, 0 when it is not below zero.
func (b *bucket) debtMs(c Config, quota float64, now int64) float64 {
	b.refill(c, quota, now)
	if b.tokens >= 0 {
		return 0
	}
	return -b.tokens / quota * 1000
}
