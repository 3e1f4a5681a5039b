package rest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// memHerder is an in-memory herder for the HTTP layer's tests: one worker
// whose connectors reach their target state at once, answering with the
// messages Kafka's DistributedHerder answers with. It knows the two
// FileStream connectors. leaderURL set makes every write a
// *api.NotLeaderError naming it (noLeader: naming none).
type memHerder struct {
	workerID  string
	clusterID string

	mu struct {
		sync.Mutex
		connectors map[string]*memConnector
		leaderURL  string
		noLeader   bool
		calls      []string // the writes this herder took
	}
	// block, when set, makes every call wait for ctx's end (a stuck herder).
	block bool
	ready bool
}

type memConnector struct {
	config  map[string]string
	target  api.TargetState
	tasks   int
	offsets []api.ConnectorOffset
	topics  []string
}

var memPlugins = []api.PluginInfo{
	{Class: "org.apache.kafka.connect.file.FileStreamSinkConnector", Type: "sink", Version: "4.3.0"},
	{Class: "org.apache.kafka.connect.file.FileStreamSourceConnector", Type: "source", Version: "4.3.0"},
}

func newMemHerder(workerID string) *memHerder {
	h := &memHerder{workerID: workerID, clusterID: "mem-cluster", ready: true}
	h.mu.connectors = map[string]*memConnector{}
	return h
}

func (h *memHerder) setLeader(url string, none bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mu.leaderURL, h.mu.noLeader = url, none
}

func (h *memHerder) writes() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.mu.calls)
}

// write checks leadership for a write and records it.
func (h *memHerder) write(ctx context.Context, op string) error {
	if h.block {
		<-ctx.Done()
		return ctx.Err()
	}
	if h.mu.noLeader {
		return &api.NotLeaderError{Op: op}
	}
	if h.mu.leaderURL != "" {
		return &api.NotLeaderError{Op: op, LeaderURL: h.mu.leaderURL}
	}
	h.mu.calls = append(h.mu.calls, op)
	return nil
}

func (h *memHerder) ServerInfo(ctx context.Context) (api.ServerInfo, error) {
	if h.block {
		<-ctx.Done()
		return api.ServerInfo{}, ctx.Err()
	}
	return api.ServerInfo{Version: "4.3.0", Commit: "c0ffee", KafkaClusterID: h.clusterID}, nil
}

func (h *memHerder) Connectors(context.Context) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Collect(maps.Keys(h.mu.connectors)), nil
}

func (h *memHerder) connector(name string) (*memConnector, error) {
	c, ok := h.mu.connectors[name]
	if !ok {
		return nil, api.NotFound("Connector %s not found", name)
	}
	return c, nil
}

func (h *memHerder) info(name string, c *memConnector) api.ConnectorInfo {
	info := api.ConnectorInfo{Name: name, Config: maps.Clone(c.config), Type: pluginType(c.config["connector.class"])}
	for i := range c.tasks {
		info.Tasks = append(info.Tasks, api.TaskID{Connector: name, Task: i})
	}
	return info
}

func (h *memHerder) ConnectorInfo(_ context.Context, name string) (api.ConnectorInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.connector(name)
	if err != nil {
		return api.ConnectorInfo{}, err
	}
	return h.info(name, c), nil
}

func (h *memHerder) ConnectorConfig(_ context.Context, name string) (map[string]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.connector(name)
	if err != nil {
		return nil, err
	}
	return maps.Clone(c.config), nil
}

// pluginType is the type of a class name or alias, "" when unknown.
func pluginType(class string) api.ConnectorType {
	for _, p := range memPlugins {
		short := strings.TrimPrefix(p.Class, "org.apache.kafka.connect.file.")
		if class == p.Class || class == short || class+"Connector" == short {
			return api.ConnectorType(p.Type)
		}
	}
	return ""
}

// validate is the part of Kafka's validation this herder can do.
func validate(config map[string]string) error {
	class, ok := config["connector.class"]
	if !ok {
		var kv []string
		for k, v := range config {
			kv = append(kv, k+"="+v)
		}
		return api.BadRequest("Connector config {%s} contains no connector type", strings.Join(kv, ", "))
	}
	if pluginType(class) == "" {
		return api.BadRequest("Failed to find any class that implements Connector and which name matches %s", class)
	}
	if n, ok := config["tasks.max"]; ok {
		if _, err := strconv.Atoi(n); err != nil {
			return api.BadRequest("Connector configuration is invalid and contains the following 1 error(s):\nInvalid value %s for configuration tasks.max: Not a number of type INT", n)
		}
	}
	return nil
}

