package assign

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/task"
)

func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

// instance is one application instance in the end-to-end test: a kgo
// client with the balancer, remembering its last assignment as the
// runtime would, to report it at the next join.
type instance struct {
	process string
	cl      *kgo.Client
	b       *Balancer

	mu         sync.Mutex
	generation int32              // of the last assignment; guarded by mu
	partitions map[string][]int32 // guarded by mu
	ud         MemberUserData     // guarded by mu
}

func (in *instance) prevTasks() ([]TaskID, []TaskID, map[TaskID]int64) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.ud.Active, in.ud.Standby, nil
}

func startInstance(t *testing.T, addr, process string) *instance {
	t.Helper()
	in := &instance{process: process}
	b, err := NewBalancer(Config{
		ProcessID: process, Endpoint: process + ":8080", Source: wordsAndClicks(), NumStandbyReplicas: 1,
		PrevTasks: in.prevTasks, Context: t.Context(),
	})
	if err != nil {
		t.Fatal(err)
	}
	in.b = b
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addr),
		kgo.ConsumerGroup("streams-app"),
		kgo.ConsumeTopics("words", "clicks"),
		kgo.Balancers(b),
		kgo.OnPartitionsAssigned(func(_ context.Context, cl *kgo.Client, assigned map[string][]int32) {
			_, gen := cl.GroupMetadata()
			in.mu.Lock()
			defer in.mu.Unlock()
			in.generation, in.partitions, in.ud = gen, assigned, b.LastAssignment()
		}),
		kgo.OnPartitionsRevoked(func(context.Context, *kgo.Client, map[string][]int32) {
			in.mu.Lock()
			defer in.mu.Unlock()
			in.generation, in.partitions = -1, nil // eager: everything goes before the join
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	in.cl = cl
	// Group management runs as the client polls.
	polls := task.NewGroup(t.Context())
	polls.Go(func(ctx context.Context) {
		for !cl.PollFetches(ctx).IsClientClosed() && ctx.Err() == nil {
		}
	})
	t.Cleanup(func() {
		cl.Close()
		polls.Stop()
	})
	return in
}

type snapshot struct {
	generation int32
	partitions map[string][]int32
	ud         MemberUserData
}

func (in *instance) snapshot() snapshot {
	in.mu.Lock()
	defer in.mu.Unlock()
	return snapshot{in.generation, in.partitions, in.ud}
}

// settled waits until every instance holds an assignment of one
// generation newer than after, and answers them.
func settled(t *testing.T, instances []*instance, after int32) []snapshot {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		var snaps []snapshot
		for _, in := range instances {
			snaps = append(snaps, in.snapshot())
		}
		same := snaps[0].generation > after
		for _, s := range snaps {
			same = same && s.generation == snaps[0].generation
		}
		if same {
			return snaps
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the group did not settle on one generation after %d", after)
	return nil
}

// checkGroup: the members' partitions are disjoint and cover the 9
// partitions, match their active tasks, and each stateful task has one
// standby on another instance.
func checkGroup(t *testing.T, instances []*instance, snaps []snapshot) {
	t.Helper()
	owner := map[TopicPartition]string{}
	standbys := map[TaskID][]string{}
	for i, s := range snaps {
		if s.ud.ErrorCode != ErrNone {
			t.Fatalf("%s: assignment error %v", instances[i].process, s.ud.ErrorCode)
		}
		for topic, ps := range s.partitions {
			for _, p := range ps {
				tp := TopicPartition{topic, p}
				if prev, dup := owner[tp]; dup {
					t.Fatalf("%v assigned to %s and %s", tp, prev, instances[i].process)
				}
				owner[tp] = instances[i].process
				task := TaskID{map[string]int32{"words": 0, "clicks": 1}[topic], p}
				if !slices.Contains(s.ud.Active, task) {
					t.Errorf("%s got %v but its active tasks are %v", instances[i].process, tp, s.ud.Active)
				}
			}
		}
		for _, task := range s.ud.Standby {
			standbys[task] = append(standbys[task], instances[i].process)
		}
		if got := s.ud.ActiveHosts[instances[i].process+":8080"]; len(got) != len(s.ud.Active) {
			t.Errorf("%s: the host map gives it %v, it runs %v", instances[i].process, got, s.ud.Active)
		}
	}
	if len(owner) != 9 {
		t.Fatalf("%d of 9 partitions assigned: %v", len(owner), owner)
	}
	for p := range int32(6) {
		task := TaskID{0, p}
		holders := standbys[task]
		if len(holders) != 1 || holders[0] == owner[TopicPartition{"words", p}] {
			t.Errorf("standbys of %s on %v, active on %s", task, holders, owner[TopicPartition{"words", p}])
		}
	}
}

func TestBalancerOnBroker(t *testing.T) {
	addr, _ := devcluster.StartTestBroker(t)
	adm, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for topic, n := range map[string]int32{"words": 6, "clicks": 3} {
		if _, err := kadm.NewClient(adm).CreateTopic(ctx, n, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}

	var instances []*instance
	for i := range 3 {
		instances = append(instances, startInstance(t, addr, fmt.Sprintf("p%d", i)))
	}
	before := settled(t, instances, 0)
	checkGroup(t, instances, before)
	for i, s := range before {
		if n := len(s.ud.Active); n != 3 {
			t.Errorf("%s runs %d tasks, want 3 of 9", instances[i].process, n)
		}
	}

	instances[2].cl.Close() // leaves the group
	survivors := instances[:2]
	after := settled(t, survivors, before[0].generation)
	checkGroup(t, survivors, after)
	for i, s := range after {
		for _, task := range before[i].ud.Active {
			if !slices.Contains(s.ud.Active, task) {
				t.Errorf("%s ran %s before p2 left, not after: %v -> %v", survivors[i].process, task, before[i].ud.Active, s.ud.Active)
			}
		}
	}
}
