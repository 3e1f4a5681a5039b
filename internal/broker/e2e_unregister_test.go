package broker

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/model"
)

// TestClusterUnregisterBroker: on three nodes, a stopped broker is
// unregistered through a broker that is not the active controller (which
// forwards it) and answers once its own image no longer has it; DescribeCluster
// with fenced brokers (KIP-1073) then lists two, and a second request is
// BROKER_ID_NOT_REGISTERED. A live broker unregistered registers again at
// once (its next heartbeat finds its epoch gone) and is unfenced with a new
// epoch.
func TestClusterUnregisterBroker(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	active := c.activeController()
	var gone, other *clusterNode
	for _, n := range c.nodes {
		if n != active {
			if gone == nil {
				gone = n
			} else {
				other = n
			}
		}
	}
	c.stop(gone)
	// Fenced by its controlled shutdown.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ob := other.get()
	ob.awaitImage(ctx, func() bool { br, ok := ob.ctrl.Image().Broker(model.NodeID(gone.id)); return ok && br.Fenced })

	cl, err := kgo.NewClient(kgo.SeedBrokers(ob.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	unregister := func(id int32) *kmsg.UnregisterBrokerResponse {
		t.Helper()
		req := kmsg.NewPtrUnregisterBrokerRequest()
		req.BrokerID = id
		resp, err := req.RequestWith(ctx, cl.Broker(int(other.id)))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := unregister(gone.id); resp.ErrorCode != 0 {
		t.Fatalf("unregister %d: %v %s", gone.id, kerr.ErrorForCode(resp.ErrorCode), deref(resp.ErrorMessage))
	}
	if _, ok := ob.ctrl.Image().Broker(model.NodeID(gone.id)); ok {
		t.Fatal("the forwarding broker's image still has the unregistered broker when it answers")
	}
	listed := func() []int32 {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.IncludeFencedBrokers = true
		resp, err := req.RequestWith(ctx, cl.Broker(int(other.id)))
		if err != nil {
			t.Fatal(err)
		}
		var ids []int32
		for _, b := range resp.Brokers {
			ids = append(ids, b.NodeID)
		}
		slices.Sort(ids)
		return ids
	}
	if ids := listed(); len(ids) != 2 || slices.Contains(ids, gone.id) {
		t.Errorf("DescribeCluster with fenced brokers lists %v after unregistering %d", ids, gone.id)
	}
	resp := unregister(gone.id)
	if resp.ErrorCode != kerr.BrokerIDNotRegistered.Code || resp.ErrorMessage == nil || *resp.ErrorMessage == "" {
		t.Errorf("a second unregister: %v %q, want BROKER_ID_NOT_REGISTERED with a message", kerr.ErrorForCode(resp.ErrorCode), deref(resp.ErrorMessage))
	}

	// A live broker comes back by itself.
	was, _ := ob.ctrl.Image().Broker(model.NodeID(other.id))
	if resp := unregister(other.id); resp.ErrorCode != 0 {
		t.Fatalf("unregister the live %d: %v", other.id, kerr.ErrorForCode(resp.ErrorCode))
	}
	ob.awaitImage(ctx, func() bool {
		br, ok := ob.ctrl.Image().Broker(model.NodeID(other.id))
		return ok && !br.Fenced && br.Epoch > was.Epoch
	})
	if br, ok := ob.ctrl.Image().Broker(model.NodeID(other.id)); !ok || br.Fenced || br.Epoch <= was.Epoch {
		t.Fatalf("the live broker unregistered did not register again: %+v %v (was epoch %d)", br, ok, was.Epoch)
	}
}