func (h *memHerder) PutConnectorConfig(ctx context.Context, name string, config map[string]string, allowReplace bool, initial api.TargetState) (api.ConnectorInfo, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.write(ctx, "put "+name); err != nil {
		return api.ConnectorInfo{}, false, err
	}
	if err := validate(config); err != nil {
		return api.ConnectorInfo{}, false, err
	}
	c, exists := h.mu.connectors[name]
	if exists && !allowReplace {
		return api.ConnectorInfo{}, false, api.Conflict("Connector %s already exists", name)
	}
	if exists {
		c.config = maps.Clone(config)
		return h.info(name, c), false, nil
	}
	if initial == "" {
		initial = api.TargetRunning
	}
	c = &memConnector{config: maps.Clone(config), target: initial}
	h.mu.connectors[name] = c
	info := h.info(name, c) // Kafka answers before the tasks exist
	if initial == api.TargetRunning {
		c.tasks = 1
		c.topics = topicsOf(config)
	}
	return info, true, nil
}

func topicsOf(config map[string]string) []string {
	if t := config["topic"]; t != "" {
		return []string{t}
	}
	if t := config["topics"]; t != "" {
		return strings.Split(t, ",")
	}
	return nil
}

func (h *memHerder) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (api.ConnectorInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.write(ctx, "patch "+name); err != nil {
		return api.ConnectorInfo{}, err
	}
	c, err := h.connector(name)
	if err != nil {
		return api.ConnectorInfo{}, err
	}
	for k, v := range patch {
		if v == nil {
			delete(c.config, k)
		} else {
			c.config[k] = *v
		}
	}
	return h.info(name, c), nil
}

func (h *memHerder) DeleteConnector(ctx context.Context, name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.write(ctx, "delete "+name); err != nil {
		return err
	}
	if _, err := h.connector(name); err != nil {
		return err
	}
	delete(h.mu.connectors, name)
	return nil
}

func (h *memHerder) status(name string, c *memConnector, state string) api.ConnectorStateInfo {
	st := api.ConnectorStateInfo{Name: name, Type: pluginType(c.config["connector.class"]),
		Connector: api.ConnectorState{State: state, WorkerID: h.workerID, Version: "4.3.0"}}
	for i := range c.tasks {
		st.Tasks = append(st.Tasks, api.TaskState{ID: i, State: state, WorkerID: h.workerID, Version: "4.3.0"})
	}
	return st
}

func (h *memHerder) ConnectorStatus(_ context.Context, name string) (api.ConnectorStateInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.mu.connectors[name]
	if !ok {
		return api.ConnectorStateInfo{}, api.NotFound("No status found for connector %s", name)
	}
	return h.status(name, c, string(c.target)), nil
}

func (h *memHerder) TaskConfigs(_ context.Context, name string) ([]api.TaskInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.connector(name)
	if err != nil {
		return nil, err
	}
	var out []api.TaskInfo
	for i := range c.tasks {
		config := maps.Clone(c.config)
		config["task.class"] = "org.apache.kafka.connect.file." + map[api.ConnectorType]string{"source": "FileStreamSourceTask", "sink": "FileStreamSinkTask"}[pluginType(c.config["connector.class"])]
		out = append(out, api.TaskInfo{ID: api.TaskID{Connector: name, Task: i}, Config: config})
	}
	return out, nil
}

func (h *memHerder) TaskStatus(_ context.Context, id api.TaskID) (api.TaskState, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.mu.connectors[id.Connector]
	if !ok || id.Task < 0 || id.Task >= c.tasks {
		return api.TaskState{}, api.NotFound("No status found for task %s", id)
	}
	return api.TaskState{ID: id.Task, State: string(c.target), WorkerID: h.workerID, Version: "4.3.0"}, nil
}

func (h *memHerder) RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*api.ConnectorStateInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.write(ctx, "restart "+name); err != nil {
		return nil, err
	}
	c, ok := h.mu.connectors[name]
	if !ok {
		return nil, api.NotFound("Unknown connector: %s", name)
	}
	switch {
	case !includeTasks && !onlyFailed:
		return nil, nil
	case onlyFailed: // nothing here fails
		st := h.status(name, c, string(c.target))
		return &st, nil
	}
	st := h.status(name, c, api.StateRestarting)
	return &st, nil
}

