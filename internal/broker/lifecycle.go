package broker

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// lifecycle is a cluster broker's standing with the active controller: its
// registration (broker epoch), whether it is fenced, and whether it is
// shutting down. It runs in quorum mode only; the single node registers
// itself through its own controller and is never fenced.
type lifecycle struct {
	incarnation [16]byte
	// epoch is the broker epoch of the current registration; fetchers and
	// ISR proposals read it while heartbeats may re-register.
	epoch atomic.Int64
	// unfenced is closed (markUnfenced) the first time a heartbeat answer
	// says the broker is not fenced: Start waits for it, as Kafka's broker
	// does.
	unfenced     chan struct{}
	markUnfenced func()
	// wantShutdown asks for a controlled shutdown, wake makes the next
	// heartbeat go at once, and shutDown is closed when the controller says
	// the broker leads nothing.
	wantShutdown atomic.Bool
	wake         chan struct{}
	shutDown     chan struct{}
}

// controllerAddr is the controller listener address of the active
// controller, "" during an election and on the single node. It comes from
// the quorum's Raft configuration, which a static quorum bootstrapped from
// controller.quorum.voters and which a broker-only node learns from the
// log it follows: one path whether or not the voters are configured.
func (b *Broker) controllerAddr() string {
	if !b.cfg.quorum.cluster() {
		return ""
	}
	return b.ctrl.ControllerAddr()
}

// retryBackoff is the pause before asking the quorum again after an
// election or a NOT_CONTROLLER answer.
const retryBackoff = 50 * time.Millisecond

// waitingLogInterval spaces the log lines that say a request is still
// waiting for an active controller.
const waitingLogInterval = 5 * time.Second

// toController sends req to the active controller, retrying across
// elections until ctx ends. again reports whether a response says to try
// the (new) active controller. While it waits it logs, every
// waitingLogInterval, what it waits for and whom it asked.
func (b *Broker) toController(ctx context.Context, req kmsg.Request, again func(kmsg.Response) bool) (kmsg.Response, error) {
	start := time.Now()
	lastLog := start
	var lastErr error
	for try := 0; ; try++ {
		addr := b.controllerAddr()
		if addr == "" && b.cfg.quorum.observer() {
			// A broker-only node learns the leader from Raft only once
			// the leader has added it, which its registration asks for:
			// until then it asks the bootstrap servers (else the voters)
			// in turn, and one that is not the leader answers
			// NOT_CONTROLLER.
			boot := b.cfg.quorum.bootstrapAddrs()
			addr = boot[try%len(boot)]
		}
		if addr != "" {
			resp, err := b.peers.requestController(ctx, addr, req)
			if err == nil && (again == nil || !again(resp)) {
				return resp, nil
			}
			if err != nil {
				b.log.Debug("controller request failed", "addr", addr, "err", err)
				lastErr = err
			} else {
				lastErr = fmt.Errorf("%s answered that it is not the active controller", addr)
			}
			if errors.Is(err, errPeersClosed) {
				return nil, err
			}
		}
		if now := time.Now(); now.Sub(lastLog) >= waitingLogInterval {
			lastLog = now
			b.log.Warn("waiting for the active controller", "request", kmsg.NameForKey(req.Key()),
				"asking", b.waitingFor(), "waited", now.Sub(start).Round(time.Second), "last_err", lastErr)
		}
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return nil, fmt.Errorf("broker: no active controller answered (asked %s; last: %v): %w", b.waitingFor(), lastErr, ctx.Err())
			}
			return nil, fmt.Errorf("broker: no active controller answered (asked %s): %w", b.waitingFor(), ctx.Err())
		case <-time.After(retryBackoff):
		}
	}
}

