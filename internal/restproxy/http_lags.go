package restproxy

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// A partition's lag, as Confluent computes it: only partitions the group
// has committed an offset for, current_offset the commit, log_end_offset
// the partition's high watermark, lag their difference, and the member
// the partition is assigned to now ("" when none).
type consumerLag struct {
	topic           string
	partition       int32
	current, logEnd int64
	member          *describedMember
}

func (l consumerLag) lag() int64 { return l.logEnd - l.current }

func (l consumerLag) consumerID() string {
	if l.member == nil {
		return ""
	}
	return l.member.MemberID
}

func (l consumerLag) clientID() string {
	if l.member == nil {
		return ""
	}
	return l.member.ClientID
}

func (l consumerLag) instanceID() *string {
	if l.member == nil {
		return nil
	}
	return l.member.InstanceID
}

// errNoOffsets is Confluent's answer for a group with no committed offset.
func errNoOffsets() *Error { return errNotFound("Consumer group offsets could not be found.") }

// lags answers the path's group's lags sorted by topic and partition; a
// group Kafka does not know is 404, and so is one without commits.
func (p *Proxy) lags(w http.ResponseWriter, req *http.Request) (string, describedGroup, []consumerLag, bool) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	id := req.PathValue("consumer_group_id")
	cluster, g, ok := p.group(ctx, w, req, "Consumer Group "+id+" could not be found.")
	if !ok {
		return "", g, nil, false
	}
	commits, err := p.kafka(ctx).admin.FetchOffsets(ctx, id)
	if err == nil {
		err = commits.Error()
	}
	if err != nil {
		writeError(w, err)
		return "", g, nil, false
	}
	if len(commits) == 0 {
		writeError(w, errNoOffsets())
		return "", g, nil, false
	}
	topics := make([]string, 0, len(commits))
	for t := range commits {
		topics = append(topics, t)
	}
	ends, err := p.kafka(ctx).admin.ListEndOffsets(ctx, topics...)
	if err != nil {
		writeError(w, err)
		return "", g, nil, false
	}
	owner := assignedTo(g)
	var out []consumerLag
	for _, o := range commits.Sorted() {
		end, ok := ends.Lookup(o.Topic, o.Partition)
		if !ok || end.Err != nil || o.At < 0 {
			continue // no offset on one side: Confluent leaves the partition out
		}
		out = append(out, consumerLag{topic: o.Topic, partition: o.Partition, current: o.At, logEnd: end.Offset,
			member: owner[topicPartition{o.Topic, o.Partition}]})
	}
	return cluster, g, out, true
}

type topicPartition struct {
	topic     string
	partition int32
}

func assignedTo(g describedGroup) map[topicPartition]*describedMember {
	owner := make(map[topicPartition]*describedMember)
	for i := range g.Members {
		m := &g.Members[i]
		for _, t := range m.Assigned {
			for _, part := range t.Partitions {
				owner[topicPartition{t.Topic, part}] = m
			}
		}
	}
	return owner
}

type lagData struct {
	Kind            string           `json:"kind"`
	Metadata        resourceMetadata `json:"metadata"`
	ClusterID       string           `json:"cluster_id"`
	ConsumerGroupID string           `json:"consumer_group_id"`
	TopicName       string           `json:"topic_name"`
	PartitionID     int32            `json:"partition_id"`
	CurrentOffset   int64            `json:"current_offset"`
	LogEndOffset    int64            `json:"log_end_offset"`
	Lag             int64            `json:"lag"`
	ConsumerID      string           `json:"consumer_id"`
	InstanceID      *string          `json:"instance_id"`
	ClientID        string           `json:"client_id"`
}

func newLagData(req *http.Request, cluster, group string, l consumerLag) lagData {
	pid := strconv.Itoa(int(l.partition))
	return lagData{
		Kind: "KafkaConsumerLag",
		Metadata: resourceMetadata{
			Self:         groupSelf(req, group) + "/lags/" + l.topic + "/partitions/" + pid,
			ResourceName: crn("kafka", cluster, "consumer-group", group, "lag", l.topic, "partition", pid),
		},
		ClusterID:       cluster,
		ConsumerGroupID: group,
		TopicName:       l.topic,
		PartitionID:     l.partition,
		CurrentOffset:   l.current,
		LogEndOffset:    l.logEnd,
		Lag:             l.lag(),
		ConsumerID:      l.consumerID(),
		InstanceID:      l.instanceID(),
		ClientID:        l.clientID(),
	}
}

