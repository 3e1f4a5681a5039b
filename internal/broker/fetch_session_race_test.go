package broker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFetchSessionSharedByTwoConnections has two connections hammer one
// fetch session at once: long-polling incremental fetches with changing
// offsets and forgotten partitions. The protocol allows one fetch in flight
// per session, so this is a misbehaving client; the broker must still keep
// the session consistent (no data race: run with -race), answer every
// request with a decodable response whose only session errors are epoch
// mismatches, and never report a partition the request did not have in its
// session view.
func TestFetchSessionSharedByTwoConnections(t *testing.T) {
	b := startBroker(t)
	const topic, partitions = "shared-session", 4
	createTopic(t, b, topic, partitions)
	rc := dialRaw(t, b)
	for p := range int32(partitions) {
		produceN(t, rc, topic, p, 3)
	}

	open := fetchAll(topic, partitions, 0)
	open.SessionEpoch = 0
	first := rc.roundTrip(open, 1).(*kmsg.FetchResponse)
	if first.ErrorCode != 0 || first.SessionID == 0 {
		t.Fatalf("opening a session: error %d, id %d", first.ErrorCode, first.SessionID)
	}
	var epoch atomic.Int32 // the next epoch either connection tries
	epoch.Store(1)

	var ok, stale atomic.Int64
	errs := make(chan error, 2)
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- hammerSession(b.Addr(), topic, partitions, first.SessionID, &epoch, w, &ok, &stale)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if ok.Load() == 0 {
		t.Fatalf("no incremental fetch succeeded (%d epoch errors)", stale.Load())
	}
	t.Logf("%d incremental fetches answered, %d refused for their epoch", ok.Load(), stale.Load())
}

// fetchAll is a v12 fetch of every partition of topic from offset.
func fetchAll(topic string, partitions int32, offset int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID, req.MaxBytes, req.MaxWaitMillis, req.MinBytes = -1, 1<<20, 0, 0
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	for p := range partitions {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = p, offset, 1<<20, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

func hammerSession(addr, topic string, partitions, session int32, epoch *atomic.Int32, worker int, ok, stale *atomic.Int64) error {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	for i := range 200 {
		req := fetchAll(topic, partitions, int64(i%4))
		// Every other request guesses that the other connection's fetch in
		// flight has already moved the epoch on, so the two overlap.
		req.SessionID, req.SessionEpoch = session, epoch.Load()+int32((i+worker)%2)
		// Wait for bytes that never come, so the fetch long-polls while
		// the other connection changes the session.
		req.MinBytes, req.MaxWaitMillis = 1<<30, 2
		if (i+worker)%3 == 0 {
			// Change partition 1 only; forget partition 3.
			req.Topics[0].Partitions = req.Topics[0].Partitions[1:2]
			req.ForgottenTopics = []kmsg.FetchRequestForgottenTopic{{Topic: topic, Partitions: []int32{3}}}
		}
		body := encodeRequest(req, int32(i))
		if _, err := nc.Write(binary.BigEndian.AppendUint32(nil, uint32(len(body)))); err != nil {
			return err
		}
		if _, err := nc.Write(body); err != nil {
			return err
		}
		var size [4]byte
		if _, err := io.ReadFull(nc, size[:]); err != nil {
			return fmt.Errorf("worker %d fetch %d: %w", worker, i, err)
		}
		buf := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(nc, buf); err != nil {
			return err
		}
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		if err := resp.ReadFrom(buf[4+1:]); err != nil { // correlation id, empty header tags
			return fmt.Errorf("worker %d fetch %d: decode: %w", worker, i, err)
		}
		switch resp.ErrorCode {
		case 0:
			ok.Add(1)
			for cur := epoch.Load(); cur <= req.SessionEpoch && !epoch.CompareAndSwap(cur, nextEpoch(req.SessionEpoch)); cur = epoch.Load() {
			}
		case kerr.InvalidFetchSessionEpoch.Code:
			stale.Add(1)
			continue
		default:
			return fmt.Errorf("worker %d fetch %d: %w", worker, i, kerr.ErrorForCode(resp.ErrorCode))
		}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if rt.Topic != topic || rp.Partition < 0 || rp.Partition >= partitions {
					return fmt.Errorf("worker %d: response names %s-%d", worker, rt.Topic, rp.Partition)
				}
				if rp.ErrorCode != 0 && !errors.Is(kerr.ErrorForCode(rp.ErrorCode), kerr.OffsetOutOfRange) {
					return fmt.Errorf("worker %d: %s-%d: %w", worker, rt.Topic, rp.Partition, kerr.ErrorForCode(rp.ErrorCode))
				}
				if rp.ErrorCode == 0 && rp.HighWatermark != 3 {
					return fmt.Errorf("worker %d: %s-%d: high watermark %d, want 3", worker, rt.Topic, rp.Partition, rp.HighWatermark)
				}
			}
		}
	}
	return nil
}
