package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var quiet = slog.New(slog.DiscardHandler)

// startBroker runs a broker on a free loopback port for the test.
func startBroker(t testing.TB) *Broker {
	t.Helper()
	return startBrokerWith(t, Config{LogDir: t.TempDir()})
}

// startBrokerWith fills in what a test broker needs and starts it; tests
// that restart a broker pass the same LogDir again.
func startBrokerWith(t testing.TB, cfg Config) *Broker {
	t.Helper()
	cfg.NodeID = 1
	if len(cfg.Listeners) == 0 {
		cfg.Listeners = []Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 0}}
	}
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// rawConn speaks the wire protocol by hand, for malformed input.
type rawConn struct {
	t  testing.TB
	nc net.Conn
}

func dialRaw(t testing.TB, b *Broker) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{t: t, nc: nc}
}

func (r *rawConn) sendFrame(body []byte) {
	r.t.Helper()
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	if _, err := r.nc.Write(append(frame, body...)); err != nil {
		r.t.Fatal(err)
	}
}

// request encodes req with a v1/v2 header.
func encodeRequest(req kmsg.Request, corr int32) []byte {
	b := kbin.AppendInt16(nil, req.Key())
	b = kbin.AppendInt16(b, req.GetVersion())
	b = kbin.AppendInt32(b, corr)
	b = kbin.AppendNullableString(b, ptr("test"))
	if req.IsFlexible() {
		b = append(b, 0)
	}
	return req.AppendTo(b)
}

func ptr[T any](v T) *T { return &v }

// readFrame returns the correlation ID and body of the next response.
func (r *rawConn) readFrame() (int32, []byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r.nc, size[:]); err != nil {
		return 0, nil, err
	}
	buf := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(r.nc, buf); err != nil {
		return 0, nil, err
	}
	return int32(binary.BigEndian.Uint32(buf)), buf[4:], nil
}

// roundTrip sends req and decodes the response into resp.
func (r *rawConn) roundTrip(req kmsg.Request, corr int32) kmsg.Response {
	r.t.Helper()
	r.sendFrame(encodeRequest(req, corr))
	got, body, err := r.readFrame()
	if err != nil {
		r.t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	if got != corr {
		r.t.Fatalf("correlation %d, want %d", got, corr)
	}
	resp := req.ResponseKind()
	if resp.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		body = body[1:] // empty header tags
	}
	if err := resp.ReadFrom(body); err != nil {
		r.t.Fatalf("decode %s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

// expectClosed checks the broker closed the connection: the next read must
// end in EOF or a reset within a few seconds. A read that times out means
// the connection is still open, which fails the test.
func (r *rawConn) expectClosed() {
	r.t.Helper()
	r.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err := r.readFrame()
	switch {
	case err == nil:
		r.t.Fatal("got a response, want the connection closed")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return
	case errors.Is(err, os.ErrDeadlineExceeded):
		r.t.Fatal("connection still open 5s later: the broker did not close it")
	default:
		r.t.Fatalf("reading for the close: %v (want EOF or a reset)", err)
	}
}