// listLags answers the lags largest first, then by topic and partition,
// as Confluent sorts them.
func (p *Proxy) listLags(w http.ResponseWriter, req *http.Request) {
	cluster, g, lags, ok := p.lags(w, req)
	if !ok {
		return
	}
	data := make([]lagData, 0, len(lags))
	for _, l := range lags {
		data = append(data, newLagData(req, cluster, g.Group, l))
	}
	sortLags(data)
	writeJSON(w, http.StatusOK, newList("KafkaConsumerLagList", groupSelf(req, g.Group)+"/lags", data))
}

func sortLags(data []lagData) {
	less := func(a, b lagData) int {
		switch {
		case a.Lag != b.Lag:
			if a.Lag > b.Lag {
				return -1
			}
			return 1
		case a.TopicName != b.TopicName:
			return strings.Compare(a.TopicName, b.TopicName)
		}
		return int(a.PartitionID - b.PartitionID)
	}
	slices.SortFunc(data, less)
}

func (p *Proxy) getLag(w http.ResponseWriter, req *http.Request) {
	cluster, g, lags, ok := p.lags(w, req)
	if !ok {
		return
	}
	topic, pid := req.PathValue("topic_name"), req.PathValue("partition_id")
	for _, l := range lags {
		if l.topic == topic && strconv.Itoa(int(l.partition)) == pid {
			writeJSON(w, http.StatusOK, newLagData(req, cluster, g.Group, l))
			return
		}
	}
	writeError(w, errNotFound(httpNotFound))
}

type lagSummaryData struct {
	Kind              string           `json:"kind"`
	Metadata          resourceMetadata `json:"metadata"`
	ClusterID         string           `json:"cluster_id"`
	ConsumerGroupID   string           `json:"consumer_group_id"`
	MaxLagConsumerID  string           `json:"max_lag_consumer_id"`
	MaxLagInstanceID  *string          `json:"max_lag_instance_id"`
	MaxLagClientID    string           `json:"max_lag_client_id"`
	MaxLagTopicName   string           `json:"max_lag_topic_name"`
	MaxLagPartitionID int32            `json:"max_lag_partition_id"`
	MaxLag            int64            `json:"max_lag"`
	TotalLag          int64            `json:"total_lag"`
	MaxLagConsumer    relationship     `json:"max_lag_consumer"`
	MaxLagPartition   relationship     `json:"max_lag_partition"`
}

// getLagSummary answers the group's total lag and its largest one (the
// first in topic and partition order on a tie).
func (p *Proxy) getLagSummary(w http.ResponseWriter, req *http.Request) {
	cluster, g, lags, ok := p.lags(w, req)
	if !ok {
		return
	}
	if len(lags) == 0 {
		writeError(w, errNoOffsets())
		return
	}
	maxLag, total := lags[0], int64(0)
	for _, l := range lags {
		total += l.lag()
		if l.lag() > maxLag.lag() {
			maxLag = l
		}
	}
	self := groupSelf(req, g.Group)
	writeJSON(w, http.StatusOK, lagSummaryData{
		Kind: "KafkaConsumerGroupLagSummary",
		Metadata: resourceMetadata{
			Self: self + "/lag-summary",
			// Confluent names the summary with a bare "lag-summary" segment.
			ResourceName: crn("kafka", cluster, "consumer-group", g.Group) + "/lag-summary",
		},
		ClusterID:         cluster,
		ConsumerGroupID:   g.Group,
		MaxLagConsumerID:  maxLag.consumerID(),
		MaxLagInstanceID:  maxLag.instanceID(),
		MaxLagClientID:    maxLag.clientID(),
		MaxLagTopicName:   maxLag.topic,
		MaxLagPartitionID: maxLag.partition,
		MaxLag:            maxLag.lag(),
		TotalLag:          total,
		MaxLagConsumer:    related(self + "/consumers/" + maxLag.consumerID()),
		MaxLagPartition:   related(clusterSelf(req) + "/topics/" + maxLag.topic + "/partitions/" + strconv.Itoa(int(maxLag.partition))),
	})
}
