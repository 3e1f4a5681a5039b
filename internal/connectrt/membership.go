package connectrt

import (
	"context"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// Membership is a worker's place in the Connect group (internal/connectrt/member
// behind an adapter the caller wires, so the runtime does not depend on one
// protocol implementation).
type Membership interface {
	Run(ctx context.Context) error
	Rejoin()
	Leader() (id, url string, isLeader bool)
}

// MembershipFactory makes the membership for a worker's client.
type MembershipFactory func(client *kgo.Client, h MembershipHandler) (Membership, error)

// MembershipHandler is what the group asks of and tells the worker.
type MembershipHandler interface {
	// Snapshot is the config topic as read: its offset and the work in it.
	Snapshot() (offset int64, connectors []string, tasks []api.TaskID)
	// Revoke stops what the worker must give up; it returns when stopped.
	Revoke(connectors []string, tasks []api.TaskID)
	// Assigned is the worker's whole assignment after a rebalance.
	Assigned(generation int32, connectors []string, tasks []api.TaskID)
}

// Snapshot implements MembershipHandler.
func (w *Worker) Snapshot() (int64, []string, []api.TaskID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	conns, tasks := w.mu.state.work()
	return w.mu.state.offset - 1, conns, tasks
}

// Revoke implements MembershipHandler: the revoked work stops before the
// worker rejoins, so no connector or task runs on two workers at once.
func (w *Worker) Revoke(connectors []string, tasks []api.TaskID) {
	w.mu.Lock()
	var stopTasks []*taskRunner
	var stopConns []*connectorRunner
	for _, id := range tasks {
		delete(w.mu.assignment.tasks, id)
		if t, ok := w.mu.tasks[id]; ok {
			stopTasks = append(stopTasks, t)
			delete(w.mu.tasks, id)
		}
	}
	for _, name := range connectors {
		delete(w.mu.assignment.connectors, name)
		if c, ok := w.mu.connectors[name]; ok {
			stopConns = append(stopConns, c)
			delete(w.mu.connectors, name)
		}
	}
	w.mu.Unlock()
	w.stopAll(stopTasks, stopConns)
	ctx := w.group.Context()
	for _, c := range stopConns {
		w.afterConnectorStop(ctx, c)
	}
	for _, t := range stopTasks {
		w.afterTaskStop(ctx, t)
	}
}

// Assigned implements MembershipHandler.
func (w *Worker) Assigned(generation int32, connectors []string, tasks []api.TaskID) {
	a := assignment{connectors: map[string]bool{}, tasks: map[api.TaskID]bool{}}
	for _, c := range connectors {
		a.connectors[c] = true
	}
	for _, t := range tasks {
		a.tasks[t] = true
	}
	w.mu.Lock()
	w.mu.assignment = a
	w.mu.generation = generation
	w.mu.Unlock()
	w.ready.Store(true)
	w.logger.Info("connect group assignment", "generation", generation, "connectors", slices.Sorted(maps.Keys(a.connectors)), "tasks", len(tasks))
	w.wake()
}

// isLeader says whether this worker writes configs (always in standalone).
func (w *Worker) isLeader() (bool, string) {
	if w.member == nil {
		return true, w.url
	}
	_, url, leader := w.member.Leader()
	return leader, url
}
