package broker

// The broker's side of the controller's balancer (controller/balancer.go,
// docs/DESIGN-balance.md):
//
//   - replicaSizes is the controller's Config.ReplicaSizes: it asks every
//     unfenced broker for its partitions' sizes with DescribeLogDirs, the
//     request kafka-log-dirs.sh and Cruise Control send, over the
//     inter-broker listener (the controller has no log to measure, and the
//     nodes speak only the Kafka protocol to each other);
//   - GET /v1/balancer on the HTTP listener serves the balancer's state as
//     JSON for `samsa cluster status --http` and operators' tools.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// replicaSizes returns one replica's size per partition: the leader's, or
// when the leader did not answer the largest another replica reported. A
// broker that does not answer in time is skipped; none answering is an
// error (the balancer then balances counts only).
func (b *Broker) replicaSizes(ctx context.Context, img *metadata.Image) (map[model.TopicPartition]int64, error) {
	byBroker := map[model.NodeID]map[model.TopicPartition]int64{}
	var errs []error
	for _, br := range img.Brokers() {
		if br.Fenced {
			continue
		}
		sizes, err := b.brokerSizes(ctx, br)
		if err != nil {
			errs = append(errs, fmt.Errorf("broker %d: %w", br.NodeID, err))
			continue
		}
		byBroker[br.NodeID] = sizes
	}
	if len(byBroker) == 0 {
		return nil, errors.Join(append(errs, errors.New("no broker answered DescribeLogDirs"))...)
	}
	if len(errs) > 0 {
		b.log.Debug("balancer: some brokers did not report their replica sizes", "err", errors.Join(errs...))
	}
	out := map[model.TopicPartition]int64{}
	for _, t := range img.Topics() {
		for _, p := range t.Partitions {
			tp := model.TopicPartition{Topic: t.Name, Partition: p.Partition}
			if size, ok := byBroker[p.Leader][tp]; ok {
				out[tp] = size
				continue
			}
			for _, id := range p.Replicas {
				if size, ok := byBroker[id][tp]; ok && size > out[tp] {
					out[tp] = size
				}
			}
		}
	}
	return out, nil
}

// brokerSizes is one broker's partition sizes: this broker's from its own
// logs, another's by DescribeLogDirs (all partitions) over the
// inter-broker listener, within 5 seconds.
func (b *Broker) brokerSizes(ctx context.Context, br metadata.BrokerImage) (map[model.TopicPartition]int64, error) {
	out := map[model.TopicPartition]int64{}
	if br.NodeID == model.NodeID(b.cfg.NodeID) && b.topics != nil {
		for _, ts := range b.topics.all() {
			for i, p := range ts.partitions {
				if p != nil {
					out[model.TopicPartition{Topic: ts.name, Partition: int32(i)}] = p.Size()
				}
			}
		}
		return out, nil
	}
	ep, ok := metadata.InterBrokerEndpoint(b.cfg.Values.String("inter.broker.listener.name"), br.Endpoints)
	if !ok {
		return nil, errors.New("no inter-broker endpoint")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req := kmsg.NewPtrDescribeLogDirsRequest()
	raw, err := b.peers.request(ctx, joinHostPort(ep.Host, ep.Port), req)
	if err != nil {
		return nil, err
	}
	resp := raw.(*kmsg.DescribeLogDirsResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	for _, d := range resp.Dirs {
		if kerr.ErrorForCode(d.ErrorCode) != nil {
			continue
		}
		for _, t := range d.Topics {
			for _, p := range t.Partitions {
				tp := model.TopicPartition{Topic: t.Topic, Partition: p.Partition}
				out[tp] += p.Size // a partition is in one directory; summed should there be a future one
			}
		}
	}
	return out, nil
}

// serveBalancer answers GET /v1/balancer: the balancer's state as this
// node's controller knows it. Only the active controller's is complete
// (Active true); another node answers with its settings, the active
// controller's ID, and state "standby" or "off", so a tool given several
// nodes' addresses keeps the one that is active. 503 before the
// controller has started.
func (b *Broker) serveBalancer(w http.ResponseWriter, _ *http.Request) {
	select {
	case <-b.ctrlReady:
	default:
		http.Error(w, "the controller has not started yet", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(b.ctrl.BalancerStatus()); err != nil {
		b.log.Debug("writing the balancer status", "err", err)
	}
}
