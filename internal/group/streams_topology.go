package group

import (
	"fmt"
	"hash"
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
	cf := &configurer{
		s: s,
		t: g.topology,
		ct: &configuredTopology{
			topologyEpoch: g.topology.epoch,
			tasks:         make(map[string]int32),
			sources:       make(map[string][]string),
			partitions:    make(map[string]int32),
			stateful:      make(map[string]bool),
		},
		hash:         fnv.New64a(),
		regexMatches: make(map[string][][]string),
		repartition:  make(map[string]int32),
		fixed:        make(map[string]bool),
	}
	if cf.userSources() && cf.repartitionCounts() && cf.copartition() {
		cf.internalTopics(cf.tasks())
	}
	cf.ct.hash = int64(cf.hash.Sum64() | 1)
	return cf.ct
}

// configurer is one configuration of a topology, step by step; each step
// that finds the topology cannot be assigned adds its status and returns
// false.
type configurer struct {
	s  *step
	t  *streamsTopology
	ct *configuredTopology
	// hash collects the names and partition counts of the topics looked
	// up.
	hash hash.Hash64
	// regexMatches are, per subtopology, the topics each of its regexes
	// matched.
	regexMatches map[string][][]string
	// repartition is the partition count of each repartition topic; fixed
	// says which the topology sets itself.
	repartition map[string]int32
	fixed       map[string]bool
}

// lookup is a topic's partition count, false if it does not exist.
func (cf *configurer) lookup(name string) (int32, bool) {
	if cf.s.topics.partitions == nil {
		return 0, false
	}
	_, n, ok := cf.s.topics.partitions(name)
	if !ok || n <= 0 {
		return 0, false
	}
	cf.hash.Write([]byte(name))
	cf.hash.Write([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n), 0})
	return n, true
}

func (cf *configurer) fail(code int8, detail string) bool {
	cf.ct.statuses = append(cf.ct.statuses, streamsStatus{code, detail})
	return false
}

