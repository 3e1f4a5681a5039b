package broker

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareHeartbeat sends a ShareGroupHeartbeat v1 from member (epoch 0 with
// topics to join, -1 to leave).
func shareHeartbeat(t *testing.T, ctx context.Context, cl *kgo.Client, group, member string, epoch int32, topics ...string) *kmsg.ShareGroupHeartbeatResponse {
	t.Helper()
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.Version = 1
	req.GroupID, req.MemberID, req.MemberEpoch = group, member, epoch
	if len(topics) > 0 {
		req.SubscribedTopicNames = topics
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("ShareGroupHeartbeat from %s: %v", member, err)
	}
	return resp
}

func shareAssigned(resp *kmsg.ShareGroupHeartbeatResponse) []int32 {
	if resp.Assignment == nil {
		return nil
	}
	var ps []int32
	for _, t := range resp.Assignment.TopicPartitions {
		ps = append(ps, t.Partitions...)
	}
	slices.Sort(ps)
	return ps
}

// TestE2EShareGroups: two members of a share group over a one-partition
// topic both get the partition; ShareGroupDescribe shows them; ListGroups
// lists the group as a share group; DeleteGroups refuses it while it has
// members and deletes it once they left; at share.version 0 the APIs answer
// UNSUPPORTED_VERSION.
func TestE2EShareGroups(t *testing.T) {
	b := startBroker(t)
	adm, ctx := adminClient(t, b)
	createTopic(t, b, "sg-topic", 1)
	cl := newClient(t, b.Addr())

	a := shareHeartbeat(t, ctx, cl, "sg", "member-a", 0, "sg-topic")
	if a.ErrorCode != 0 || a.MemberEpoch != 1 || !slices.Equal(shareAssigned(a), []int32{0}) || a.HeartbeatIntervalMillis != 5000 {
		t.Fatalf("a joins: %v epoch %d assignment %v interval %d", kerr.ErrorForCode(a.ErrorCode), a.MemberEpoch, shareAssigned(a), a.HeartbeatIntervalMillis)
	}
	bm := shareHeartbeat(t, ctx, cl, "sg", "member-b", 0, "sg-topic")
	if bm.ErrorCode != 0 || bm.MemberEpoch != 2 || !slices.Equal(shareAssigned(bm), []int32{0}) {
		t.Fatalf("b joins: %v epoch %d assignment %v", kerr.ErrorForCode(bm.ErrorCode), bm.MemberEpoch, shareAssigned(bm))
	}
	if a = shareHeartbeat(t, ctx, cl, "sg", "member-a", 1); a.ErrorCode != 0 || a.MemberEpoch != 2 {
		t.Fatalf("a heartbeats: %v epoch %d", kerr.ErrorForCode(a.ErrorCode), a.MemberEpoch)
	}
	if fenced := shareHeartbeat(t, ctx, cl, "sg", "member-a", 9); fenced.ErrorCode != kerr.FencedMemberEpoch.Code {
		t.Errorf("a at a future epoch: %v", kerr.ErrorForCode(fenced.ErrorCode))
	}

	desc := kmsg.NewPtrShareGroupDescribeRequest()
	desc.GroupIDs = []string{"sg"}
	dresp, err := desc.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	g := dresp.Groups[0]
	if g.ErrorCode != 0 || g.GroupState != "Stable" || g.GroupEpoch != 2 || g.Assignor != "simple" || len(g.Members) != 2 {
		t.Fatalf("describe: %+v", g)
	}
	for _, m := range g.Members {
		if len(m.Assignment.TopicPartitions) != 1 || m.Assignment.TopicPartitions[0].Topic != "sg-topic" ||
			!slices.Equal(m.Assignment.TopicPartitions[0].Partitions, []int32{0}) || m.ClientID == "" {
			t.Errorf("member %s: %+v", m.MemberID, m)
		}
	}

	list := kmsg.NewPtrListGroupsRequest()
	list.TypesFilter = []string{"share"}
	lresp, err := list.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(lresp.Groups) != 1 || lresp.Groups[0].Group != "sg" || lresp.Groups[0].GroupType != "share" || lresp.Groups[0].GroupState != "Stable" {
		t.Errorf("list share groups: %+v", lresp.Groups)
	}

	del, err := adm.DeleteGroups(ctx, "sg")
	if err != nil || !errorIs(del["sg"].Err, kerr.NonEmptyGroup) {
		t.Fatalf("delete with members: %v %v", err, del["sg"].Err)
	}
	for _, m := range []string{"member-a", "member-b"} {
		if r := shareHeartbeat(t, ctx, cl, "sg", m, -1); r.ErrorCode != 0 || r.MemberEpoch != -1 {
			t.Fatalf("%s leaves: %v epoch %d", m, kerr.ErrorForCode(r.ErrorCode), r.MemberEpoch)
		}
	}
	if del, err = adm.DeleteGroups(ctx, "sg"); err != nil || del["sg"].Err != nil {
		t.Fatalf("delete empty: %v %v", err, del["sg"].Err)
	}
	if dresp, err = desc.RequestWith(ctx, cl); err != nil || dresp.Groups[0].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("describe after delete: %v %+v", err, dresp)
	}

	// A consumer group's ID is not a share group's.
	cg := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	cg.Group, cg.MemberID, cg.RebalanceTimeoutMillis = "cg", "m", 30000
	cg.SubscribedTopicNames, cg.Topics = []string{"sg-topic"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if resp, err := cg.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("consumer group join: %v %+v", err, resp)
	}
	if r := shareHeartbeat(t, ctx, cl, "cg", "member-a", 0, "sg-topic"); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Errorf("share join of a consumer group: %v", kerr.ErrorForCode(r.ErrorCode))
	}

	// share.version 0 turns share groups off.
	res, err := adm.UpdateFeatures(ctx, false, kadm.FeatureUpdate{Feature: "share.version", MaxVersionLevel: 0, UpgradeType: 2})
	if err != nil || res.Error() != nil {
		t.Fatalf("share.version 0: %v %v", err, res.Error())
	}
	if r := shareHeartbeat(t, ctx, cl, "sg", "member-a", 0, "sg-topic"); r.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Errorf("heartbeat at share.version 0: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	off := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	off.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: "sg"}}
	if oresp, err := off.RequestWith(ctx, cl); err != nil || oresp.Groups[0].ErrorCode != kerr.UnsupportedVersion.Code {
		t.Errorf("offsets at share.version 0: %v %+v", err, oresp)
	}
}

