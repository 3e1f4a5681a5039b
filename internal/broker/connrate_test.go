package broker

import (
	"math"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/quota"
)

// An IP's connection rate is forgotten after an hour without a
// connection, so the rates do not grow with every address seen.
func TestIdleIPRatesAreForgotten(t *testing.T) {
	r := &connRates{cfg: quota.DefaultConfig, brokerMax: math.Inf(1), ipDefault: 1,
		listener: map[string]*quota.Limiter{}, ip: map[string]*ipRate{}}
	t0 := time.Unix(1_700_000_000, 0)
	r.admitIP("PLAINTEXT", "10.0.0.1", t0)
	r.admitIP("PLAINTEXT", "10.0.0.2", t0.Add(50*time.Minute))
	r.admitIP("PLAINTEXT", "10.0.0.3", t0.Add(61*time.Minute))
	if _, ok := r.ip["10.0.0.1"]; ok || len(r.ip) != 2 {
		t.Errorf("rates kept after an hour: %v", r.ip)
	}
}
