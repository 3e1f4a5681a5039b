package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// throttleConfigs reads the five throttle configs: the brokers' rates and
// the topic's throttled replicas, "" where not set.
func throttleConfigs(t *testing.T, adm *kadm.Client, topic string, brokers ...int32) map[string]string {
	t.Helper()
	out := map[string]string{}
	rcs, err := adm.DescribeBrokerConfigs(t.Context(), brokers...)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			if (c.Key == leaderThrottledRate || c.Key == followerThrottledRate) && c.Source == kmsg.ConfigSourceDynamicBrokerConfig && c.Value != nil {
				out[rc.Name+"/"+c.Key] = *c.Value
			}
		}
	}
	tcs, err := adm.DescribeTopicConfigs(t.Context(), topic)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range tcs {
		for _, c := range rc.Configs {
			if (c.Key == leaderThrottledReplicas || c.Key == followerThrottledReplicas) && c.Value != nil && *c.Value != "" {
				out[c.Key] = *c.Value
			}
		}
	}
	return out
}

// runThrottledReassign is --execute --throttle of a plan moving t-0 from
// broker 1 to 3 and t-1 from [2 1] to [2 3], then --verify: the throttle is
// set as Kafka's tool sets it while the moves run, and cleared once
// --verify finds none in progress.
func runThrottledReassign(t *testing.T, c *testCluster, adm *kadm.Client, b [3]int32, observe func(current map[int32][]int32, got map[string]string)) {
	t.Helper()
	var current map[int32][]int32
	waitUntil(t, 30*time.Second, "both partitions of t in the metadata", func() bool {
		current = replicaMap(t, adm, "t")
		return len(current[0]) > 0 && len(current[1]) > 0
	})
	plan := filepath.Join(t.TempDir(), "plan.json")
	os.WriteFile(plan, []byte(fmt.Sprintf(`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[%d],"log_dirs":["any"]},`+
		`{"topic":"t","partition":1,"replicas":[%d,%d]}]}`, b[2], b[1], b[2])), 0o644)
	r := c.run("", "cluster", "reassign", "--execute", "--reassignment-json-file", plan, "--throttle", "1000000")
	if r.err != nil {
		t.Fatalf("execute --throttle: %v\n%s", r.err, r.stdout)
	}
	for _, want := range []string{"Warning: You must run --verify periodically", "The inter-broker throttle limit was set to 1000000 B/s"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("execute lacks %q:\n%s", want, r.stdout)
		}
	}
	observe(current, throttleConfigs(t, adm, "t", b[:]...))
	// --verify clears the throttles once no move is left, as Kafka's.
	var out string
	waitUntil(t, 30*time.Second, "a --verify that finds the moves done", func() bool {
		out = c.ok("", "cluster", "reassign", "--verify", "--reassignment-json-file", plan)
		return !strings.Contains(out, "is still in progress")
	})
	if !strings.Contains(out, "Clearing broker-level throttles on brokers "+idList(b[:])) {
		t.Errorf("verify:\n%s", out)
	}
	// The broker asked may apply the deletions a moment after the one
	// that took them.
	var left map[string]string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if left = throttleConfigs(t, adm, "t", b[:]...); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) != 0 {
		t.Errorf("throttles left after --verify: %v", left)
	}
}

// checkThrottles: what Kafka's tool sets for the plan of
// runThrottledReassign (t-0 to [b2], t-1 to [b1 b2]) from the replicas the
// partitions had: the leader side lists those, the follower side the
// targets' others, "partition:broker" sorted as strings; the rate goes on
// every broker involved.
func checkThrottles(t *testing.T, b [3]int32, current map[int32][]int32, got map[string]string) {
	t.Helper()
	targets := map[int32][]int32{0: {b[2]}, 1: {b[1], b[2]}}
	var leader, follower []string
	involved := map[int32]bool{}
	for p, target := range targets {
		for _, r := range current[p] {
			leader = append(leader, fmt.Sprintf("%d:%d", p, r))
			involved[r] = true
		}
		for _, r := range target {
			if !slices.Contains(current[p], r) {
				follower = append(follower, fmt.Sprintf("%d:%d", p, r))
				involved[r] = true
			}
		}
	}
	slices.Sort(leader)
	slices.Sort(follower)
	want := map[string]string{leaderThrottledReplicas: strings.Join(leader, ","), followerThrottledReplicas: strings.Join(follower, ",")}
	for id := range involved {
		want[fmt.Sprintf("%d/%s", id, leaderThrottledRate)] = "1000000"
		want[fmt.Sprintf("%d/%s", id, followerThrottledRate)] = "1000000"
	}
	if want[followerThrottledReplicas] == "" {
		delete(want, followerThrottledReplicas)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("throttles %v, want %v", got, want)
	}
}

// TestClusterReassignThrottleOnKfake: on kfake, whose moves end at once,
// the throttle configs are set as Kafka's tool sets them and removed by
// --verify.
func TestClusterReassignThrottleOnKfake(t *testing.T) {
	c := newTestCluster(t, kfake.NumBrokers(3))
	adm := kadm.NewClient(c.client())
	c.ok("", "topic", "create", "t", "-p", "2", "-r", "1")
	b := [3]int32{0, 1, 2} // kfake's broker IDs
	runThrottledReassign(t, c, adm, b, func(current map[int32][]int32, got map[string]string) {
		// kfake keeps one set of broker configs for all its brokers, so a
		// rate set on the brokers involved reads back on the others too;
		// the exact set of brokers is checked on Samsa (TestClusterOperations).
		for k := range got {
			if id, _, ok := strings.Cut(k, "/"); ok && !involvedIn(current, id) {
				delete(got, k)
			}
		}
		checkThrottles(t, b, current, got)
	})
}

// involvedIn says whether broker id (as text) holds a replica of t now or
// gets one from runThrottledReassign's plan (t-0 to [2], t-1 to [1 2] on
// kfake's brokers).
func involvedIn(current map[int32][]int32, id string) bool {
	if id == "1" || id == "2" {
		return true
	}
	for _, rs := range current {
		for _, r := range rs {
			if strconv.Itoa(int(r)) == id {
				return true
			}
		}
	}
	return false
}
