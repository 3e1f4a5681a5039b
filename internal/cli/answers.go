package cli

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// franz-go hands a promise the Kafka error of a failed record, never the
// error message the broker sent with it: INVALID_RECORD arrives without
// "compacted topic cannot accept a record without a key". And a retriable
// error such as NOT_ENOUGH_REPLICAS is retried in silence until the
// delivery timeout, which then says only that time ran out. So produce
// dials its connections itself and reads the Produce responses that pass
// through (answerConn), as a copy beside the client's own decoding: the
// broker's last word per partition is kept for the final error, and a
// retriable error is reported the moment it first comes back.

// brokerAnswer is one partition's error in a Produce response.
type brokerAnswer struct {
	broker    string // host:port
	partition int32
	code      int16
	message   string // the broker's ErrorMessage, if it sent one
}

// reason is "lower-case name: the broker's message (or kerr's description)".
func (a brokerAnswer) reason() string {
	return kafkaReason(kerr.ErrorForCode(a.code), a.message)
}

// produceAnswers collects the errors brokers answered Produce requests
// with. samsa produce writes to one topic, so a partition number is enough
// to know a record: a Produce v13 response names its topic by ID only.
type produceAnswers struct {
	warn func(brokerAnswer) // called once per partition and retriable code, under mu

	mu struct {
		sync.Mutex
		byPartition map[int32]brokerAnswer
		last        *brokerAnswer
		warned      map[[2]int32]bool
		closed      bool // no more warnings
	}
}

func newProduceAnswers(warn func(brokerAnswer)) *produceAnswers {
	a := &produceAnswers{warn: warn}
	a.mu.byPartition = map[int32]brokerAnswer{}
	a.mu.warned = map[[2]int32]bool{}
	return a
}

func (a *produceAnswers) note(ans brokerAnswer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mu.byPartition[ans.partition] = ans
	a.mu.last = &ans
	key := [2]int32{ans.partition, int32(ans.code)}
	if kerr.IsRetriable(kerr.ErrorForCode(ans.code)) && !a.mu.warned[key] && !a.mu.closed {
		a.mu.warned[key] = true
		a.warn(ans)
	}
}

// close stops the warnings: the command is about to print its summary.
func (a *produceAnswers) close() {
	a.mu.Lock()
	a.mu.closed = true
	a.mu.Unlock()
}

// message is the broker's message for the last error code on partition p,
// if that is code.
func (a *produceAnswers) message(p int32, code int16) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ans, ok := a.mu.byPartition[p]; ok && ans.code == code {
		return ans.message
	}
	return ""
}

// last is the most recent error any broker answered, if any.
func (a *produceAnswers) last() (brokerAnswer, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mu.last == nil {
		return brokerAnswer{}, false
	}
	return *a.mu.last, true
}

// wrap watches a connection to broker (connection.clientWrapping).
func (a *produceAnswers) wrap(c net.Conn, broker string) net.Conn {
	return &answerConn{Conn: c, answers: a, broker: broker, produces: map[int32]int16{}}
}

// answerConn passes every byte through untouched and follows the Kafka
// framing on the way: the head of each request (key, version, correlation
// ID) and the whole of each Produce response. It only ever watches: on
// anything it cannot follow it stops watching that connection.
type answerConn struct {
	net.Conn
	answers *produceAnswers
	broker  string

	mu       sync.Mutex // writes and reads run on different goroutines
	produces map[int32]int16
	requests requestScanner
	replies  responseScanner
	lost     bool // the framing could not be followed
}

func (c *answerConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.mu.Lock()
	if !c.lost {
		c.lost = !c.requests.feed(p[:n], func(key, version int16, corr int32) {
			if key == kmsg.Produce.Int16() {
				c.produces[corr] = version
			}
		})
	}
	c.mu.Unlock()
	return n, err
}

func (c *answerConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	if !c.lost {
		c.lost = !c.replies.feed(p[:n], c.isProduce, c.answer)
	}
	c.mu.Unlock()
	return n, err
}

// isProduce reports whether corr answers a Produce request, and its version.
func (c *answerConn) isProduce(corr int32) (int16, bool) {
	v, ok := c.produces[corr]
	delete(c.produces, corr)
	return v, ok
}

