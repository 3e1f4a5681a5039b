package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/samsa-io/samsa/internal/model"
)

// The replication throttle of a reassignment, set and cleared exactly as
// kafka-reassign-partitions.sh does (ReassignPartitionsCommand's
// modifyReassignmentThrottle and clearAllThrottles):
//
//   - on every broker a move reads from or copies to:
//     leader.replication.throttled.rate and follower.replication.throttled.rate,
//     both the --throttle value in bytes per second;
//   - on every topic with a move: leader.replication.throttled.replicas, the
//     partition:broker pairs of the replicas a move copies from (the current
//     replicas), and follower.replication.throttled.replicas, those of the
//     replicas it creates;
//   - cleared (the five configs deleted) by --verify once no reassignment is in
//     progress in the cluster, and by --cancel, on every broker of the
//     cluster and of the plan and on every topic of the plan.
const (
	leaderThrottledRate       = "leader.replication.throttled.rate"
	followerThrottledRate     = "follower.replication.throttled.rate"
	alterLogDirsThrottledRate = "replica.alter.log.dirs.io.max.bytes.per.second"
	leaderThrottledReplicas   = "leader.replication.throttled.replicas"
	followerThrottledReplicas = "follower.replication.throttled.replicas"
)

// partitionMove is one partition's move: the brokers it copies from and
// the ones it copies to.
type partitionMove struct {
	sources, destinations []int32
}

// moveMap is every partition's move, by topic and partition.
type moveMap map[string]map[int32]partitionMove

// proposedMoves is Kafka's calculateProposedMoveMap: the moves in progress
// (their sources are the replicas not being added), then each planned
// partition's, whose sources are those of its move in progress, else its
// current replicas, and whose destinations are the target's other brokers.
func proposedMoves(inProgress []kadm.ListPartitionReassignmentsResponse, proposed, current assignment) moveMap {
	mm := moveMap{}
	put := func(topic string, p int32, m partitionMove) {
		if mm[topic] == nil {
			mm[topic] = map[int32]partitionMove{}
		}
		mm[topic][p] = m
	}
	for _, r := range inProgress {
		var sources []int32
		for _, b := range r.Replicas {
			if !slices.Contains(r.AddingReplicas, b) {
				sources = append(sources, b)
			}
		}
		put(r.Topic, r.Partition, partitionMove{sources: sources, destinations: slices.Clone(r.AddingReplicas)})
	}
	for tp, target := range proposed {
		sources := current[tp]
		if m, ok := mm[tp.Topic][tp.Partition]; ok {
			sources = m.sources
		}
		var dest []int32
		for _, b := range target {
			if !slices.Contains(sources, b) {
				dest = append(dest, b)
			}
		}
		put(tp.Topic, tp.Partition, partitionMove{sources: slices.Clone(sources), destinations: dest})
	}
	return mm
}

// throttledReplicas is the value of a topic's leader (sources) or follower
// (destinations) throttled replicas: "partition:broker" pairs, sorted as
// strings, as Kafka's TreeSet sorts them.
func throttledReplicas(moves map[int32]partitionMove, leader bool) string {
	var pairs []string
	for p, m := range moves {
		ids := m.destinations
		if leader {
			ids = m.sources
		}
		for _, b := range ids {
			if !leader && slices.Contains(m.sources, b) {
				continue
			}
			pairs = append(pairs, fmt.Sprintf("%d:%d", p, b))
		}
	}
	slices.Sort(pairs)
	return strings.Join(slices.Compact(pairs), ",")
}

