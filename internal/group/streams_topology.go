package group

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// streamsTopology is a streams application's topology as the coordinator
// needs it (Kafka's StreamsGroupTopologyValue): per subtopology, the topics
// it reads (user topics by name or regex, and the repartition topics it
// reads, which Streams expects the coordinator to create), the repartition
// topics it writes, its state changelog topics, and the groups of source
// topics that must be copartitioned.
type streamsTopology struct {
	epoch         int32
	subtopologies []subtopology // sorted by ID
}

type subtopology struct {
	id                 string
	sourceTopics       []string
	sourceRegex        []string
	changelogs         []streamsTopicInfo
	repartitionSinks   []string
	repartitionSources []streamsTopicInfo
	copartitionGroups  []copartitionGroup
}

// streamsTopicInfo is an internal topic the topology asks for: a partition
// count (0: the coordinator computes it), a replication factor (0: the
// broker's default) and topic configs.
type streamsTopicInfo struct {
	name        string
	partitions  int32
	replication int16
	configs     [][2]string
}

// copartitionGroup holds indexes into the subtopology's sourceTopics,
// sourceRegex and repartitionSources.
type copartitionGroup struct {
	sourceTopics, sourceRegex, repartitionSources []int16
}

// Status codes of StreamsGroupHeartbeat's answer (KIP-1071).
const (
	streamsStatusStaleTopology                = 0
	streamsStatusMissingSourceTopics          = 1
	streamsStatusIncorrectlyPartitionedTopics = 2
	streamsStatusMissingInternalTopics        = 3
	streamsStatusShutdownApplication          = 4
)

type streamsStatus struct {
	code   int8
	detail string
}

// topologyFromRequest converts and validates a heartbeat's topology,
// copying the strings it keeps. The error is the INVALID_REQUEST message.
func topologyFromRequest(t *kmsg.StreamsGroupHeartbeatRequestTopology) (*streamsTopology, error) {
	out := &streamsTopology{epoch: t.Epoch}
	if t.Epoch < 0 {
		return nil, fmt.Errorf("Topology epoch must be non-negative.")
	}
	seen := make(map[string]bool)
	for _, st := range t.Subtopologies {
		if st.SubtopologyID == "" {
			return nil, fmt.Errorf("Subtopology ID must be non-empty.")
		}
		if seen[st.SubtopologyID] {
			return nil, fmt.Errorf("Subtopology %s is given twice.", st.SubtopologyID)
		}
		seen[st.SubtopologyID] = true
		sub := subtopology{
			id:               strings.Clone(st.SubtopologyID),
			sourceTopics:     cloneStrings(st.SourceTopics),
			sourceRegex:      cloneStrings(st.SourceTopicRegex),
			repartitionSinks: cloneStrings(st.RepartitionSinkTopics),
		}
		for _, re := range sub.sourceRegex {
			if _, err := compileTopicRegex(re); err != nil {
				return nil, fmt.Errorf("Subtopology %s has an invalid source topic regex %s: %v.", sub.id, re, err)
			}
		}
		sub.changelogs = topicInfosFromRequest(st.StateChangelogTopics)
		for _, c := range sub.changelogs {
			if c.partitions != 0 {
				// A changelog has as many partitions as its subtopology
				// has tasks, always.
				return nil, fmt.Errorf("Changelog topic %s must have an undefined partition count, but it is set to %d.", c.name, c.partitions)
			}
		}
		sub.repartitionSources = topicInfosFromRequest(st.RepartitionSourceTopics)
		for _, cg := range st.CopartitionGroups {
			g := copartitionGroup{
				sourceTopics:       slices.Clone(cg.SourceTopics),
				sourceRegex:        slices.Clone(cg.SourceTopicRegex),
				repartitionSources: slices.Clone(cg.RepartitionSourceTopics),
			}
			if !indexesIn(g.sourceTopics, len(sub.sourceTopics)) || !indexesIn(g.sourceRegex, len(sub.sourceRegex)) ||
				!indexesIn(g.repartitionSources, len(sub.repartitionSources)) {
				return nil, fmt.Errorf("Subtopology %s has a copartition group with an index out of range.", sub.id)
			}
			sub.copartitionGroups = append(sub.copartitionGroups, g)
		}
		out.subtopologies = append(out.subtopologies, sub)
	}
	slices.SortFunc(out.subtopologies, func(a, b subtopology) int { return strings.Compare(a.id, b.id) })
	return out, nil
}

func topicInfosFromRequest(in []kmsg.TopicInfo) []streamsTopicInfo {
	var out []streamsTopicInfo
	for _, ti := range in {
		info := streamsTopicInfo{name: strings.Clone(ti.Topic), partitions: ti.NumPartitions, replication: ti.ReplicationFactor}
		for _, c := range ti.Configs {
			info.configs = append(info.configs, [2]string{strings.Clone(c.Key), strings.Clone(c.Value)})
		}
		out = append(out, info)
	}
	return out
}

