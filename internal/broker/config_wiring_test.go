package broker

import (
	"errors"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Tests that a broker config which used to be accepted and ignored now has
// its effect. Each names the config it covers.

func TestBrokerRack(t *testing.T) {
	b := startBrokerValues(t, map[string]string{"broker.rack": "rack-a"})
	adm, ctx := adminClient(t, b)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 1 || md.Brokers[0].Rack == nil || *md.Brokers[0].Rack != "rack-a" {
		t.Fatalf("brokers = %+v, want rack-a", md.Brokers)
	}
}

// apiVersions answers on a served connection.
func apiVersions(r *rawConn, corr int32) {
	r.t.Helper()
	r.roundTrip(kmsg.NewPtrApiVersionsRequest(), corr)
}

// notServed checks that a request sent on r gets no answer while the broker
// holds the connection in its backlog, then returns once it is answered.
func notServedUntil(t *testing.T, r *rawConn, corr int32, free func()) {
	t.Helper()
	r.sendFrame(encodeRequest(kmsg.NewPtrApiVersionsRequest(), corr))
	r.nc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, _, err := r.readFrame(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("connection past the limit was served (err %v)", err)
	}
	free()
	r.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, _, err := r.readFrame(); err != nil || got != corr {
		t.Fatalf("after a slot freed: correlation %d, %v", got, err)
	}
}

func TestMaxConnections(t *testing.T) {
	b := startBrokerValues(t, map[string]string{"max.connections": "2"})
	c1, c2 := dialRaw(t, b), dialRaw(t, b)
	apiVersions(c1, 1)
	apiVersions(c2, 1)
	c3 := dialRaw(t, b) // the TCP handshake completes: the connection waits in the backlog
	notServedUntil(t, c3, 1, func() { c1.nc.Close() })
}

func TestMaxConnectionsPerListener(t *testing.T) {
	v, err := config.Parse(config.Broker, map[string]string{
		"listeners":                       "A://127.0.0.1:0,B://127.0.0.1:0",
		"listener.security.protocol.map":  "A:PLAINTEXT,B:PLAINTEXT",
		"listener.name.a.max.connections": "1",
	})
	if err != nil {
		t.Fatal(err)
	}
	ls, _ := ParseListeners(v.String("listeners"))
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), Values: v, Listeners: ls})
	dial := func(l Listener) *rawConn {
		nc, err := net.DialTimeout("tcp", net.JoinHostPort(l.Host, strconv.Itoa(l.Port)), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		return &rawConn{t: t, nc: nc}
	}
	a, bl := b.Listeners()[0], b.Listeners()[1]
	a1 := dial(a)
	apiVersions(a1, 1)
	for i := range 3 { // B has no limit of its own
		apiVersions(dial(bl), int32(i))
	}
	notServedUntil(t, dial(a), 1, func() { a1.nc.Close() })
}

// max.connections is cluster-wide dynamic: lowering it holds back new
// connections, raising it lets them in.
func TestMaxConnectionsDynamic(t *testing.T) {
	b := startBroker(t)
	c1 := dialRaw(t, b)
	alter := func(corr int32, value string) {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType = kmsg.ConfigResourceTypeBroker
		cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		cfg.Name, cfg.Value = "max.connections", kmsg.StringPtr(value)
		r.Configs = append(r.Configs, cfg)
		req.Resources = append(req.Resources, r)
		resp := c1.roundTrip(req, corr).(*kmsg.IncrementalAlterConfigsResponse)
		if code := resp.Resources[0].ErrorCode; code != 0 {
			t.Fatalf("alter max.connections=%s: error %d", value, code)
		}
	}
	alter(1, "1")
	notServedUntil(t, dialRaw(t, b), 1, func() { alter(2, "5") })
}

func TestMaxConnectionsPerIP(t *testing.T) {
	for _, tt := range []struct {
		name    string
		raw     map[string]string
		allowed int
	}{
		{"limit", map[string]string{"max.connections.per.ip": "1"}, 1},
		{"override by IP", map[string]string{"max.connections.per.ip": "1", "max.connections.per.ip.overrides": "10.0.0.1:5, 127.0.0.1:2"}, 2},
		{"override by name", map[string]string{"max.connections.per.ip": "1", "max.connections.per.ip.overrides": "localhost:3"}, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := startBrokerValues(t, tt.raw)
			var open []*rawConn
			for i := range tt.allowed {
				c := dialRaw(t, b)
				apiVersions(c, int32(i))
				open = append(open, c)
			}
			// One more from the same IP is closed at once.
			over := dialRaw(t, b)
			over.sendFrame(encodeRequest(kmsg.NewPtrApiVersionsRequest(), 9))
			over.expectClosed()
			// A slot freed by a close is taken again.
			open[0].nc.Close()
			deadline := time.Now().Add(10 * time.Second)
			for {
				c := dialRaw(t, b)
				c.sendFrame(encodeRequest(kmsg.NewPtrApiVersionsRequest(), 1))
				if _, _, err := c.readFrame(); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("a closed connection's slot was not freed")
				}
			}
		})
	}
}