// reassigningBrokers are the brokers a move reads from or writes to.
func (mm moveMap) reassigningBrokers() []int32 {
	set := map[int32]bool{}
	for _, ps := range mm {
		for _, m := range ps {
			for _, b := range m.sources {
				set[b] = true
			}
			for _, b := range m.destinations {
				set[b] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// setThrottles sets the topic and broker throttles of mm, the rate in
// bytes per second on every broker involved. The topic values replace
// what the topics had, as Kafka's tool does.
func setThrottles(ctx context.Context, adm *kadm.Client, out io.Writer, mm moveMap, rate int64) error {
	for _, topic := range slices.Sorted(maps.Keys(mm)) {
		leader, follower := throttledReplicas(mm[topic], true), throttledReplicas(mm[topic], false)
		res, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
			{Op: kadm.SetConfig, Name: leaderThrottledReplicas, Value: &leader},
			{Op: kadm.SetConfig, Name: followerThrottledReplicas, Value: &follower},
		}, topic)
		if err := alterConfigsErr(res, err, "topic "+topic); err != nil {
			return err
		}
	}
	v := strconv.FormatInt(rate, 10)
	brokers := mm.reassigningBrokers()
	res, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: leaderThrottledRate, Value: &v},
		{Op: kadm.SetConfig, Name: followerThrottledRate, Value: &v},
	}, brokers...)
	if err := alterConfigsErr(res, err, "brokers "+idList(brokers)); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "The inter-broker throttle limit was set to %d B/s\n", rate)
	return err
}

// clearThrottles deletes the five throttle configs from the brokers and
// the two topic ones from the topics, as Kafka's clearAllThrottles.
func clearThrottles(ctx context.Context, adm *kadm.Client, out io.Writer, brokers []int32, topics []string) error {
	slices.Sort(brokers)
	brokers = slices.Compact(brokers)
	s := "s"
	if len(brokers) == 1 {
		s = ""
	}
	fmt.Fprintf(out, "Clearing broker-level throttles on broker%s %s\n", s, idList(brokers))
	var ops []kadm.AlterConfig
	for _, name := range []string{leaderThrottledRate, followerThrottledRate, alterLogDirsThrottledRate} {
		ops = append(ops, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: name})
	}
	res, err := adm.AlterBrokerConfigs(ctx, ops, brokers...)
	if err := alterConfigsErr(res, err, "brokers "+idList(brokers)); err != nil {
		return err
	}
	slices.Sort(topics)
	topics = slices.Compact(topics)
	s = "s"
	if len(topics) == 1 {
		s = ""
	}
	fmt.Fprintf(out, "Clearing topic-level throttles on topic%s %s\n", s, strings.Join(topics, ","))
	res, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.DeleteConfig, Name: leaderThrottledReplicas},
		{Op: kadm.DeleteConfig, Name: followerThrottledReplicas},
	}, topics...)
	return alterConfigsErr(res, err, "topics "+strings.Join(topics, ","))
}

// alterConfigsErr is the request's error or every resource's.
func alterConfigsErr(res kadm.AlterConfigsResponses, err error, what string) error {
	if err != nil {
		return fmt.Errorf("setting the throttle on %s: %w", what, err)
	}
	var failed []string
	for _, r := range res {
		if r.Err != nil {
			msg := r.Err.Error()
			if r.ErrMessage != "" {
				msg += ": " + r.ErrMessage
			}
			failed = append(failed, r.Name+": "+msg)
		}
	}
	if len(failed) > 0 {
		slices.Sort(failed)
		return fmt.Errorf("the throttle configs were refused (%s)", strings.Join(failed, "; "))
	}
	return nil
}

// currentAssignment is the replicas of tps now, from Metadata: during a
// move, the union of the old and new replicas, as Kafka's describeTopics
// gives.
func currentAssignment(ctx context.Context, adm *kadm.Client, tps []model.TopicPartition) (assignment, error) {
	topics := map[string]bool{}
	for _, tp := range tps {
		topics[tp.Topic] = true
	}
	md, err := adm.Metadata(ctx, slices.Sorted(maps.Keys(topics))...)
	if err != nil {
		return nil, err
	}
	out := assignment{}
	var missing []string
	for _, tp := range tps {
		t, ok := md.Topics[tp.Topic]
		if !ok || t.Err != nil {
			missing = append(missing, tp.String())
			continue
		}
		p, ok := t.Partitions[tp.Partition]
		if !ok {
			missing = append(missing, tp.String())
			continue
		}
		out[tp] = slices.Clone(p.Replicas)
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("unable to find partition: %s", strings.Join(missing, ", "))
	}
	return out, nil
}
