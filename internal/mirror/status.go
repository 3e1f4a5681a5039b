package mirror

import (
	"context"
	"fmt"
	"log/slog"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/samsa-io/samsa/internal/mirror/mirrorconf"
)

// Status reads every flow's position from the clusters themselves, so it
// needs no running mirror: the source's last stable offsets against the
// target's high watermarks (offset-preserving flows) or the progress topic
// (translating flows). A cluster that cannot be reached is an error.
func Status(ctx context.Context, cfg *mirrorconf.Config, clients ClientFunc) ([]PartitionLag, error) {
	var out []PartitionLag
	for _, f := range cfg.Flows {
		fl := newFlow(f, Options{Config: cfg, Clients: clients, Logger: slog.New(slog.DiscardHandler)})
		lags, err := fl.status(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fl.name, err)
		}
		out = append(out, lags...)
	}
	return out, nil
}

func (fl *flow) status(ctx context.Context) ([]PartitionLag, error) {
	src, err := fl.client(fl.cfg.Source)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	tgt, err := fl.client(fl.cfg.Target)
	if err != nil {
		return nil, err
	}
	defer tgt.Close()
	srcAdm, tgtAdm := kadm.NewClient(src), kadm.NewClient(tgt)
	listed, err := srcAdm.ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("list %s's topics: %w", fl.cfg.Source, err)
	}
	var topics []string
	for t, d := range listed {
		if d.Err == nil && fl.shouldReplicate(t) {
			topics = append(topics, t)
		}
	}
	sort.Strings(topics)
	if len(topics) == 0 {
		return nil, nil
	}
	srcEnds, err := srcAdm.ListCommittedOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("end offsets on %s: %w", fl.cfg.Source, err)
	}
	next := map[tp]int64{}
	mirrorOf := map[string]string{}
	if fl.cfg.OffsetPreserving {
		remotes := make([]string, len(topics))
		for i, t := range topics {
			remotes[i] = fl.remote(t)
		}
		ends, err := tgtAdm.ListEndOffsets(ctx, remotes...)
		if err != nil {
			return nil, fmt.Errorf("end offsets on %s: %w", fl.cfg.Target, err)
		}
		for _, t := range topics {
			for p := range listed[t].Partitions {
				if o, ok := ends.Lookup(fl.remote(t), p); ok && o.Err == nil {
					next[tp{t, p}] = o.Offset
				}
			}
		}
		rcs, err := tgtAdm.DescribeTopicConfigs(ctx, remotes...)
		if err == nil {
			for _, rc := range rcs {
				for _, c := range rc.Configs {
					if c.Key == MirrorSourceConfig && c.Value != nil {
						mirrorOf[rc.Name] = *c.Value
					}
				}
			}
		}
	} else {
		last, err := fl.readProgress(ctx)
		if err != nil {
			return nil, err
		}
		for k, off := range last {
			next[k] = off + 1
		}
	}
	var out []PartitionLag
	for _, t := range topics {
		for p := range listed[t].Partitions {
			l := PartitionLag{Flow: fl.name, SourceTopic: t, TargetTopic: fl.remote(t), Partition: p,
				SourceEnd: -1, OffsetPreserved: fl.cfg.OffsetPreserving}
			if o, ok := srcEnds.Lookup(t, p); ok && o.Err == nil {
				l.SourceEnd = o.Offset
			}
			l.Next = next[tp{t, p}]
			if l.SourceEnd > l.Next {
				l.Lag = l.SourceEnd - l.Next
			}
			if fl.cfg.OffsetPreserving && mirrorOf[l.TargetTopic] != fl.cfg.Source {
				l.Stopped = "promoted: not a mirror topic of " + fl.cfg.Source
			}
			out = append(out, l)
		}
	}
	return out, nil
}

// Promote makes offset-preserving flows' mirror topics on their targets
// ordinary, writable topics: it deletes their samsa.mirror.source. Only the
// flows named (all offset-preserving ones when none is) and the target
// topics named (all of a flow's when none is). A running mirror stops
// copying a partition once its topic is promoted. It returns the topics
// promoted.
func Promote(ctx context.Context, cfg *mirrorconf.Config, clients ClientFunc, flows, topics []string) ([]string, error) {
	want := func(list []string, s string) bool {
		if len(list) == 0 {
			return true
		}
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	var promoted []string
	matched := false
	for _, f := range cfg.Flows {
		if !f.OffsetPreserving || !want(flows, flowName(f)) {
			continue
		}
		matched = true
		cl, err := clients(f.Target)
		if err != nil {
			return promoted, fmt.Errorf("cluster %s: %w", f.Target, err)
		}
		done, err := promoteOn(ctx, kadm.NewClient(cl), f, topics, want)
		cl.Close()
		promoted = append(promoted, done...)
		if err != nil {
			return promoted, err
		}
	}
	if !matched {
		return nil, fmt.Errorf("no offset-preserving flow matches %v (set samsa.offset.preserving.enabled = true on a flow)", flows)
	}
	return promoted, nil
}

func promoteOn(ctx context.Context, adm *kadm.Client, f *mirrorconf.Flow, topics []string, want func([]string, string) bool) ([]string, error) {
	listed, err := adm.ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("list %s's topics: %w", f.Target, err)
	}
	names := listed.Names()
	if len(names) == 0 {
		return nil, nil
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("describe %s's topic configs: %w", f.Target, err)
	}
	var todo []string
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			if c.Key == MirrorSourceConfig && c.Value != nil && *c.Value == f.Source && want(topics, rc.Name) {
				todo = append(todo, rc.Name)
			}
		}
	}
	sort.Strings(todo)
	var done []string
	for _, t := range todo {
		resps, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: MirrorSourceConfig}}, t)
		if err == nil {
			_, err = resps.On(t, nil)
			if err == nil {
				for _, r := range resps {
					err = r.Err
				}
			}
		}
		if err != nil {
			return done, fmt.Errorf("promote %s on %s: %w", t, f.Target, err)
		}
		done = append(done, t)
	}
	return done, nil
}
