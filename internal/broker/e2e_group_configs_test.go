package broker

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/config"
)

// Group configs (the GROUP config resource, KIP-848/932/1071) end to end:
// set with IncrementalAlterConfigs and AlterConfigs through franz-go,
// described, refused as Kafka refuses them, listed, read by the broker's
// groupConfig accessor, kept across a restart, and seen on every node of a
// cluster.

// requester sends a request to a broker; a *kgo.Client and a *kgo.Broker
// both are one.
type requester interface {
	Request(context.Context, kmsg.Request) (kmsg.Response, error)
}

// alterGroupConfigs changes a group's configs with IncrementalAlterConfigs:
// name=value pairs SET, a bare name DELETEd.
func alterGroupConfigs(t *testing.T, ctx context.Context, r requester, group string, ops ...string) (int16, string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	for _, o := range ops {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		k, v, set := strings.Cut(o, "=")
		c.Name = k
		if set {
			c.Value = kmsg.StringPtr(v)
		} else {
			c.Op = kmsg.IncrementalAlterConfigOpDelete
		}
		res.Configs = append(res.Configs, c)
	}
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Resources[0].ErrorCode, derefString(resp.Resources[0].ErrorMessage)
}

// describeGroupConfigs describes the named configs of a group (all when
// none are named) as name=value (source) [synonyms], or the error.
func describeGroupConfigs(t *testing.T, ctx context.Context, r requester, group string, names ...string) []string {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = true
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName, res.ConfigNames = kmsg.ConfigResourceTypeGroupConfig, group, names
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	rr := resp.Resources[0]
	if rr.ErrorCode != 0 {
		return []string{kerr.ErrorForCode(rr.ErrorCode).Error() + ": " + derefString(rr.ErrorMessage)}
	}
	var out []string
	for _, c := range rr.Configs {
		s := c.Name + "=" + derefString(c.Value) + " (" + c.Source.String() + ")"
		if c.ReadOnly || c.IsSensitive {
			s += " (read-only or sensitive)"
		}
		for _, syn := range c.ConfigSynonyms {
			s += " " + syn.Name + "=" + derefString(syn.Value) + ":" + syn.Source.String()
		}
		out = append(out, s)
	}
	return out
}

func listGroupsWithConfigs(t *testing.T, ctx context.Context, cl *kgo.Client) []string {
	t.Helper()
	listed, err := kadm.NewClient(cl).ListConfigResources(ctx, kadm.ConfigResourceGroupConfig)
	if err != nil {
		t.Fatal(err)
	}
	return listed.Names()
}

// groupConfigBroker is a broker whose bounds of share.record.lock.duration.ms
// are wider than Kafka's defaults, so the test sees the broker's bounds
// applied rather than the catalog's.
func groupConfigBroker(t *testing.T, dir string) *Broker {
	t.Helper()
	v, err := config.Parse(config.Broker, map[string]string{"group.share.max.record.lock.duration.ms": "120000"})
	if err != nil {
		t.Fatal(err)
	}
	return startBrokerWith(t, Config{LogDir: dir, Values: v})
}

