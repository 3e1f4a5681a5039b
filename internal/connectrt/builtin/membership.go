package builtin

import (
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/connectrt"
	"github.com/samsa-io/samsa/internal/connectrt/api"
	"github.com/samsa-io/samsa/internal/connectrt/member"
)

// Membership makes a distributed worker's group member from its config.
func Membership(cfg connectrt.WorkerConfig, url string, logger *slog.Logger) connectrt.MembershipFactory {
	return func(client *kgo.Client, h connectrt.MembershipHandler) (connectrt.Membership, error) {
		delay := cfg.ScheduledRebalanceMaxDelay
		if delay == 0 {
			delay = member.NoScheduledRebalanceDelay
		}
		return member.New(client, member.Config{
			GroupID: cfg.GroupID, URL: url, Protocol: cfg.ConnectProtocol,
			SessionTimeout: cfg.SessionTimeout, RebalanceTimeout: cfg.RebalanceTimeout, HeartbeatInterval: cfg.HeartbeatInterval,
			ScheduledRebalanceMaxDelay: delay, Logger: logger,
		}, handler{h})
	}
}

// handler adapts the worker to the member's Handler.
type handler struct{ h connectrt.MembershipHandler }

func (a handler) Snapshot() member.Snapshot {
	off, conns, tasks := a.h.Snapshot()
	return member.Snapshot{Offset: off, Connectors: conns, Tasks: tasks}
}

func (a handler) Revoke(connectors []string, tasks []api.TaskID) { a.h.Revoke(connectors, tasks) }

func (a handler) Assigned(x member.Assignment) {
	if x.Error != 0 {
		// CONFIG_MISMATCH: nothing new is assigned; the worker keeps reading
		// its config topic and the member rejoins once it caught up.
		return
	}
	a.h.Assigned(x.Generation, x.Connectors, x.Tasks)
}
