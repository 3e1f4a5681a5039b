package restproxy

import (
	"fmt"
	"math"
	"net/http"

	"golang.org/x/time/rate"
)

// codeTooManyRequests is Confluent's answer past the produce rate limit:
// the HTTP status as the code, in the record's result line of a stream.
const codeTooManyRequests = http.StatusTooManyRequests

// newProduceLimiter is the produce rate limit of Config: records per
// second for the cluster (this proxy serves one), as Confluent's
// api.v3.produce.rate.limit.max.requests.per.sec counts each record of a
// stream as a request. A burst of one second's worth is allowed. Zero
// is no limit.
func newProduceLimiter(perSec float64) *rate.Limiter {
	if perSec == 0 {
		return nil
	}
	return rate.NewLimiter(rate.Limit(perSec), int(math.Max(1, math.Ceil(perSec))))
}

// allowProduce answers nil when a record may be produced now, 429 past
// the limit. A record over the limit is refused, not delayed: a client
// sees it and can back off, as with Confluent's.
func (p *Proxy) allowProduce() *Error {
	if p.limiter == nil || p.limiter.Allow() {
		return nil
	}
	return &Error{http.StatusTooManyRequests, codeTooManyRequests,
		fmt.Sprintf("Request rate limit exceeded: at most %g produce records per second", p.cfg.ProduceRateLimit)}
}