func TestGroupConfigsE2E(t *testing.T) {
	dir := t.TempDir()
	b := groupConfigBroker(t, dir)
	cl, ctx := telemetryClient(t, b, "admin")
	if code, msg := alterGroupConfigs(t, ctx, cl, "queue", "share.auto.offset.reset=earliest",
		"share.record.lock.duration.ms=90000", "streams.num.standby.replicas=1"); code != 0 {
		t.Fatalf("set: %s %s", kerr.ErrorForCode(code), msg)
	}
	want := []string{
		"share.auto.offset.reset=earliest (GROUP_CONFIG) share.auto.offset.reset=earliest:GROUP_CONFIG share.auto.offset.reset=latest:DEFAULT_CONFIG",
		"share.isolation.level=read_uncommitted (DEFAULT_CONFIG) share.isolation.level=read_uncommitted:DEFAULT_CONFIG",
		"share.record.lock.duration.ms=90000 (GROUP_CONFIG) share.record.lock.duration.ms=90000:GROUP_CONFIG group.share.record.lock.duration.ms=30000:DEFAULT_CONFIG",
		"share.session.timeout.ms=45000 (DEFAULT_CONFIG) group.share.session.timeout.ms=45000:DEFAULT_CONFIG",
		"streams.num.standby.replicas=1 (GROUP_CONFIG) streams.num.standby.replicas=1:GROUP_CONFIG group.streams.num.standby.replicas=0:DEFAULT_CONFIG",
	}
	names := []string{"share.auto.offset.reset", "share.isolation.level", "share.record.lock.duration.ms",
		"share.session.timeout.ms", "streams.num.standby.replicas", "no.such.config"}
	if got := describeGroupConfigs(t, ctx, cl, "queue", names...); !slices.Equal(got, want) {
		t.Fatalf("describe:\n got %q\nwant %q", got, want)
	}
	if got := describeGroupConfigs(t, ctx, cl, "queue"); len(got) != len(config.Group.Entries()) {
		t.Errorf("describe of every config: %d configs", len(got))
	}
	// A group without configs, existing or not, describes as the broker's
	// values; an empty ID is refused.
	if got := describeGroupConfigs(t, ctx, cl, "nobody", "share.record.lock.duration.ms"); !slices.Equal(got, []string{
		"share.record.lock.duration.ms=30000 (DEFAULT_CONFIG) group.share.record.lock.duration.ms=30000:DEFAULT_CONFIG"}) {
		t.Errorf("describe of a group without configs: %q", got)
	}
	if got := describeGroupConfigs(t, ctx, cl, ""); len(got) != 1 || !strings.HasPrefix(got[0], "INVALID_REQUEST") {
		t.Errorf("describe without a group ID: %q", got)
	}

	// The accessor the group coordinator and the share-partitions read.
	checkAccessor := func(b *Broker) {
		t.Helper()
		v := b.groupConfig("queue")
		reset, err := config.ParseShareAutoOffsetReset(v.String("share.auto.offset.reset"))
		if err != nil || reset.Strategy != "earliest" || v.Int("share.record.lock.duration.ms") != 90000 ||
			v.Int("streams.num.standby.replicas") != 1 || v.Int("share.delivery.count.limit") != 5 {
			t.Errorf("groupConfig(queue): %v %+v lock %d standbys %d", err, reset, v.Int("share.record.lock.duration.ms"), v.Int("streams.num.standby.replicas"))
		}
		if d := b.groupConfig("other"); d.String("share.auto.offset.reset") != "latest" || d.Int("share.record.lock.duration.ms") != 30000 {
			t.Errorf("groupConfig(other): %q %d", d.String("share.auto.offset.reset"), d.Int("share.record.lock.duration.ms"))
		}
	}
	checkAccessor(b)

	for _, f := range []struct {
		group string
		ops   []string
		code  int16
		says  string
	}{
		{"queue", []string{"share.auto.offset=earliest"}, kerr.InvalidConfig.Code, "Unknown group config name: share.auto.offset"},
		{"queue", []string{"group.share.record.lock.duration.ms=20000"}, kerr.InvalidConfig.Code, "Unknown group config name"},
		{"queue", []string{"share.record.lock.duration.ms=120001"}, kerr.InvalidConfig.Code, "share.record.lock.duration.ms must be in the range 15000 to 120000 inclusive."},
		{"queue", []string{"consumer.session.timeout.ms=30000"}, kerr.InvalidConfig.Code, "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive."},
		{"queue", []string{"streams.num.standby.replicas=3"}, kerr.InvalidConfig.Code, "streams.num.standby.replicas must be less than or equal to 2"},
		{"queue", []string{"share.auto.offset.reset=by_duration:-PT1H"}, kerr.InvalidConfig.Code, "negative duration"},
		{"queue", []string{"share.auto.offset.reset=none"}, kerr.InvalidConfig.Code, "'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS.>'"},
		{"queue", []string{"share.isolation.level=serializable"}, kerr.InvalidConfig.Code, "read_committed, read_uncommitted"},
		{"queue", []string{"share.delivery.count.limit=many"}, kerr.InvalidConfig.Code, "INT"},
		{"queue", []string{"errors.deadletterqueue.topic.name=dlq"}, kerr.InvalidConfig.Code, "not supported yet"},
		{"", []string{"share.auto.offset.reset=earliest"}, kerr.InvalidRequest.Code, "Default group resources are not allowed."},
	} {
		code, msg := alterGroupConfigs(t, ctx, cl, f.group, f.ops...)
		if code != f.code || !strings.Contains(msg, f.says) {
			t.Errorf("%q %v: %s %q, want %s saying %q", f.group, f.ops, kerr.ErrorForCode(code), msg, kerr.ErrorForCode(f.code), f.says)
		}
	}
	if got := describeGroupConfigs(t, ctx, cl, "queue", names...); !slices.Equal(got, want) {
		t.Fatalf("a refused change changed the configs:\n got %q\nwant %q", got, want)
	}
	if code, msg := alterGroupConfigs(t, ctx, cl, "queue", "share.auto.offset.reset=by_duration:P1DT12H"); code != 0 {
		t.Fatalf("by_duration: %s %s", kerr.ErrorForCode(code), msg)
	}
	want[0] = "share.auto.offset.reset=by_duration:P1DT12H (GROUP_CONFIG) share.auto.offset.reset=by_duration:P1DT12H:GROUP_CONFIG share.auto.offset.reset=latest:DEFAULT_CONFIG"

	// The legacy AlterConfigs replaces a group's configs as a whole, as
	// Kafka's takes GROUP resources.
	legacy := func(group string, kv ...string) int16 {
		t.Helper()
		req := kmsg.NewPtrAlterConfigsRequest()
		res := kmsg.NewAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
		for i := 0; i < len(kv); i += 2 {
			c := kmsg.NewAlterConfigsRequestResourceConfig()
			c.Name, c.Value = kv[i], kmsg.StringPtr(kv[i+1])
			res.Configs = append(res.Configs, c)
		}
		req.Resources = append(req.Resources, res)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Resources[0].ErrorCode
	}
	if code := legacy("legacy", "consumer.session.timeout.ms", "50000"); code != 0 {
		t.Fatalf("legacy set: %s", kerr.ErrorForCode(code))
	}
	if code := legacy("legacy", "consumer.session.timeout.ms", "5000"); code != kerr.InvalidConfig.Code {
		t.Errorf("legacy set out of bounds: %s", kerr.ErrorForCode(code))
	}
	if got := listGroupsWithConfigs(t, ctx, cl); !slices.Equal(got, []string{"legacy", "queue"}) {
		t.Fatalf("listed %q", got)
	}
	if code := legacy("legacy"); code != 0 {
		t.Fatalf("legacy delete: %s", kerr.ErrorForCode(code))
	}
	if got := listGroupsWithConfigs(t, ctx, cl); !slices.Equal(got, []string{"queue"}) {
		t.Fatalf("after the legacy delete, listed %q", got)
	}

	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = groupConfigBroker(t, dir)
	cl, ctx = telemetryClient(t, b, "admin")
	if got := describeGroupConfigs(t, ctx, cl, "queue", names...); !slices.Equal(got, want) {
		t.Fatalf("after a restart:\n got %q\nwant %q", got, want)
	}
	if code, _ := alterGroupConfigs(t, ctx, cl, "queue", "share.auto.offset.reset", "share.record.lock.duration.ms", "streams.num.standby.replicas"); code != 0 {
		t.Fatalf("delete: %s", kerr.ErrorForCode(code))
	}
	if got := listGroupsWithConfigs(t, ctx, cl); len(got) != 0 {
		t.Fatalf("after deleting every config of queue, listed %q", got)
	}
	if v := b.groupConfig("queue"); v.String("share.auto.offset.reset") != "latest" {
		t.Errorf("after the delete, groupConfig(queue) still has %q", v.String("share.auto.offset.reset"))
	}
}

