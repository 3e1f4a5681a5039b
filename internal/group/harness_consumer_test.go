package group

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The scripts' consumer-protocol (KIP-848) commands:
//
//	hb C [group=g] [v=1] [member=ID] [epoch=N] [instance=I] [topics=a,b]
//	     [regex=R] [assignor=A] [rebalance=D] [rack=R] [owned=t-0,t-1|none|-]
//	    ConsumerGroupHeartbeat from client C. The member ID is C on v1 (the
//	    client makes it), the coordinator's on v0; the epoch is the one
//	    C last got (0 to join). A join resends C's topics and a 30s
//	    rebalance timeout; other heartbeats send only what is given. C
//	    reports owning what it was last assigned unless owned= says
//	    otherwise (- for null, "not saying"). C takes each assignment it
//	    is answered at once, and gives up everything when fenced.
//	cg-leave C [static] [group=g]   heartbeat with epoch -1 (-2 with static)
//	cg-describe g...                ConsumerGroupDescribe
//	topics t:N,u:M                  the topics from now on (others deleted)

func (h *harness) cgHeartbeat(a args) []string {
	c := h.client(a.pos[0])
	if inst, ok := a.opts["instance"]; ok {
		c.instanceID = inst
	}
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = int16(a.int(h.t, "v", 1))
	req.Group = a.str("group", "g")
	req.MemberID = c.memberID
	if req.MemberID == "" && req.Version >= 1 {
		req.MemberID = c.name
	}
	req.MemberID = a.str("member", req.MemberID)
	if req.MemberID == "-" {
		req.MemberID = ""
	}
	req.MemberEpoch = int32(a.int(h.t, "epoch", int64(max(c.generation, 0))))
	if ts, ok := a.opts["topics"]; ok {
		c.cgTopics = strings.Split(ts, ",")
		if ts == "" {
			c.cgTopics = []string{}
		}
		req.SubscribedTopicNames = c.cgTopics
	}
	join := req.MemberEpoch == 0
	if join {
		c.owned = topicPartitions{}
		if req.SubscribedTopicNames == nil && c.cgTopics != nil {
			req.SubscribedTopicNames = c.cgTopics
		}
		req.RebalanceTimeoutMillis = 30000
		if c.instanceID != "" {
			req.InstanceID = new(c.instanceID)
		}
	}
	if d, ok := a.opts["rebalance"]; ok {
		r, err := time.ParseDuration(d)
		if err != nil {
			h.t.Fatal(err)
		}
		req.RebalanceTimeoutMillis = int32(r.Milliseconds())
	}
	if re, ok := a.opts["regex"]; ok {
		req.SubscribedTopicRegex = new(re)
	}
	if as, ok := a.opts["assignor"]; ok {
		req.ServerAssignor = new(as)
	}
	if rack, ok := a.opts["rack"]; ok {
		req.RackID = new(rack)
	}
	if _, ok := a.opts["instance"]; ok {
		req.InstanceID = new(c.instanceID)
	}
	owned := c.owned
	if o, ok := a.opts["owned"]; ok {
		owned = h.parseOwned(o)
	}
	if owned != nil {
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		for _, t := range owned.topics() {
			req.Topics = append(req.Topics, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: t, Partitions: owned[t]})
		}
	}
	resp := h.c.ConsumerGroupHeartbeat(WithClient(context.Background(), c.name, "/10.0.0.1"), req)
	return []string{h.formatCGHeartbeat(c, resp)}
}

func (h *harness) parseOwned(s string) topicPartitions {
	switch s {
	case "-":
		return nil
	case "none":
		return topicPartitions{}
	}
	tps, _ := h.partitionArgs(strings.Split(s, ","))
	var ids []tpID
	for _, tp := range tps {
		id, ok := h.topicIDs[tp.Topic]
		if !ok {
			h.t.Fatalf("owned=%s: no topic %s", s, tp.Topic)
		}
		ids = append(ids, tpID{id, tp.Partition})
	}
	return partitionsOf(ids)
}

