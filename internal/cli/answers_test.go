package cli

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestProduceShowsTheBrokersReason produces what a real broker refuses:
// the error must carry the broker's own message, and a retriable refusal
// must be reported when it first comes back, not only at the timeout.
func TestProduceShowsTheBrokersReason(t *testing.T) {
	b := newSamsaBroker(t)
	b.ok("", "topic", "create", "compacted", "-p", "1", "--config", "cleanup.policy=compact")
	b.ok("", "topic", "create", "two-isr", "-p", "1", "--config", "min.insync.replicas=2")

	r := b.run("no key\n", "produce", "compacted")
	if want := `produce to topic "compacted": invalid record: `; r.err == nil || !strings.HasPrefix(r.err.Error(), want) ||
		!strings.Contains(r.err.Error(), "compacted topic cannot accept a record without a key") {
		t.Fatalf("keyless record on a compacted topic: %v", r.err)
	}

	warnings := &lineWaiter{lines: make(chan string, 10)}
	c := b.withTimeout(5 * time.Second).warningTo(warnings)
	done := background(t, c, strings.NewReader("x\n"), "produce", "two-isr", "--acks", "all")
	const reason = "not enough replicas: ISR has 1 replicas, min.insync.replicas is 2"
	select {
	case w := <-warnings.lines:
		if want := "answered partition 0 with " + reason + "; retrying for up to 5s (--timeout)"; !strings.Contains(w, want) {
			t.Fatalf("warning = %q, want it to contain %q", w, want)
		}
	case r := <-done:
		t.Fatalf("produce ended before any warning: %v\nstderr: %s", r.err, r.stderr)
	}
	r = within(t, done, 10*time.Second)
	if want := `produce to topic "two-isr": no acknowledgement within 5s (--timeout); the broker's last answer: ` + reason; r.err == nil || r.err.Error() != want {
		t.Fatalf("error = %v\nwant    %s", r.err, want)
	}
}

// produceResponseFrame encodes a Produce response as a broker sends it.
func produceResponseFrame(version int16, corr int32, message string) []byte {
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = version
	rt := kmsg.NewProduceResponseTopic()
	rt.Topic = "t"
	rp := kmsg.NewProduceResponseTopicPartition()
	rp.Partition = 3
	rp.ErrorCode = 87 // INVALID_RECORD
	rp.ErrorMessage = kmsg.StringPtr(message)
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	body := binary.BigEndian.AppendUint32(nil, uint32(corr))
	if resp.IsFlexible() {
		body = append(body, 0) // no header tags
	}
	body = resp.AppendTo(body)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// requestFrame is a request head with a body of n bytes.
func requestFrame(key, version int16, corr int32, n int) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(8+n))
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	return append(b, make([]byte, n)...)
}

// TestAnswerConnFollowsTheFraming feeds an answerConn's scanners streams
// cut at every possible point: each Produce answer must be decoded once,
// whatever else shares the connection.
func TestAnswerConnFollowsTheFraming(t *testing.T) {
	for _, version := range []int16{3, 8, 9, 13} {
		requests := append(requestFrame(18, 3, 1, 20), requestFrame(0, version, 2, 300)...)
		requests = append(requests, requestFrame(3, 12, 3, 7)...)
		requests = append(requests, requestFrame(0, version, 4, 5)...)
		other := append(binary.BigEndian.AppendUint32(nil, 4+6), 0, 0, 0, 1, 1, 2, 3, 4, 5, 6)
		responses := append(other, produceResponseFrame(version, 2, "first")...)
		responses = append(responses, append(binary.BigEndian.AppendUint32(nil, 4+2), 0, 0, 0, 3, 9, 9)...)
		responses = append(responses, produceResponseFrame(version, 4, "second")...)
		for cut := 1; cut < len(responses); cut++ {
			var got []string
			answers := newProduceAnswers(func(brokerAnswer) {})
			c := &answerConn{answers: answers, produces: map[int32]int16{}}
			for i := 0; i < len(requests); i += cut {
				c.lost = c.lost || !c.requests.feed(requests[i:min(i+cut, len(requests))], func(key, v int16, corr int32) {
					if key == 0 {
						c.produces[corr] = v
					}
				})
			}
			for i := 0; i < len(responses); i += cut {
				c.lost = c.lost || !c.replies.feed(responses[i:min(i+cut, len(responses))], c.isProduce, func(v int16, body []byte) {
					c.answer(v, body)
					if a, ok := answers.last(); ok {
						got = append(got, a.message)
					}
				})
			}
			want := []string{"first", "second"}
			if version < 8 { // ErrorMessage came with Produce v8
				want = []string{"", ""}
			}
			if c.lost || strings.Join(got, ",") != strings.Join(want, ",") || answers.message(3, 87) != want[1] {
				t.Fatalf("v%d cut %d: lost %t, answers %q", version, cut, c.lost, got)
			}
		}
	}
}

// FuzzResponseScanner: any byte stream, cut anywhere, neither panics nor
// hands on a body longer than the frame.
func FuzzResponseScanner(f *testing.F) {
	f.Add(produceResponseFrame(9, 1, "m"), uint8(3))
	f.Add([]byte{0, 0, 0, 4, 0, 0, 0, 1}, uint8(1))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1}, uint8(2))
	f.Fuzz(func(t *testing.T, stream []byte, cut uint8) {
		step := int(cut%64) + 1
		c := &answerConn{answers: newProduceAnswers(func(brokerAnswer) {}), produces: map[int32]int16{1: 9}}
		for i := 0; i < len(stream) && !c.lost; i += step {
			c.lost = !c.replies.feed(stream[i:min(i+step, len(stream))], c.isProduce, func(v int16, body []byte) {
				if len(body) > len(stream) {
					t.Fatalf("body of %d bytes from a %d-byte stream", len(body), len(stream))
				}
				c.answer(v, body)
			})
		}
	})
}
