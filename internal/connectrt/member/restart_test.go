package member

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/freeport"
)

// TestBrokerRestart kills the broker under a stable group and starts it
// again on the same port and data: after a short outage the workers keep
// their work and the group settles again; after an outage longer than
// the session timeout every worker has revoked its work, and the group
// assigns it afresh once the broker is back.
func TestBrokerRestart(t *testing.T) {
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	port, err := freeport.One()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	data := filepath.Join(t.TempDir(), "data")
	start := func() *devcluster.Serve {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		serve, _, err := devcluster.StartServe(ctx, bin, []string{
			"--override", "samsa.http.listener=", "--override", "samsa.schema.registry.listener=", "--override", "samsa.rest.listener=",
			"--override", "group.initial.rebalance.delay.ms=0", "--override", "group.min.session.timeout.ms=1000",
			"--listeners", "PLAINTEXT://" + addr, "--log.dirs", data,
		}, brokerServingRE)
		if err != nil {
			t.Fatal(err)
		}
		return serve
	}
	serve := start()
	t.Cleanup(func() { serve.Kill() })

	cfg := fastGroup
	cfg.SessionTimeout, cfg.HeartbeatInterval = 8*time.Second, 500*time.Millisecond
	c := newClusterAt(t, addr, "connect-restart", cfg, testConfig(2, 3))
	c.start("w1", 10)
	c.start("w2", 10)
	c.waitStable(30*time.Second, "w1", "w2")

	// A short outage: nothing is revoked, and the group still rebalances
	// when a worker asks.
	c.mu.Lock()
	revokesBefore := c.revokes
	c.mu.Unlock()
	down := time.Now()
	serve.Kill()
	serve = start()
	t.Logf("broker restarted in %v", time.Since(down))
	c.workers["w2"].m.Rejoin()
	waitFor(t, func() bool { return c.generationAfter(down) }, "a rebalance after the restart")
	took := c.waitStable(30*time.Second, "w1", "w2")
	t.Logf("the group settled %v after the broker came back", took)
	c.mu.Lock()
	revokes := c.revokes - revokesBefore
	c.mu.Unlock()
	if time.Since(down) < cfg.SessionTimeout-cfg.HeartbeatInterval && revokes != 0 {
		t.Errorf("%d revocations across a %v outage", revokes, time.Since(down))
	}

	// A long outage: each worker revokes its work before its session
	// could have run out on the broker.
	serve.Kill()
	down = time.Now()
	waitFor(t, func() bool { return len(c.runs("w1")) == 0 && len(c.runs("w2")) == 0 }, "revocation by both workers")
	if d := time.Since(down); d < cfg.SessionTimeout-cfg.HeartbeatInterval-cfg.HeartbeatInterval || d > cfg.SessionTimeout {
		t.Errorf("revoked %v after the broker died; session %v, heartbeat %v", d, cfg.SessionTimeout, cfg.HeartbeatInterval)
	}
	serve = start()
	back := time.Now()
	took = c.waitStable(60*time.Second, "w1", "w2")
	t.Logf("after a long outage the group was assigned again %v after the broker came back (%v)", time.Since(back), took)
}

// generationAfter says whether every worker has been assigned since t.
func (c *cluster) generationAfter(t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.workers {
		w.mu.Lock()
		n := len(w.all)
		at := w.lastAt
		w.mu.Unlock()
		if n == 0 || at.Before(t) {
			return false
		}
	}
	return true
}
