package controller

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

const (
	// snapshotsRetained is how many Raft snapshots are kept on disk; the
	// newest is enough to restart, one more survives a torn newest.
	snapshotsRetained = 2
	// storeLockTimeout bounds the wait for the bolt file lock, so a second
	// process on the same directory fails with an error instead of hanging.
	storeLockTimeout = time.Second
	// tcpMaxPool and tcpTimeout are the TCP transport's connection pool
	// size and I/O timeout, hashicorp/raft's usual values.
	tcpMaxPool = 3
	tcpTimeout = 10 * time.Second
)

// Raft timing. A follower waits HeartbeatTimeout before its first election,
// which with raft's defaults would cost a second at every start. Open starts
// with the defaults and then lowers the timeouts with ReloadConfig, which
// makes a follower re-check its heartbeat timer at once; having never heard
// from a leader, it starts an election immediately and, as the only voter,
// wins it. LeaderLeaseTimeout cannot be reloaded and stays at its default,
// so the leader's lease check wakes twice a second, not hundreds of times.
//
// These values are for one voter. A multi-node quorum needs timeouts above
// its network round trip; see docs/DESIGN-controller.md.
const (
	initialHeartbeatTimeout = time.Second
	fastHeartbeatTimeout    = 500 * time.Millisecond
	leaderLeaseTimeout      = 500 * time.Millisecond
)

// startRaft opens the bolt store and snapshot store, creates the transport,
// bootstraps a one-voter configuration when the store is new, and starts the
// Raft node. On error the caller closes whatever was opened.
func (c *Controller) startRaft() error {
	if err := c.mkdirRaft(); err != nil {
		return err
	}
	logger := newRaftLogger(c.cfg.Logger)
	store, err := raftboltdb.New(raftboltdb.Options{
		Path:        filepath.Join(c.raftDir(), "raft.db"),
		BoltOptions: &bbolt.Options{Timeout: storeLockTimeout},
	})
	if err != nil {
		return fmt.Errorf("controller: open raft store in %s: %w", c.raftDir(), err)
	}
	c.store = store
	snaps, err := raft.NewFileSnapshotStoreWithLogger(c.raftDir(), snapshotsRetained, logger)
	if err != nil {
		return fmt.Errorf("controller: open snapshot store: %w", err)
	}
	// raft.db and snapshots/ may have just been created.
	if err := c.fs.SyncDir(c.raftDir()); err != nil {
		return fmt.Errorf("controller: sync %s: %w", c.raftDir(), err)
	}
	if c.transport, err = c.newTransport(logger); err != nil {
		return err
	}
	conf := c.raftConfig(logger)
	existing, err := raft.HasExistingState(store, store, snaps)
	if err != nil {
		return fmt.Errorf("controller: read raft state: %w", err)
	}
	if !existing && !c.observer {
		// Every voter bootstraps the same configuration on its first start;
		// hashicorp/raft accepts that, and the first election settles it.
		voters := raft.Configuration{Servers: []raft.Server{
			{Suffrage: raft.Voter, ID: conf.LocalID, Address: c.transport.LocalAddr()},
		}}
		if c.cfg.network() {
			voters.Servers = nil
			for _, v := range c.cfg.votersToBootstrap() {
				voters.Servers = append(voters.Servers, raft.Server{Suffrage: raft.Voter,
					ID: raft.ServerID(nodeResource(v.ID)), Address: raft.ServerAddress(v.Addr)})
			}
		}
		if err := raft.BootstrapCluster(conf, store, store, snaps, c.transport, voters); err != nil {
			return fmt.Errorf("controller: bootstrap raft: %w", err)
		}
	}
	if c.raft, err = raft.NewRaft(conf, c.fsm, store, store, snaps, c.transport); err != nil {
		return fmt.Errorf("controller: start raft: %w", err)
	}
	if c.cfg.network() {
		// A real quorum keeps the configured timeouts: a voter must not
		// start elections faster than its peers can answer.
		return nil
	}
	rc := c.raft.ReloadableConfig()
	rc.HeartbeatTimeout, rc.ElectionTimeout = fastHeartbeatTimeout, fastHeartbeatTimeout
	if err := c.raft.ReloadConfig(rc); err != nil {
		return fmt.Errorf("controller: lower raft timeouts: %w", err)
	}
	return nil
}

