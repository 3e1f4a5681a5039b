package restproxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/httpauth"
	"github.com/samsa-io/samsa/internal/task"
)

// Defaults of the per-principal client pool.
const (
	// DefaultMaxPrincipalClients bounds the Kafka clients kept for REST
	// users when Config.MaxPrincipalClients is zero: each holds
	// connections to the brokers it talks to.
	DefaultMaxPrincipalClients = 100
	// DefaultPrincipalClientIdle is how long an unused principal's client
	// is kept when Config.PrincipalClientIdle is zero.
	DefaultPrincipalClientIdle = 5 * time.Minute
)

// errPoolFull is the answer when every pooled client is busy and the pool
// is at its bound: the request may be tried again (Confluent answers its
// own overload with 429).
var errPoolFull = errors.New("restproxy: every principal client is in use")

// clientPool keeps one Kafka client per REST user that logged in as a
// cluster principal, so each request runs with the user's own SASL
// identity and the cluster's ACLs apply to it. A client is keyed by the
// user and a hash of its password (a changed password makes a new login,
// never a client logged in with the old one), closed after idle unused,
// and at most max are kept.
type clientPool struct {
	opts      []kgo.Opt // seeds, TLS and the proxy's producer options: no SASL
	mechanism string
	max       int
	idle      time.Duration
	clock     clock.Clock

	mu struct {
		sync.Mutex
		clients map[string]*pooledClient // guarded by mu; key: httpauth.CacheKey
		closed  bool
	}
}

// pooledClient is one principal's client and who is using it.
type pooledClient struct {
	kc       *kafkaClient
	inUse    int       // requests running with it; never closed while > 0
	lastUsed time.Time // when the last request using it ended
}

func newClientPool(opts []kgo.Opt, mechanism string, max int, idle time.Duration) *clientPool {
	cp := &clientPool{opts: opts, mechanism: mechanism, max: max, idle: idle, clock: clock.Real}
	cp.mu.clients = map[string]*pooledClient{}
	return cp
}

// get is the client of user, made on first use, and the function that
// hands it back when the request is done.
func (cp *clientPool) get(user, password string) (*kafkaClient, func(), error) {
	key := httpauth.CacheKey(user, password)
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.mu.closed {
		return nil, nil, errors.New("restproxy: closed")
	}
	pc, ok := cp.mu.clients[key]
	if !ok {
		if len(cp.mu.clients) >= cp.max && !cp.evictLocked() {
			return nil, nil, errPoolFull
		}
		mech, err := httpauth.Mechanism(cp.mechanism, user, password)
		if err != nil {
			return nil, nil, err
		}
		opts := append(append([]kgo.Opt(nil), cp.opts...), kgo.SASL(mech))
		kc, err := newKafkaClient(user, opts)
		if err != nil {
			return nil, nil, err
		}
		pc = &pooledClient{kc: kc}
		cp.mu.clients[key] = pc
	}
	pc.inUse++
	return pc.kc, func() { cp.release(pc) }, nil
}

func (cp *clientPool) release(pc *pooledClient) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	pc.inUse--
	pc.lastUsed = cp.clock.Now()
}

// evictLocked closes the least recently used idle client to make room,
// reporting whether there was one.
func (cp *clientPool) evictLocked() bool {
	var oldest string
	for key, pc := range cp.mu.clients {
		if pc.inUse == 0 && (oldest == "" || pc.lastUsed.Before(cp.mu.clients[oldest].lastUsed)) {
			oldest = key
		}
	}
	if oldest == "" {
		return false
	}
	cp.mu.clients[oldest].kc.client.Close()
	delete(cp.mu.clients, oldest)
	return true
}

// sweep closes the clients unused for idle.
func (cp *clientPool) sweep() {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	now := cp.clock.Now()
	for key, pc := range cp.mu.clients {
		if pc.inUse == 0 && now.Sub(pc.lastUsed) >= cp.idle {
			pc.kc.client.Close()
			delete(cp.mu.clients, key)
		}
	}
}

// size is how many clients are kept.
func (cp *clientPool) size() int {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return len(cp.mu.clients)
}

// close closes every client; a request still running with one sees its
// operations fail, as with the proxy's own client on Close.
func (cp *clientPool) close() {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.mu.closed = true
	for key, pc := range cp.mu.clients {
		pc.kc.client.Close()
		delete(cp.mu.clients, key)
	}
}

// principalKey keys the authenticated user's name in a request's context
// ("" without authentication): what the per-principal limits count by.
type principalKey struct{}

func principalOf(ctx context.Context) string {
	name, _ := ctx.Value(principalKey{}).(string)
	return name
}

// withPrincipal runs basic authentication in front of h (when configured)
// and gives the request its principal: the name its limits count by and,
// for a user the Kafka cluster accepted, the Kafka client logged in as
// that user. A user of the users file runs with the proxy's own client.
func (p *Proxy) withPrincipal(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var principal httpauth.Principal
		if p.cfg.Auth != nil {
			var err error
			if principal, err = p.cfg.Auth.Check(req); err != nil {
				p.writeAuthError(w, err)
				return
			}
		}
		if e := p.limits.allowRequest(principal.User); e != nil {
			writeError(w, e)
			return
		}
		ctx := context.WithValue(req.Context(), principalKey{}, principal.User)
		if principal.Kafka && p.pool != nil {
			kc, release, err := p.pool.get(principal.User, principal.Password)
			if err != nil {
				writeError(w, poolError(err))
				return
			}
			defer release()
			ctx = withKafka(ctx, kc)
		}
		h.ServeHTTP(w, req.WithContext(ctx))
	})
}

func (p *Proxy) writeAuthError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, httpauth.ErrUnauthorized):
		p.cfg.Auth.Challenge(w)
		writeError(w, &Error{http.StatusUnauthorized, http.StatusUnauthorized, "Unauthorized"})
	case errors.Is(err, httpauth.ErrForbidden):
		writeError(w, &Error{http.StatusForbidden, http.StatusForbidden, "Forbidden"})
	default:
		writeError(w, &Error{http.StatusServiceUnavailable, codeBrokerUnavailable,
			fmt.Sprintf("Error while authenticating against the Kafka cluster: %v", errors.Unwrap(err))})
	}
}

func poolError(err error) *Error {
	if errors.Is(err, errPoolFull) {
		return &Error{http.StatusTooManyRequests, codeTooManyRequests,
			"Too many REST users at once: every per-principal Kafka client is in use; try again"}
	}
	return &Error{http.StatusServiceUnavailable, codeBrokerUnavailable, err.Error()}
}

// startPool starts the sweeping of idle clients, stopped by Close.
func (p *Proxy) startPool() {
	if p.pool == nil {
		return
	}
	p.tasks = task.NewGroup(context.Background())
	// Swept at a quarter of the idle time, so a client goes at most a
	// quarter past it.
	p.tasks.Every(max(p.pool.idle/4, 10*time.Millisecond), func(context.Context) { p.pool.sweep() })
}
