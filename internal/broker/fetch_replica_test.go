package broker

import (
	"bytes"
	"encoding/binary"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// addFollower lists node 2 as a replica of partition 0 of topic, in the
// ISR, and applies the image in process, so that the single node b answers
// fetches from replica 2 as a cluster's leader does. One node cannot add a
// replica through any API: node 2 is not registered.
func addFollower(tb testing.TB, b *Broker, topic string) model.TopicID {
	tb.Helper()
	ts, ok := b.topics.byTopicName(topic)
	if !ok {
		tb.Fatalf("no topic %s", topic)
	}
	img := b.ctrl.Image()
	both := []model.NodeID{model.NodeID(b.cfg.NodeID), 2}
	next, err := img.ApplyAt(img.Offset()+1000,
		metadata.PartitionChange{TopicID: ts.id, Partition: 0, Replicas: both, ISR: both})
	if err != nil {
		tb.Fatal(err)
	}
	if err := b.applyImage(next); err != nil {
		tb.Fatal(err)
	}
	return ts.id
}

// uncompressed has fillTopic's records stored as produced, 1 KiB each.
var uncompressed = kgo.ProducerBatchCompression(kgo.NoCompression())

// leaderWithFollower starts a broker leading topic, one partition of about
// size bytes of 1 KiB records, with node 2 its follower (addFollower).
func leaderWithFollower(t *testing.T, cfg Config, topic string, size int) (*Broker, model.TopicID) {
	t.Helper()
	cfg.LogDir = t.TempDir()
	b := startBrokerWith(t, cfg)
	// Created first: a producer's auto-creation sometimes waits out a
	// metadata backoff of seconds.
	createTopic(t, b, topic, 1)
	fillTopic(t, b, topic, size, uncompressed)
	return b, addFollower(t, b, topic)
}

// deleteTopicHere removes the topic's partitions and logs as an image
// without it would. The controller's own images are behind addFollower's,
// so a DeleteTopics would not reach the broker.
func deleteTopicHere(tb testing.TB, b *Broker, topic string) {
	tb.Helper()
	ti, ok := b.meta.Load().Topic(topic)
	if !ok {
		tb.Fatalf("no topic %s", topic)
	}
	if err := b.removeTopic(ti); err != nil {
		tb.Fatal(err)
	}
}

// replicaFetchReq is the fetch node 2's fetcher sends for partition 0 of a
// topic (fetchOnce): no session, no wait, topics by ID.
func replicaFetchReq(id model.TopicID, offset int64, maxBytes int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 16
	req.ReplicaID, req.ReplicaState.ID = 2, 2
	req.MaxBytes, req.SessionEpoch = maxBytes, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.TopicID = id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.LogStartOffset, rp.PartitionMaxBytes = offset, -1, maxBytes
	rt.Partitions = []kmsg.FetchRequestTopicPartition{rp}
	req.Topics = []kmsg.FetchRequestTopic{rt}
	return req
}

// serveReplicaFetch runs the leader's handler for req as node 2's fetch,
// as the connection would, and returns the frame it would write.
func serveReplicaFetch(t *testing.T, b *Broker, req *kmsg.FetchRequest) *frame {
	t.Helper()
	h := requestHeader{key: int16(kmsg.Fetch), version: req.Version, correlationID: 7}
	f, err := b.handleReplicaFetch(&conn{b: b}, h, req, 2)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// frameWire lays a frame out as the connection's writer sends it, the
// ranges read from their files, and decodes the FetchResponse in it.
func frameWire(t *testing.T, f *frame, version int16) *kmsg.FetchResponse {
	t.Helper()
	var wire []byte
	prev := 0
	for _, h := range f.holes {
		data, err := h.rr.ReadAll()
		if err != nil {
			t.Fatalf("range of the frame: %v", err)
		}
		wire = append(append(wire, f.buf[prev:h.at]...), data...)
		prev = h.at
	}
	wire = append(wire, f.buf[prev:]...)
	if size := int(binary.BigEndian.Uint32(wire)); size != len(wire)-4 {
		t.Fatalf("size prefix %d, frame %d bytes", size, len(wire)-4)
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = version
	if err := resp.ReadFrom(wire[4+4+1:]); err != nil { // size, correlation ID, header tags
		t.Fatalf("decode: %v", err)
	}
	return resp
}

// A follower's fetch carries its records as ranges of the segment file,
// sent by sendfile, not as bytes copied into the response: the frame is a
// few dozen bytes around 256 KiB of records, and serving the fetch
// allocates a small fraction of what it sends. The bytes sent are the
// log's, and the range stays readable until the writer releases the frame,
// though the topic is deleted meanwhile.
func TestReplicaFetchSendsRecordsFromTheSegment(t *testing.T) {
	b, id := leaderWithFollower(t, Config{}, "rf", 256<<10)
	want, hw := logBytes(t, b, "rf", 0)
	req := replicaFetchReq(id, 0, 4<<20)

	f := serveReplicaFetch(t, b, req)
	var sent int64
	for _, h := range f.holes {
		sent += h.rr.Size
	}
	if len(f.holes) != 1 || sent != int64(len(want)) || len(f.buf) > 256 {
		t.Fatalf("frame: %d ranges of %d bytes and %d encoded bytes; want one range of the log's %d bytes and the rest small",
			len(f.holes), sent, len(f.buf), len(want))
	}
	resp := frameWire(t, f, req.Version)
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.HighWatermark != hw || !bytes.Equal(p.RecordBatches, want) {
		t.Fatalf("partition: error %d, high watermark %d (want %d), %d record bytes equal to the log's %d: %v",
			p.ErrorCode, p.HighWatermark, hw, len(p.RecordBatches), len(want), bytes.Equal(p.RecordBatches, want))
	}

	deleteTopicHere(t, b, "rf")
	if data, err := f.holes[0].rr.ReadAll(); err != nil || !bytes.Equal(data, want) {
		t.Fatalf("the frame's range after the topic's deletion: %d bytes, %v; want the records still readable", len(data), err)
	}
	file := f.holes[0].rr.File
	f.release()
	if _, err := file.ReadAt(make([]byte, 1), 0); err == nil {
		t.Fatal("the segment file is still open after the frame released it and the topic was deleted")
	}
}

// Over a connection, the follower gets the log's records whether the
// writer sends them by sendfile or, where it cannot (TLS, DisableSendfile),
// reads and writes them.
func TestReplicaFetchOverTheWire(t *testing.T) {
	for _, mode := range []struct {
		name     string
		disabled bool
	}{{"sendfile", false}, {"copy", true}} {
		t.Run(mode.name, func(t *testing.T) {
			b, id := leaderWithFollower(t, Config{DisableSendfile: mode.disabled}, "rf", 64<<10)
			want, hw := logBytes(t, b, "rf", 0)
			req := replicaFetchReq(id, 0, 4<<20)
			p := dialRaw(t, b).roundTrip(req, 1).(*kmsg.FetchResponse).Topics[0].Partitions[0]
			if p.ErrorCode != 0 || p.HighWatermark != hw || !bytes.Equal(p.RecordBatches, want) {
				t.Fatalf("error %d, high watermark %d (want %d), %d record bytes (the log has %d), equal: %v",
					p.ErrorCode, p.HighWatermark, hw, len(p.RecordBatches), len(want), bytes.Equal(p.RecordBatches, want))
			}
		})
	}
}

// Serving a replica fetch allocates far less than the records it sends.
func TestReplicaFetchAllocs(t *testing.T) {
	b, id := leaderWithFollower(t, Config{}, "rf", 256<<10)
	req := replicaFetchReq(id, 0, 4<<20)
	const fetches = 20
	var before, after runtime.MemStats
	var sent int64
	runtime.ReadMemStats(&before)
	for range fetches {
		f := serveReplicaFetch(t, b, req)
		for _, h := range f.holes {
			sent += h.rr.Size
		}
		sent += int64(len(f.buf))
		f.release()
	}
	runtime.ReadMemStats(&after)
	perFetch := int64(after.TotalAlloc-before.TotalAlloc) / fetches
	if sent /= fetches; sent < 200<<10 || perFetch > sent/16 {
		t.Fatalf("a replica fetch of %d bytes allocates %d bytes; want under a sixteenth", sent, perFetch)
	}
}

// A long poll that reads more than once sends only its last read; the
// ones before are released, so the segments they pinned can close.
func TestReplicaFetchLongPollReleasesDroppedReads(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs /proc/self/fd to see the segment files open")
	}
	b, id := leaderWithFollower(t, Config{}, "rf", 64<<10)
	dir := b.logs.PartitionDir(model.TopicPartition{Topic: "rf", Partition: 0})
	req := replicaFetchReq(id, 0, 4<<20)
	// More than there is: the fetch reads, reads again with the waiter
	// registered, waits out MaxWaitMillis and reads a third time.
	req.MinBytes, req.MaxWaitMillis = 1<<30, 50
	f := serveReplicaFetch(t, b, req)
	if len(f.holes) != 1 {
		t.Fatalf("%d ranges in the frame, want the last read's one", len(f.holes))
	}
	deleteTopicHere(t, b, "rf")
	f.release()
	if open := filesOpenUnder(t, dir); len(open) > 0 {
		t.Fatalf("segment files still open after the topic's deletion and the frame's release: %v", open)
	}
}

// filesOpenUnder lists the files under dir this process holds open, the
// deleted ones too.
func filesOpenUnder(t *testing.T, dir string) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var open []string
	for _, fd := range fds {
		target, err := os.Readlink("/proc/self/fd/" + fd.Name())
		if err == nil && strings.HasPrefix(target, dir+"/") {
			open = append(open, target)
		}
	}
	return open
}