// waitingFor says whom toController asks: the leader the Raft
// configuration names, else, on a broker-only node that does not follow
// the log yet, the bootstrap servers (or the voters).
func (b *Broker) waitingFor() string {
	if addr := b.ctrl.ControllerAddr(); addr != "" {
		return "the active controller at " + addr
	}
	q := b.cfg.quorum
	switch {
	case !q.observer():
		return "the quorum to elect a leader"
	case len(q.bootstrap) > 0:
		return "controller.quorum.bootstrap.servers " + strings.Join(q.bootstrap, ",")
	}
	return "the voters at " + strings.Join(q.bootstrapAddrs(), ",")
}

// register registers this broker with the active controller and returns
// its broker epoch.
func (b *Broker) register(ctx context.Context) (int64, error) {
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.BrokerID = b.cfg.NodeID
	req.ClusterID = b.ctrl.Image().ClusterID()
	if req.ClusterID == "" {
		// A broker-only node has no metadata yet: it registers with the
		// cluster ID it was formatted with (meta.properties).
		req.ClusterID = b.clusterID
	}
	req.IncarnationID = b.life.incarnation
	if rack := b.cfg.Values.String("broker.rack"); rack != "" {
		req.Rack = &rack
	}
	for _, f := range metadata.SupportedFeatures() {
		rf := kmsg.NewBrokerRegistrationRequestFeature()
		rf.Name, rf.MinSupportedVersion, rf.MaxSupportedVersion = f.Name, f.Min, f.Max
		req.Features = append(req.Features, rf)
	}
	for _, id := range b.onlineDirIDs() {
		req.LogDirs = append(req.LogDirs, kafkaUUID(id))
	}
	for _, ep := range b.endpoints() {
		l := kmsg.NewBrokerRegistrationRequestListener()
		l.Name, l.Host, l.Port, l.SecurityProtocol = ep.Name, ep.Host, uint16(ep.Port), securityProtocolID(ep.SecurityProtocol)
		req.Listeners = append(req.Listeners, l)
	}
	resp, err := b.toController(ctx, req, func(r kmsg.Response) bool {
		code := r.(*kmsg.BrokerRegistrationResponse).ErrorCode
		return code == kerr.NotController.Code || code == kerr.RequestTimedOut.Code
	})
	if err != nil {
		return 0, fmt.Errorf("broker: register with the controller: %w", err)
	}
	r := resp.(*kmsg.BrokerRegistrationResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return 0, fmt.Errorf("broker: register with the controller: %w", err)
	}
	return r.BrokerEpoch, nil
}

// startLifecycle registers the broker, starts its heartbeats and waits
// until the controller has unfenced it (initial.broker.registration.timeout.ms).
func (b *Broker) startLifecycle(ctx context.Context) error {
	if _, err := rand.Read(b.life.incarnation[:]); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, millis(int64(b.cfg.Values.Int("initial.broker.registration.timeout.ms"))))
	defer cancel()
	epoch, err := b.register(ctx)
	if err != nil {
		return err
	}
	b.life.epoch.Store(epoch)
	b.tasks.Go(b.heartbeatLoop)
	select {
	case <-b.life.unfenced:
	case <-ctx.Done():
		return fmt.Errorf("broker: the controller did not unfence this broker: %w", ctx.Err())
	}
	// Serve clients once this node's own metadata lists it as live.
	b.awaitImage(ctx, func() bool {
		br, ok := b.ctrl.Image().Broker(model.NodeID(b.cfg.NodeID))
		return ok && !br.Fenced && br.Epoch == b.life.epoch.Load()
	})
	if err := b.applyImage(b.ctrl.Image()); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("broker: the metadata never listed this broker as unfenced: %w", ctx.Err())
	}
	if b.ctrl.Observer() {
		// A broker-only node's first metadata came from the quorum just
		// now: its cluster must be the one meta.properties names.
		if err := b.adoptClusterID(b.ctrl.Image().ClusterID()); err != nil {
			return err
		}
	}
	// The controller unfenced this broker once it had applied the log up to
	// its registration, and the image now holds the unfencing: whatever
	// topic existed before this start is in it. Only now may a partition
	// the image lacks be taken for one deleted while the node was down.
	return b.removeStalePartitions()
}

