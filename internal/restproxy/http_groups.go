package restproxy

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The consumer group resources, read-only as Confluent's are: groups and
// their members from ListGroups, ConsumerGroupDescribe (KIP-848 groups,
// type CONSUMER) and DescribeGroups (classic ones), lags from the
// group's committed offsets (OffsetFetch) against the partitions' log end
// offsets (ListOffsets).
func (p *Proxy) routeGroups(mux *http.ServeMux) {
	const groups = "/v3/clusters/{cluster_id}/consumer-groups"
	const group = groups + "/{consumer_group_id}"
	mux.HandleFunc("GET "+groups, p.listGroups)
	mux.HandleFunc("GET "+group, p.getGroup)
	mux.HandleFunc("GET "+group+"/consumers", p.listConsumers)
	mux.HandleFunc("GET "+group+"/consumers/{consumer_id}", p.getConsumer)
	mux.HandleFunc("GET "+group+"/consumers/{consumer_id}/assignments", p.listAssignments)
	mux.HandleFunc("GET "+group+"/consumers/{consumer_id}/assignments/{topic_name}/partitions/{partition_id}", p.getAssignment)
	mux.HandleFunc("GET "+group+"/lag-summary", p.getLagSummary)
	mux.HandleFunc("GET "+group+"/lags", p.listLags)
	mux.HandleFunc("GET "+group+"/lags/{topic_name}/partitions/{partition_id}", p.getLag)
}

type groupData struct {
	Kind                 string           `json:"kind"`
	Metadata             resourceMetadata `json:"metadata"`
	ClusterID            string           `json:"cluster_id"`
	ConsumerGroupID      string           `json:"consumer_group_id"`
	IsSimple             bool             `json:"is_simple"`
	PartitionAssignor    string           `json:"partition_assignor"`
	State                string           `json:"state"`
	Type                 string           `json:"type"`
	IsMixedConsumerGroup bool             `json:"is_mixed_consumer_group"`
	Coordinator          relationship     `json:"coordinator"`
	Consumers            relationship     `json:"consumers"`
	LagSummary           relationship     `json:"lag_summary"`
}

// groupStates maps Kafka's classic group states to the spec's
// ConsumerGroupState names; anything else is UNKNOWN, as Kafka's
// GroupState.parse answers.
var groupStates = map[string]string{
	"PreparingRebalance":  "PREPARING_REBALANCE",
	"CompletingRebalance": "COMPLETING_REBALANCE",
	"Stable":              "STABLE",
	"Dead":                "DEAD",
	"Empty":               "EMPTY",
}

func groupState(s string) string {
	if st, ok := groupStates[s]; ok {
		return st
	}
	return "UNKNOWN"
}

func groupSelf(req *http.Request, group string) string {
	return clusterSelf(req) + "/consumer-groups/" + group
}

// newGroupData describes a group: a group without a protocol type is a
// simple one (offsets committed without joining), as Kafka's admin
// client tells them; a KIP-848 group is mixed while any member still
// speaks the classic protocol (or does not say), as Confluent tells it
// from the members' upgraded flag.
func newGroupData(req *http.Request, cluster string, g describedGroup) groupData {
	self := groupSelf(req, g.Group)
	return groupData{
		Kind:                 "KafkaConsumerGroup",
		Metadata:             resourceMetadata{Self: self, ResourceName: crn("kafka", cluster, "consumer-group", g.Group)},
		ClusterID:            cluster,
		ConsumerGroupID:      g.Group,
		IsSimple:             g.Type == groupTypeClassic && g.ProtocolType == "",
		PartitionAssignor:    g.Assignor,
		State:                groupState(g.State),
		Type:                 g.Type,
		IsMixedConsumerGroup: g.Mixed,
		Coordinator:          related(clusterSelf(req) + "/brokers/" + strconv.Itoa(int(g.Coordinator))),
		Consumers:            related(self + "/consumers"),
		LagSummary:           related(self + "/lag-summary"),
	}
}

func (p *Proxy) listGroups(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	md, err := p.clusterMetadata(ctx, req)
	if err != nil {
		writeError(w, err)
		return
	}
	listed, err := p.kafka(ctx).admin.ListGroups(ctx)
	if err != nil {
		writeError(w, err)
		return
	}
	var data []groupData
	if names := listed.Groups(); len(names) > 0 {
		slices.Sort(names)
		described, err := p.describeGroups(ctx, names)
		if err != nil {
			writeError(w, err)
			return
		}
		for _, name := range names {
			g := described[name]
			switch {
			case errors.Is(g.Err, kerr.GroupIDNotFound): // gone since listed
			case g.Err != nil:
				writeError(w, g.Err)
				return
			default:
				data = append(data, newGroupData(req, md.Cluster, g))
			}
		}
	}
	writeJSON(w, http.StatusOK, newList("KafkaConsumerGroupList", clusterSelf(req)+"/consumer-groups", data))
}

// group describes the path's group; one Kafka does not know is 404 with
// notFound's message (Confluent's resources differ in it).
func (p *Proxy) group(ctx context.Context, w http.ResponseWriter, req *http.Request, notFound string) (string, describedGroup, bool) {
	md, err := p.clusterMetadata(ctx, req)
	if err != nil {
		writeError(w, err)
		return "", describedGroup{}, false
	}
	id := req.PathValue("consumer_group_id")
	described, err := p.describeGroups(ctx, []string{id})
	g := described[id]
	if err == nil {
		err = g.Err
	}
	if errors.Is(err, kerr.GroupIDNotFound) {
		writeError(w, errNotFound(notFound))
		return "", g, false
	}
	if err != nil {
		writeError(w, err)
		return "", g, false
	}
	return md.Cluster, g, true
}

