package broker

import (
	"context"
	"math"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/quota"
)

// connRates limits how fast connections are made, as Kafka's
// ConnectionQuotas do (KIP-612): max.connection.creation.rate across the
// broker and listener.name.<listener>.max.connection.creation.rate for
// one, where the acceptor waits out the throttle time before it takes the
// connection (the next ones wait in the listen backlog); and the
// connection_creation_rate quota of an IP (an ip quota entity, or the
// default one), where the connection is closed once the throttle time has
// passed, unread. A connection refused by its IP's quota is taken back
// from the broker's and listener's rates, as in Kafka. The rates are
// measured over quota.window.num windows of quota.window.size.seconds and
// a throttle is at most one window.
type connRates struct {
	cfg quota.Config
	mu  sync.Mutex
	// Limits per second; absent or +Inf: none.
	brokerMax   float64
	listenerMax map[string]float64
	ipMax       map[string]float64 // by IP
	ipDefault   float64            // +Inf: no default
	// Rates, made on first use. An IP's is forgotten after an hour
	// without a connection (as Kafka expires an idle sensor), so the map
	// does not grow with every address that ever connected.
	broker   *quota.Limiter
	listener map[string]*quota.Limiter
	ip       map[string]*ipRate
	sweepAt  time.Time
}

// ipRate is one IP's connection rate and when it last connected.
type ipRate struct {
	l    *quota.Limiter
	used time.Time
}

// idleIPRate is how long an IP's rate is kept without a connection.
const idleIPRate = time.Hour

func newConnRates(v config.Values) *connRates {
	return &connRates{
		cfg:       quota.Config{Samples: int(v.Int("quota.window.num")), Window: time.Duration(v.Int("quota.window.size.seconds")) * time.Second},
		brokerMax: math.Inf(1), ipDefault: math.Inf(1),
		listener: map[string]*quota.Limiter{}, ip: map[string]*ipRate{},
	}
}

// setLimits applies max.connection.creation.rate, broker-wide and per
// listener (dynamic updates included).
func (r *connRates) setLimits(v config.Values, listeners []Listener) {
	limit := func(n int32) float64 {
		if n == math.MaxInt32 {
			return math.Inf(1)
		}
		return float64(n)
	}
	perListener := map[string]float64{}
	for _, ln := range listeners {
		name := "listener.name." + strings.ToLower(ln.Name) + ".max.connection.creation.rate"
		if v.IsSet(name) {
			perListener[ln.Name] = limit(v.Int(name))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.brokerMax, r.listenerMax = limit(v.Int("max.connection.creation.rate")), perListener
}

// setIPQuotas applies the connection_creation_rate quotas of IPs: by IP,
// and the default IP entity's (+Inf: none).
func (r *connRates) setIPQuotas(byIP map[string]float64, def float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ipMax, r.ipDefault = byIP, def
}

func (r *connRates) limiter(m map[string]*quota.Limiter, key string) *quota.Limiter {
	l, ok := m[key]
	if !ok {
		l = quota.NewLimiter(r.cfg)
		m[key] = l
	}
	return l
}

// ipLimiter returns ip's rate, made on first use, and forgets, at most
// once a minute, the rates of IPs idle for idleIPRate.
func (r *connRates) ipLimiter(ip string, now time.Time) *quota.Limiter {
	if !now.Before(r.sweepAt) {
		for k, e := range r.ip {
			if now.Sub(e.used) >= idleIPRate {
				delete(r.ip, k)
			}
		}
		r.sweepAt = now.Add(time.Minute)
	}
	e, ok := r.ip[ip]
	if !ok {
		e = &ipRate{l: quota.NewLimiter(r.cfg)}
		r.ip[ip] = e
	}
	e.used = now
	return e.l
}

// admitListener records a new connection on the listener and the broker
// and returns how long the acceptor must wait before taking it.
func (r *connRates) admitListener(listener string, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var d time.Duration
	if !math.IsInf(r.brokerMax, 1) {
		if r.broker == nil {
			r.broker = quota.NewLimiter(r.cfg)
		}
		d = r.broker.Record(1, r.brokerMax, now)
	}
	if limit, ok := r.listenerMax[listener]; ok && !math.IsInf(limit, 1) {
		d = max(d, r.limiter(r.listener, listener).Record(1, limit, now))
	}
	return d
}

// admitIP records a new connection from ip and returns 0, or how long it
// is held before it is closed when its IP is over its quota; then the
// connection is taken back from every rate.
func (r *connRates) admitIP(listener, ip string, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	limit, ok := r.ipMax[ip]
	if !ok {
		limit = r.ipDefault
	}
	if math.IsInf(limit, 1) {
		return 0
	}
	l := r.ipLimiter(ip, now)
	d := l.Record(1, limit, now)
	if d == 0 {
		return 0
	}
	l.Unrecord(1, now)
	if r.broker != nil {
		r.broker.Unrecord(1, now)
	}
	if lim, ok := r.listener[listener]; ok {
		lim.Unrecord(1, now)
	}
	return d
}

// closeLater closes a connection refused by its IP's quota once d has
// passed, unread, as Kafka's acceptor closes a throttled socket: the
// client sees a connection that never answers, then is closed.
func (b *Broker) closeLater(nc net.Conn, d time.Duration) {
	b.tasks.Go(func(ctx context.Context) {
		b.pause(ctx, d)
		nc.Close()
	})
}
