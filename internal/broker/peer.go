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
	mu       struct {
		sync.Mutex
		clients map[string]*kgo.Client
		closed  bool
	}
}

var errPeersClosed = errors.New("broker: peer clients closed")

func newPeers(nodeID int32) *peers {
	p := &peers{clientID: "samsa-broker-" + strconv.Itoa(int(nodeID))}
	p.mu.clients = map[string]*kgo.Client{}
	return p
}

// request sends one request to the node at addr and returns its response.
func (p *peers) request(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	cl, err := p.client(addr)
	if err != nil {
		return nil, err
	}
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		return nil, fmt.Errorf("broker: no connection to %s", addr)
	}
	return seeds[0].Request(ctx, req)
}

func (p *peers) client(addr string) (*kgo.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return nil, errPeersClosed
	}
	if cl, ok := p.mu.clients[addr]; ok {
		return cl, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID(p.clientID),
		// A request that fails is retried by its caller, which knows
		// whether the target is still the right node.
		kgo.RequestRetries(0))
	if err != nil {
		return nil, err
	}
	p.mu.clients[addr] = cl
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