// answer decodes one Produce response body (after the correlation ID).
func (c *answerConn) answer(version int16, body []byte) {
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = version
	if resp.IsFlexible() {
		var ok bool
		if body, ok = skipTags(body); !ok {
			return
		}
	}
	if resp.ReadFrom(body) != nil {
		return
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				c.answers.note(brokerAnswer{broker: c.broker, partition: p.Partition, code: p.ErrorCode, message: derefString(p.ErrorMessage)})
			}
		}
	}
}

// skipTags drops the tagged fields of a flexible response header.
func skipTags(b []byte) ([]byte, bool) {
	count, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, false
	}
	b = b[n:]
	for range count {
		if _, n = binary.Uvarint(b); n <= 0 {
			return nil, false
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < size {
			return nil, false
		}
		b = b[n+int(size):]
	}
	return b, true
}

// requestScanner follows a stream of requests: int32 size, then int16 key,
// int16 version, int32 correlation ID and the rest.
type requestScanner struct {
	head []byte // size and the first 8 bytes of the frame being read
	skip int    // bytes of the frame past its head still to come
}

const requestHead = 4 + 8

// feed consumes p, calling onHead once per request; false means the stream
// cannot be followed.
func (s *requestScanner) feed(p []byte, onHead func(key, version int16, corr int32)) bool {
	for len(p) > 0 {
		if s.skip > 0 {
			n := min(s.skip, len(p))
			s.skip, p = s.skip-n, p[n:]
			continue
		}
		n := min(requestHead-len(s.head), len(p))
		s.head, p = append(s.head, p[:n]...), p[n:]
		if len(s.head) < requestHead {
			return true
		}
		size := int32(binary.BigEndian.Uint32(s.head))
		if size < 8 {
			return false
		}
		onHead(int16(binary.BigEndian.Uint16(s.head[4:])), int16(binary.BigEndian.Uint16(s.head[6:])),
			int32(binary.BigEndian.Uint32(s.head[8:])))
		s.head, s.skip = s.head[:0], int(size)-8
	}
	return true
}

// responseScanner follows a stream of responses: int32 size, int32
// correlation ID, the rest. It keeps the rest only of Produce responses.
type responseScanner struct {
	head    []byte // size and correlation ID of the frame being read
	left    int    // bytes of the frame past its head still to come
	keep    bool   // collecting body: the frame answers a Produce request
	version int16
	body    []byte
}

const (
	responseHead = 4 + 4
	// maxAnswer bounds a Produce response kept for decoding: one error
	// per partition of one topic is far less.
	maxAnswer = 1 << 20
)

// feed consumes p; isProduce tells which correlation IDs answer a Produce
// request, and done gets each such response's body. False means the
// stream cannot be followed.
func (s *responseScanner) feed(p []byte, isProduce func(corr int32) (int16, bool), done func(version int16, body []byte)) bool {
	for len(p) > 0 {
		if s.left > 0 {
			n := min(s.left, len(p))
			if s.keep {
				s.body = append(s.body, p[:n]...)
			}
			s.left, p = s.left-n, p[n:]
			if s.left == 0 && s.keep {
				done(s.version, s.body)
				s.body, s.keep = s.body[:0], false
			}
			continue
		}
		n := min(responseHead-len(s.head), len(p))
		s.head, p = append(s.head, p[:n]...), p[n:]
		if len(s.head) < responseHead {
			return true
		}
		size := int32(binary.BigEndian.Uint32(s.head))
		if size < 4 {
			return false
		}
		s.version, s.keep = isProduce(int32(binary.BigEndian.Uint32(s.head[4:])))
		s.keep = s.keep && size-4 <= maxAnswer
		s.head, s.left = s.head[:0], int(size)-4
		if s.left == 0 && s.keep {
			done(s.version, nil)
			s.keep = false
		}
	}
	return true
}

// lastAnswer renders the broker's last Produce error as the end of a
// sentence, or the last transport failure when no broker answered one.
func lastAnswer(a *produceAnswers, trouble *brokerTrouble) string {
	if a != nil {
		if ans, ok := a.last(); ok {
			return fmt.Sprintf("; the broker's last answer: %s", ans.reason())
		}
	}
	return lastTrouble(trouble)
}
