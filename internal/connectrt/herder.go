package connectrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/connectrt/api"
)

var _ api.Herder = (*Worker)(nil)

func isTopicExists(err error) bool { return errors.Is(err, kerr.TopicAlreadyExists) }

// writeConfigs writes config topic records and waits until this worker has
// read them back, so an answer after a write shows the write. In
// standalone mode the records are applied directly.
func (w *Worker) writeConfigs(ctx context.Context, recs []*kgo.Record) error {
	if w.configLog == nil {
		w.mu.Lock()
		for _, r := range recs {
			restart, _ := w.mu.state.apply(w.mu.state.offset, string(r.Key), r.Value)
			if restart != nil {
				w.mu.restarts = append(w.mu.restarts, *restart)
			}
		}
		w.mu.Unlock()
		w.wake()
		return nil
	}
	if err := w.configLog.sendAll(ctx, recs); err != nil {
		return &api.Error{Status: 500, Message: "Failed to write to config topic; this may be due to a transient error and the request can be safely retried: " + err.Error()}
	}
	return w.configLog.readToEnd(ctx)
}

// leaderOnly answers NotLeaderError on a follower, so the REST layer
// forwards the request to the leader.
//
// While the group rebalances no leader is known; as Kafka's herder queues
// requests until its rebalance completes, the request waits for one (up to
// rebalance.timeout.ms, or the request's own deadline).
func (w *Worker) leaderOnly(ctx context.Context, op string) error {
	deadline := time.Now().Add(max(w.cfg.RebalanceTimeout, time.Second))
	for {
		leader, url := w.isLeader()
		if leader {
			return nil
		}
		if url != "" || time.Now().After(deadline) {
			return &api.NotLeaderError{Op: op, LeaderURL: url}
		}
		select {
		case <-ctx.Done():
			return &api.NotLeaderError{Op: op, LeaderURL: url}
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (w *Worker) ServerInfo(ctx context.Context) (api.ServerInfo, error) {
	return api.ServerInfo{Version: w.opts.Version, Commit: w.opts.Commit, KafkaClusterID: w.clusterID}, nil
}

func (w *Worker) Connectors(ctx context.Context) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.mu.state.connectors)), nil
}

// connectorState copies a connector's config and tasks under the lock.
func (w *Worker) connectorState(name string) (map[string]string, []map[string]string, api.TargetState, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cfg, ok := w.mu.state.connectors[name]
	return cfg, w.mu.state.tasks[name], w.mu.state.targets[name], ok
}

func notFound(name string) error { return api.NotFound("Connector %s not found", name) }

func (w *Worker) ConnectorInfo(ctx context.Context, name string) (api.ConnectorInfo, error) {
	cfg, tasks, _, ok := w.connectorState(name)
	if !ok {
		return api.ConnectorInfo{}, notFound(name)
	}
	ids := make([]api.TaskID, len(tasks))
	for i := range ids {
		ids[i] = api.TaskID{Connector: name, Task: i}
	}
	return api.ConnectorInfo{Name: name, Config: maps.Clone(cfg), Tasks: ids, Type: w.plugins.connectorType(cfg)}, nil
}

func (w *Worker) ConnectorConfig(ctx context.Context, name string) (map[string]string, error) {
	cfg, _, _, ok := w.connectorState(name)
	if !ok {
		return nil, notFound(name)
	}
	return maps.Clone(cfg), nil
}

