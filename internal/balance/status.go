package balance

import "github.com/samsa-io/samsa/internal/model"

// StatusMove is one reassignment in progress or one decision of the
// last plan.
type StatusMove struct {
	Topic     string         `json:"topic"`
	Partition int32          `json:"partition"`
	Kind      string         `json:"kind,omitempty"` // "replicas" or "leader"; "cancel" for a cancelled move
	From      []model.NodeID `json:"from,omitempty"`
	To        []model.NodeID `json:"to,omitempty"`
	Adding    []model.NodeID `json:"adding,omitempty"`
	Removing  []model.NodeID `json:"removing,omitempty"`
	Reason    string         `json:"reason,omitempty"`
}

// Status is what the balancer reports (GET /v1/balancer, `samsa
// cluster status`, the samsa_balancer_* metrics). Only the active
// controller's is complete; another node reports its settings and that it
// stands by.
type Status struct {
	NodeID       model.NodeID `json:"node_id"`
	ControllerID model.NodeID `json:"controller_id"`
	Active       bool         `json:"active"`
	Enabled      bool         `json:"enabled"`
	State        string       `json:"state"`
	// Throttle is samsa.balancer.throttle.bytes.per.second.
	Throttle int64 `json:"throttle_bytes_per_second"`
	// LastPlan is when the last round planned (RFC 3339, "" before the
	// first); SizesNote says why bytes were not balanced, if they were not.
	LastPlan  string `json:"last_plan"`
	SizesNote string `json:"sizes_note,omitempty"`
	// InProgress are the reassignments in progress (anyone's) as of the
	// last round; Moves the decisions of the last round that made any
	// (moves started, moves cancelled); Notes what the last plan could not
	// do and why.
	InProgress []StatusMove `json:"in_progress"`
	Moves      []StatusMove `json:"moves"`
	Notes      []string     `json:"notes"`
	// Brokers are each broker's load as of the last plan, and After once
	// its moves are done.
	Brokers []BrokerLoad `json:"brokers"`
	After   []BrokerLoad `json:"after"`
	// Counters since this process started: moves the balancer started,
	// that completed, that it cancelled; preferred-leader elections.
	MovesStarted    uint64 `json:"moves_started"`
	MovesCompleted  uint64 `json:"moves_completed"`
	MovesCancelled  uint64 `json:"moves_cancelled"`
	LeaderElections uint64 `json:"leader_elections"`
}
