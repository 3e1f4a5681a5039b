package broker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/quota"
)

// awaitThrottle waits until cond holds once b has applied an image.
func awaitThrottle(t *testing.T, b *Broker, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for !cond() {
		ch := b.imageApplied.Wait()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("never applied: %s", what)
		}
	}
}

// The throttles follow their configs as IncrementalAlterConfigs changes
// them, without a restart: a broker's rate over the cluster default over
// none, and a topic's lists as they name this broker; deleting a config
// removes its throttle. A list that is not one is refused.
func TestReplicationThrottleConfigsApplyLive(t *testing.T) {
	b := startBroker(t)
	adm, ctx := adminClient(t, b)
	rt := b.replThrottle
	limits := func(leader, follower int64) func() bool {
		return func() bool { return rt.leader.q.Limit() == leader && rt.follower.q.Limit() == follower }
	}
	alterBroker := func(op kadm.IncrementalOp, name, value string, brokers ...int32) {
		t.Helper()
		c := kadm.AlterConfig{Op: op, Name: name}
		if op == kadm.SetConfig {
			c.Value = &value
		}
		rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{c}, brokers...)
		if err == nil {
			err = rs[0].Err
		}
		if err != nil {
			t.Fatalf("%v %s=%s on %v: %v", op, name, value, brokers, err)
		}
	}
	awaitThrottle(t, b, "no throttle at the start", limits(quota.Unlimited, quota.Unlimited))

	alterBroker(kadm.SetConfig, "leader.replication.throttled.rate", "1000", b.cfg.NodeID)
	awaitThrottle(t, b, "the broker's leader rate", limits(1000, quota.Unlimited))
	alterBroker(kadm.SetConfig, "follower.replication.throttled.rate", "2000") // the cluster default
	awaitThrottle(t, b, "the default follower rate", limits(1000, 2000))
	alterBroker(kadm.SetConfig, "follower.replication.throttled.rate", "3000", b.cfg.NodeID)
	awaitThrottle(t, b, "the broker's follower rate over the default", limits(1000, 3000))
	alterBroker(kadm.DeleteConfig, "follower.replication.throttled.rate", "", b.cfg.NodeID)
	awaitThrottle(t, b, "the default again", limits(1000, 2000))
	alterBroker(kadm.DeleteConfig, "follower.replication.throttled.rate", "")
	alterBroker(kadm.DeleteConfig, "leader.replication.throttled.rate", "", b.cfg.NodeID)
	awaitThrottle(t, b, "no throttle", limits(quota.Unlimited, quota.Unlimited))

	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "listed"); err != nil {
		t.Fatal(err)
	}
	throttles := func() topicThrottles {
		ts, _ := b.topics.byTopicName("listed")
		if ts == nil {
			return topicThrottles{}
		}
		return ts.throttles
	}
	alterTopic := func(configs ...kadm.AlterConfig) error {
		rs, err := adm.AlterTopicConfigs(ctx, configs, "listed")
		if err == nil {
			err = rs[0].Err
		}
		return err
	}
	// Node 1's replicas of partitions 0 and 2; partition 1's of node 7.
	if err := alterTopic(kadm.AlterConfig{Op: kadm.SetConfig, Name: "leader.replication.throttled.replicas", Value: kadm.StringPtr("0:1,1:7,2:1")},
		kadm.AlterConfig{Op: kadm.SetConfig, Name: "follower.replication.throttled.replicas", Value: kadm.StringPtr("*")}); err != nil {
		t.Fatal(err)
	}
	awaitThrottle(t, b, "the lists", func() bool {
		th := throttles()
		return th.leader.Has(0) && !th.leader.Has(1) && th.leader.Has(2) && th.follower.Has(1)
	})
	for _, bad := range []string{"0:1,x", "0:1,", "1", "2147483648:1", "0:1,*"} {
		err := alterTopic(kadm.AlterConfig{Op: kadm.SetConfig, Name: "leader.replication.throttled.replicas", Value: kadm.StringPtr(bad)})
		if !errors.Is(err, kerr.InvalidConfig) {
			t.Errorf("list %q: %v, want INVALID_CONFIG", bad, err)
		}
	}
	if err := alterTopic(kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "leader.replication.throttled.replicas"}); err != nil {
		t.Fatal(err)
	}
	awaitThrottle(t, b, "the leader list removed", func() bool {
		th := throttles()
		return th.leader.IsZero() && th.follower.Has(0)
	})
	if err := alterTopic(kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "follower.replication.throttled.replicas"}); err != nil {
		t.Fatal(err)
	}
	awaitThrottle(t, b, "no list", func() bool {
		th := throttles()
		return th.leader.IsZero() && th.follower.IsZero()
	})
}
