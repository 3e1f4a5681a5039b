package quota

import "time"

// Config is how rates are measured: Samples windows (quota.window.num) of
// Window each (quota.window.size.seconds).
type Config struct {
	Samples int
	Window  time.Duration
}

// DefaultConfig is Kafka's: 11 windows of one second.
var DefaultConfig = Config{Samples: 11, Window: time.Second}

func (c Config) windowMs() int64 { return c.Window.Milliseconds() }

// span is how long the measured windows last together: the longest stretch
// a rate is averaged over.
func (c Config) span() time.Duration { return time.Duration(c.Samples) * c.Window }

// sample is the total recorded in one window.
type sample struct {
	start, last int64 // ms: when the window began, its last record
	value       float64
}

// rate measures how fast a recorded value grows, per second, over the
// last Samples windows, with the semantics of Kafka's Rate over a
// SampledStat: a window is closed once Window has passed since it began;
// a window with no record in the last Samples windows is forgotten; and
// the rate is divided by at least Samples-1 whole windows, so a burst
// right after a quiet spell is not read as a huge rate. One slot more
// than Samples is kept for a window that began before the measured span
// but overlaps it.
type rate struct {
	samples []sample
	current int
}

func (r *rate) cur(now int64) *sample {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{start: now, last: now})
	}
	return &r.samples[r.current]
}

// record adds v at time now (ms).
func (r *rate) record(c Config, v float64, now int64) {
	s := r.cur(now)
	if now-s.start >= c.windowMs() {
		s = r.advance(c, now)
	}
	s.value += v
	s.last = now
}

// advance opens the next window at now.
func (r *rate) advance(c Config, now int64) *sample {
	r.current = (r.current + 1) % (c.Samples + 1)
	if r.current >= len(r.samples) {
		r.samples = append(r.samples, sample{start: now, last: now})
	} else {
		r.samples[r.current] = sample{start: now, last: now}
	}
	return &r.samples[r.current]
}

// purge forgets the windows with no record in the measured span, as
// Kafka's purgeObsoleteSamples does: such a window starts over at now.
func (r *rate) purge(c Config, now int64) {
	expire := c.span().Milliseconds()
	for i := range r.samples {
		if now-r.samples[i].last >= expire {
			r.samples[i] = sample{start: now, last: now}
		}
	}
}

// windowMs is the time the rate is divided by at now: from the oldest
// kept window's start, and at least Samples-1 whole windows plus the
// elapsed part of the current one; never under 1 ms.
func (r *rate) windowMs(c Config, now int64) int64 {
	r.purge(c, now)
	oldest := r.cur(now).start
	for _, s := range r.samples {
		oldest = min(oldest, s.start)
	}
	total := now - oldest
	w := c.windowMs()
	if full, least := total/w, int64(c.Samples-1); full < least {
		total += (least - full) * w
	}
	return max(total, 1)
}

// simpleWindowMs is the time Kafka's SimpleRate divides by: from the
// oldest kept window's start, at least one window. The replication
// throttles measure with it (replication.go says why). One departure:
// only windows that hold something count, so the first bytes after a
// quiet spell are measured over one window, not over the quiet windows
// too; in Kafka, whose follower fetches record their zero bytes and so
// keep the windows going, a reassignment on a quiet partition gets the
// whole span's worth (11 s of the throttle) at once.
func (r *rate) simpleWindowMs(c Config, now int64) int64 {
	return max(now-r.oldestValued(c, now), c.windowMs())
}

// oldestValued is the start of the oldest kept window that holds
// something, now when none does.
func (r *rate) oldestValued(c Config, now int64) int64 {
	r.purge(c, now)
	oldest := now
	for _, s := range r.samples {
		if s.value != 0 {
			oldest = min(oldest, s.start)
		}
	}
	return oldest
}

// open is the total recorded in the window open at now, 0 when the last
// window has closed (the next record opens one).
func (r *rate) open(c Config, now int64) float64 {
	if len(r.samples) == 0 {
		return 0
	}
	s := r.samples[r.current]
	if now-s.start >= c.windowMs() {
		return 0
	}
	return s.value
}

// sum is the total recorded in the kept windows at now.
func (r *rate) sum(c Config, now int64) float64 {
	r.purge(c, now)
	sum := 0.0
	for _, s := range r.samples {
		sum += s.value
	}
	return sum
}

// measure is the rate per second at now.
func (r *rate) measure(c Config, now int64) float64 {
	return r.sum(c, now) / (float64(r.windowMs(c, now)) / 1000)
}