// A group config set through one node is in every node's image: described
// by another node, and read by its groupConfig.
func TestGroupConfigsClusterE2E(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	cl := c.liveClient()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if code, msg := alterGroupConfigs(t, ctx, cl.Broker(1), "orders", "share.auto.offset.reset=earliest", "share.delivery.count.limit=3"); code != 0 {
		t.Fatalf("set through node 1: %s %s", kerr.ErrorForCode(code), msg)
	}
	for _, n := range c.nodes {
		b := n.get()
		waitFor(t, 30*time.Second, "node's group config", func() bool {
			v := b.groupConfig("orders")
			return v.String("share.auto.offset.reset") == "earliest" && v.Int("share.delivery.count.limit") == 3
		})
	}
	want := []string{"share.delivery.count.limit=3 (GROUP_CONFIG) share.delivery.count.limit=3:GROUP_CONFIG group.share.delivery.count.limit=5:DEFAULT_CONFIG"}
	if got := describeGroupConfigs(t, ctx, cl.Broker(3), "orders", "share.delivery.count.limit"); !slices.Equal(got, want) {
		t.Errorf("described by node 3:\n got %q\nwant %q", got, want)
	}
	if code, msg := alterGroupConfigs(t, ctx, cl.Broker(2), "orders", "share.delivery.count.limit=11"); code != kerr.InvalidConfig.Code ||
		!strings.Contains(msg, "in the range 2 to 10 inclusive") {
		t.Errorf("refused through node 2: %s %q", kerr.ErrorForCode(code), msg)
	}
}

