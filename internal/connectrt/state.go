package connectrt

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// configState is the config topic as applied so far (Kafka's
// ClusterConfigState): connector configs, target states, and task configs
// once their commit record arrived. It is copied out under the worker's lock.
type configState struct {
	offset     int64 // next config topic offset to apply (Kafka's config offset)
	connectors map[string]map[string]string
	targets    map[string]api.TargetState
	tasks      map[string][]map[string]string // committed task configs
	// pending holds task configs written before their commit record.
	pending map[string]map[int]map[string]string
	// taskCounts are KIP-618's fencing records (tasks-fencing-<name>).
	taskCounts map[string]int
}

func newConfigState() *configState {
	return &configState{
		connectors: map[string]map[string]string{},
		targets:    map[string]api.TargetState{},
		tasks:      map[string][]map[string]string{},
		pending:    map[string]map[int]map[string]string{},
		taskCounts: map[string]int{},
	}
}

// The config topic's keys and values, in Kafka's formats (KafkaConfigBackingStore,
// its JSON converter with schemas disabled).
const (
	connectorPrefix   = "connector-"
	taskPrefix        = "task-"
	commitPrefix      = "commit-"
	targetStatePrefix = "target-state-"
	restartPrefix     = "restart-connector-"
	fencingPrefix     = "tasks-fencing-"
)

func connectorKey(name string) []byte { return []byte(connectorPrefix + name) }
func taskKey(id api.TaskID) []byte {
	return []byte(fmt.Sprintf("%s%s-%d", taskPrefix, id.Connector, id.Task))
}
func commitKey(name string) []byte      { return []byte(commitPrefix + name) }
func targetStateKey(name string) []byte { return []byte(targetStatePrefix + name) }
func restartKey(name string) []byte     { return []byte(restartPrefix + name) }
func propertiesValue(p map[string]string) []byte {
	b, _ := json.Marshal(map[string]any{"properties": p})
	return b
}
func commitValue(n int) []byte { b, _ := json.Marshal(map[string]any{"tasks": n}); return b }

// targetStateValue writes STOPPED as PAUSED in "state" for workers that
// predate KIP-875, and the real state in "state.v2", as Kafka does.
func targetStateValue(s api.TargetState) []byte {
	v2 := string(s)
	if s == api.TargetRunning {
		v2 = "STARTED"
	}
	v1 := v2
	if s == api.TargetStopped {
		v1 = "PAUSED"
	}
	b, _ := json.Marshal(map[string]any{"state": v1, "state.v2": v2})
	return b
}

func restartValue(includeTasks, onlyFailed bool) []byte {
	b, _ := json.Marshal(map[string]any{"include-tasks": includeTasks, "only-failed": onlyFailed})
	return b
}

// restartRequest is a restart-connector-<name> record.
type restartRequest struct {
	connector    string
	includeTasks bool
	onlyFailed   bool
}

// apply folds one config topic record into the state; it answers a
// restart request when the record is one (restarts are events, not state).
func (s *configState) apply(offset int64, key string, value []byte) (*restartRequest, error) {
	s.offset = offset + 1
	var v map[string]any
	if value != nil {
		if err := json.Unmarshal(value, &v); err != nil {
			return nil, fmt.Errorf("config topic record %s at %d: %w", key, offset, err)
		}
	}
	switch {
	case strings.HasPrefix(key, connectorPrefix):
		name := strings.TrimPrefix(key, connectorPrefix)
		if value == nil {
			delete(s.connectors, name)
			delete(s.targets, name)
			delete(s.tasks, name)
			delete(s.pending, name)
			return nil, nil
		}
		s.connectors[name] = stringMap(v["properties"])
		if _, ok := s.targets[name]; !ok {
			s.targets[name] = api.TargetRunning
		}
	case strings.HasPrefix(key, targetStatePrefix):
		name := strings.TrimPrefix(key, targetStatePrefix)
		if value == nil {
			delete(s.targets, name)
			return nil, nil
		}
		state, _ := v["state.v2"].(string)
		if state == "" {
			state, _ = v["state"].(string)
		}
		switch state {
		case "STARTED":
			s.targets[name] = api.TargetRunning
		case "PAUSED":
			s.targets[name] = api.TargetPaused
		case "STOPPED":
			s.targets[name] = api.TargetStopped
		}
	case strings.HasPrefix(key, commitPrefix):
		name := strings.TrimPrefix(key, commitPrefix)
		n, _ := v["tasks"].(float64)
		p := s.pending[name]
		tasks := make([]map[string]string, 0, int(n))
		for i := 0; i < int(n); i++ {
			cfg, ok := p[i]
			if !ok {
				// Kafka marks such a connector inconsistent and waits for a
				// complete set; keeping the committed configs does the same.
				return nil, nil
			}
			tasks = append(tasks, cfg)
		}
		s.tasks[name] = tasks
		delete(s.pending, name)
	case strings.HasPrefix(key, taskPrefix):
		rest := strings.TrimPrefix(key, taskPrefix)
		i := strings.LastIndexByte(rest, '-')
		if i < 0 {
			return nil, nil
		}
		n, err := strconv.Atoi(rest[i+1:])
		if err != nil {
			return nil, nil
		}
		name := rest[:i]
		if value == nil {
			return nil, nil
		}
		if s.pending[name] == nil {
			s.pending[name] = map[int]map[string]string{}
		}
		s.pending[name][n] = stringMap(v["properties"])
	case strings.HasPrefix(key, restartPrefix):
		if value == nil {
			return nil, nil
		}
		r := &restartRequest{connector: strings.TrimPrefix(key, restartPrefix)}
		r.includeTasks, _ = v["include-tasks"].(bool)
		r.onlyFailed, _ = v["only-failed"].(bool)
		return r, nil
	case strings.HasPrefix(key, fencingPrefix):
		if n, ok := v["task-count"].(float64); ok {
			s.taskCounts[strings.TrimPrefix(key, fencingPrefix)] = int(n)
		}
	}
	return nil, nil
}

func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, x := range m {
		if s, ok := x.(string); ok {
			out[k] = s
		}
	}
	return out
}

// snapshot copies what the assignment needs: connectors and task IDs.
func (s *configState) work() (connectors []string, tasks []api.TaskID) {
	connectors = slices.Sorted(maps.Keys(s.connectors))
	for _, c := range connectors {
		for i := range s.tasks[c] {
			tasks = append(tasks, api.TaskID{Connector: c, Task: i})
		}
	}
	return connectors, tasks
}

// taskIDs are a connector's committed tasks.
func (s *configState) taskIDs(name string) []api.TaskID {
	out := make([]api.TaskID, len(s.tasks[name]))
	for i := range out {
		out[i] = api.TaskID{Connector: name, Task: i}
	}
	return out
}
