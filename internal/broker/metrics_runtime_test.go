package broker

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceRaw sends n acks=1 produces of one record to partition 0 of
// topic on r, each waited for.
func produceRaw(t *testing.T, r *rawConn, topic string, n int) {
	t.Helper()
	for i := range n {
		batch := rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, rawRecord{Value: fmt.Appendf(nil, "v%d", i)})
		if sp := rawProducePart(r, rawProduceReq(topic, 0, 1, batch), int32(i)); sp.ErrorCode != 0 {
			t.Fatalf("produce %d: %v", i, kerr.ErrorForCode(sp.ErrorCode))
		}
	}
}

// A request's time is split as Kafka's RequestMetrics split it: every
// request handled is queued once, every response written is sent once
// (an acks=0 produce has none), and the parts fit in the total.
func TestMetricsTimeRequestParts(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir()})
	createTopic(t, b, "timed", 1)
	r := dialRaw(t, b)
	const produces = 20
	produceRaw(t, r, "timed", produces)
	batch := rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, rawRecord{Value: []byte("no answer")})
	r.sendFrame(encodeRequest(rawProduceReq("timed", 0, 0, batch), 100))
	// Answered after the acks=0 produce was handled and the produces
	// before it were sent, as a connection's requests go in order.
	r.roundTrip(kmsg.NewPtrMetadataRequest(), 101)

	s := scrapeRegistry(t, b)
	api := `api="Produce"`
	if got := s.sum("samsa_requests_total", api); got != produces+1 {
		t.Fatalf("%v Produce requests counted, want %d", got, produces+1)
	}
	if got := s.sum("samsa_request_queue_seconds_count", api); got != produces+1 {
		t.Errorf("%v Produce requests queued, want %d", got, produces+1)
	}
	if got := s.sum("samsa_response_send_seconds_count", api); got != produces {
		t.Errorf("%v Produce responses sent, want %d (the acks=0 one has none)", got, produces)
	}
	total := s.sum("samsa_request_duration_seconds_sum", api)
	queue := s.sum("samsa_request_queue_seconds_sum", api)
	send := s.sum("samsa_response_send_seconds_sum", api)
	if queue <= 0 || send <= 0 || queue+send > total {
		t.Errorf("Produce: %vs queued, %vs sending, of %vs in all", queue, send, total)
	}
	if s.has("samsa_request_queue_seconds_count{api=\"DescribeAcls\"") {
		t.Error("an API nobody called has a queue time")
	}
}