func (h *harness) formatCGHeartbeat(c *client, resp *kmsg.ConsumerGroupHeartbeatResponse) string {
	if resp.ErrorCode != 0 {
		switch resp.ErrorCode {
		case codeFencedMemberEpoch, codeUnknownMemberID:
			// The client gives up its partitions and rejoins.
			c.generation, c.owned = 0, topicPartitions{}
		}
		return fmt.Sprintf("%s hb: %s (%s)", c.name, errName(resp.ErrorCode), deref(resp.ErrorMessage))
	}
	if resp.MemberID != nil {
		c.memberID = *resp.MemberID
	}
	c.generation = resp.MemberEpoch
	line := fmt.Sprintf("%s hb: NONE member=%s epoch=%d", c.name, deref(resp.MemberID), resp.MemberEpoch)
	if resp.HeartbeatIntervalMillis > 0 {
		line += fmt.Sprintf(" interval=%s", time.Duration(resp.HeartbeatIntervalMillis)*time.Millisecond)
	}
	if resp.Assignment != nil {
		m := make(map[[16]byte][]int32)
		for _, t := range resp.Assignment.Topics {
			m[t.TopicID] = append(m[t.TopicID], t.Partitions...)
		}
		c.owned = newTopicPartitions(m)
		line += " assignment=" + h.formatPartitions(c.owned)
	}
	return line
}

func (h *harness) cgLeave(a args) []string {
	c := h.client(a.pos[0])
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 1
	req.Group = a.str("group", "g")
	req.MemberID = a.str("member", c.memberID)
	req.MemberEpoch = leaveEpoch
	if slices.Contains(a.pos[1:], "static") {
		req.MemberEpoch = staticLeaveEpoch
	}
	if c.instanceID != "" {
		req.InstanceID = new(c.instanceID)
	}
	resp := h.c.ConsumerGroupHeartbeat(context.Background(), req)
	if resp.ErrorCode != 0 {
		return []string{fmt.Sprintf("%s leave: %s (%s)", c.name, errName(resp.ErrorCode), deref(resp.ErrorMessage))}
	}
	c.generation, c.owned = 0, topicPartitions{}
	return []string{fmt.Sprintf("%s leave: NONE epoch=%d", c.name, resp.MemberEpoch)}
}

func (h *harness) cgDescribe(a args) []string {
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Version = int16(a.int(h.t, "v", 1))
	req.Groups = a.pos
	var out []string
	for _, g := range h.c.ConsumerGroupDescribe(context.Background(), req).Groups {
		if g.ErrorCode != 0 {
			out = append(out, fmt.Sprintf("%s: %s (%s)", g.Group, errName(g.ErrorCode), deref(g.ErrorMessage)))
			continue
		}
		out = append(out, fmt.Sprintf("%s: NONE state=%s epoch=%d assignment-epoch=%d assignor=%s", g.Group, g.State,
			g.Epoch, g.AssignmentEpoch, g.AssignorName))
		for _, m := range g.Members {
			line := fmt.Sprintf("  %s%s epoch=%d client=%s host=%s type=%d topics=%v", m.MemberID,
				instanceSuffix(m.InstanceID), m.MemberEpoch, m.ClientID, m.ClientHost, m.MemberType, m.SubscribedTopics)
			if m.SubscribedTopicRegex != nil {
				line += fmt.Sprintf(" regex=%q", *m.SubscribedTopicRegex)
			}
			line += " assigned=" + formatAssignment(m.Assignment) + " target=" + formatAssignment(m.TargetAssignment)
			out = append(out, line)
		}
	}
	return out
}

func formatAssignment(a kmsg.Assignment) string {
	var parts []string
	for _, t := range a.TopicPartitions {
		for _, p := range t.Partitions {
			parts = append(parts, t.Topic+"-"+strconv.Itoa(int(p)))
		}
	}
	slices.Sort(parts)
	return "[" + strings.Join(parts, " ") + "]"
}