func (h *memHerder) RestartTask(ctx context.Context, id api.TaskID) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.write(ctx, "restart "+id.String()); err != nil {
		return err
	}
	c, ok := h.mu.connectors[id.Connector]
	switch {
	case !ok:
		return api.NotFound("Unknown connector: %s", id.Connector)
	case id.Task < 0 || id.Task >= c.tasks:
		return api.NotFound("Unknown task: %s", id)
	}
	return nil
}

func (h *memHerder) target(ctx context.Context, name string, target api.TargetState) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.write(ctx, fmt.Sprintf("%s %s", target, name)); err != nil {
		return err
	}
	c, ok := h.mu.connectors[name]
	if !ok {
		return api.NotFound("Unknown connector %s", name)
	}
	c.target = target
	switch target {
	case api.TargetStopped:
		c.tasks = 0
	case api.TargetRunning:
		c.tasks = 1
		c.topics = topicsOf(c.config)
	}
	return nil
}

func (h *memHerder) PauseConnector(ctx context.Context, name string) error {
	return h.target(ctx, name, api.TargetPaused)
}

func (h *memHerder) ResumeConnector(ctx context.Context, name string) error {
	return h.target(ctx, name, api.TargetRunning)
}

func (h *memHerder) StopConnector(ctx context.Context, name string) error {
	return h.target(ctx, name, api.TargetStopped)
}

func (h *memHerder) Offsets(_ context.Context, name string) (api.ConnectorOffsets, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.connector(name)
	if err != nil {
		return api.ConnectorOffsets{}, err
	}
	return api.ConnectorOffsets{Offsets: slices.Clone(c.offsets)}, nil
}

func (h *memHerder) stoppedConnector(name string) (*memConnector, error) {
	c, err := h.connector(name)
	if err != nil {
		return nil, err
	}
	if c.target != api.TargetStopped {
		return nil, api.BadRequest("Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name)
	}
	return c, nil
}

func (h *memHerder) AlterOffsets(ctx context.Context, name string, offsets api.ConnectorOffsets) (api.Message, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.write(ctx, "alter offsets "+name); err != nil {
		return api.Message{}, err
	}
	c, err := h.stoppedConnector(name)
	if err != nil {
		return api.Message{}, err
	}
	c.offsets = offsets.Offsets
	return api.Message{Message: "The offsets for this connector have been altered successfully"}, nil
}

func (h *memHerder) ResetOffsets(ctx context.Context, name string) (api.Message, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.write(ctx, "reset offsets "+name); err != nil {
		return api.Message{}, err
	}
	c, err := h.stoppedConnector(name)
	if err != nil {
		return api.Message{}, err
	}
	c.offsets = nil
	return api.Message{Message: "The offsets for this connector have been reset successfully"}, nil
}

func (h *memHerder) ActiveTopics(_ context.Context, name string) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.mu.connectors[name]; ok {
		return slices.Clone(c.topics), nil
	}
	return nil, nil
}

func (h *memHerder) ResetActiveTopics(_ context.Context, name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.mu.connectors[name]; ok {
		c.topics = nil
	}
	return nil
}

func (h *memHerder) Plugins(_ context.Context, connectorsOnly bool) ([]api.PluginInfo, error) {
	if connectorsOnly {
		return slices.Clone(memPlugins), nil
	}
	return append(slices.Clone(memPlugins), api.PluginInfo{Class: "org.apache.kafka.connect.transforms.Filter", Type: "transformation", Version: "4.3.0"}), nil
}

func (h *memHerder) PluginConfig(_ context.Context, plugin string) ([]api.ConfigKeyInfo, error) {
	if pluginType(plugin) == "" {
		return nil, api.NotFound("Unknown plugin %s.", plugin)
	}
	return []api.ConfigKeyInfo{{Name: "file", Type: "STRING", Importance: "HIGH", Width: "NONE", DisplayName: "file", OrderInGroup: -1}}, nil
}

func (h *memHerder) ValidateConfig(_ context.Context, plugin string, config map[string]string) (api.ConfigInfos, error) {
	if err := validate(config); err != nil {
		return api.ConfigInfos{}, err
	}
	return api.ConfigInfos{Name: plugin}, nil
}

func (h *memHerder) HealthCheck(ctx context.Context) error {
	if h.block {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (h *memHerder) Ready() bool { return h.ready }
