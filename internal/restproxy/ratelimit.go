package restproxy

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sync"

	"golang.org/x/time/rate"
)

// codeTooManyRequests is Confluent's answer past a rate limit: kafka-rest's
// RateLimitExceededException is a StatusCodeException, whose error_code
// is the HTTP status (its 4290xx codes name the limit in its request log
// only, never in the body).
const codeTooManyRequests = http.StatusTooManyRequests

// maxLimitedPrincipals bounds the principals whose buckets are kept: past
// it the buckets start afresh (a principal gets a full burst again, which
// errs on letting requests through, never on refusing them wrongly).
const maxLimitedPrincipals = 10_000

// limits are the per-principal rate limits of Config: a token bucket
// (x/time/rate) per principal for produced records and one for requests,
// each with a burst of one second's worth. The principal is the basic-auth
// user; without authentication every request is the one principal "", so
// the limits are the proxy's as a whole.
type limits struct {
	producePerSec, requestPerSec float64

	mu struct {
		sync.Mutex
		produce, request map[string]*rate.Limiter // guarded by mu; key: principal
	}
}

func newLimits(producePerSec, requestPerSec float64) *limits {
	l := &limits{producePerSec: producePerSec, requestPerSec: requestPerSec}
	l.mu.produce, l.mu.request = map[string]*rate.Limiter{}, map[string]*rate.Limiter{}
	return l
}

// checkRate refuses a rate that is not a positive number or zero.
func checkRate(what string, perSec float64) error {
	if perSec < 0 || math.IsNaN(perSec) || math.IsInf(perSec, 0) {
		return fmt.Errorf("restproxy: %s %g: must be a positive number per second, or 0 for none", what, perSec)
	}
	return nil
}

// allow takes a token of principal's bucket in buckets, made on first use.
func (l *limits) allow(buckets map[string]*rate.Limiter, perSec float64, principal string) bool {
	if perSec == 0 {
		return true
	}
	l.mu.Lock()
	b, ok := buckets[principal]
	if !ok {
		if len(buckets) >= maxLimitedPrincipals {
			clear(buckets)
		}
		b = rate.NewLimiter(rate.Limit(perSec), int(math.Max(1, math.Ceil(perSec))))
		buckets[principal] = b
	}
	l.mu.Unlock()
	return b.Allow()
}

// allowRequest answers nil when principal may make a request now, 429 past
// Config.RequestRateLimit.
func (l *limits) allowRequest(principal string) *Error {
	if l.allow(l.mu.request, l.requestPerSec, principal) {
		return nil
	}
	return &Error{http.StatusTooManyRequests, codeTooManyRequests,
		fmt.Sprintf("Request rate limit exceeded: at most %g requests per second%s", l.requestPerSec, per(principal))}
}

// allowProduce answers nil when a record of the request's principal may be
// produced now, 429 past Config.ProduceRateLimit, counted as Confluent's
// api.v3.produce.rate.limit.max.requests.per.sec counts: each record of a
// stream as a request. A record over the limit is refused, not delayed: a
// client sees it and can back off, as with Confluent's.
func (p *Proxy) allowProduce(ctx context.Context) *Error {
	principal := principalOf(ctx)
	if p.limits.allow(p.limits.mu.produce, p.limits.producePerSec, principal) {
		return nil
	}
	return &Error{http.StatusTooManyRequests, codeTooManyRequests,
		fmt.Sprintf("Request rate limit exceeded: at most %g produce records per second%s", p.limits.producePerSec, per(principal))}
}

func per(principal string) string {
	if principal == "" {
		return ""
	}
	return " for user " + principal
}