func errorIs(err error, want *kerr.Error) bool { return err == want }

// shareRows are the authorization matrix's rows of the share group APIs
// the group coordinator answers.
func shareRows() []matrixRow {
	// join makes the group a share group, as the admin; with leave it is
	// left empty, as AlterShareGroupOffsets wants it.
	join := func(topic, group string, leave bool) func(e *authzEnv) {
		return func(e *authzEnv) {
			p := &probe{t: e.t, e: e, cl: e.admin}
			if code := p.findCoordinator(0, group); code != 0 {
				e.t.Fatalf("find coordinator of %s: %v", group, kerr.ErrorForCode(code))
			}
			ctx := context.Background()
			if r := shareHeartbeat(e.t, ctx, e.admin, group, "setup", 0, topic); r.ErrorCode != 0 {
				e.t.Fatalf("share join %s: %v", group, kerr.ErrorForCode(r.ErrorCode))
			}
			if leave {
				shareHeartbeat(e.t, ctx, e.admin, group, "setup", -1)
			}
		}
	}
	return []matrixRow{
		{api: kmsg.ShareGroupHeartbeat, topic: "mx-shgh", group: "mx-shgh",
			grants: []grant{groupGrant("mx-shgh", opRead), topicGrant("mx-shgh", opDescribe)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrShareGroupHeartbeatRequest()
				req.GroupID, req.MemberID, req.MemberEpoch = "mx-shgh", "member-"+p.suffix, 0
				req.SubscribedTopicNames = []string{"mx-shgh"}
				return p.do(req).(*kmsg.ShareGroupHeartbeatResponse).ErrorCode
			}},
		{api: kmsg.ShareGroupDescribe, topic: "mx-sgd", group: "mx-sgd", setup: join("mx-sgd", "mx-sgd", false),
			grants: []grant{groupGrant("mx-sgd", opDescribe), topicGrant("mx-sgd", opDescribe)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				// The admin's member rejoins so its session never ends
				// while the matrix runs: a group without members has no
				// topics to refuse.
				shareHeartbeat(p.t, context.Background(), p.e.admin, "mx-sgd", "setup", 0, "mx-sgd")
				req := kmsg.NewPtrShareGroupDescribeRequest()
				req.GroupIDs = []string{"mx-sgd"}
				return p.do(req).(*kmsg.ShareGroupDescribeResponse).Groups[0].ErrorCode
			}},
		{api: kmsg.DescribeShareGroupOffsets, topic: "mx-dsgo", group: "mx-dsgo", setup: join("mx-dsgo", "mx-dsgo", false),
			grants: []grant{groupGrant("mx-dsgo", opDescribe), topicGrant("mx-dsgo", opDescribe)},
			ok:     []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
				req.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: "mx-dsgo",
					Topics: []kmsg.DescribeShareGroupOffsetsRequestGroupTopic{{Topic: "mx-dsgo", Partitions: []int32{0}}}}}
				g := p.do(req).(*kmsg.DescribeShareGroupOffsetsResponse).Groups[0]
				if g.ErrorCode != 0 || len(g.Topics) == 0 {
					return g.ErrorCode
				}
				return g.Topics[0].Partitions[0].ErrorCode
			}},
		{api: kmsg.AlterShareGroupOffsets, topic: "mx-asgo", group: "mx-asgo", setup: join("mx-asgo", "mx-asgo", true),
			grants: []grant{groupGrant("mx-asgo", opRead), topicGrant("mx-asgo", opRead)},
			ok:     []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrAlterShareGroupOffsetsRequest()
				req.GroupID = "mx-asgo"
				req.Topics = []kmsg.AlterShareGroupOffsetsRequestTopic{{Topic: "mx-asgo",
					Partitions: []kmsg.AlterShareGroupOffsetsRequestTopicPartition{{Partition: 0, StartOffset: 0}}}}
				resp := p.do(req).(*kmsg.AlterShareGroupOffsetsResponse)
				if resp.ErrorCode != 0 {
					return resp.ErrorCode
				}
				return resp.Topics[0].Partitions[0].ErrorCode
			}},
		{api: kmsg.DeleteShareGroupOffsets, topic: "mx-dlsgo", group: "mx-dlsgo", setup: join("mx-dlsgo", "mx-dlsgo", true),
			grants: []grant{groupGrant("mx-dlsgo", opDelete), topicGrant("mx-dlsgo", opRead)},
			ok:     []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
				req.GroupID = "mx-dlsgo"
				req.Topics = []kmsg.DeleteShareGroupOffsetsRequestTopic{{Topic: "mx-dlsgo"}}
				resp := p.do(req).(*kmsg.DeleteShareGroupOffsetsResponse)
				if resp.ErrorCode != 0 {
					return resp.ErrorCode
				}
				return resp.Topics[0].ErrorCode
			}},
		// A share fetch and an acknowledgement of offsets never acquired:
		// READ on the group, then READ on the topic (its partition's
		// error). The member's share session is opened by the fetch.
		{api: kmsg.ShareFetch, topic: "mx-sf", group: "mx-sf",
			grants: []grant{groupGrant("mx-sf", opRead), topicGrant("mx-sf", opRead)}, ok: []int16{0},
			probe: func(p *probe) int16 { return p.shareFetch("mx-sf", "mx-sf", false) }},
		{api: kmsg.ShareAcknowledge, topic: "mx-sa", group: "mx-sa",
			grants: []grant{groupGrant("mx-sa", opRead), topicGrant("mx-sa", opRead)}, ok: []int16{kerr.InvalidRecordState.Code},
			probe: func(p *probe) int16 { return p.shareFetch("mx-sa", "mx-sa", true) }},
		shareStateRow(kmsg.InitializeShareGroupState, func(id [16]byte) kmsg.Request {
			req := kmsg.NewPtrInitializeShareGroupStateRequest()
			req.GroupID = "mx-state"
			req.Topics = []kmsg.InitializeShareGroupStateRequestTopic{{TopicID: id, Partitions: []kmsg.InitializeShareGroupStateRequestTopicPartition{{Partition: 0, StartOffset: 0}}}}
			return req
		}, func(r kmsg.Response) int16 {
			return r.(*kmsg.InitializeShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode
		}),
		shareStateRow(kmsg.ReadShareGroupState, func(id [16]byte) kmsg.Request {
			req := kmsg.NewPtrReadShareGroupStateRequest()
			req.GroupID = "mx-state-none"
			req.Topics = []kmsg.ReadShareGroupStateRequestTopic{{TopicID: id, Partitions: []kmsg.ReadShareGroupStateRequestTopicPartition{{Partition: 0}}}}
			return req
		}, func(r kmsg.Response) int16 {
			return r.(*kmsg.ReadShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode
		}, kerr.UnknownTopicOrPartition.Code),
		shareStateRow(kmsg.WriteShareGroupState, func(id [16]byte) kmsg.Request {
			req := kmsg.NewPtrWriteShareGroupStateRequest()
			req.GroupID = "mx-state-w"
			req.Topics = []kmsg.WriteShareGroupStateRequestTopic{{TopicID: id, Partitions: []kmsg.WriteShareGroupStateRequestTopicPartition{{Partition: 0, StartOffset: 0}}}}
			return req
		}, func(r kmsg.Response) int16 {
			return r.(*kmsg.WriteShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode
		}),
		shareStateRow(kmsg.DeleteShareGroupState, func(id [16]byte) kmsg.Request {
			req := kmsg.NewPtrDeleteShareGroupStateRequest()
			req.GroupID = "mx-state-none"
			req.Topics = []kmsg.DeleteShareGroupStateRequestTopic{{TopicID: id, Partitions: []kmsg.DeleteShareGroupStateRequestTopicPartition{{Partition: 0}}}}
			return req
		}, func(r kmsg.Response) int16 {
			return r.(*kmsg.DeleteShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode
		}),
		shareStateRow(kmsg.ReadShareGroupStateSummary, func(id [16]byte) kmsg.Request {
			req := kmsg.NewPtrReadShareGroupStateSummaryRequest()
			req.GroupID = "mx-state-none"
			req.Topics = []kmsg.ReadShareGroupStateSummaryRequestTopic{{TopicID: id, Partitions: []kmsg.ReadShareGroupStateSummaryRequestTopicPartition{{Partition: 0}}}}
			return req
		}, func(r kmsg.Response) int16 {
			return r.(*kmsg.ReadShareGroupStateSummaryResponse).Topics[0].Partitions[0].ErrorCode
		}, kerr.UnknownTopicOrPartition.Code),
	}
}

// shareStateRow is a row of the share coordinator's inter-broker APIs:
// CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED per
// partition. Its setup creates __share_group_state so the answer is the
// coordinator's, not NOT_COORDINATOR.
func shareStateRow(api kmsg.Key, build func(id [16]byte) kmsg.Request, code func(kmsg.Response) int16, ok ...int16) matrixRow {
	return matrixRow{api: api, topic: "mx-state", grants: []grant{clusterGrant(opClusterAction, clusterDenied)},
		ok: append([]int16{0}, ok...),
		setup: func(e *authzEnv) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := e.b.ensureShareStateTopic(ctx); err != nil {
				e.t.Fatal(err)
			}
			for e.b.shareCoord.PartitionCode(0) != 0 {
				if ctx.Err() != nil {
					e.t.Fatal("__share_group_state not loaded")
				}
				time.Sleep(10 * time.Millisecond)
			}
		},
		probe: func(p *probe) int16 {
			ts, _ := p.e.b.topics.byTopicName("mx-state")
			return code(p.do(build([16]byte(ts.id))))
		}}
}

// shareFetch sends a ShareFetch (ack false) or a ShareAcknowledge of an
// offset never acquired (ack true, after a fetch that opens the session)
// for a member of its own, and returns the first error: the request's,
// else the partition's (its acknowledgement's for ShareAcknowledge).
func (p *probe) shareFetch(group, topic string, ack bool) int16 {
	ts, ok := p.e.b.topics.byTopicName(topic)
	if !ok {
		p.t.Fatalf("no topic %s", topic)
	}
	member := "m-" + p.suffix
	fetch := kmsg.NewPtrShareFetchRequest()
	fetch.Version = 1
	fetch.GroupID, fetch.MemberID, fetch.MaxRecords, fetch.BatchSize, fetch.MaxBytes = kmsg.StringPtr(group), kmsg.StringPtr(member), 10, 10, 1<<20
	fetch.Topics = []kmsg.ShareFetchRequestTopic{{TopicID: [16]byte(ts.id), Partitions: []kmsg.ShareFetchRequestTopicPartition{{Partition: 0}}}}
	fr := p.do(fetch).(*kmsg.ShareFetchResponse)
	if fr.ErrorCode != 0 {
		return fr.ErrorCode
	}
	if !ack {
		for _, t := range fr.Topics {
			for _, pt := range t.Partitions {
				if pt.ErrorCode != 0 {
					return pt.ErrorCode
				}
			}
		}
		return 0
	}
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.Version = 1
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(group), kmsg.StringPtr(member), 1
	req.Topics = []kmsg.ShareAcknowledgeRequestTopic{{TopicID: [16]byte(ts.id), Partitions: []kmsg.ShareAcknowledgeRequestTopicPartition{{Partition: 0,
		AcknowledgementBatches: []kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{{FirstOffset: 1000, LastOffset: 1000, AcknowledgeTypes: []int8{1}}}}}}}
	ar := p.do(req).(*kmsg.ShareAcknowledgeResponse)
	if ar.ErrorCode != 0 {
		return ar.ErrorCode
	}
	return ar.Topics[0].Partitions[0].ErrorCode
}

func init() {
	// The Java share consumer's and Admin's share-group calls are covered
	// with the real clients in test/groupsref; the matrix probes them with
	// franz-go only.
	for _, name := range []string{"ShareGroupHeartbeat", "ShareGroupDescribe", "DescribeShareGroupOffsets",
		"AlterShareGroupOffsets", "DeleteShareGroupOffsets", "ShareFetch", "ShareAcknowledge"} {
		noClient[name] = "probed with franz-go; the Java share consumer and Admin run against Samsa in test/groupsref"
	}
	for _, name := range []string{"InitializeShareGroupState", "ReadShareGroupState", "WriteShareGroupState",
		"DeleteShareGroupState", "ReadShareGroupStateSummary"} {
		noClient[name] = "between brokers only: no client sends it"
	}
}
