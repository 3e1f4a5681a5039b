package broker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// waitForGauge waits until cond holds for the gauge's level, woken by each
// change of it, failing the test after timeout.
func waitForGauge(t *testing.T, timeout time.Duration, what string, g *gauge, cond func(int64) bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		v, changed := g.watch()
		if cond(v) {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("timed out after %v waiting for %s (level %d)", timeout, what, v)
		}
	}
}

// waitForLongPoll waits until a fetch is long-polling on the broker.
func waitForLongPoll(t *testing.T, b *Broker, what string) {
	t.Helper()
	waitForGauge(t, 10*time.Second, what, &b.counters.fetchesWaiting, func(v int64) bool { return v > 0 })
}

// maxSessionEpoch is the highest epoch of any open fetch session: one
// more than the incremental fetches made on it.
func maxSessionEpoch(b *Broker) int32 {
	s := b.fetchSessions
	s.mu.Lock()
	defer s.mu.Unlock()
	var most int32
	for _, fs := range s.byID {
		most = max(most, fs.epoch)
	}
	return most
}

// A consumer long-polling an empty partition with a 5 s max wait gets a
// record produced while it waits at once: the append wakes the fetch.
func TestE2ELongPollWakesOnAppend(t *testing.T) {
	b := startBroker(t)
	const topic = "long-poll"
	createTopic(t, b, topic, 1)
	consumer := newFranz(t, b.Addr(), kgo.FetchMaxWait(5*time.Second),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(0)}}))
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	arrived := make(chan time.Time, 1)
	go func() {
		for {
			fs := consumer.PollFetches(ctx)
			if ctx.Err() != nil || fs.IsClientClosed() {
				return
			}
			if fs.NumRecords() > 0 {
				arrived <- time.Now()
				return
			}
		}
	}()
	waitForLongPoll(t, b, "the consumer's fetch to wait on the broker")

	producer := newFranz(t, b.Addr())
	sent := time.Now()
	if err := producer.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("wake up")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-arrived:
		// Without a wake-up the record would come when the 5 s wait ends.
		if d := got.Sub(sent); d > 2*time.Second {
			t.Fatalf("record reached the long-polling consumer %v after the produce, want well under its 5s max wait", d)
		}
	case <-ctx.Done():
		t.Fatal("the record never reached the consumer")
	}
}

// A fetch asking for more bytes than the partition has waits MaxWait and
// then returns what there is; one asking for a byte returns at once; and
// one whose MinBytes a later append satisfies returns on that append.
func TestE2EFetchMinBytes(t *testing.T) {
	b := startBroker(t)
	const topic = "min-bytes"
	createTopic(t, b, topic, 1)
	rc := dialRaw(t, b)
	batch := rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()},
		rawRecord{Value: []byte("one")}, rawRecord{Value: []byte("two")}, rawRecord{Value: []byte("three")})
	if sp := rawProducePart(rc, rawProduceReq(topic, 0, -1, batch), 1); sp.ErrorCode != 0 {
		t.Fatalf("produce: error %d", sp.ErrorCode)
	}

	fetch := func(minBytes, maxWait int32, sessionEpoch int32, corr int32) (time.Duration, []rawFetchedRecord) {
		req := rawFetchReq(12, topic, [16]byte{}, 0, 0)
		req.MinBytes, req.MaxWaitMillis, req.SessionEpoch = minBytes, maxWait, sessionEpoch
		start := time.Now()
		fp := rawFetchPart(rc, req, corr)
		if fp.ErrorCode != 0 {
			t.Fatalf("fetch: error %d", fp.ErrorCode)
		}
		return time.Since(start), rawBatchRecords(t, fp.RecordBatches)
	}

	took, recs := fetch(1<<20, 600, -1, 2)
	if took < 500*time.Millisecond || took > 5*time.Second {
		t.Errorf("fetch with MinBytes over what is there took %v, want about its 600ms MaxWait", took)
	}
	if len(recs) != 3 || string(recs[2].Value) != "three" {
		t.Errorf("fetch after MaxWait returned %d records, want the 3 there", len(recs))
	}

	took, recs = fetch(1, 5000, -1, 3)
	if took > 2*time.Second || len(recs) != 3 {
		t.Errorf("fetch with MinBytes 1 took %v and returned %d records, want at once and 3", took, len(recs))
	}

	// MinBytes one byte over what is there: the next append completes it.
	// The fetch opens a session so the test can see it waiting.
	req := rawFetchReq(12, topic, [16]byte{}, 0, 0)
	req.MinBytes, req.MaxWaitMillis, req.SessionEpoch = int32(len(batch))+1, 5000, 0
	type outcome struct {
		took time.Duration
		resp *kmsg.FetchResponse
		err  error
	}
	done := make(chan outcome, 1)
	go func() {
		start := time.Now()
		rc.sendFrame(encodeRequest(req, 4))
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		_, body, err := rc.readFrame()
		if err == nil {
			err = resp.ReadFrom(body[1:]) // past the empty header tags
		}
		done <- outcome{time.Since(start), resp, err}
	}()
	waitForLongPoll(t, b, "the fetch to wait for MinBytes")
	more := rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, rawRecord{Value: []byte("four")})
	if sp := rawProducePart(dialRaw(t, b), rawProduceReq(topic, 0, 1, more), 1); sp.ErrorCode != 0 {
		t.Fatalf("produce: error %d", sp.ErrorCode)
	}
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatal(o.err)
		}
		if len(o.resp.Topics) != 1 || len(o.resp.Topics[0].Partitions) != 1 {
			t.Fatalf("fetch response with %d topics", len(o.resp.Topics))
		}
		n := len(rawBatchRecords(t, o.resp.Topics[0].Partitions[0].RecordBatches))
		if n != 4 || o.took > 4*time.Second {
			t.Errorf("fetch waiting for MinBytes returned %d records after %v, want 4 soon after the append", n, o.took)
		}
	case <-time.After(e2eTimeout):
		t.Fatal("fetch never returned")
	}
}