// formatPartitions renders a set by topic name, in name then partition
// order.
func (h *harness) formatPartitions(tps topicPartitions) string {
	type named struct {
		topic     string
		partition int32
	}
	var list []named
	tps.each(func(tp tpID) {
		name, ok := h.topicName(tp.topic)
		if !ok {
			name = fmt.Sprintf("%x", tp.topic[:2])
		}
		list = append(list, named{name, tp.partition})
	})
	slices.SortFunc(list, func(a, b named) int {
		return cmp.Or(strings.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	parts := make([]string, len(list))
	for i, n := range list {
		parts[i] = n.topic + "-" + strconv.Itoa(int(n.partition))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// consumerState prints a consumer group's internal state.
func (h *harness) consumerState(g *group) []string {
	cg := &g.consumer
	out := []string{fmt.Sprintf("%s: consumer %s epoch=%d assignment-epoch=%d", g.id, cg.stateName(), cg.epoch,
		cg.assignmentEpoch)}
	for _, m := range cg.sortedMembers() {
		line := fmt.Sprintf("  member %s", m.id)
		if m.instanceID != "" {
			line += " instance=" + m.instanceID
		}
		line += fmt.Sprintf(" epoch=%d prev=%d %s assigned=%s", m.epoch, m.previousEpoch, m.state,
			h.formatPartitions(m.assigned))
		if m.pendingRevocation.count() > 0 {
			line += " revoking=" + h.formatPartitions(m.pendingRevocation)
		}
		line += " target=" + h.formatPartitions(cg.target[m.id])
		out = append(out, line)
	}
	return append(out, offsetLines(g)...)
}

// describeConsumerRecord renders a KIP-848 record for the scripts.
func describeConsumerRecord(keyType int16, key, value []byte) string {
	perMember := keyType == consumerGroupMemberMetadataKeyType || keyType == consumerGroupTargetMemberKeyType ||
		keyType == consumerGroupCurrentMemberKeyType
	groupID, memberID, err := readConsumerKey(key, perMember)
	if err != nil {
		return err.Error()
	}
	names := map[int16]string{
		consumerGroupMetadataKeyType:          "cg-epoch",
		consumerGroupMemberMetadataKeyType:    "cg-member",
		consumerGroupTargetMetadataKeyType:    "cg-target-epoch",
		consumerGroupTargetMemberKeyType:      "cg-target",
		consumerGroupCurrentMemberKeyType:     "cg-current",
		consumerGroupPartitionMetadataKeyType: "cg-partition-metadata",
	}
	s := names[keyType] + " " + groupID
	if perMember {
		s += " " + memberID
	}
	if value == nil {
		return s + " tombstone"
	}
	format := func(tps topicPartitions) string {
		var parts []string
		tps.each(func(tp tpID) { parts = append(parts, fmt.Sprintf("%d:%d", tp.topic[0], tp.partition)) })
		return "[" + strings.Join(parts, " ") + "]"
	}
	switch keyType {
	case consumerGroupMetadataKeyType:
		v, err := decodeGroupEpochValue(value)
		if err != nil {
			return s + " " + err.Error()
		}
		return fmt.Sprintf("%s epoch=%d", s, v.epoch)
	case consumerGroupMemberMetadataKeyType:
		v, err := decodeMemberMetadataValue(value)
		if err != nil {
			return s + " " + err.Error()
		}
		s += fmt.Sprintf(" client=%s topics=%v rebalance=%dms", v.clientID, v.subscribedTopics, v.rebalanceTimeout)
		for _, f := range []struct {
			name string
			v    *string
		}{{"instance", v.instanceID}, {"rack", v.rackID}, {"regex", v.regex}, {"assignor", v.serverAssignor}} {
			if f.v != nil {
				s += fmt.Sprintf(" %s=%s", f.name, *f.v)
			}
		}
		return s
	case consumerGroupTargetMetadataKeyType:
		epoch, err := decodeTargetEpochValue(value)
		if err != nil {
			return s + " " + err.Error()
		}
		return fmt.Sprintf("%s epoch=%d", s, epoch)
	case consumerGroupTargetMemberKeyType:
		v, err := decodeTargetMemberValue(value)
		if err != nil {
			return s + " " + err.Error()
		}
		return s + " " + format(v)
	case consumerGroupCurrentMemberKeyType:
		v, err := decodeCurrentAssignmentValue(value)
		if err != nil {
			return s + " " + err.Error()
		}
		s += fmt.Sprintf(" epoch=%d prev=%d %s assigned=%s", v.epoch, v.previousEpoch, v.state, format(v.assigned))
		if v.pendingRevocation.count() > 0 {
			s += " revoking=" + format(v.pendingRevocation)
		}
		return s
	}
	return s
}
