package member

import (
	"strings"
	"testing"
	"time"
)

func TestConfig(t *testing.T) {
	base := Config{GroupID: "g", URL: "http://w:8083"}
	got, err := base.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if got.Protocol != "sessioned" || got.SessionTimeout != 10*time.Second || got.RebalanceTimeout != time.Minute ||
		got.HeartbeatInterval != 3*time.Second || got.ScheduledRebalanceMaxDelay != 5*time.Minute {
		t.Errorf("defaults: %+v", got)
	}
	noDelay := base
	noDelay.ScheduledRebalanceMaxDelay = NoScheduledRebalanceDelay
	noDelay.Protocol = "EAGER"
	if got, err := noDelay.withDefaults(); err != nil || got.ScheduledRebalanceMaxDelay != 0 || got.Protocol != "eager" {
		t.Errorf("NoScheduledRebalanceDelay, EAGER: %+v, %v", got, err)
	}
	for _, tt := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.GroupID = "" }, "group.id is required"},
		{func(c *Config) { c.URL = "" }, "REST URL is required"},
		{func(c *Config) { c.Protocol = "cooperative" }, "unknown Connect protocol compatibility mode: cooperative"},
		{func(c *Config) { c.SessionTimeout = -time.Second }, "session.timeout.ms must not be negative"},
		{func(c *Config) { c.HeartbeatInterval = 20 * time.Second }, "heartbeat.interval.ms (20s) must be smaller than session.timeout.ms (10s)"},
		{func(c *Config) { c.ScheduledRebalanceMaxDelay = -2 }, "scheduled.rebalance.max.delay.ms must not be negative"},
		{func(c *Config) { c.RebalanceTimeout = 1000 * time.Hour }, "rebalance.timeout.ms must be at most"},
	} {
		c := base
		tt.change(&c)
		if _, err := c.withDefaults(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v, want an error with %q", err, tt.want)
		}
	}
	if _, err := New(nil, base, nil); err == nil {
		t.Error("New without a client and handler")
	}
}