func indexesIn(idx []int16, n int) bool {
	for _, i := range idx {
		if i < 0 || int(i) >= n {
			return false
		}
	}
	return true
}

func cloneStrings(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.Clone(s)
	}
	return out
}

// configuredTopology is a topology checked against the topics that exist
// (Kafka's ConfiguredTopology): the task count of each subtopology, the
// topics each reads, the internal topics still to create, and what is
// wrong, as heartbeat statuses. Only a ready topology is assigned.
type configuredTopology struct {
	topologyEpoch int32
	// hash identifies the names and partition counts of every topic the
	// topology names (and its regexes matched).
	hash     int64
	statuses []streamsStatus
	// tasks is the task count of each subtopology; sources the topics each
	// reads (user topics, regex matches, repartition topics), each with its
	// partition count in partitions.
	tasks      map[string]int32
	sources    map[string][]string
	partitions map[string]int32
	// stateful lists the subtopologies with state (changelog topics):
	// their tasks are the ones that warm up.
	stateful map[string]bool
	// create are the internal topics missing, with the partition counts
	// and configs they must have.
	create []NewTopic
}

func (c *configuredTopology) ready() bool { return len(c.statuses) == 0 }

// configure checks the group's topology against the topics, computing the
// partition counts of its internal topics the way Kafka's
// InternalTopicManager does:
//
//   - every user source topic must exist (MISSING_SOURCE_TOPICS);
//   - a repartition topic without a fixed count gets the largest source
//     partition count of the subtopologies writing to it, repeated until
//     nothing changes, since a subtopology may read another's repartition
//     topic;
//   - the topics of a copartition group must have one partition count: user
//     topics that differ are INCORRECTLY_PARTITIONED_TOPICS, repartition
//     topics without a fixed count are given the group's count;
//   - a subtopology has as many tasks as its largest source topic has
//     partitions, and each of its changelog topics that many partitions;
//   - internal topics that exist with another count are
//     INCORRECTLY_PARTITIONED_TOPICS; missing ones MISSING_INTERNAL_TOPICS,
//     to be created.
func (g *streamsGroup) configure(s *step) *configuredTopology {
	t := g.topology
	ct := &configuredTopology{
		topologyEpoch: t.epoch,
		tasks:         make(map[string]int32),
		sources:       make(map[string][]string),
		partitions:    make(map[string]int32),
		stateful:      make(map[string]bool),
	}
	h := fnv.New64a()
	lookup := func(name string) (int32, bool) {
		if s.topics.partitions == nil {
			return 0, false
		}
		_, n, ok := s.topics.partitions(name)
		if ok && n > 0 {
			h.Write([]byte(name))
			h.Write([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n), 0})
			return n, true
		}
		return 0, false
	}
	var names []string
	if s.topics.names != nil && slices.ContainsFunc(t.subtopologies, func(st subtopology) bool { return len(st.sourceRegex) > 0 }) {
		names = s.topics.names()
		slices.Sort(names)
	}
	defer func() { ct.hash = int64(h.Sum64() | 1) }()

	// User source topics, by name and by regex.
	var missing []string
	regexMatches := make(map[string][][]string) // subtopology -> per regex
	for _, st := range t.subtopologies {
		for _, name := range st.sourceTopics {
			if n, ok := lookup(name); ok {
				ct.partitions[name] = n
			} else {
				missing = append(missing, name)
			}
		}
		for _, expr := range st.sourceRegex {
			re, _ := compileTopicRegex(expr)
			var matched []string
			for _, name := range names {
				if re != nil && re.MatchString(name) && !strings.HasPrefix(name, "__") {
					if n, ok := lookup(name); ok {
						ct.partitions[name] = n
						matched = append(matched, name)
					}
				}
			}
			regexMatches[st.id] = append(regexMatches[st.id], matched)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		ct.statuses = append(ct.statuses, streamsStatus{streamsStatusMissingSourceTopics,
			fmt.Sprintf("Source topics %s are missing.", strings.Join(slices.Compact(missing), ", "))})
		return ct
	}

	// Repartition topics: fixed counts first, then derived from the
	// subtopologies writing them.
	repartition := make(map[string]int32)
	fixed := make(map[string]bool)
	for _, st := range t.subtopologies {
		for _, r := range st.repartitionSources {
			repartition[r.name] = max(repartition[r.name], r.partitions)
			if r.partitions > 0 {
				fixed[r.name] = true
			}
		}
	}
	sourceCount := func(st subtopology) (int32, bool) {
		n := int32(0)
		for _, name := range st.sourceTopics {
			n = max(n, ct.partitions[name])
		}
		for _, matched := range regexMatches[st.id] {
			for _, name := range matched {
				n = max(n, ct.partitions[name])
			}
		}
		for _, r := range st.repartitionSources {
			if repartition[r.name] == 0 {
				return 0, false
			}
			n = max(n, repartition[r.name])
		}
		return n, n > 0
	}
	for range len(t.subtopologies) + 1 {
		changed := false
		for _, st := range t.subtopologies {
			n, ok := sourceCount(st)
			if !ok {
				continue
			}
			for _, sink := range st.repartitionSinks {
				if cur, isSource := repartition[sink]; isSource && !fixed[sink] && n > cur {
					repartition[sink], changed = n, true
				}
			}
		}
		if !changed {
			break
		}
	}
	var unknown []string
	for _, name := range sortedKeys(repartition) {
		if repartition[name] == 0 {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		ct.statuses = append(ct.statuses, streamsStatus{streamsStatusIncorrectlyPartitionedTopics,
			fmt.Sprintf("The partition counts of repartition topics %s cannot be derived from the topology.", strings.Join(unknown, ", "))})
		return ct
	}

	// Copartitioning.
	for _, st := range t.subtopologies {
		for _, cg := range st.copartitionGroups {
			if detail := enforceCopartitioning(st, cg, regexMatches[st.id], ct.partitions, repartition, fixed); detail != "" {
				ct.statuses = append(ct.statuses, streamsStatus{streamsStatusIncorrectlyPartitionedTopics, detail})
			}
		}
	}
	if len(ct.statuses) > 0 {
		return ct
	}
	maps.Copy(ct.partitions, repartition)

	// Tasks, and changelog partition counts.
	want := make(map[string]streamsTopicInfo)
	for _, st := range t.subtopologies {
		n, _ := sourceCount(st)
		ct.tasks[st.id] = n
		srcs := slices.Clone(st.sourceTopics)
		for _, matched := range regexMatches[st.id] {
			srcs = append(srcs, matched...)
		}
		for _, r := range st.repartitionSources {
			srcs = append(srcs, r.name)
			info := r
			info.partitions = repartition[r.name]
			want[r.name] = info
		}
		slices.Sort(srcs)
		ct.sources[st.id] = slices.Compact(srcs)
		for _, c := range st.changelogs {
			ct.stateful[st.id] = true
			info := c
			if info.partitions <= 0 {
				info.partitions = n
			}
			want[c.name] = info
		}
	}

	// Internal topics that exist must have their count; the others are
	// created.
	var wrong, absent []string
	for _, name := range sortedKeys(want) {
		info := want[name]
		n, ok := lookup(name)
		switch {
		case !ok:
			absent = append(absent, name)
			ct.create = append(ct.create, newTopicFrom(info))
		case n != info.partitions:
			wrong = append(wrong, fmt.Sprintf("%s (%d partitions, %d required)", name, n, info.partitions))
		}
	}
	if len(wrong) > 0 {
		ct.statuses = append(ct.statuses, streamsStatus{streamsStatusIncorrectlyPartitionedTopics,
			"Following topics do not have the same number of partitions as required: " + strings.Join(wrong, ", ") + "."})
	}
	if len(absent) > 0 {
		ct.statuses = append(ct.statuses, streamsStatus{streamsStatusMissingInternalTopics,
			"Internal topics are missing: " + strings.Join(absent, ", ") + "."})
	}
	return ct
}

// enforceCopartitioning checks one copartition group: its user topics must
// have one count, which the repartition topics without a fixed count
// take (without user topics, the largest repartition count). It returns
// the status detail of a group that cannot be copartitioned, "" if fine.
func enforceCopartitioning(st subtopology, cg copartitionGroup, regexMatches [][]string, partitions, repartition map[string]int32, fixed map[string]bool) string {
	var user []string
	for _, i := range cg.sourceTopics {
		user = append(user, st.sourceTopics[i])
	}
	for _, i := range cg.sourceRegex {
		if int(i) < len(regexMatches) {
			user = append(user, regexMatches[i]...)
		}
	}
	n := int32(0)
	for _, name := range user {
		if n != 0 && partitions[name] != n {
			slices.Sort(user)
			return fmt.Sprintf("Following topics are not copartitioned: [%s].", strings.Join(user, ", "))
		}
		n = partitions[name]
	}
	var flexible []string
	for _, i := range cg.repartitionSources {
		name := st.repartitionSources[i].name
		switch {
		case !fixed[name]:
			flexible = append(flexible, name)
			if len(user) == 0 {
				n = max(n, repartition[name])
			}
		case n == 0:
			n = repartition[name]
		case repartition[name] != n:
			return fmt.Sprintf("Repartition topic %s has %d partitions, but is copartitioned with topics of %d.", name, repartition[name], n)
		}
	}
	for _, name := range flexible {
		repartition[name] = n
	}
	return ""
}

func newTopicFrom(info streamsTopicInfo) NewTopic {
	t := NewTopic{Name: info.name, Partitions: info.partitions, ReplicationFactor: info.replication, Configs: map[string]string{}}
	if t.ReplicationFactor <= 0 {
		t.ReplicationFactor = -1
	}
	for _, c := range info.configs {
		t.Configs[c[0]] = c[1]
	}
	return t
}
