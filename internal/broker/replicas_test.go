package broker

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/replication"
)

// TestLeaderAddrFollowsInterBrokerListener: followers fetch on
// inter.broker.listener.name when it is set, else on the leader's first
// client listener.
func TestLeaderAddrFollowsInterBrokerListener(t *testing.T) {
	img, err := metadata.Empty().ApplyAt(1, metadata.BrokerRegistration{NodeID: 2, Incarnation: "i", Endpoints: []metadata.Endpoint{
		{Name: "PLAINTEXT", Host: "h", Port: 9092, SecurityProtocol: "PLAINTEXT"},
		{Name: "REPLICATION", Host: "h", Port: 9094, SecurityProtocol: "PLAINTEXT"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ setting, want string }{{"", "h:9092"}, {"replication", "h:9094"}} {
		raw := map[string]string{
			"listeners":                      "PLAINTEXT://:9092,REPLICATION://:9094",
			"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,REPLICATION:PLAINTEXT",
		}
		if tt.setting != "" {
			raw["inter.broker.listener.name"] = tt.setting
		}
		v, err := config.Parse(config.Broker, raw)
		if err != nil {
			t.Fatal(err)
		}
		b := &Broker{cfg: Config{Values: v}}
		b.meta.Store(img)
		if got := b.leaderAddr(2); got != tt.want {
			t.Errorf("inter.broker.listener.name=%q: leader address %s, want %s", tt.setting, got, tt.want)
		}
	}
}

// A follower whose leader has not applied its own leadership yet
// (UNKNOWN_LEADER_EPOCH) fetches again within milliseconds, not after
// replica.fetch.backoff.ms; an unreachable or refusing leader, or a
// replica whose own metadata is behind, waits the back-off.
func TestReplicaFetchRetriesSoonWhenTheLeaderIsBehind(t *testing.T) {
	b := &Broker{log: slog.New(slog.DiscardHandler)}
	p := &replication.Partition{TP: model.TopicPartition{Topic: "t"}}
	const backoff = time.Second
	for _, c := range []struct {
		code int16
		want time.Duration
	}{
		{kerr.UnknownLeaderEpoch.Code, leaderBehindBackoff},
		{kerr.NotLeaderForPartition.Code, backoff},
		{kerr.FencedLeaderEpoch.Code, backoff},
		{kerr.KafkaStorageError.Code, backoff},
	} {
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.ErrorCode = c.code
		if got := b.applyFetched(p, rp).after(backoff); got != c.want {
			t.Errorf("%v: next fetch after %v, want %v", kerr.ErrorForCode(c.code), got, c.want)
		}
	}
	// The worst partition of an answer decides; a back-off below the
	// short pause is kept.
	if got := max(fetchAgain, fetchSoon, fetchBackOff).after(backoff); got != backoff {
		t.Errorf("mixed answer: %v, want %v", got, backoff)
	}
	if got := fetchSoon.after(5 * time.Millisecond); got != 5*time.Millisecond {
		t.Errorf("replica.fetch.backoff.ms 5: %v after UNKNOWN_LEADER_EPOCH", got)
	}
}

// A fetcher backing off wakes when a partition is added to it (the
// partition a refused fetch was waiting for may now have its new epoch),
// and a fetch in flight, a long poll on the other partitions, is cut short
// so that the next one includes it.
func TestFetcherWakesWhenAPartitionIsAdded(t *testing.T) {
	fs := newFetchers(&Broker{})
	other := &replication.Partition{TP: model.TopicPartition{Topic: "x"}}
	f := &fetcher{leader: 2, cancel: func() {}, wake: make(chan struct{}, 1), parts: map[model.TopicPartition]*replication.Partition{other.TP: other}}
	fs.byLeader[2] = f
	fs.b.cfg.NodeID = 1
	interrupted := 0
	f.interrupt = func() { interrupted++ }
	fs.follow(&replication.Partition{TP: model.TopicPartition{Topic: "t"}}, 2)
	fs.follow(&replication.Partition{TP: model.TopicPartition{Topic: "u"}}, 2)
	select {
	case <-f.wake:
	default:
		t.Fatal("no wake-up for the fetcher a partition joined")
	}
	if interrupted != 2 {
		t.Fatalf("the fetch in flight was interrupted %d times for 2 partitions joining", interrupted)
	}
	if n := len(f.snapshot()); n != 3 {
		t.Fatalf("%d partitions in the fetcher, want 3", n)
	}
}

// dropProxy forwards loopback connections to a broker and can drop every
// connection it holds, as a node that restarted has dropped its peers'.
type dropProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newDropProxy(t *testing.T, target string) *dropProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &dropProxy{ln: ln}
	t.Cleanup(func() { ln.Close(); d.drop() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			d.mu.Lock()
			d.conns = append(d.conns, c, up)
			d.mu.Unlock()
			go io.Copy(up, c)
			go io.Copy(c, up)
		}
	}()
	return d
}

func (d *dropProxy) drop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
}

// A replica fetch over a pooled connection that its leader dropped (the
// leader restarted since the last fetch) is sent again at once on a new
// connection, not failed into a replica.fetch.backoff.ms back-off.
func TestReplicaFetchRedialsADroppedConnection(t *testing.T) {
	br := startBrokerWith(t, Config{LogDir: t.TempDir()})
	proxy := newDropProxy(t, br.Addr())
	p := newPeers(99)
	t.Cleanup(p.close)
	addr := proxy.ln.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	if _, err := p.request(ctx, addr, req); err != nil {
		t.Fatal(err)
	}
	// The scenario: the first request after the drop fails.
	proxy.drop()
	if _, err := p.request(ctx, addr, req); err == nil {
		t.Fatal("a request over a dropped connection succeeded: the test does not drop it")
	}
	if _, err := p.request(ctx, addr, req); err != nil {
		t.Fatal(err)
	}
	proxy.drop()
	if _, err := fetchRequest(ctx, p, addr, req); err != nil {
		t.Fatalf("fetch over a dropped connection: %v", err)
	}
}