// userSources looks up the user source topics, by name and by regex (whole
// names, never Kafka's internal "__" topics): all must exist.
func (cf *configurer) userSources() bool {
	var names []string
	if cf.s.topics.names != nil && slices.ContainsFunc(cf.t.subtopologies, func(st subtopology) bool { return len(st.sourceRegex) > 0 }) {
		names = cf.s.topics.names()
		slices.Sort(names)
	}
	var missing []string
	for _, st := range cf.t.subtopologies {
		for _, name := range st.sourceTopics {
			if n, ok := cf.lookup(name); ok {
				cf.ct.partitions[name] = n
			} else {
				missing = append(missing, name)
			}
		}
		for _, expr := range st.sourceRegex {
			re, _ := compileTopicRegex(expr)
			var matched []string
			for _, name := range names {
				if re == nil || !re.MatchString(name) || strings.HasPrefix(name, "__") {
					continue
				}
				if n, ok := cf.lookup(name); ok {
					cf.ct.partitions[name] = n
					matched = append(matched, name)
				}
			}
			cf.regexMatches[st.id] = append(cf.regexMatches[st.id], matched)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return cf.fail(streamsStatusMissingSourceTopics,
			fmt.Sprintf("Source topics %s are missing.", strings.Join(slices.Compact(missing), ", ")))
	}
	return true
}

// sourceCount is the largest partition count of a subtopology's source
// topics; false while one of its repartition topics has no count yet.
func (cf *configurer) sourceCount(st subtopology) (int32, bool) {
	n := int32(0)
	for _, name := range st.sourceTopics {
		n = max(n, cf.ct.partitions[name])
	}
	for _, matched := range cf.regexMatches[st.id] {
		for _, name := range matched {
			n = max(n, cf.ct.partitions[name])
		}
	}
	for _, r := range st.repartitionSources {
		if cf.repartition[r.name] == 0 {
			return 0, false
		}
		n = max(n, cf.repartition[r.name])
	}
	return n, n > 0
}

// repartitionCounts gives each repartition topic its fixed count, or the
// largest source count of the subtopologies writing it, repeated until
// nothing changes (subtopologies chain through repartition topics).
func (cf *configurer) repartitionCounts() bool {
	for _, st := range cf.t.subtopologies {
		for _, r := range st.repartitionSources {
			cf.repartition[r.name] = max(cf.repartition[r.name], r.partitions)
			if r.partitions > 0 {
				cf.fixed[r.name] = true
			}
		}
	}
	for range len(cf.t.subtopologies) + 1 {
		changed := false
		for _, st := range cf.t.subtopologies {
			n, ok := cf.sourceCount(st)
			if !ok {
				continue
			}
			for _, sink := range st.repartitionSinks {
				if cur, isSource := cf.repartition[sink]; isSource && !cf.fixed[sink] && n > cur {
					cf.repartition[sink], changed = n, true
				}
			}
		}
		if !changed {
			break
		}
	}
	var unknown []string
	for _, name := range sortedKeys(cf.repartition) {
		if cf.repartition[name] == 0 {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		return cf.fail(streamsStatusIncorrectlyPartitionedTopics,
			fmt.Sprintf("The partition counts of repartition topics %s cannot be derived from the topology.", strings.Join(unknown, ", ")))
	}
	return true
}

// copartition enforces every copartition group.
func (cf *configurer) copartition() bool {
	ok := true
	for _, st := range cf.t.subtopologies {
		for _, cg := range st.copartitionGroups {
			if detail := enforceCopartitioning(st, cg, cf.regexMatches[st.id], cf.ct.partitions, cf.repartition, cf.fixed); detail != "" {
				ok = cf.fail(streamsStatusIncorrectlyPartitionedTopics, detail)
			}
		}
	}
	if ok {
		maps.Copy(cf.ct.partitions, cf.repartition)
	}
	return ok
}

// tasks counts each subtopology's tasks and lists its source topics; it
// returns the internal topics the topology needs, with their counts.
func (cf *configurer) tasks() map[string]streamsTopicInfo {
	want := make(map[string]streamsTopicInfo)
	for _, st := range cf.t.subtopologies {
		n, _ := cf.sourceCount(st)
		cf.ct.tasks[st.id] = n
		srcs := slices.Clone(st.sourceTopics)
		for _, matched := range cf.regexMatches[st.id] {
			srcs = append(srcs, matched...)
		}
		for _, r := range st.repartitionSources {
			srcs = append(srcs, r.name)
			info := r
			info.partitions = cf.repartition[r.name]
			want[r.name] = info
		}
		slices.Sort(srcs)
		cf.ct.sources[st.id] = slices.Compact(srcs)
		for _, c := range st.changelogs {
			cf.ct.stateful[st.id] = true
			info := c
			info.partitions = n
			want[c.name] = info
			cf.ct.partitions[c.name] = n // for StreamsGroupDescribe
		}
	}
	return want
}

// internalTopics checks the internal topics that exist have their count,
// and lists the others to create.
func (cf *configurer) internalTopics(want map[string]streamsTopicInfo) {
	var wrong, absent []string
	for _, name := range sortedKeys(want) {
		info := want[name]
		n, ok := cf.lookup(name)
		switch {
		case !ok:
			absent = append(absent, name)
			cf.ct.create = append(cf.ct.create, newTopicFrom(info))
		case n != info.partitions:
			wrong = append(wrong, fmt.Sprintf("%s (%d partitions, %d required)", name, n, info.partitions))
		}
	}
	if len(wrong) > 0 {
		cf.fail(streamsStatusIncorrectlyPartitionedTopics,
			"Following topics do not have the same number of partitions as required: "+strings.Join(wrong, ", ")+".")
	}
	if len(absent) > 0 {
		cf.fail(streamsStatusMissingInternalTopics, "Internal topics are missing: "+strings.Join(absent, ", ")+".")
	}
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
