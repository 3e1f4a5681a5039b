package broker

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Each bad frame closes only its own connection; a second connection keeps
// being served throughout.
func TestBadFramesCloseOnlyTheirConnection(t *testing.T) {
	b := startBroker(t)
	healthy := dialRaw(t, b)
	apiv := kmsg.NewPtrApiVersionsRequest()
	apiv.Version = 0
	cases := map[string]func(r *rawConn){
		"negative size": func(r *rawConn) { r.nc.Write([]byte{0xff, 0xff, 0xff, 0xff}) },
		"over socket.request.max.bytes": func(r *rawConn) {
			r.nc.Write(binary.BigEndian.AppendUint32(nil, 200<<20))
		},
		"frame shorter than a header": func(r *rawConn) { r.sendFrame([]byte{0, 18, 0}) },
		"client id longer than frame": func(r *rawConn) {
			r.sendFrame([]byte{0, 18, 0, 0, 0, 0, 0, 1, 0x7f, 0xff, 'x'})
		},
		"unknown api key": func(r *rawConn) {
			r.sendFrame([]byte{0x7f, 0x00, 0, 0, 0, 0, 0, 1, 0xff, 0xff})
		},
		"unsupported version": func(r *rawConn) {
			meta := kmsg.NewPtrMetadataRequest()
			meta.Version = 99
			r.sendFrame(encodeRequest(meta, 3))
		},
		"truncated body": func(r *rawConn) {
			req := kmsg.NewPtrApiVersionsRequest()
			req.Version = 3
			req.ClientSoftwareName = "abc"
			body := encodeRequest(req, 1)
			r.sendFrame(body[:len(body)-3])
		},
		"bad header tags": func(r *rawConn) {
			req := kmsg.NewPtrApiVersionsRequest()
			req.Version = 3
			body := encodeRequest(req, 1)
			// Header tag section claims 5 tags that are not there.
			at := 2 + 2 + 4 + 2 + len("test")
			body[at] = 5
			r.sendFrame(body)
		},
	}
	for name, send := range cases {
		t.Run(name, func(t *testing.T) {
			r := dialRaw(t, b)
			send(r)
			r.expectClosed()
			if resp := healthy.roundTrip(apiv, 42).(*kmsg.ApiVersionsResponse); resp.ErrorCode != 0 {
				t.Fatalf("healthy connection got error %d", resp.ErrorCode)
			}
		})
	}
}

// Pipelined requests are answered in order.
func TestPipelinedRequestsAnsweredInOrder(t *testing.T) {
	b := startBroker(t)
	r := dialRaw(t, b)
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 2
	var all []byte
	for i := range 50 {
		body := encodeRequest(req, int32(i))
		all = binary.BigEndian.AppendUint32(all, uint32(len(body)))
		all = append(all, body...)
	}
	if _, err := r.nc.Write(all); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		corr, _, err := r.readFrame()
		if err != nil || corr != int32(i) {
			t.Fatalf("response %d: correlation %d, %v", i, corr, err)
		}
	}
}

func TestManyConnections(t *testing.T) {
	b := startBroker(t)
	conns := make([]*rawConn, 0, 1000)
	for range 1000 {
		conns = append(conns, dialRaw(t, b))
	}
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 1
	for i, r := range conns {
		r.sendFrame(encodeRequest(req, int32(i)))
	}
	for i, r := range conns {
		if corr, _, err := r.readFrame(); err != nil || corr != int32(i) {
			t.Fatalf("conn %d: %d %v", i, corr, err)
		}
	}
}

// An idle connection is closed after connections.max.idle.ms; a busy one
// is not.
func TestIdleConnectionClosed(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), ConnectionsMaxIdle: 300 * time.Millisecond})
	idle := dialRaw(t, b)
	busy := dialRaw(t, b)
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 0
	// The busy connection sends a request every 50 ms for twice the idle
	// limit; the idle one sends nothing.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for range 12 {
		busy.roundTrip(req, 1)
		<-tick.C
	}
	idle.expectClosed()
	busy.roundTrip(req, 2)
}

// FuzzRequestHeader: the header parser takes any bytes; what it parses
// leaves the body as the tail of the frame, after a client ID the frame
// holds, and skipping a v2 header's tags leaves a tail of that.
func FuzzRequestHeader(f *testing.F) {
	f.Add(encodeRequest(kmsg.NewPtrApiVersionsRequest(), 1))
	f.Add(encodeRequest(kmsg.NewPtrMetadataRequest(), 2))
	f.Add([]byte{0, 18, 0, 3, 0, 0, 0, 7, 0xff, 0xff, 2, 1, 3, 'a', 'b', 'c'})
	f.Add([]byte{0, 1, 0, 12, 0, 0, 0, 7, 0x7f, 0xff})
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, body, err := parseRequestHeader(frame)
		if err != nil {
			return
		}
		if len(body) > len(frame)-10 || !bytes.HasSuffix(frame, body) {
			t.Fatalf("body of %d bytes from a %d-byte frame", len(body), len(frame))
		}
		if len(h.clientID) > len(frame)-10-len(body) {
			t.Fatalf("client ID of %d bytes", len(h.clientID))
		}
		if rest, err := skipHeaderTags(body); err == nil && (len(rest) > len(body) || !bytes.HasSuffix(body, rest)) {
			t.Fatalf("tags left %d of %d bytes", len(rest), len(body))
		}
	})
}
