package groupsref

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/test/kafkaref"
)

func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

// kafkaEnv turns the Apache Kafka variants on: they prove the scenarios
// (each holds on the reference broker) and take two to three minutes, so
// make test runs the Samsa variants only and `make groupsref` both.
const kafkaEnv = "SAMSA_GROUPSREF_KAFKA"

// The broker properties the scenarios need, given to both brokers: the
// lower bounds of the group configs the tests set, which Kafka keeps high
// by default (a 15 s minimum record lock, a 45 s and 5 s minimum streams
// session timeout and heartbeat). The features need nothing: Kafka 4.4
// formats a new cluster with share.version=2 and streams.version=1, and
// each test checks the finalized levels first.
var (
	shareProps   = []string{"group.share.min.record.lock.duration.ms=1000"}
	streamsProps = []string{"group.streams.min.session.timeout.ms=5000", "group.streams.min.heartbeat.interval.ms=500"}
)

// target is the broker a scenario runs against.
type target struct {
	name      string
	bootstrap string
	// restart stops the broker under control and starts it again on the
	// same data and address, returning once it serves.
	restart func(ctx context.Context) error
}

// onBrokers runs a scenario as two subtests, each broker with the
// properties props: against Apache Kafka 4.4 (the reference, with
// SAMSA_GROUPSREF_KAFKA=1) and against Samsa.
func onBrokers(t *testing.T, props []string, scenario func(t *testing.T, b *target)) {
	t.Run("kafka", func(t *testing.T) {
		if os.Getenv(kafkaEnv) != "1" {
			t.Skipf("the Apache Kafka reference runs with %s=1 (make groupsref)", kafkaEnv)
		}
		k := kafkaref.StartKafka(t, props...)
		scenario(t, &target{name: "kafka", bootstrap: k.Bootstrap, restart: k.Restart})
	})
	t.Run("samsa", func(t *testing.T) {
		scenario(t, startSamsa(t, props))
	})
}

// startSamsa runs a one-node Samsa cluster (internal/devcluster, so it can
// be restarted on its data) with the properties props.
func startSamsa(t *testing.T, props []string) *target {
	t.Helper()
	bin, err := devcluster.BuildOnce(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	overrides := map[string]string{"samsa.schema.registry.listener": "", "samsa.rest.listener": ""}
	for _, kv := range props {
		k, v, _ := strings.Cut(kv, "=")
		overrides[k] = v
	}
	dc, err := devcluster.New(devcluster.Config{Binary: bin, Dir: t.TempDir(), Nodes: 1, Overrides: overrides, StopTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("samsa log (last lines):\n%s", dc.LogTails(40))
		}
		dc.Close()
	})
	start := func(ctx context.Context) error {
		if err := dc.Node(1).Start(); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		return dc.WaitReady(ctx)
	}
	if err := start(t.Context()); err != nil {
		t.Fatal(err)
	}
	return &target{name: "samsa", bootstrap: dc.Bootstrap(), restart: func(ctx context.Context) error {
		if err := dc.Node(1).Stop(20 * time.Second); err != nil {
			return err
		}
		return start(ctx)
	}}
}

// client is a franz-go client of the broker, closed when the test ends.
func (b *target) client(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.bootstrap)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// requireFeature fails the test unless the broker has finalized the
// feature at level 1 or more (ApiVersions v3+).
func (b *target) requireFeature(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, b.client(t))
	if err != nil {
		t.Fatalf("%s: ApiVersions: %v", b.name, err)
	}
	for _, f := range resp.FinalizedFeatures {
		if f.Name == name && f.MaxVersionLevel >= 1 {
			return
		}
	}
	t.Fatalf("%s: feature %s is not finalized at level 1 or more (finalized: %+v)", b.name, name, resp.FinalizedFeatures)
}

// createTopic creates a topic with replication factor 1.
func (b *target) createTopic(t *testing.T, topic string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(b.client(t)).CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("%s: create topic %s: %v", b.name, topic, err)
	}
}

// setGroupConfigs sets configs of a group (a GROUP config resource,
// KIP-848's group configs: IncrementalAlterConfigs works on a group that
// does not exist yet), checking each took.
func (b *target) setGroupConfigs(t *testing.T, group string, configs map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	res.ResourceName = group
	for k, v := range configs {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value, c.Op = k, kmsg.StringPtr(v), kmsg.IncrementalAlterConfigOpSet
		res.Configs = append(res.Configs, c)
	}
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, b.client(t))
	if err != nil {
		t.Fatalf("%s: set group %s configs: %v", b.name, group, err)
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			t.Fatalf("%s: set group %s configs %v: %v (%s)", b.name, group, configs, err, deref(r.ErrorMessage))
		}
	}
	// Read them back, until they show: a config the broker took but does
	// not apply would make the scenario pass for the wrong reason, and
	// Kafka's brokers learn group configs from the metadata log, a moment
	// after the controller answered.
	deadline := time.Now().Add(15 * time.Second)
	for {
		diff := b.groupConfigDiff(ctx, t, group, configs)
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: group %s configs after setting them: %s", b.name, group, diff)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// groupConfigDiff describes the group's configs and says which differ
// from want ("" when none).
func (b *target) groupConfigDiff(ctx context.Context, t *testing.T, group string, want map[string]string) string {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, b.client(t))
	if err != nil {
		t.Fatalf("%s: describe group %s configs: %v", b.name, group, err)
	}
	got := map[string]string{}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			t.Fatalf("%s: describe group %s configs: %v", b.name, group, err)
		}
		for _, c := range r.Configs {
			got[c.Name] = deref(c.Value)
		}
	}
	var diffs []string
	for k, v := range want {
		if got[k] != v {
			diffs = append(diffs, fmt.Sprintf("%s is %q, want %q", k, got[k], v))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

// produce writes each value as one record (its own batch: share groups
// acquire whole batches, so one-record batches let consumers share a
// partition finely) to partition 0 of topic, in order.
func (b *target) produce(t *testing.T, topic string, values ...string) {
	t.Helper()
	cl := b.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MaxBufferedRecords(1))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 0, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("%s: produce to %s: %v", b.name, topic, err)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// values makes n record values kind-0 ... kind-(n-1), starting at from.
func values(kind string, from, n int) []string {
	vs := make([]string, n)
	for i := range vs {
		vs[i] = fmt.Sprintf("%s-%d", kind, from+i)
	}
	return vs
}
