package api

import (
	"context"
	"errors"
	"fmt"
)

// Herder is what the REST layer asks. A distributed herder that is not the
// leader answers writes with *NotLeaderError, and the REST layer forwards the
// request to the leader's URL, as Kafka's workers do.
type Herder interface {
	ServerInfo(ctx context.Context) (ServerInfo, error)

	Connectors(ctx context.Context) ([]string, error)
	ConnectorInfo(ctx context.Context, name string) (ConnectorInfo, error)
	ConnectorConfig(ctx context.Context, name string) (map[string]string, error)
	// PutConnectorConfig creates (allowReplace false: 409 when it exists) or
	// creates-or-replaces the connector; created says which happened. An
	// initial of "" is Kafka's default, RUNNING (PUT .../config gives none).
	PutConnectorConfig(ctx context.Context, name string, config map[string]string, allowReplace bool, initial TargetState) (info ConnectorInfo, created bool, err error)
	// PatchConnectorConfig merges patch into the config; a nil value removes
	// the key (KIP-477).
	PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (ConnectorInfo, error)
	DeleteConnector(ctx context.Context, name string) error

	ConnectorStatus(ctx context.Context, name string) (ConnectorStateInfo, error)
	TaskConfigs(ctx context.Context, name string) ([]TaskInfo, error)
	TaskStatus(ctx context.Context, id TaskID) (TaskState, error)

	// RestartConnector restarts the connector, and its tasks as the flags
	// say (KIP-745). It returns nil state for a plain restart (Kafka answers
	// 204) and the status after the restart request otherwise (202).
	RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*ConnectorStateInfo, error)
	RestartTask(ctx context.Context, id TaskID) error
	PauseConnector(ctx context.Context, name string) error
	ResumeConnector(ctx context.Context, name string) error
	StopConnector(ctx context.Context, name string) error

	// Offsets are the connector's committed offsets (KIP-875).
	Offsets(ctx context.Context, name string) (ConnectorOffsets, error)
	AlterOffsets(ctx context.Context, name string, offsets ConnectorOffsets) (Message, error)
	ResetOffsets(ctx context.Context, name string) (Message, error)

	// ActiveTopics and ResetActiveTopics are KIP-558's topic tracking.
	ActiveTopics(ctx context.Context, name string) ([]string, error)
	ResetActiveTopics(ctx context.Context, name string) error

	Plugins(ctx context.Context, connectorsOnly bool) ([]PluginInfo, error)
	PluginConfig(ctx context.Context, plugin string) ([]ConfigKeyInfo, error)
	// ValidateConfig validates config's connector.class, as Kafka's herder
	// does; plugin is the path's name, already checked against it.
	ValidateConfig(ctx context.Context, plugin string, config map[string]string) (ConfigInfos, error)

	// HealthCheck returns once the herder's own loop has answered a no-op
	// request (KIP-1017's GET /health), or ctx's error when it did not in
	// time; Ready says whether the herder has finished starting, which
	// tells a worker still starting (503) from a stuck one (500).
	HealthCheck(ctx context.Context) error
	Ready() bool
}

// TargetState is what a connector is asked to be (KIP-875, KIP-980).
type TargetState string

const (
	TargetRunning TargetState = "RUNNING"
	TargetPaused  TargetState = "PAUSED"
	TargetStopped TargetState = "STOPPED"
)

// ServerInfo is GET /.
type ServerInfo struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	KafkaClusterID string `json:"kafka_cluster_id"`
}

// TaskID names a task: its connector and number.
type TaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

func (t TaskID) String() string { return fmt.Sprintf("%s-%d", t.Connector, t.Task) }

// ConnectorType is "source", "sink" or "unknown".
type ConnectorType string

const (
	TypeSource  ConnectorType = "source"
	TypeSink    ConnectorType = "sink"
	TypeUnknown ConnectorType = "unknown"
)

// ConnectorInfo is a connector's config and tasks.
type ConnectorInfo struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []TaskID          `json:"tasks"`
	Type   ConnectorType     `json:"type"`
}