func (w *Worker) PutConnectorConfig(ctx context.Context, name string, cfg map[string]string, allowReplace bool, initial api.TargetState) (api.ConnectorInfo, bool, error) {
	if err := w.leaderOnly(ctx, "put connector config"); err != nil {
		return api.ConnectorInfo{}, false, err
	}
	cfg = maps.Clone(cfg)
	cfg["name"] = name
	_, _, _, exists := w.connectorState(name)
	if exists && !allowReplace {
		return api.ConnectorInfo{}, false, api.Conflict("Connector %s already exists", name)
	}
	if err := w.validateForWrite(ctx, cfg); err != nil {
		return api.ConnectorInfo{}, false, err
	}
	recs := []*kgo.Record{}
	if !exists {
		if initial == "" {
			initial = api.TargetRunning
		}
		recs = append(recs, &kgo.Record{Key: targetStateKey(name), Value: targetStateValue(initial)})
	}
	recs = append(recs, &kgo.Record{Key: connectorKey(name), Value: propertiesValue(cfg)})
	if err := w.writeConfigs(ctx, recs); err != nil {
		return api.ConnectorInfo{}, false, err
	}
	if exists {
		info, err := w.ConnectorInfo(ctx, name)
		return info, false, err
	}
	// Kafka answers a creation before the connector has tasks, and its
	// herder, one request at a time, has made them before it takes the
	// next request. The answer here is the same, and it is sent once the
	// connector's task configs are in (or it failed, or a bound passed), so
	// a client's next request sees the tasks as Kafka's would.
	info := api.ConnectorInfo{Name: name, Config: cfg, Tasks: []api.TaskID{}, Type: w.plugins.connectorType(cfg)}
	if initial == api.TargetRunning {
		w.awaitTaskConfigs(ctx, name, 10*time.Second)
	}
	return info, true, nil
}

