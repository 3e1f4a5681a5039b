package broker

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// leaderHints is KIP-951's answer to a client that sent a produce or fetch
// to a broker not leading the partition: the partition's leader and leader
// epoch as this broker's metadata has them, and how to reach that leader
// on the listener the client came in on, so the client moves at once
// instead of asking for metadata first (franz-go, librdkafka and the Java
// client from 3.7 use it). A leader this broker does not know, or one
// fenced, is no hint: the client refreshes its metadata as before.
type leaderHints struct {
	img      *metadata.Image
	listener string
	nodes    []int32 // leaders named, for the response's node endpoints
}

func (b *Broker) newLeaderHints(c *conn) *leaderHints {
	return &leaderHints{img: b.ctrl.Image(), listener: c.listener}
}

// wantsHint says whether an error code is one KIP-951 attaches the
// current leader to.
func wantsHint(code int16) bool {
	return code == kerr.NotLeaderForPartition.Code || code == kerr.FencedLeaderEpoch.Code
}

// leader returns the partition's leader and epoch, ok false when there is
// none to point to. byID names the topic by ID (Produce v13, Fetch v13+).
func (h *leaderHints) leader(byID bool, name string, id [16]byte, partition int32) (leader, epoch int32, ok bool) {
	var t *metadata.TopicImage
	if byID {
		t, ok = h.img.TopicByID(model.TopicID(id))
	} else {
		t, ok = h.img.Topic(name)
	}
	if !ok || partition < 0 || int(partition) >= len(t.Partitions) {
		return -1, -1, false
	}
	p := t.Partitions[partition]
	if p.Leader == metadata.NoLeader {
		return -1, -1, false
	}
	if br, live := h.img.Broker(p.Leader); !live || br.Fenced {
		return -1, -1, false
	}
	if !slices.Contains(h.nodes, int32(p.Leader)) {
		h.nodes = append(h.nodes, int32(p.Leader))
	}
	return int32(p.Leader), int32(p.LeaderEpoch), true
}

// endpoint is a named leader's address on the client's listener.
type endpoint struct {
	nodeID int32
	host   string
	port   int32
	rack   *string
}

// endpoints lists the leaders named so far, in node ID order.
func (h *leaderHints) endpoints() []endpoint {
	slices.Sort(h.nodes)
	var out []endpoint
	for _, id := range h.nodes {
		br, ok := h.img.Broker(model.NodeID(id))
		if !ok {
			continue
		}
		for _, ep := range br.Endpoints {
			if ep.Name != h.listener {
				continue
			}
			e := endpoint{nodeID: id, host: ep.Host, port: ep.Port}
			if br.Rack != "" {
				e.rack = kmsg.StringPtr(br.Rack)
			}
			out = append(out, e)
		}
	}
	return out
}

// hintProduce fills CurrentLeader and NodeEndpoints (Produce v10+) for the
// partitions answered NOT_LEADER_OR_FOLLOWER.
func (b *Broker) hintProduce(c *conn, req *kmsg.ProduceRequest, resp *kmsg.ProduceResponse) {
	if req.Version < 10 {
		return
	}
	var h *leaderHints
	for i := range resp.Topics {
		st := &resp.Topics[i]
		for j := range st.Partitions {
			sp := &st.Partitions[j]
			if !wantsHint(sp.ErrorCode) {
				continue
			}
			if h == nil {
				h = b.newLeaderHints(c)
			}
			if l, e, ok := h.leader(req.Version >= 13, st.Topic, st.TopicID, sp.Partition); ok {
				sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = l, e
			}
		}
	}
	if h == nil {
		return
	}
	for _, e := range h.endpoints() {
		rb := kmsg.NewProduceResponseBroker()
		rb.NodeID, rb.Host, rb.Port, rb.Rack = e.nodeID, e.host, e.port, e.rack
		resp.Brokers = append(resp.Brokers, rb)
	}
}

// hintFetch is hintProduce for Fetch: CurrentLeader from v12, the node
// endpoints from v16.
func (b *Broker) hintFetch(c *conn, resp *kmsg.FetchResponse) {
	if resp.Version < 12 {
		return
	}
	var h *leaderHints
	for i := range resp.Topics {
		t := &resp.Topics[i]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if !wantsHint(p.ErrorCode) {
				continue
			}
			if h == nil {
				h = b.newLeaderHints(c)
			}
			if l, e, ok := h.leader(resp.Version >= 13, t.Topic, t.TopicID, p.Partition); ok {
				p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = l, e
			}
		}
	}
	if h == nil || resp.Version < 16 {
		return
	}
	for _, e := range h.endpoints() {
		rb := kmsg.NewFetchResponseBroker()
		rb.NodeID, rb.Host, rb.Port, rb.Rack = e.nodeID, e.host, e.port, e.rack
		resp.Brokers = append(resp.Brokers, rb)
	}
}
