package streams

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// topicPlan is what an application's internal topics must look like and
// how many tasks each subtopology has, from the source topics' partition
// counts (Kafka's leader works this out in its assignor; every instance
// here works it out at start, the same way, and creation is idempotent).
type topicPlan struct {
	tasks       map[int32]int32  // subtopology -> partition count = task count
	repartition map[string]int32 // full name -> partitions
	changelogs  map[string]changelogTopic
}

type changelogTopic struct {
	partitions int32
	configs    map[string]string
}

// changelogName is Kafka Streams' changelog topic name of a store.
func changelogName(appID, store string) string { return appID + "-" + store + "-changelog" }

// planTopics sizes the internal topics. counts holds the partition count of
// every external source topic; a missing one is an error naming it (Kafka's
// MissingSourceTopicException).
func planTopics(appID string, t *Topology, bt *builtTopology, counts map[string]int32, windowExtra int64) (*topicPlan, error) {
	p := &topicPlan{tasks: map[int32]int32{}, repartition: map[string]int32{}, changelogs: map[string]changelogTopic{}}
	internal := func(topic string) bool { _, ok := t.internalTopics[topic]; return ok }
	var missing []string
	for _, st := range bt.subtopologies {
		for topic := range st.topics {
			if !internal(topic) {
				if _, ok := counts[topic]; !ok {
					missing = append(missing, topic)
				}
			}
		}
	}
	for _, st := range bt.globalGroups {
		for topic := range st.topics {
			if _, ok := counts[topic]; !ok {
				missing = append(missing, topic)
			}
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("streams: source topics %s are missing; create them first", strings.Join(missing, ", "))
	}
	// Fixed counts first: those set by the DSL (Repartitioned).
	fixed := map[string]int32{}
	for name, it := range t.internalTopics {
		if it.partitions > 0 {
			fixed[name] = it.partitions
		}
	}
	// An internal topic co-partitioned with external topics takes their
	// count, not its writers' (Kafka's CopartitionedTopicsEnforcer): the
	// foreign-key join's registration topic has the right table's count
	// although the left side writes it, and its response topic the left
	// table's. This also breaks the cycle the two make between the join's
	// subtopologies.
	if err := copartitionFixed(t, counts, fixed, internal); err != nil {
		return nil, err
	}
	// A repartition topic takes the largest task count of the subtopologies
	// writing it; resolve until nothing changes (subtopologies may chain).
	writers := map[string][]*subtopology{}
	for _, st := range bt.subtopologies {
		for _, n := range st.nodes {
			if n.kind == sinkNode && internal(n.topic) {
				writers[n.topic] = append(writers[n.topic], st)
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, st := range bt.subtopologies {
			if _, done := p.tasks[st.id]; done {
				continue
			}
			n, ok := int32(0), true
			for topic := range st.topics {
				c, known := counts[topic], true
				if internal(topic) {
					c, known = fixed[topic]
				}
				if !known {
					ok = false
					break
				}
				n = max(n, c)
			}
			if ok {
				p.tasks[st.id] = n
				changed = true
			}
		}
		for topic, ws := range writers {
			if _, done := fixed[topic]; done {
				continue
			}
			n, ok := int32(0), true
			for _, w := range ws {
				c, known := p.tasks[w.id]
				if !known {
					ok = false
					break
				}
				n = max(n, c)
			}
			if ok {
				fixed[topic] = n
				changed = true
			}
		}
	}
	for _, st := range bt.subtopologies {
		if _, ok := p.tasks[st.id]; !ok {
			return nil, fmt.Errorf("streams: cannot size the topics of subtopology %d (a cycle of repartition topics?)", st.id)
		}
	}
	for _, group := range t.copartition {
		want := int32(-1)
		var names []string
		for _, topic := range group {
			c := counts[topic]
			if internal(topic) {
				c = fixed[topic]
			}
			names = append(names, topic)
			if want >= 0 && c != want {
				return nil, fmt.Errorf("streams: topics not co-partitioned: [%s] (a join needs equal partition counts; repartition one side with Repartition)", strings.Join(names, ","))
			}
			want = c
		}
	}
	for name, n := range fixed {
		p.repartition[appID+"-"+name] = n
	}
	for _, st := range bt.subtopologies {
		for _, s := range st.stores {
			def := t.stores[s]
			if !def.logging {
				continue
			}
			cfg := map[string]string{"cleanup.policy": "compact"}
			if def.kind == windowStore || def.kind == sessionStore {
				cfg["cleanup.policy"] = "compact,delete"
				cfg["retention.ms"] = strconv.FormatInt(def.retention+windowExtra, 10)
			}
			for k, v := range def.logConfig {
				cfg[k] = v
			}
			p.changelogs[changelogName(appID, s)] = changelogTopic{partitions: p.tasks[st.id], configs: cfg}
		}
	}
	return p, nil
}

// copartitionFixed sets the count of every internal topic of a
// co-partition group that has external topics to theirs, which must
// agree; a count the DSL fixed must agree too.
func copartitionFixed(t *Topology, counts, fixed map[string]int32, internal func(string) bool) error {
	for _, group := range t.copartition {
		external := int32(-1)
		for _, topic := range group {
			if internal(topic) {
				continue
			}
			if external >= 0 && counts[topic] != external {
				return fmt.Errorf("streams: topics not co-partitioned: [%s] (a join needs equal partition counts; repartition one side with Repartition)", strings.Join(group, ","))
			}
			external = counts[topic]
		}
		if external < 0 {
			continue
		}
		for _, topic := range group {
			if !internal(topic) {
				continue
			}
			if c, ok := fixed[topic]; ok && c != external {
				return fmt.Errorf("streams: internal topic %s has %d partitions but is co-partitioned with topics of %d: [%s]", topic, c, external, strings.Join(group, ","))
			}
			fixed[topic] = external
		}
	}
	return nil
}

// ensureTopics creates the internal topics, and checks the partition
// counts of those that exist.
func ensureTopics(ctx context.Context, adm *kadm.Client, p *topicPlan, rf int) error {
	type want struct {
		partitions int32
		configs    map[string]string
	}
	all := map[string]want{}
	for name, n := range p.repartition {
		// Repartition topics are deleted from as they are consumed (Kafka
		// purges them); time retention is a backstop.
		all[name] = want{n, map[string]string{"cleanup.policy": "delete", "segment.bytes": "52428800", "retention.ms": "-1"}}
	}
	for name, c := range p.changelogs {
		all[name] = want{c.partitions, c.configs}
	}
	if len(all) == 0 {
		return nil
	}
	var names []string
	for name := range all {
		names = append(names, name)
	}
	sort.Strings(names)
	details, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return fmt.Errorf("streams: list internal topics: %w", err)
	}
	var errs []error
	for _, name := range names {
		w := all[name]
		if d, ok := details[name]; ok && d.Err == nil {
			if int32(len(d.Partitions)) != w.partitions {
				errs = append(errs, fmt.Errorf("streams: internal topic %s has %d partitions, the topology needs %d; delete it (kafka-streams-application-reset) or use a new application.id", name, len(d.Partitions), w.partitions))
			}
			continue
		}
		cfg := map[string]*string{}
		for k, v := range w.configs {
			cfg[k] = kadm.StringPtr(v)
		}
		resp, err := adm.CreateTopic(ctx, w.partitions, int16(rf), cfg, name)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			errs = append(errs, fmt.Errorf("streams: create internal topic %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
