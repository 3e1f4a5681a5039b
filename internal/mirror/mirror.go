package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/mirror/mirrorconf"
)

// ClientFunc makes a franz-go client for the cluster of an alias: its
// bootstrap servers and security settings come from the configuration, the
// options given add what the caller needs (a consumer's partitions, a
// transactional ID). The CLI builds it; tests give their own.
type ClientFunc func(cluster string, opts ...kgo.Opt) (*kgo.Client, error)

// Options configure a Mirror.
type Options struct {
	Config  *mirrorconf.Config
	Clients ClientFunc
	Logger  *slog.Logger
	// RetryBackoff is the wait before a part of a flow that failed starts
	// again (a cluster down, a topic refused); 5 s when zero.
	RetryBackoff time.Duration
	// Targets, when set, runs only the flows into these clusters
	// (MirrorMaker's --clusters).
	Targets []string
	// ProgressInterval is how often the at-least-once copier flushes and
	// records its source offsets (Kafka Connect's offset.flush.interval.ms,
	// 60 s there); 5 s when zero. Exactly-once and offset-preserving flows
	// record progress with every batch.
	ProgressInterval time.Duration
}

// Mirror runs every enabled flow of a configuration in this process.
type Mirror struct {
	opts  Options
	flows []*flow
}

// New checks the options and prepares the flows; Run starts them.
func New(o Options) (*Mirror, error) {
	if o.Config == nil {
		return nil, errors.New("mirror: no configuration")
	}
	if o.Clients == nil {
		return nil, errors.New("mirror: no client factory")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = 5 * time.Second
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = 5 * time.Second
	}
	for _, ig := range o.Config.Ignored {
		o.Logger.Info("mirror: setting accepted with no effect", "key", ig.Key, "why", ig.Reason)
	}
	for _, t := range o.Targets {
		if o.Config.Clusters[t] == nil {
			return nil, fmt.Errorf("mirror: --clusters %s: no such cluster in the configuration", t)
		}
	}
	m := &Mirror{opts: o}
	for _, f := range o.Config.Flows {
		if !targeted(o.Targets, f.Target) {
			continue
		}
		fl := newFlow(f, o)
		if err := checkOverrides(fl); err != nil {
			return nil, err
		}
		m.flows = append(m.flows, fl)
	}
	// Kafka runs a heartbeat connector for every other pair too, so the
	// heartbeats of B->A come back through A->B and show the path alive.
	for _, f := range o.Config.HeartbeatFlows {
		if !targeted(o.Targets, f.Target) || !f.EmitHeartbeats {
			continue
		}
		fl := newFlow(f, o)
		fl.heartbeatOnly = true
		m.flows = append(m.flows, fl)
	}
	if len(m.flows) == 0 {
		return nil, errors.New("mirror: no flow to run (enable one with A->B.enabled = true)")
	}
	return m, nil
}

// Run runs every flow until ctx ends. A flow's parts that fail are logged
// and started again after the retry backoff: a cluster that is down stops
// its flows' progress, never the process.
func (m *Mirror) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, fl := range m.flows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fl.run(ctx)
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// PartitionLag is one mirrored partition's position.
type PartitionLag struct {
	Flow            string // "A->B"
	SourceTopic     string
	TargetTopic     string
	Partition       int32
	Next            int64 // the next source offset to copy
	SourceEnd       int64 // the source's last stable offset seen, -1 before the first fetch
	Lag             int64 // SourceEnd - Next, 0 when unknown
	OffsetPreserved bool
	Stopped         string // why this partition no longer copies (promoted...), empty while it does
}

// Lag returns every partition's position, sorted by flow, topic, partition.
func (m *Mirror) Lag() []PartitionLag {
	var out []PartitionLag
	for _, fl := range m.flows {
		out = append(out, fl.lag()...)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Flow != b.Flow {
			return a.Flow < b.Flow
		}
		if a.SourceTopic != b.SourceTopic {
			return a.SourceTopic < b.SourceTopic
		}
		return a.Partition < b.Partition
	})
	return out
}

// Counters are a flow's totals since the process started.
type Counters struct {
	Flow              string
	Records           int64 // records copied (translate mode) or appended (offset-preserving)
	Bytes             int64
	OffsetSyncs       int64
	Checkpoints       int64
	GroupOffsetSyncs  int64
	Heartbeats        int64
	TopicsCreated     int64
	Errors            int64
	LastReplicationMs int64 // the last copied record's age when it was acknowledged (end-to-end latency)
}

// Counters returns each flow's counters.
func (m *Mirror) Counters() []Counters {
	out := make([]Counters, 0, len(m.flows))
	for _, fl := range m.flows {
		out = append(out, fl.counters())
	}
	return out
}

func targeted(targets []string, t string) bool {
	if len(targets) == 0 {
		return true
	}
	for _, x := range targets {
		if x == t {
			return true
		}
	}
	return false
}

func flowName(f *mirrorconf.Flow) string {
	if f.Name != "" {
		return f.Name
	}
	return fmt.Sprintf("%s->%s", f.Source, f.Target)
}