// heartbeatLoop heartbeats the active controller every
// broker.heartbeat.interval.ms, every retryBackoff while fenced or shutting
// down, re-registering when the controller no longer knows this epoch.
func (b *Broker) heartbeatLoop(ctx context.Context) {
	interval := millis(int64(b.cfg.Values.Int("broker.heartbeat.interval.ms")))
	fenced := true
	for {
		wait := interval
		if fenced || b.life.wantShutdown.Load() {
			wait = retryBackoff
		}
		select {
		case <-ctx.Done():
			return
		case <-b.life.wake:
		case <-time.After(wait):
		}
		shutting := b.life.wantShutdown.Load()
		req := kmsg.NewPtrBrokerHeartbeatRequest()
		req.BrokerID, req.BrokerEpoch = b.cfg.NodeID, b.life.epoch.Load()
		req.CurrentMetadataOffset = b.ctrl.Image().Offset()
		req.WantShutdown = shutting
		_, offline := b.logDirIDs()
		for _, id := range offline {
			req.OfflineLogDirs = append(req.OfflineLogDirs, kafkaUUID(id))
		}
		addr := b.controllerAddr()
		if addr == "" {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, max(interval, time.Second))
		resp, err := b.peers.requestController(rctx, addr, req)
		cancel()
		if err != nil {
			b.log.Debug("heartbeat failed", "controller", addr, "err", err)
			continue
		}
		r := resp.(*kmsg.BrokerHeartbeatResponse)
		if r.ErrorCode != 0 {
			b.log.Debug("heartbeat refused", "controller", addr, "err", kerr.ErrorForCode(r.ErrorCode))
		}
		switch r.ErrorCode {
		case 0:
		case kerr.StaleBrokerEpoch.Code:
			rctx, cancel := context.WithTimeout(ctx, interval*4)
			epoch, err := b.register(rctx)
			cancel()
			if err == nil {
				b.life.epoch.Store(epoch)
				b.log.Warn("re-registered with the controller", "broker_epoch", epoch)
			}
			continue
		default:
			continue
		}
		fenced = r.IsFenced
		if !fenced {
			b.life.markUnfenced()
		}
		if shutting && r.ShouldShutdown {
			close(b.life.shutDown)
			return
		}
	}
}

// controlledShutdown asks the controller to move this broker's leaderships
// away and waits until it has, or until timeout: clients then see
// NOT_LEADER_OR_FOLLOWER with the new leader, a retriable error, instead of
// a dead connection.
func (b *Broker) controlledShutdown(timeout time.Duration) {
	if !b.cfg.quorum.cluster() || b.life.epoch.Load() == 0 || b.life.wantShutdown.Swap(true) {
		return
	}
	select {
	case b.life.wake <- struct{}{}:
	default:
	}
	deadline := time.Now().Add(timeout)
	select {
	case <-b.life.shutDown:
		b.log.Info("controlled shutdown: the controller moved this broker's leaderships away")
	case <-time.After(timeout):
		b.log.Warn("controlled shutdown timed out; stopping anyway", "timeout", timeout)
		return
	}
	// The controller answers once it has committed the moves; act on them
	// here before stopping, so a produce waiting for acks=all ends
	// NOT_LEADER_OR_FOLLOWER with the new leader named (KIP-951) rather
	// than cut off by the shutdown.
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	b.awaitImage(ctx, func() bool { return b.ctrl.Image().LeadsNothing(model.NodeID(b.cfg.NodeID)) })
	b.applyImage(b.ctrl.Image())
}

// newLifecycle is made in New, before anything reads it.
func newLifecycle() *lifecycle {
	l := &lifecycle{unfenced: make(chan struct{}), wake: make(chan struct{}, 1), shutDown: make(chan struct{})}
	l.markUnfenced = sync.OnceFunc(func() { close(l.unfenced) })
	return l
}

// brokerEpoch is the current registration's epoch, -1 before one (and on
// the single node, which registers itself).
func (b *Broker) brokerEpoch() int64 {
	if e := b.life.epoch.Load(); e != 0 {
		return e
	}
	return -1
}
