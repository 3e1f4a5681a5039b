package connectrt

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// status is one connector's or task's state as a worker reported it
// (Kafka's ConnectorStatus/TaskStatus).
type status struct {
	State      string  `json:"state"`
	Trace      *string `json:"trace"`
	WorkerID   string  `json:"worker_id"`
	Generation int32   `json:"generation"`
	// Version is the connector plugin's version (KIP-891).
	Version string `json:"version,omitempty"`
}

// topicStatus is KIP-558's record that a connector used a topic.
type topicStatus struct {
	Name              string `json:"name"`
	Connector         string `json:"connector"`
	Task              int    `json:"task"`
	DiscoverTimestamp int64  `json:"discoverTimestamp"`
}

const (
	connectorStatusPrefix = "status-connector-"
	taskStatusPrefix      = "status-task-"
	topicStatusPrefix     = "status-topic-"
	topicStatusSeparator  = ":connector-"
)

// statusStore keeps the statuses every worker reports; in distributed mode
// it is the status topic read by every worker, in standalone memory.
type statusStore struct {
	mu         sync.Mutex
	connectors map[string]status
	tasks      map[api.TaskID]status
	topics     map[string]map[string]topicStatus // connector -> topic
	log        *kafkaLog                         // nil in standalone mode
}

func newStatusStore() *statusStore {
	return &statusStore{connectors: map[string]status{}, tasks: map[api.TaskID]status{}, topics: map[string]map[string]topicStatus{}}
}

// apply folds a status topic record in.
func (s *statusStore) apply(r *kgo.Record) {
	key := string(r.Key)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case strings.HasPrefix(key, connectorStatusPrefix):
		name := strings.TrimPrefix(key, connectorStatusPrefix)
		if r.Value == nil {
			delete(s.connectors, name)
			return
		}
		var st status
		if json.Unmarshal(r.Value, &st) == nil {
			s.connectors[name] = st
		}
	case strings.HasPrefix(key, taskStatusPrefix):
		rest := strings.TrimPrefix(key, taskStatusPrefix)
		i := strings.LastIndexByte(rest, '-')
		n, err := strconv.Atoi(rest[i+1:])
		if i < 0 || err != nil {
			return
		}
		id := api.TaskID{Connector: rest[:i], Task: n}
		if r.Value == nil {
			delete(s.tasks, id)
			return
		}
		var st status
		if json.Unmarshal(r.Value, &st) == nil {
			s.tasks[id] = st
		}
	case strings.HasPrefix(key, topicStatusPrefix):
		rest := strings.TrimPrefix(key, topicStatusPrefix)
		i := strings.Index(rest, topicStatusSeparator)
		if i < 0 {
			return
		}
		topic, conn := rest[:i], rest[i+len(topicStatusSeparator):]
		if r.Value == nil {
			delete(s.topics[conn], topic)
			return
		}
		var v struct {
			Topic topicStatus `json:"topic"`
		}
		if json.Unmarshal(r.Value, &v) == nil {
			if s.topics[conn] == nil {
				s.topics[conn] = map[string]topicStatus{}
			}
			s.topics[conn][topic] = v.Topic
		}
	}
}

// put writes a status record (and applies it at once in standalone mode).
func (s *statusStore) put(ctx context.Context, key string, value []byte) error {
	if s.log == nil {
		s.apply(&kgo.Record{Key: []byte(key), Value: value})
		return nil
	}
	return s.log.send(ctx, []byte(key), value)
}

func (s *statusStore) putConnector(ctx context.Context, name string, st status) error {
	v, _ := json.Marshal(st)
	return s.put(ctx, connectorStatusPrefix+name, v)
}

func (s *statusStore) putTask(ctx context.Context, id api.TaskID, st status) error {
	v, _ := json.Marshal(st)
	return s.put(ctx, fmt.Sprintf("%s%s-%d", taskStatusPrefix, id.Connector, id.Task), v)
}

func (s *statusStore) deleteConnector(ctx context.Context, name string, tasks int) error {
	if err := s.put(ctx, connectorStatusPrefix+name, nil); err != nil {
		return err
	}
	s.mu.Lock()
	var ids []api.TaskID
	for id := range s.tasks {
		if id.Connector == name {
			ids = append(ids, id)
		}
	}
	s.mu.Unlock()
	for _, id := range ids {
		if err := s.put(ctx, fmt.Sprintf("%s%s-%d", taskStatusPrefix, id.Connector, id.Task), nil); err != nil {
			return err
		}
	}
	return nil
}

// putTopic records that a connector's task used a topic, once per topic.
func (s *statusStore) putTopic(ctx context.Context, conn string, task int, topic string) error {
	s.mu.Lock()
	_, known := s.topics[conn][topic]
	s.mu.Unlock()
	if known {
		return nil
	}
	ts := topicStatus{Name: topic, Connector: conn, Task: task, DiscoverTimestamp: time.Now().UnixMilli()}
	v, _ := json.Marshal(map[string]any{"topic": ts})
	if s.log == nil {
		s.apply(&kgo.Record{Key: []byte(topicStatusPrefix + topic + topicStatusSeparator + conn), Value: v})
		return nil
	}
	// Remember it before the write lands, so a busy task writes it once.
	s.mu.Lock()
	if s.topics[conn] == nil {
		s.topics[conn] = map[string]topicStatus{}
	}
	s.topics[conn][topic] = ts
	s.mu.Unlock()
	return s.log.send(ctx, []byte(topicStatusPrefix+topic+topicStatusSeparator+conn), v)
}

func (s *statusStore) activeTopics(conn string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.topics[conn]))
}

func (s *statusStore) resetTopics(ctx context.Context, conn string) error {
	for _, t := range s.activeTopics(conn) {
		if err := s.put(ctx, topicStatusPrefix+t+topicStatusSeparator+conn, nil); err != nil {
			return err
		}
		s.mu.Lock()
		delete(s.topics[conn], t)
		s.mu.Unlock()
	}
	return nil
}

func (s *statusStore) connector(name string) (status, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.connectors[name]
	return st, ok
}

func (s *statusStore) task(id api.TaskID) (status, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.tasks[id]
	return st, ok
}
