package streamsdiff

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// apps are the topologies' application names: each runs as application
// ID prefix+name, and its consumer group reads these input topics (the
// global table's topic is read by the global consumer, outside the group).
var apps = []struct {
	name   string
	inputs []string
}{
	{"wordcount", []string{"wc-in"}},
	{"windowed", []string{"win-in"}},
	{"session", []string{"sess-in"}},
	{"stream-stream", []string{"ssj-left", "ssj-right"}},
	{"stream-table", []string{"stj-stream", "stj-table"}},
	{"fk", []string{"fk-orders", "fk-products"}},
}

// starter starts one implementation's six applications against the
// cluster, with application IDs and output topics under prefix, and
// returns once they run; they stop when the test ends.
type starter func(t *testing.T, bootstrap, prefix string)

// settleLimit bounds the wait for an application to consume its input.
const settleLimit = 3 * time.Minute

// runTopologies runs one implementation on a broker of its own: topics
// created, phase 0 produced, the applications started, each later phase
// produced once the applications settled, and the outputs read.
func runTopologies(t *testing.T, prefix string, start starter) outputs {
	t.Helper()
	bootstrap, _ := devcluster.StartTestBroker(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	createTopics(t, adm, prefix)
	phases := inputs()
	produce(t, cl, phases[0])
	start(t, bootstrap, prefix)
	waitSettled(t, adm, prefix)
	for i, ph := range phases[1:] {
		produce(t, cl, ph)
		if err := settle(t.Context(), adm, prefix); err != nil {
			t.Fatalf("phase %d: %v", i+1, err)
		}
	}
	return collect(t, cl, adm, prefix)
}

// createTopics creates the input topics and this run's output topics.
// Input and output keep their records forever: the inputs' timestamps
// are in the past, and time-based retention must not delete them.
func createTopics(t *testing.T, adm *kadm.Client, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	forever := map[string]*string{"retention.ms": str("-1")}
	for _, topic := range slices.Sorted(maps.Keys(inputTopics)) {
		mustCreate(t, adm, ctx, topic, inputTopics[topic], forever)
	}
	for _, out := range outputTopics {
		mustCreate(t, adm, ctx, prefix+out.name, outputPartitions, forever)
	}
}

func mustCreate(t *testing.T, adm *kadm.Client, ctx context.Context, topic string, partitions int, configs map[string]*string) {
	resp, err := adm.CreateTopic(ctx, int32(partitions), 1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// produce sends a phase's records in order, each to its precomputed
// partition (ManualPartitioner): franz-go keeps the order per partition.
func produce(t *testing.T, cl *kgo.Client, ph phase) {
	t.Helper()
	recs := make([]*kgo.Record, 0, len(ph))
	for _, r := range ph {
		kr := &kgo.Record{Topic: r.topic, Value: r.value, Timestamp: time.UnixMilli(r.timestamp), Partition: r.partition}
		if r.key != nil {
			kr.Key = []byte(*r.key)
		}
		recs = append(recs, kr)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// waitSettled waits until every application settled (settle).
func waitSettled(t *testing.T, adm *kadm.Client, prefix string) {
	t.Helper()
	if err := settle(t.Context(), adm, prefix); err != nil {
		t.Fatal(err)
	}
}

// settle waits until every application has consumed all of its input and
// internal topics and the outputs stopped growing. Consumed means the
// group's committed offset is the end offset on every partition of its
// input topics and of its repartition and foreign-key subscription
// topics (Kafka Streams' names: <application.id>-...-repartition and
// -topic). Offsets are read before end offsets: at least once commits
// after the task's output was flushed, so a commit at the end offset
// means everything that input caused is already in the topics read next.
func settle(ctx context.Context, adm *kadm.Client, prefix string) error {
	ctx, cancel := context.WithTimeout(ctx, settleLimit)
	defer cancel()
	var last string
	var lastOut map[string]int64
	for {
		if err := failure(prefix); err != nil {
			return fmt.Errorf("the applications failed: %w", err)
		}
		pending, err := unconsumed(ctx, adm, prefix)
		if err == nil && pending == "" {
			out, oerr := outputEnds(ctx, adm, prefix)
			if oerr == nil && lastOut != nil && maps.Equal(out, lastOut) {
				return nil
			}
			lastOut, err = out, oerr
		} else {
			lastOut = nil
		}
		if err != nil {
			pending = err.Error()
		}
		last = pending
		select {
		case <-ctx.Done():
			return fmt.Errorf("the applications did not settle in %v: %s", settleLimit, last)
		case <-time.After(time.Second):
		}
	}
}

// unconsumed answers what some application has not consumed yet ("" when
// nothing).
func unconsumed(ctx context.Context, adm *kadm.Client, prefix string) (string, error) {
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		return "", err
	}
	for _, app := range apps {
		group := prefix + app.name
		committed, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return "", fmt.Errorf("offsets of %s: %w", group, err)
		}
		sources := slices.Clone(app.inputs)
		for _, name := range topics.Names() {
			if strings.HasPrefix(name, group+"-") && (strings.HasSuffix(name, "-repartition") || strings.HasSuffix(name, "-topic")) {
				sources = append(sources, name)
			}
		}
		ends, err := adm.ListEndOffsets(ctx, sources...)
		if err != nil {
			return "", fmt.Errorf("end offsets of %v: %w", sources, err)
		}
		var pending []string
		ends.Each(func(end kadm.ListedOffset) {
			if end.Err != nil {
				pending = append(pending, fmt.Sprintf("%s/%d: %v", end.Topic, end.Partition, end.Err))
				return
			}
			at := int64(0)
			if c, ok := committed.Lookup(end.Topic, end.Partition); ok {
				at = c.At
			}
			if at < end.Offset {
				pending = append(pending, fmt.Sprintf("%s/%d at %d of %d", end.Topic, end.Partition, at, end.Offset))
			}
		})
		if len(pending) > 0 {
			slices.Sort(pending)
			return group + ": " + strings.Join(pending, ", "), nil
		}
	}
	return "", nil
}

// outputEnds answers the end offset of every output partition.
func outputEnds(ctx context.Context, adm *kadm.Client, prefix string) (map[string]int64, error) {
	names := make([]string, 0, len(outputTopics))
	for _, out := range outputTopics {
		names = append(names, prefix+out.name)
	}
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err != nil {
		return nil, err
	}
	m := map[string]int64{}
	var first error
	ends.Each(func(end kadm.ListedOffset) {
		if end.Err != nil && first == nil {
			first = end.Err
		}
		m[fmt.Sprintf("%s/%d", end.Topic, end.Partition)] = end.Offset
	})
	return m, first
}