// TaskInfo is a task's config.
type TaskInfo struct {
	ID     TaskID            `json:"id"`
	Config map[string]string `json:"config"`
}

// State values of connectors and tasks.
const (
	StateUnassigned = "UNASSIGNED"
	StateRunning    = "RUNNING"
	StatePaused     = "PAUSED"
	StateStopped    = "STOPPED"
	StateFailed     = "FAILED"
	StateRestarting = "RESTARTING"
)

// ConnectorState is the connector's part of a status.
type ConnectorState struct {
	State    string `json:"state"`
	Trace    string `json:"trace,omitempty"`
	WorkerID string `json:"worker_id"`
	Version  string `json:"version,omitempty"`
}

// TaskState is one task's status.
type TaskState struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	Trace    string `json:"trace,omitempty"`
	WorkerID string `json:"worker_id"`
	Version  string `json:"version,omitempty"`
}

// ConnectorStateInfo is GET /connectors/{c}/status.
type ConnectorStateInfo struct {
	Name      string         `json:"name"`
	Connector ConnectorState `json:"connector"`
	Tasks     []TaskState    `json:"tasks"`
	Type      ConnectorType  `json:"type"`
}

// ConnectorOffset is one source partition's offset, or for sinks
// {"kafka_topic","kafka_partition"} and {"kafka_offset"}; Offset nil resets.
type ConnectorOffset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// ConnectorOffsets is GET/PATCH /connectors/{c}/offsets.
type ConnectorOffsets struct {
	Offsets []ConnectorOffset `json:"offsets"`
}

// Message is the {"message": ...} answer of offsets alter and reset.
type Message struct {
	Message string `json:"message"`
}

// PluginInfo is one entry of /connector-plugins.
type PluginInfo struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version,omitempty"`
}

// ConfigKeyInfo is a config's definition as Kafka shows it.
type ConfigKeyInfo struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation string   `json:"documentation"`
	Group         *string  `json:"group"`
	OrderInGroup  int      `json:"order_in_group"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
}

// ConfigValueInfo is a config's value and errors in a validation.
type ConfigValueInfo struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

// ConfigInfo pairs a definition and a value.
type ConfigInfo struct {
	Definition ConfigKeyInfo   `json:"definition"`
	Value      ConfigValueInfo `json:"value"`
}

// ConfigInfos is PUT /connector-plugins/{p}/config/validate.
type ConfigInfos struct {
	Name       string       `json:"name"`
	ErrorCount int          `json:"error_count"`
	Groups     []string     `json:"groups"`
	Configs    []ConfigInfo `json:"configs"`
}

// Error is an error with the HTTP status and Kafka's error_code the REST
// layer answers (the code is the status, as Kafka's ConnectRestException).
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }

// NotFound, Conflict and BadRequest are the common errors.
func NotFound(format string, args ...any) error {
	return &Error{Status: 404, Message: fmt.Sprintf(format, args...)}
}

func Conflict(format string, args ...any) error {
	return &Error{Status: 409, Message: fmt.Sprintf(format, args...)}
}

func BadRequest(format string, args ...any) error {
	return &Error{Status: 400, Message: fmt.Sprintf(format, args...)}
}

// NotLeaderError says the request must go to the leader (Kafka's
// NotLeaderException); LeaderURL is empty while no leader is known.
type NotLeaderError struct {
	Op        string
	LeaderURL string
}

func (e *NotLeaderError) Error() string {
	return fmt.Sprintf("Cannot complete request because of a conflicting operation (e.g. worker rebalance)")
}

// ErrRebalancing answers writes while the group rebalances (Kafka's 409).
var ErrRebalancing = &Error{Status: 409, Message: "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"}

// IsNotLeader finds a *NotLeaderError in err.
func IsNotLeader(err error) (*NotLeaderError, bool) {
	var nl *NotLeaderError
	ok := errors.As(err, &nl)
	return nl, ok
}