// awaitTaskConfigs waits until a new connector's task configs are
// committed, its connector failed, or d passed.
func (w *Worker) awaitTaskConfigs(ctx context.Context, name string, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		w.mu.Lock()
		_, committed := w.mu.state.tasks[name]
		_, exists := w.mu.state.connectors[name]
		w.mu.Unlock()
		if committed || !exists {
			return
		}
		if st, ok := w.statuses.connector(name); ok && st.State == api.StateFailed {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// validateForWrite refuses an invalid config with Kafka's message.
func (w *Worker) validateForWrite(ctx context.Context, cfg map[string]string) error {
	class, ok := cfg["connector.class"]
	if !ok || strings.TrimSpace(class) == "" {
		return api.BadRequest("Connector config %s contains no connector type", formatConfig(cfg))
	}
	infos, err := w.ValidateConfig(ctx, class, cfg)
	if err != nil {
		return err
	}
	if infos.ErrorCount == 0 {
		return nil
	}
	var msgs []string
	for _, c := range infos.Configs {
		msgs = append(msgs, c.Value.Errors...)
	}
	return api.BadRequest("Connector configuration is invalid and contains the following %d error(s):\n%s\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`",
		infos.ErrorCount, strings.Join(msgs, "\n"))
}

// formatConfig prints a config as Java's Map.toString does.
func formatConfig(cfg map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		parts = append(parts, k+"="+cfg[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (w *Worker) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (api.ConnectorInfo, error) {
	if err := w.leaderOnly(ctx, "patch connector config"); err != nil {
		return api.ConnectorInfo{}, err
	}
	cfg, _, _, ok := w.connectorState(name)
	if !ok {
		return api.ConnectorInfo{}, notFound(name)
	}
	cfg = maps.Clone(cfg)
	for k, v := range patch {
		if v == nil {
			delete(cfg, k)
		} else {
			cfg[k] = *v
		}
	}
	info, _, err := w.PutConnectorConfig(ctx, name, cfg, true, "")
	return info, err
}

func (w *Worker) DeleteConnector(ctx context.Context, name string) error {
	if err := w.leaderOnly(ctx, "delete connector"); err != nil {
		return err
	}
	if _, _, _, ok := w.connectorState(name); !ok {
		return notFound(name)
	}
	return w.writeConfigs(ctx, []*kgo.Record{
		{Key: connectorKey(name), Value: nil},
		{Key: targetStateKey(name), Value: nil},
	})
}

func (w *Worker) ConnectorStatus(ctx context.Context, name string) (api.ConnectorStateInfo, error) {
	cfg, tasks, _, ok := w.connectorState(name)
	if !ok {
		return api.ConnectorStateInfo{}, api.NotFound("No status found for connector %s", name)
	}
	st, ok := w.statuses.connector(name)
	if !ok {
		return api.ConnectorStateInfo{}, api.NotFound("No status found for connector %s", name)
	}
	out := api.ConnectorStateInfo{Name: name, Type: w.plugins.connectorType(cfg), Tasks: []api.TaskState{},
		Connector: api.ConnectorState{State: st.State, WorkerID: st.WorkerID, Trace: deref(st.Trace), Version: st.Version}}
	for i := range tasks {
		ts, ok := w.statuses.task(api.TaskID{Connector: name, Task: i})
		if !ok {
			continue
		}
		out.Tasks = append(out.Tasks, api.TaskState{ID: i, State: ts.State, WorkerID: ts.WorkerID, Trace: deref(ts.Trace), Version: ts.Version})
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (w *Worker) TaskConfigs(ctx context.Context, name string) ([]api.TaskInfo, error) {
	_, tasks, _, ok := w.connectorState(name)
	if !ok {
		return nil, notFound(name)
	}
	out := make([]api.TaskInfo, len(tasks))
	for i, cfg := range tasks {
		out[i] = api.TaskInfo{ID: api.TaskID{Connector: name, Task: i}, Config: maps.Clone(cfg)}
	}
	return out, nil
}

func (w *Worker) TaskStatus(ctx context.Context, id api.TaskID) (api.TaskState, error) {
	_, tasks, _, ok := w.connectorState(id.Connector)
	if !ok || id.Task < 0 || id.Task >= len(tasks) {
		return api.TaskState{}, api.NotFound("No status found for task %s", id)
	}
	ts, ok := w.statuses.task(id)
	if !ok {
		return api.TaskState{}, api.NotFound("No status found for task %s", id)
	}
	return api.TaskState{ID: id.Task, State: ts.State, WorkerID: ts.WorkerID, Trace: deref(ts.Trace), Version: ts.Version}, nil
}

// RestartConnector restarts through the config topic (a restart record
// every worker acts on for what it runs), as Kafka's KIP-745 does.
func (w *Worker) RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*api.ConnectorStateInfo, error) {
	if err := w.leaderOnly(ctx, "restart connector"); err != nil {
		return nil, err
	}
	if _, _, _, ok := w.connectorState(name); !ok {
		return nil, api.NotFound("Unknown connector: %s", name)
	}
	plain := !includeTasks && !onlyFailed
	var before api.ConnectorStateInfo
	if !plain {
		var err error
		if before, err = w.ConnectorStatus(ctx, name); err != nil {
			return nil, err
		}
	}
	if err := w.writeConfigs(ctx, []*kgo.Record{{Key: restartKey(name), Value: restartValue(includeTasks, onlyFailed)}}); err != nil {
		return nil, err
	}
	if plain {
		return nil, nil
	}
	// The answer shows what the request restarts as RESTARTING (Kafka's 202).
	if !onlyFailed || before.Connector.State == api.StateFailed {
		before.Connector.State = api.StateRestarting
	}
	for i := range before.Tasks {
		if includeTasks && (!onlyFailed || before.Tasks[i].State == api.StateFailed) {
			before.Tasks[i].State = api.StateRestarting
		}
	}
	return &before, nil
}

func (w *Worker) RestartTask(ctx context.Context, id api.TaskID) error {
	_, tasks, _, ok := w.connectorState(id.Connector)
	if !ok {
		return api.NotFound("Unknown connector: %s", id.Connector)
	}
	if id.Task < 0 || id.Task >= len(tasks) {
		return api.NotFound("Unknown task: %s", id)
	}
	w.mu.Lock()
	t, local := w.mu.tasks[id]
	if local {
		delete(w.mu.tasks, id)
	}
	w.mu.Unlock()
	if !local {
		// Another worker runs it: forward to that worker, found by its status.
		if ts, ok := w.statuses.task(id); ok && ts.WorkerID != w.workerID && w.member != nil {
			return &api.NotLeaderError{Op: "restart task", LeaderURL: "http://" + ts.WorkerID}
		}
		w.wake()
		return nil
	}
	t.stop()
	w.wake()
	return nil
}

func (w *Worker) setTarget(ctx context.Context, name string, target api.TargetState) error {
	if err := w.leaderOnly(ctx, "change target state"); err != nil {
		return err
	}
	if _, _, _, ok := w.connectorState(name); !ok {
		return api.NotFound("Unknown connector %s", name)
	}
	return w.writeConfigs(ctx, []*kgo.Record{{Key: targetStateKey(name), Value: targetStateValue(target)}})
}

func (w *Worker) PauseConnector(ctx context.Context, name string) error {
	return w.setTarget(ctx, name, api.TargetPaused)
}

func (w *Worker) ResumeConnector(ctx context.Context, name string) error {
	return w.setTarget(ctx, name, api.TargetRunning)
}

// StopConnector sets STOPPED and empties the task configs (KIP-875), so
// offsets can be altered with no task running.
func (w *Worker) StopConnector(ctx context.Context, name string) error {
	if err := w.leaderOnly(ctx, "stop connector"); err != nil {
		return err
	}
	if _, _, _, ok := w.connectorState(name); !ok {
		return api.NotFound("Unknown connector %s", name)
	}
	return w.writeConfigs(ctx, []*kgo.Record{
		{Key: targetStateKey(name), Value: targetStateValue(api.TargetStopped)},
		{Key: commitKey(name), Value: commitValue(0)},
	})
}

func (w *Worker) Offsets(ctx context.Context, name string) (api.ConnectorOffsets, error) {
	cfg, _, _, ok := w.connectorState(name)
	if !ok {
		return api.ConnectorOffsets{}, notFound(name)
	}
	if w.plugins.connectorType(cfg) == api.TypeSink {
		return w.sinkOffsets(ctx, name)
	}
	if err := w.offsets.readToEnd(ctx); err != nil {
		return api.ConnectorOffsets{}, err
	}
	return api.ConnectorOffsets{Offsets: w.offsets.all(name)}, nil
}

func (w *Worker) sinkOffsets(ctx context.Context, name string) (api.ConnectorOffsets, error) {
	resp, err := w.admin.FetchOffsets(ctx, sinkGroup(name))
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return api.ConnectorOffsets{}, fmt.Errorf("read the offsets of group %s: %w", sinkGroup(name), err)
	}
	out := api.ConnectorOffsets{Offsets: []api.ConnectorOffset{}}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil {
			return
		}
		out.Offsets = append(out.Offsets, api.ConnectorOffset{
			Partition: map[string]any{"kafka_topic": o.Topic, "kafka_partition": o.Partition},
			Offset:    map[string]any{"kafka_offset": o.At},
		})
	})
	return out, nil
}

// stoppedForOffsets is KIP-875's precondition.
func (w *Worker) stoppedForOffsets(name string) (map[string]string, error) {
	cfg, tasks, target, ok := w.connectorState(name)
	if !ok {
		return nil, notFound(name)
	}
	if target != api.TargetStopped || len(tasks) != 0 {
		return nil, api.BadRequest("Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name)
	}
	return cfg, nil
}

func (w *Worker) AlterOffsets(ctx context.Context, name string, offsets api.ConnectorOffsets) (api.Message, error) {
	if err := w.leaderOnly(ctx, "alter offsets"); err != nil {
		return api.Message{}, err
	}
	cfg, err := w.stoppedForOffsets(name)
	if err != nil {
		return api.Message{}, err
	}
	if len(offsets.Offsets) == 0 {
		return api.Message{}, api.BadRequest("The offsets to be altered may not be null or empty")
	}
	if w.plugins.connectorType(cfg) == api.TypeSink {
		return w.alterSinkOffsets(ctx, name, cfg, offsets.Offsets)
	}
	changes := make([]connect.SourcePartitionOffset, 0, len(offsets.Offsets))
	for i, o := range offsets.Offsets {
		if o.Partition == nil {
			return api.Message{}, api.BadRequest("Source partitions may not be null")
		}
		offsets.Offsets[i] = api.ConnectorOffset{Partition: normalize(o.Partition), Offset: normalize(o.Offset)}
		changes = append(changes, connect.SourcePartitionOffset{Partition: offsets.Offsets[i].Partition, Offset: offsets.Offsets[i].Offset})
	}
	handled, err := w.sourceAlter(cfg, changes)
	if err != nil {
		return api.Message{}, err
	}
	if err := w.offsets.put(ctx, name, offsets.Offsets); err != nil {
		return api.Message{}, err
	}
	return offsetsMessage("altered", !handled), nil
}

// sourceAlter asks the connector to check an offsets change (KIP-875).
func (w *Worker) sourceAlter(cfg map[string]string, changes []connect.SourcePartitionOffset) (bool, error) {
	_, conn, err := w.connectorPlugin(cfg["connector.class"])
	if err != nil {
		return false, api.BadRequest("%s", err.Error())
	}
	a, ok := conn.(connect.SourceOffsetAlterer)
	if !ok {
		return false, nil
	}
	var handled bool
	err = safe(func() error {
		var err error
		handled, err = a.AlterOffsets(maps.Clone(cfg), changes)
		return err
	})
	if err != nil {
		return false, api.BadRequest("%s", err.Error())
	}
	return handled, nil
}

func offsetsMessage(what string, external bool) api.Message {
	if !external {
		return api.Message{Message: "The offsets for this connector have been " + what + " successfully"}
	}
	return api.Message{Message: "The Connect framework-managed offsets for this connector have been " + what +
		" successfully. However, if this connector manages offsets externally, they will need to be manually " + what + " in the system that the connector uses."}
}

func (w *Worker) alterSinkOffsets(ctx context.Context, name string, cfg map[string]string, entries []api.ConnectorOffset) (api.Message, error) {
	commit := kadm.Offsets{}
	changes := map[connect.TopicPartition]*int64{}
	var deletes []kadm.TopicPartitions
	for _, e := range entries {
		topic, _ := e.Partition["kafka_topic"].(string)
		part, ok := asInt64(e.Partition["kafka_partition"])
		if topic == "" || !ok {
			return api.Message{}, api.BadRequest("Sink connector offsets must have a 'kafka_topic' string and a 'kafka_partition' integer in each partition")
		}
		tp := connect.TopicPartition{Topic: topic, Partition: int32(part)}
		if e.Offset == nil {
			changes[tp] = nil
			deletes = append(deletes, kadm.TopicPartitions{Topic: topic, Partitions: []int32{int32(part)}})
			continue
		}
		off, ok := asInt64(e.Offset["kafka_offset"])
		if !ok || off < 0 {
			return api.Message{}, api.BadRequest("Sink connector offsets must have a non-negative 'kafka_offset' integer")
		}
		o := int64(off)
		changes[tp] = &o
		commit.AddOffset(topic, int32(part), o, -1)
	}
	handled, err := w.sinkAlter(cfg, changes)
	if err != nil {
		return api.Message{}, err
	}
	if len(commit) > 0 {
		resp, err := w.admin.CommitOffsets(ctx, sinkGroup(name), commit)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			return api.Message{}, fmt.Errorf("alter the offsets of group %s: %w", sinkGroup(name), err)
		}
	}
	for _, d := range deletes {
		ts := kadm.TopicsSet{}
		ts.Add(d.Topic, d.Partitions...)
		if _, err := w.admin.DeleteOffsets(ctx, sinkGroup(name), ts); err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			return api.Message{}, fmt.Errorf("delete offsets of group %s: %w", sinkGroup(name), err)
		}
	}
	return offsetsMessage("altered", !handled), nil
}

// sinkAlter asks a sink connector to check an offsets change (KIP-875).
func (w *Worker) sinkAlter(cfg map[string]string, changes map[connect.TopicPartition]*int64) (bool, error) {
	_, conn, err := w.connectorPlugin(cfg["connector.class"])
	if err != nil {
		return false, api.BadRequest("%s", err.Error())
	}
	a, ok := conn.(connect.SinkOffsetAlterer)
	if !ok {
		return false, nil
	}
	var handled bool
	err = safe(func() error {
		var err error
		handled, err = a.AlterOffsets(maps.Clone(cfg), changes)
		return err
	})
	if err != nil {
		return false, api.BadRequest("%s", err.Error())
	}
	return handled, nil
}

func (w *Worker) ResetOffsets(ctx context.Context, name string) (api.Message, error) {
	if err := w.leaderOnly(ctx, "reset offsets"); err != nil {
		return api.Message{}, err
	}
	cfg, err := w.stoppedForOffsets(name)
	if err != nil {
		return api.Message{}, err
	}
	if w.plugins.connectorType(cfg) == api.TypeSink {
		current, err := w.sinkOffsets(ctx, name)
		if err != nil {
			return api.Message{}, err
		}
		changes := map[connect.TopicPartition]*int64{}
		for _, o := range current.Offsets {
			changes[connect.TopicPartition{Topic: o.Partition["kafka_topic"].(string), Partition: o.Partition["kafka_partition"].(int32)}] = nil
		}
		handled, err := w.sinkAlter(cfg, changes)
		if err != nil {
			return api.Message{}, err
		}
		if _, err := w.admin.DeleteGroup(ctx, sinkGroup(name)); err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			return api.Message{}, fmt.Errorf("delete group %s: %w", sinkGroup(name), err)
		}
		return offsetsMessage("reset", !handled), nil
	}
	if err := w.offsets.readToEnd(ctx); err != nil {
		return api.Message{}, err
	}
	var entries []api.ConnectorOffset
	for _, o := range w.offsets.all(name) {
		entries = append(entries, api.ConnectorOffset{Partition: o.Partition, Offset: nil})
	}
	changes := make([]connect.SourcePartitionOffset, 0, len(entries))
	for _, e := range entries {
		changes = append(changes, connect.SourcePartitionOffset{Partition: e.Partition})
	}
	handled, err := w.sourceAlter(cfg, changes)
	if err != nil {
		return api.Message{}, err
	}
	if err := w.offsets.put(ctx, name, entries); err != nil {
		return api.Message{}, err
	}
	return offsetsMessage("reset", !handled), nil
}

// ActiveTopics answers an unknown connector's as empty, as Kafka does.
func (w *Worker) ActiveTopics(ctx context.Context, name string) ([]string, error) {
	return w.statuses.activeTopics(name), nil
}

func (w *Worker) ResetActiveTopics(ctx context.Context, name string) error {
	if _, _, _, ok := w.connectorState(name); !ok {
		return notFound(name)
	}
	return w.statuses.resetTopics(ctx, name)
}

func (w *Worker) Plugins(ctx context.Context, connectorsOnly bool) ([]api.PluginInfo, error) {
	var out []api.PluginInfo
	for _, p := range w.plugins.Connectors {
		out = append(out, api.PluginInfo{Class: p.Class, Type: string(p.Type), Version: p.Version})
	}
	if !connectorsOnly {
		out = append(out, w.plugins.Others...)
	}
	slices.SortFunc(out, func(a, b api.PluginInfo) int { return strings.Compare(a.Class, b.Class) })
	return out, nil
}

// asInt64 reads a JSON integer however it was decoded.
func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int:
		return int64(x), true
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	}
	return 0, false
}
