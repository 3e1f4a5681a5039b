package restproxy

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The spec's ConsumerGroupType values.
const (
	groupTypeClassic  = "CLASSIC"
	groupTypeConsumer = "CONSUMER"
)

// describedGroup is a group as the v3 resources tell it, whichever
// protocol it speaks: a KIP-848 consumer group (ConsumerGroupDescribe) or
// a classic one (DescribeGroups).
type describedGroup struct {
	Group        string
	Type         string // CLASSIC or CONSUMER
	Mixed        bool   // a CONSUMER group with a member on the classic protocol
	ProtocolType string // classic: "consumer", "connect", "" for a simple group
	Assignor     string
	State        string // Kafka's name: Stable, Empty, Assigning, ...
	Coordinator  int32
	Members      []describedMember // by member ID
	Err          error
}

type describedMember struct {
	MemberID   string
	InstanceID *string
	ClientID   string
	Assigned   []kadm.TopicPartitions // by topic, partitions ascending; none for a non-consumer protocol
}

// describeGroups describes groups as Kafka's admin client does (and so
// Confluent's): ConsumerGroupDescribe first; a group it does not know as
// a consumer group (GROUP_ID_NOT_FOUND: a classic group, or none at all),
// or every group when the cluster has no ConsumerGroupDescribe, is asked
// with DescribeGroups. A group neither knows has Err GROUP_ID_NOT_FOUND.
func (p *Proxy) describeGroups(ctx context.Context, ids []string) (map[string]describedGroup, error) {
	admin := p.kafka(ctx).admin
	out := make(map[string]describedGroup, len(ids))
	var classic []string
	consumer, err := admin.DescribeConsumerGroups(ctx, ids...)
	var se *kadm.ShardErrors
	switch {
	case err == nil:
	case errors.Is(err, kerr.UnsupportedVersion), errors.As(err, &se) && allUnsupported(se):
		consumer = nil
	default:
		return nil, err
	}
	for _, id := range ids {
		g, ok := consumer[id]
		switch {
		case !ok || errors.Is(g.Err, kerr.GroupIDNotFound):
			classic = append(classic, id)
		case g.Err != nil:
			out[id] = describedGroup{Group: id, Err: g.Err}
		default:
			out[id] = fromConsumerGroup(g)
		}
	}
	if len(classic) == 0 {
		return out, nil
	}
	described, err := admin.DescribeGroups(ctx, classic...)
	if err != nil {
		return nil, err
	}
	for _, id := range classic {
		out[id] = fromClassicGroup(id, described[id])
	}
	return out, nil
}

func allUnsupported(se *kadm.ShardErrors) bool {
	for _, e := range se.Errs {
		if !errors.Is(e.Err, kerr.UnsupportedVersion) {
			return false
		}
	}
	return len(se.Errs) > 0
}

func fromConsumerGroup(g kadm.DescribedConsumerGroup) describedGroup {
	d := describedGroup{Group: g.Group, Type: groupTypeConsumer, ProtocolType: "consumer",
		Assignor: g.AssignorName, State: g.State, Coordinator: g.Coordinator.NodeID}
	for _, m := range g.Members {
		// MemberType 1 is a member on the consumer protocol; 0
		// (classic) and -1 (not told, ConsumerGroupDescribe v0) make
		// the group mixed, as Kafka's upgraded() absent or false.
		if m.MemberType != 1 {
			d.Mixed = true
		}
		gm := describedMember{MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID}
		gm.Assigned = sortedAssignment(m.Assignment.Sorted())
		d.Members = append(d.Members, gm)
	}
	sortMembers(d.Members)
	return d
}

// fromClassicGroup: a group the coordinator does not know is
// GROUP_ID_NOT_FOUND (Samsa and newer Kafka answer that; older Kafka
// describes a placeholder with no protocol type, Dead).
func fromClassicGroup(id string, g kadm.DescribedGroup) describedGroup {
	if g.Err != nil {
		return describedGroup{Group: id, Err: g.Err}
	}
	if g.ProtocolType == "" && g.State == "Dead" {
		return describedGroup{Group: id, Err: kerr.GroupIDNotFound}
	}
	d := describedGroup{Group: g.Group, Type: groupTypeClassic, ProtocolType: g.ProtocolType,
		Assignor: g.Protocol, State: g.State, Coordinator: g.Coordinator.NodeID}
	for _, m := range g.Members {
		gm := describedMember{MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID}
		if c, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range c.Topics {
				gm.Assigned = append(gm.Assigned, kadm.TopicPartitions{Topic: t.Topic, Partitions: slices.Clone(t.Partitions)})
			}
			gm.Assigned = sortedAssignment(gm.Assigned)
		}
		d.Members = append(d.Members, gm)
	}
	sortMembers(d.Members)
	return d
}

func sortedAssignment(ts []kadm.TopicPartitions) []kadm.TopicPartitions {
	slices.SortFunc(ts, func(a, b kadm.TopicPartitions) int { return strings.Compare(a.Topic, b.Topic) })
	for _, t := range ts {
		slices.Sort(t.Partitions)
	}
	return ts
}

func sortMembers(ms []describedMember) {
	slices.SortFunc(ms, func(a, b describedMember) int { return strings.Compare(a.MemberID, b.MemberID) })
}