// Authorization as Kafka's ConfigHelper and ConfigAdminManager: altering a
// group's configs needs ALTER_CONFIGS on the group, describing them
// DESCRIBE_CONFIGS, else GROUP_AUTHORIZATION_FAILED.
func TestGroupConfigsAuthz(t *testing.T) {
	e := newAuthzEnv(t, nil)
	alice := e.client("alice", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	denied := kerr.GroupAuthorizationFailed.Code
	if code, _ := alterGroupConfigs(t, ctx, alice, "g-queue", "share.auto.offset.reset=earliest"); code != denied {
		t.Errorf("alter without ACLs: %s", kerr.ErrorForCode(code))
	}
	if got := describeGroupConfigs(t, ctx, alice, "g-queue", "share.auto.offset.reset"); len(got) != 1 || !strings.HasPrefix(got[0], "GROUP_AUTHORIZATION_FAILED") {
		t.Errorf("describe without ACLs: %q", got)
	}
	e.setACLs([]auth.ACL{aliceACL(kmsg.ACLResourceTypeGroup, "g-", prefixed, opAlterConfigs)})
	if code, msg := alterGroupConfigs(t, ctx, alice, "g-queue", "share.auto.offset.reset=earliest"); code != 0 {
		t.Errorf("alter with ALTER_CONFIGS: %s %s", kerr.ErrorForCode(code), msg)
	}
	if code, _ := alterGroupConfigs(t, ctx, alice, "other", "share.auto.offset.reset=earliest"); code != denied {
		t.Errorf("alter of a group outside the ACL: %s", kerr.ErrorForCode(code))
	}
	// ALTER_CONFIGS implies DESCRIBE_CONFIGS, as in Kafka.
	if got := describeGroupConfigs(t, ctx, alice, "g-queue", "share.auto.offset.reset"); len(got) != 1 || !strings.HasPrefix(got[0], "share.auto.offset.reset=earliest (GROUP_CONFIG)") {
		t.Errorf("describe with ALTER_CONFIGS: %q", got)
	}
	e.setACLs([]auth.ACL{aliceACL(kmsg.ACLResourceTypeGroup, "g-queue", literal, opDescribeConfigs)})
	if code, _ := alterGroupConfigs(t, ctx, alice, "g-queue", "share.auto.offset.reset=latest"); code != denied {
		t.Errorf("alter with DESCRIBE_CONFIGS only: %s", kerr.ErrorForCode(code))
	}
}
