package broker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceN writes n one-record batches to a partition through raw requests
// and returns nothing; each must succeed.
func produceN(t *testing.T, rc *rawConn, topic string, p int32, n int) {
	t.Helper()
	for i := range n {
		b := rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, rawRecord{Key: []byte("k"), Value: []byte(fmt.Sprint(i))})
		if sp := rawProducePart(rc, rawProduceReq(topic, p, -1, b), int32(i)); sp.ErrorCode != 0 {
			t.Fatalf("produce %d: error %d", i, sp.ErrorCode)
		}
	}
}

func TestDeleteRecords(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "dr", 1)
	rc := dialRaw(t, b)
	produceN(t, rc, "dr", 0, 10)
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	ctx := context.Background()
	res, err := adm.DeleteRecords(ctx, kadm.Offsets{"dr": {0: {At: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := res.Lookup("dr", 0); r.Err != nil || r.LowWatermark != 4 {
		t.Fatalf("delete to 4: %+v", r)
	}
	if fp := rawFetchPart(rc, rawFetchReq(12, "dr", [16]byte{}, 0, 3), 50); fp.ErrorCode != kerr.OffsetOutOfRange.Code || fp.LogStartOffset != 4 {
		t.Fatalf("fetch below the new start: error %d, log start %d", fp.ErrorCode, fp.LogStartOffset)
	}
	if lo := rawListOffsetsPart(rc, rawListOffsetsReq("dr", 0, -2), 51); lo.Offset != 4 {
		t.Fatalf("earliest after delete: %d", lo.Offset)
	}
	// Past the high watermark: OFFSET_OUT_OF_RANGE; -1: to the high watermark.
	res, _ = adm.DeleteRecords(ctx, kadm.Offsets{"dr": {0: {At: 11}}})
	if r, _ := res.Lookup("dr", 0); r.Err != kerr.OffsetOutOfRange {
		t.Fatalf("delete past hw: %v", r.Err)
	}
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "dr"
	rt.Partitions = []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: -1}}
	req.Topics = append(req.Topics, rt)
	resp := rc.roundTrip(req, 52).(*kmsg.DeleteRecordsResponse)
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.LowWatermark != 10 {
		t.Fatalf("delete to hw: %+v", p)
	}
}

func TestOffsetForLeaderEpoch(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "ofle", 1)
	rc := dialRaw(t, b)
	produceN(t, rc, "ofle", 0, 5)
	ask := func(epoch, current int32) kmsg.OffsetForLeaderEpochResponseTopicPartition {
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.Version = 4
		req.ReplicaID = -1
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = "ofle"
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.LeaderEpoch, rp.CurrentLeaderEpoch = epoch, current
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return rc.roundTrip(req, 1).(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0]
	}
	if p := ask(0, -1); p.ErrorCode != 0 || p.LeaderEpoch != 0 || p.EndOffset != 5 {
		t.Fatalf("epoch 0: %+v", p)
	}
	if p := ask(3, -1); p.ErrorCode != 0 || p.LeaderEpoch != 0 || p.EndOffset != 5 {
		t.Fatalf("epoch 3 (unknown, newer): %+v", p)
	}
	if p := ask(0, 9); p.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Fatalf("current epoch from the future: %+v", p)
	}
}

func TestDescribeLogDirs(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "dirs", 2)
	rc := dialRaw(t, b)
	produceN(t, rc, "dirs", 1, 3)
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	all, err := adm.DescribeAllLogDirs(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	dirs := all[1]
	dir, ok := dirs[b.cfg.LogDir]
	if !ok || dir.Err != nil {
		t.Fatalf("log dirs %+v", dirs)
	}
	p0, p1 := dir.Topics["dirs"][0], dir.Topics["dirs"][1]
	if p0.Size != 0 || p1.Size <= 0 {
		t.Fatalf("sizes %d and %d", p0.Size, p1.Size)
	}
	if dir.TotalBytes <= 0 || dir.UsableBytes <= 0 {
		t.Fatalf("disk space %d/%d", dir.UsableBytes, dir.TotalBytes)
	}
}

func TestDescribeCluster(t *testing.T) {
	b := startBroker(t)
	cl := newFranz(t, b.Addr())
	req := kmsg.NewPtrDescribeClusterRequest()
	req.Version, req.EndpointType = 1, 1
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || resp.ClusterID == "" || resp.ControllerID != 1 || len(resp.Brokers) != 1 || resp.Brokers[0].Port == 0 {
		t.Fatalf("describe cluster %+v", resp)
	}
	if resp.ClusterID != b.meta.Load().ClusterID() {
		t.Fatalf("cluster id %q", resp.ClusterID)
	}
	req.EndpointType = 2
	if resp, _ = req.RequestWith(context.Background(), cl); resp.ErrorCode != kerr.UnsupportedEndpointType.Code {
		t.Fatalf("controller endpoints: error %d", resp.ErrorCode)
	}
}

func TestDescribeTopicPartitionsPages(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "a-topic", 3)
	createTopic(t, b, "b-topic", 2)
	cl := newFranz(t, b.Addr(), kgo.DisableIdempotentWrite())
	var seen []string
	var cursor *kmsg.DescribeTopicPartitionsRequestCursor
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
		req := kmsg.NewPtrDescribeTopicPartitionsRequest()
		req.ResponsePartitionLimit = 2
		req.Cursor = cursor
		for _, n := range []string{"b-topic", "a-topic", "missing"} {
			req.Topics = append(req.Topics, kmsg.DescribeTopicPartitionsRequestTopic{Topic: n})
		}
		resp, err := req.RequestWith(context.Background(), cl)
		if err != nil {
			t.Fatal(err)
		}
		for _, tp := range resp.Topics {
			if tp.ErrorCode != 0 {
				seen = append(seen, fmt.Sprintf("%s:err%d", *tp.Topic, tp.ErrorCode))
			}
			for _, p := range tp.Partitions {
				seen = append(seen, fmt.Sprintf("%s/%d", *tp.Topic, p.Partition))
			}
		}
		if resp.NextCursor == nil {
			break
		}
		cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: resp.NextCursor.Topic, Partition: resp.NextCursor.Partition}
	}
	want := fmt.Sprint([]string{"a-topic/0", "a-topic/1", "a-topic/2", "b-topic/0", "b-topic/1", "missing:err3"})
	if fmt.Sprint(seen) != want {
		t.Fatalf("pages gave %v, want %v", seen, want)
	}
}
