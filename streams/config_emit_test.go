package streams

import (
	"testing"
	"time"
)

// Kafka's internal outer-join emit interval: 1 s by default, read from
// its property name, refused when negative, and what the runtime's tasks
// use (the TestDriver always uses 0).
func TestOuterJoinEmitIntervalConfig(t *testing.T) {
	base := map[string]string{"application.id": "a", "bootstrap.servers": "b:9092"}
	c, err := ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	if c, err = c.withDefaults(); err != nil || *c.OuterJoinEmitInterval != time.Second {
		t.Fatalf("default %v (%v), want 1s", c.OuterJoinEmitInterval, err)
	}
	env := &threadEnv{th: &streamThread{app: &App{cfg: c}}}
	if got := outerJoinEmitInterval(env); got != 1000 {
		t.Fatalf("runtime interval %d, want 1000", got)
	}
	base[outerJoinEmitIntervalConfig] = "0"
	if c, err = ParseConfig(base); err != nil {
		t.Fatal(err)
	}
	if c, err = c.withDefaults(); err != nil || *c.OuterJoinEmitInterval != 0 {
		t.Fatalf("set to 0: %v (%v)", c.OuterJoinEmitInterval, err)
	}
	env.th.app.cfg = c
	if got := outerJoinEmitInterval(env); got != 0 {
		t.Fatalf("runtime interval %d, want 0", got)
	}
	base[outerJoinEmitIntervalConfig] = "-1"
	if c, err = ParseConfig(base); err == nil {
		_, err = c.withDefaults()
	}
	if err == nil {
		t.Fatal("a negative interval was accepted")
	}
}
