package broker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// peers holds one Kafka client per node address this broker talks to:
// controllers (registration, heartbeats, ISR changes, forwarded admin
// writes) and, through the fetchers, partition leaders. Every request
// between nodes is a Kafka request; kgo frames it, negotiates versions and
// reconnects.
type peers struct {
	clientID string
	// interBroker and controller say how to reach the other nodes'
	// inter-broker and controller listeners (peer_security.go); nil is
	// plaintext.
	interBroker, controller *clientSecurity
	mu                      struct {
		sync.Mutex
		clients map[peerKey]*kgo.Client
		closed  bool
	}
}

// peerKey names a client: an address and whether it is a controller's.
type peerKey struct {
	addr       string
	controller bool
}

var errPeersClosed = errors.New("broker: peer clients closed")

func newPeers(nodeID int32) *peers {
	p := &peers{clientID: "samsa-broker-" + strconv.Itoa(int(nodeID))}
	p.mu.clients = map[peerKey]*kgo.Client{}
	return p
}

// request sends one request to the broker at addr (its inter-broker
// listener) and returns its response.
func (p *peers) request(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	return p.send(ctx, peerKey{addr: addr}, req)
}

// requestController sends one request to a controller listener.
func (p *peers) requestController(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	return p.send(ctx, peerKey{addr: addr, controller: true}, req)
}

func (p *peers) send(ctx context.Context, k peerKey, req kmsg.Request) (kmsg.Response, error) {
	addr := k.addr
	cl, err := p.client(k)
	if err != nil {
		return nil, err
	}
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		return nil, fmt.Errorf("broker: no connection to %s", addr)
	}
	return seeds[0].Request(ctx, req)
}

func (p *peers) client(k peerKey) (*kgo.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return nil, errPeersClosed
	}
	if cl, ok := p.mu.clients[k]; ok {
		return cl, nil
	}
	sec := p.interBroker
	if k.controller {
		sec = p.controller
	}
	opts := append([]kgo.Opt{kgo.SeedBrokers(k.addr), kgo.ClientID(p.clientID),
		// A request that fails is retried by its caller, which knows
		// whether the target is still the right node.
		kgo.RequestRetries(0)}, sec.kgoOpts()...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	p.mu.clients[k] = cl
	return cl, nil
}

func (p *peers) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.closed = true
	for _, cl := range p.mu.clients {
		cl.Close()
	}
	p.mu.clients = nil
}
