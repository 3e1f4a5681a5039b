package mirror

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// authorizing starts a broker with Kafka's StandardAuthorizer and the
// anonymous principal a super user, so the test's clients may do anything
// and ACLs are stored and listed.
func authorizing(t *testing.T) string {
	addr, _ := devcluster.StartTestBroker(t,
		"--override", "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"--override", "super.users=User:ANONYMOUS")
	return addr
}

// TestACLSync: with sync.topic.acls.enabled the source's topic ACLs that
// MirrorMaker 2 copies reach the remote topic on the target: an allow READ
// and a deny are copied with the topic renamed, an allow ALL becomes READ,
// an allow WRITE is not copied (only the mirror writes there), nor an ACL
// of a topic not mirrored.
func TestACLSync(t *testing.T) {
	t.Parallel()
	a, b := authorizing(t), authorizing(t)
	c := clusters{"A": a, "B": b}
	ctx := context.Background()
	createTopic(t, a, "orders", 1, nil)
	createTopic(t, a, "secret", 1, nil)
	admA := kadm.NewClient(client(t, a))
	create := func(b *kadm.ACLBuilder) {
		t.Helper()
		res, err := admA.CreateACLs(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
	}
	create(kadm.NewACLs().Allow("User:reader").Topics("orders").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	create(kadm.NewACLs().Allow("User:admin").Topics("orders").Operations(kadm.OpAll).ResourcePatternType(kadm.ACLPatternLiteral))
	create(kadm.NewACLs().Allow("User:writer").Topics("orders").Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral))
	create(kadm.NewACLs().Deny("User:mallory").Topics("orders").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	create(kadm.NewACLs().Allow("User:reader").Topics("secret").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))

	runMirror(t, mm2Config(t, c, "sync.topic.acls.enabled = true", "sync.topic.acls.interval.seconds = 1", "A->B.topics = orders"), c)
	admB := kadm.NewClient(client(t, b))
	eventually(t, 30*time.Second, "ACLs on B", func() error {
		res, err := admB.DescribeACLs(ctx, kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).
			Operations(kadm.OpAny).Allow().Deny().AllowHosts().DenyHosts())
		if err != nil {
			return err
		}
		got := map[string]bool{}
		for _, r := range res {
			if r.Err != nil {
				return r.Err
			}
			for _, d := range r.Described {
				got[fmt.Sprintf("%s %s %s %s", d.Permission, d.Principal, d.Name, d.Operation)] = true
			}
		}
		want := map[string]bool{"ALLOW User:reader A.orders READ": true, "ALLOW User:admin A.orders READ": true,
			"DENY User:mallory A.orders READ": true}
		if len(got) != len(want) {
			return fmt.Errorf("ACLs on B %v, want %v", got, want)
		}
		for k := range want {
			if !got[k] {
				return fmt.Errorf("ACLs on B %v, want %v", got, want)
			}
		}
		return nil
	})
}

// TestGroupSyncLeavesActiveGroups: sync.group.offsets.enabled commits to a
// target group only while it has no member there, and never moves its
// offsets backwards.
func TestGroupSyncLeavesActiveGroups(t *testing.T) {
	t.Parallel()
	a, _ := devcluster.StartTestBroker(t)
	b, _ := devcluster.StartTestBroker(t)
	c := clusters{"A": a, "B": b}
	ctx := context.Background()
	createTopic(t, a, "orders", 1, nil)
	produceOrders(t, a, "orders", 0, 100)
	commit := func(addr, group, topic string, at int64) {
		t.Helper()
		o := kadm.Offsets{}
		o.Add(kadm.Offset{Topic: topic, Partition: 0, At: at, LeaderEpoch: -1})
		resp, err := kadm.NewClient(client(t, addr)).CommitOffsets(ctx, group, o)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	offsetOn := func(addr, group string) int64 {
		got, err := kadm.NewClient(client(t, addr)).FetchOffsets(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		o, ok := got.Lookup("A.orders", 0)
		if !ok {
			return -1
		}
		return o.At
	}
	// "busy" has a live member on B before the mirror starts (on the
	// mirror topic, created beforehand).
	createTopic(t, b, "A.orders", 1, map[string]*string{MirrorSourceConfig: ptr("A")})
	member := client(t, b, kgo.ConsumeTopics("A.orders"), kgo.ConsumerGroup("busy"), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	pctx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	go func() {
		for pctx.Err() == nil {
			member.PollRecords(pctx, 100)
		}
	}()
	eventually(t, 30*time.Second, "busy's member on B", func() error {
		gs, err := kadm.NewClient(client(t, b)).DescribeGroups(ctx, "busy")
		if err != nil {
			return err
		}
		if g := gs["busy"]; len(g.Members) == 0 {
			return fmt.Errorf("busy on B: %s, %d members", g.State, len(g.Members))
		}
		return nil
	})
	commit(a, "busy", "orders", 60)
	commit(a, "ahead", "orders", 40)
	cfg := mm2Config(t, c, "samsa.offset.preserving.enabled = true") // offsets arrive verbatim
	runMirror(t, cfg, c)
	eventually(t, 30*time.Second, "A.orders on B", func() error {
		if e := endOffsets(t, b, "A.orders")[0]; e != 100 {
			return fmt.Errorf("end %d", e)
		}
		return nil
	})
	// "ahead" is further on B than on A: the mirror must not move it back.
	commit(b, "ahead", "A.orders", 90)

	commit(a, "idle", "orders", 70)
	eventually(t, 30*time.Second, "idle synced", func() error {
		if at := offsetOn(b, "idle"); at != 70 {
			return fmt.Errorf("idle on B at %d", at)
		}
		return nil
	})
	time.Sleep(3 * time.Second) // several sync intervals
	if at := offsetOn(b, "ahead"); at != 90 {
		t.Errorf("ahead on B at %d: moved back from 90 to A's 40", at)
	}
	if at := offsetOn(b, "busy"); at == 60 {
		t.Errorf("busy on B at %d: synced while a member was active there", at)
	}
}