// httpNotFound is the message of Jersey's bare NotFoundException, which
// Confluent's group, consumer and assignment resources throw.
const httpNotFound = "HTTP 404 Not Found"

func (p *Proxy) getGroup(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	cluster, g, ok := p.group(ctx, w, req, httpNotFound)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, newGroupData(req, cluster, g))
}

type consumerData struct {
	Kind            string           `json:"kind"`
	Metadata        resourceMetadata `json:"metadata"`
	ClusterID       string           `json:"cluster_id"`
	ConsumerGroupID string           `json:"consumer_group_id"`
	ConsumerID      string           `json:"consumer_id"`
	InstanceID      *string          `json:"instance_id"`
	ClientID        string           `json:"client_id"`
	Assignments     relationship     `json:"assignments"`
}

func newConsumerData(req *http.Request, cluster, group string, m describedMember) consumerData {
	self := groupSelf(req, group) + "/consumers/" + m.MemberID
	return consumerData{
		Kind:            "KafkaConsumer",
		Metadata:        resourceMetadata{Self: self, ResourceName: crn("kafka", cluster, "consumer-group", group, "consumer", m.MemberID)},
		ClusterID:       cluster,
		ConsumerGroupID: group,
		ConsumerID:      m.MemberID,
		InstanceID:      m.InstanceID,
		ClientID:        m.ClientID,
		Assignments:     related(self + "/assignments"),
	}
}

func (p *Proxy) listConsumers(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	cluster, g, ok := p.group(ctx, w, req, httpNotFound)
	if !ok {
		return
	}
	data := make([]consumerData, 0, len(g.Members))
	for _, m := range g.Members {
		data = append(data, newConsumerData(req, cluster, g.Group, m))
	}
	writeJSON(w, http.StatusOK, newList("KafkaConsumerList", groupSelf(req, g.Group)+"/consumers", data))
}

// consumer finds the path's member of the group: one it does not have is
// 404.
func (p *Proxy) consumer(w http.ResponseWriter, req *http.Request) (string, describedGroup, describedMember, bool) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	cluster, g, ok := p.group(ctx, w, req, httpNotFound)
	if !ok {
		return "", g, describedMember{}, false
	}
	id := req.PathValue("consumer_id")
	i := slices.IndexFunc(g.Members, func(m describedMember) bool { return m.MemberID == id })
	if i < 0 {
		writeError(w, errNotFound(httpNotFound))
		return "", g, describedMember{}, false
	}
	return cluster, g, g.Members[i], true
}

func (p *Proxy) getConsumer(w http.ResponseWriter, req *http.Request) {
	cluster, g, m, ok := p.consumer(w, req)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, newConsumerData(req, cluster, g.Group, m))
}

type assignmentData struct {
	Kind            string           `json:"kind"`
	Metadata        resourceMetadata `json:"metadata"`
	ClusterID       string           `json:"cluster_id"`
	ConsumerGroupID string           `json:"consumer_group_id"`
	ConsumerID      string           `json:"consumer_id"`
	TopicName       string           `json:"topic_name"`
	PartitionID     int32            `json:"partition_id"`
	Partition       relationship     `json:"partition"`
	Lag             relationship     `json:"lag"`
}

// assignments are a member's partitions, sorted by topic and partition
// as Confluent lists them. A member of a group that is not a consumer
// group (Connect's) has none.
func assignments(req *http.Request, cluster, group string, m describedMember) []assignmentData {
	var out []assignmentData
	for _, t := range m.Assigned {
		for _, part := range t.Partitions {
			pid := strconv.Itoa(int(part))
			self := groupSelf(req, group) + "/consumers/" + m.MemberID + "/assignments/" + t.Topic + "/partitions/" + pid
			out = append(out, assignmentData{
				Kind: "KafkaConsumerAssignment",
				Metadata: resourceMetadata{Self: self, ResourceName: crn("kafka", cluster, "consumer-group", group,
					"consumer", m.MemberID, "assignment", t.Topic, "partition", pid)},
				ClusterID:       cluster,
				ConsumerGroupID: group,
				ConsumerID:      m.MemberID,
				TopicName:       t.Topic,
				PartitionID:     part,
				Partition:       related(clusterSelf(req) + "/topics/" + t.Topic + "/partitions/" + pid),
				Lag:             related(groupSelf(req, group) + "/lags/" + t.Topic + "/partitions/" + pid),
			})
		}
	}
	slices.SortFunc(out, func(a, b assignmentData) int {
		if c := strings.Compare(a.TopicName, b.TopicName); c != 0 {
			return c
		}
		return int(a.PartitionID - b.PartitionID)
	})
	return out
}

func (p *Proxy) listAssignments(w http.ResponseWriter, req *http.Request) {
	cluster, g, m, ok := p.consumer(w, req)
	if !ok {
		return
	}
	self := groupSelf(req, g.Group) + "/consumers/" + m.MemberID + "/assignments"
	writeJSON(w, http.StatusOK, newList("KafkaConsumerAssignmentList", self, assignments(req, cluster, g.Group, m)))
}

func (p *Proxy) getAssignment(w http.ResponseWriter, req *http.Request) {
	cluster, g, m, ok := p.consumer(w, req)
	if !ok {
		return
	}
	topic, pid := req.PathValue("topic_name"), req.PathValue("partition_id")
	for _, a := range assignments(req, cluster, g.Group, m) {
		if a.TopicName == topic && strconv.Itoa(int(a.PartitionID)) == pid {
			writeJSON(w, http.StatusOK, a)
			return
		}
	}
	writeError(w, errNotFound(httpNotFound))
}
