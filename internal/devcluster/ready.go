package devcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// readyPoll is how often WaitReady asks again.
const readyPoll = 100 * time.Millisecond

// WaitReady waits until the metadata agrees with the processes: every
// running broker answers a Metadata request that lists exactly the running
// brokers (registered and unfenced; a node killed a moment ago is
// listed until the controller fences it). It fails at once when a node
// exits on its own, naming it, with ErrPortInUse when its log says it
// could not bind.
func (c *Cluster) WaitReady(ctx context.Context) error {
	last := errors.New("no answer yet")
	for {
		for _, n := range c.nodes {
			if err := n.crashed(); err != nil {
				return err
			}
		}
		if last = c.ready(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("devcluster: the cluster is not ready: %w; last: %v", ctx.Err(), last)
		case <-time.After(readyPoll):
		}
	}
}

// ready asks each running node for its brokers once.
func (c *Cluster) ready(ctx context.Context) error {
	var want []int32
	for _, n := range c.nodes {
		if n.Running() && n.Broker() {
			want = append(want, n.ID)
		}
	}
	if len(want) == 0 {
		return errors.New("no broker is running")
	}
	for _, id := range want {
		got, err := brokersSeenBy(ctx, c.Node(id).Addr(), c.cfg.ClientOpts...)
		if err != nil {
			return fmt.Errorf("node %d: %w", id, err)
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("node %d lists brokers %v, want %v", id, got, want)
		}
	}
	return nil
}

// brokersSeenBy asks the broker at addr itself, not any broker of the
// cluster, which brokers it lists, sorted.
func brokersSeenBy(ctx context.Context, addr string, opts ...kgo.Opt) ([]int32, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DialTimeout(time.Second)}, opts...)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // none: only the brokers
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return nil, err
	}
	var ids []int32
	for _, b := range resp.(*kmsg.MetadataResponse).Brokers {
		ids = append(ids, b.NodeID)
	}
	slices.Sort(ids)
	return ids, nil
}