// newTransport returns a TCP transport on ControllerAddr, or an in-memory one
// when there is none. The in-memory address is fixed per node ID so the
// address in the bootstrapped configuration stays true across restarts.
func (c *Controller) newTransport(logger hclog.Logger) (raft.Transport, error) {
	if c.stream != nil {
		return guardHeartbeats(raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
			Stream: c.stream, MaxPool: tcpMaxPool, Timeout: tcpTimeout, Logger: logger,
		}), c.clock.Now), nil
	}
	if c.cfg.ControllerAddr == "" {
		_, t := raft.NewInmemTransport(raft.ServerAddress("samsa-controller-" + nodeResource(c.cfg.NodeID)))
		return t, nil
	}
	t, err := raft.NewTCPTransportWithLogger(c.cfg.ControllerAddr, nil, tcpMaxPool, tcpTimeout, logger)
	if err != nil {
		return nil, fmt.Errorf("controller: listen on %s: %w", c.cfg.ControllerAddr, err)
	}
	return guardHeartbeats(t, c.clock.Now), nil
}

func (c *Controller) raftConfig(logger hclog.Logger) *raft.Config {
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(strconv.Itoa(int(c.cfg.NodeID)))
	conf.Logger = logger
	conf.HeartbeatTimeout = initialHeartbeatTimeout
	conf.ElectionTimeout = initialHeartbeatTimeout
	conf.LeaderLeaseTimeout = leaderLeaseTimeout
	if c.cfg.network() && c.cfg.ElectionTimeout > 0 {
		// controller.quorum.election.timeout.ms: how long a follower waits
		// without hearing from the leader before it stands for election.
		conf.HeartbeatTimeout = c.cfg.ElectionTimeout
		conf.ElectionTimeout = c.cfg.ElectionTimeout
		conf.LeaderLeaseTimeout = min(leaderLeaseTimeout, c.cfg.ElectionTimeout)
	}
	// A voter that RemoveVoter takes out of the quorum keeps running: a
	// removed leader steps down and the others elect one, as Kafka's
	// removed voter resigns; the node is then outside the configuration
	// and stands for no election.
	conf.ShutdownOnRemove = false
	// Metrics go through go-metrics' global sink, which is a no-op unless
	// someone installs one; the legacy per-peer names would only duplicate.
	conf.NoLegacyTelemetry = true
	return conf
}

// network reports whether the quorum runs over the network: a static one
// (Voters) or one found through the bootstrap servers.
func (cfg Config) network() bool { return len(cfg.Voters) > 0 || len(cfg.BootstrapServers) > 0 }

// votersToBootstrap are the voters a first start bootstraps Raft with:
// the static ones, else the initial voters stored at format time.
func (cfg Config) votersToBootstrap() []Voter {
	if len(cfg.Voters) > 0 {
		return cfg.Voters
	}
	return cfg.InitialVoters
}

// notAVoter is the error for a node outside the voters that has no
// address for Raft to reach it as a non-voter.
func notAVoter(cfg Config) error {
	if len(cfg.Voters) == 0 {
		return fmt.Errorf("controller: node %d is not among the initial voters and has no Raft address to wait at for AddRaftVoter", cfg.NodeID)
	}
	return fmt.Errorf("controller: node %d is not among controller.quorum.voters and has no address for Raft to reach it", cfg.NodeID)
}

// ControllerAddr is the active controller's address as the quorum's Raft
// configuration holds it (its controller listener), "" when no leader is
// known. It serves a static quorum and one found through the bootstrap
// servers alike: a broker-only node learns the configuration from the
// log it follows.
func (c *Controller) ControllerAddr() string {
	_, id := c.raft.LeaderWithID()
	if id == "" {
		return ""
	}
	for _, v := range c.configuration() {
		if v.Suffrage == raft.Voter && v.ID == id {
			return string(v.Address)
		}
	}
	return ""
}

// Voters are the quorum's voters as its Raft configuration holds them,
// in node ID order; nil before this node has one (a broker-only node the
// active controller has not added yet).
func (c *Controller) Voters() []Voter {
	var out []Voter
	for _, s := range c.configuration() {
		id, ok := serverNode(s.ID)
		if s.Suffrage != raft.Voter || !ok {
			continue
		}
		out = append(out, Voter{ID: id, Addr: string(s.Address)})
	}
	slices.SortFunc(out, func(a, b Voter) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// configuration is Raft's latest configuration (hashicorp/raft answers it
// without a round trip through its main loop).
func (c *Controller) configuration() []raft.Server {
	f := c.raft.GetConfiguration()
	if f.Error() != nil {
		return nil
	}
	return f.Configuration().Servers
}
