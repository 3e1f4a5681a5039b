package connectdiff

// The sequence of REST calls both workers answer, in order. Bodies name
// the run's directory and topic as $DIR and $TOPIC (each worker has its
// own); awaits wait for an asynchronous change (a pause, a stop) before the
// next call and are not recorded.

// step is one call, or (await != nil) one wait.
type step struct {
	name   string
	method string
	path   string
	body   string
	// contentType is the request's Content-Type: application/json when
	// there is a body, unless set ("-" sends none).
	contentType string
	// compare says how far the two workers' answers must agree.
	compare compareMode
	await   *await
}

type compareMode int

const (
	// compareAll: status and normalised body.
	compareAll compareMode = iota
	// compareStatus: status, and for errors error_code; the message is a
	// JVM's or Jackson's own text (a parse error, a class loader's list).
	compareStatus
	// compareShape: status and the body's JSON kind (the loggers a PUT
	// changed name each worker's own loggers).
	compareShape
)

func (m compareMode) String() string {
	return [...]string{"all", "status", "shape"}[m]
}

// await polls GET /connectors/{connector}/status until the connector is in
// state with tasks tasks, each in taskState; or, with path set, until GET
// path answers a body containing contains and not containing lacks.
type await struct {
	connector string
	state     string
	tasks     int
	taskState string
	path      string
	contains  string
	lacks     string
}

const (
	srcConfig    = `{"connector.class":"FileStreamSource","tasks.max":"1","file":"$DIR/in.txt","topic":"$TOPIC"}`
	src2Config   = `{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","tasks.max":"1","file":"$DIR/in2.txt","topic":"$TOPIC"}`
	sinkConfig   = `{"connector.class":"FileStreamSink","tasks.max":"1","file":"$DIR/out.txt","topics":"$TOPIC"}`
	sourceOffset = `{"offsets":[{"partition":{"filename":"$DIR/in.txt"},"offset":{"position":2}}]}`
	sinkOffset   = `{"offsets":[{"partition":{"kafka_topic":"$TOPIC","kafka_partition":0},"offset":{"kafka_offset":1}}]}`
)

func running(c string, tasks int) *await {
	return &await{connector: c, state: "RUNNING", tasks: tasks, taskState: "RUNNING"}
}

var sequence = []step{
	{name: "root", method: "GET", path: "/"},
	{name: "health", method: "GET", path: "/health"},
	{name: "list-empty", method: "GET", path: "/connectors"},

	// Creation.
	{name: "create-src", method: "POST", path: "/connectors", body: `{"name":"src","config":` + srcConfig + `}`},
	{name: "create-src-again", method: "POST", path: "/connectors", body: `{"name":"src","config":` + srcConfig + `}`},
	{name: "create-name-mismatch", method: "POST", path: "/connectors", body: `{"name":"a","config":{"name":"b","connector.class":"FileStreamSource","topic":"$TOPIC"}}`},
	{name: "create-no-class", method: "POST", path: "/connectors", body: `{"name":"a","config":{}}`},
	{name: "create-invalid", method: "POST", path: "/connectors", body: `{"name":"bad","config":{"connector.class":"FileStreamSource","tasks.max":"x"}}`},
	{name: "create-no-content-type", method: "POST", path: "/connectors", body: `{"name":"a","config":{}}`, contentType: "-"},
	{name: "create-form-content-type", method: "POST", path: "/connectors", body: `{"name":"a","config":{}}`, contentType: "application/x-www-form-urlencoded"},
	{name: "create-bad-json", method: "POST", path: "/connectors", body: `{bad`, compare: compareStatus},
	{name: "create-unknown-field", method: "POST", path: "/connectors", body: `{"name":"a","config":{},"extra":1}`, compare: compareStatus},
	{name: "create-bad-initial-state", method: "POST", path: "/connectors", body: `{"name":"a","config":{},"initial_state":"BOGUS"}`, compare: compareStatus},
	{name: "create-sink-paused", method: "POST", path: "/connectors", body: `{"name":"snk","config":` + sinkConfig + `,"initial_state":"PAUSED"}`},
	{name: "await-src-running", await: running("src", 1)},
	{name: "await-snk-paused", await: &await{connector: "snk", state: "PAUSED", tasks: 0}},

	// Reading.
	{name: "list", method: "GET", path: "/connectors"},
	{name: "list-trailing-slash", method: "GET", path: "/connectors/"},
	{name: "list-expand-status", method: "GET", path: "/connectors?expand=status"},
	{name: "list-expand-info", method: "GET", path: "/connectors?expand=info"},
	{name: "list-expand-both", method: "GET", path: "/connectors?expand=status&expand=info"},
	{name: "list-expand-unknown", method: "GET", path: "/connectors?expand=bogus"},
	{name: "get-src", method: "GET", path: "/connectors/src"},
	{name: "config-src", method: "GET", path: "/connectors/src/config"},
	{name: "status-src", method: "GET", path: "/connectors/src/status"},
	{name: "status-snk", method: "GET", path: "/connectors/snk/status"},
	{name: "tasks-src", method: "GET", path: "/connectors/src/tasks"},
	{name: "task-status-src", method: "GET", path: "/connectors/src/tasks/0/status"},
	{name: "task-status-missing", method: "GET", path: "/connectors/src/tasks/7/status"},
	{name: "task-status-not-a-number", method: "GET", path: "/connectors/src/tasks/abc/status"},
	{name: "tasks-config-removed", method: "GET", path: "/connectors/src/tasks-config"},

	// Validation.
	{name: "validate-good", method: "PUT", path: "/connector-plugins/FileStreamSource/config/validate", body: `{"connector.class":"FileStreamSource","tasks.max":"1","topic":"t","name":"v"}`},
	{name: "validate-bad", method: "PUT", path: "/connector-plugins/FileStreamSourceConnector/config/validate", body: `{"connector.class":"FileStreamSource","tasks.max":"0","name":"v"}`},
	{name: "validate-mismatch", method: "PUT", path: "/connector-plugins/FileStreamSource/config/validate", body: `{"connector.class":"FileStreamSink"}`},

	// Configs: PUT replaces (200) or creates (201), PATCH merges.
	{name: "put-config-update", method: "PUT", path: "/connectors/src/config", body: `{"connector.class":"FileStreamSource","tasks.max":"1","file":"$DIR/in.txt","topic":"$TOPIC","batch.size":"100"}`},
	{name: "put-config-create", method: "PUT", path: "/connectors/src2/config", body: src2Config},
	{name: "put-config-name-mismatch", method: "PUT", path: "/connectors/src2/config", body: `{"name":"other","connector.class":"FileStreamSource"}`},
	{name: "put-config-object-value", method: "PUT", path: "/connectors/src2/config", body: `{"connector.class":"FileStreamSource","x":{"a":1}}`, compare: compareStatus},
	{name: "patch-config", method: "PATCH", path: "/connectors/src2/config", body: `{"batch.size":"50","file":null}`},
	{name: "patch-config-missing", method: "PATCH", path: "/connectors/nope/config", body: `{"a":"b"}`},
	{name: "config-src2", method: "GET", path: "/connectors/src2/config"},
	{name: "delete-src2", method: "DELETE", path: "/connectors/src2"},
	{name: "await-src-running-updated", await: running("src", 1)},

	// Target states and restarts.
	{name: "pause-src", method: "PUT", path: "/connectors/src/pause"},
	{name: "await-src-paused", await: &await{connector: "src", state: "PAUSED", tasks: 1, taskState: "PAUSED"}},
	{name: "status-src-paused", method: "GET", path: "/connectors/src/status"},
	{name: "resume-src", method: "PUT", path: "/connectors/src/resume"},
	{name: "await-src-resumed", await: running("src", 1)},
	{name: "restart-src", method: "POST", path: "/connectors/src/restart"},
	{name: "await-src-restarted", await: running("src", 1)},
	{name: "restart-src-tasks", method: "POST", path: "/connectors/src/restart?includeTasks=true"},
	{name: "await-src-restarted-tasks", await: running("src", 1)},
	{name: "restart-src-only-failed", method: "POST", path: "/connectors/src/restart?includeTasks=true&onlyFailed=true"},
	{name: "restart-src-not-true", method: "POST", path: "/connectors/src/restart?includeTasks=yes"},
	{name: "await-src-restarted-again", await: running("src", 1)},
	{name: "restart-task", method: "POST", path: "/connectors/src/tasks/0/restart"},
	{name: "restart-task-missing", method: "POST", path: "/connectors/src/tasks/7/restart"},
	{name: "await-src-task-restarted", await: running("src", 1)},

	// Active topics (KIP-558).
	{name: "await-src-topics", await: &await{path: "/connectors/src/topics", contains: "$TOPIC"}},
	{name: "topics-src", method: "GET", path: "/connectors/src/topics"},
	{name: "topics-reset", method: "PUT", path: "/connectors/src/topics/reset"},
	{name: "topics-unknown", method: "GET", path: "/connectors/nope/topics"},

	// Offsets (KIP-875): altered and reset only when stopped.
	{name: "await-src-offsets", await: &await{path: "/connectors/src/offsets", contains: `"position"`}},
	{name: "offsets-src-running", method: "GET", path: "/connectors/src/offsets"},
	{name: "alter-offsets-running", method: "PATCH", path: "/connectors/src/offsets", body: sourceOffset},
	{name: "reset-offsets-running", method: "DELETE", path: "/connectors/src/offsets"},
	{name: "stop-src", method: "PUT", path: "/connectors/src/stop"},
	{name: "await-src-stopped", await: &await{connector: "src", state: "STOPPED", tasks: 0}},
	{name: "status-src-stopped", method: "GET", path: "/connectors/src/status"},
	{name: "alter-offsets-src", method: "PATCH", path: "/connectors/src/offsets", body: sourceOffset},
	{name: "offsets-src-altered", method: "GET", path: "/connectors/src/offsets"},
	{name: "alter-offsets-empty", method: "PATCH", path: "/connectors/src/offsets", body: `{"offsets":[]}`},
	{name: "alter-offsets-no-offsets", method: "PATCH", path: "/connectors/src/offsets", body: `{}`},
	{name: "reset-offsets-src", method: "DELETE", path: "/connectors/src/offsets"},
	// Kafka's worker reads which partitions a connector has from its offsets
	// topic consumer without reading to the end first, and each partition's
	// offset after it has: a GET soon after a reset can list the partition
	// with "offset":null until that consumer has read the tombstone.
	{name: "await-src-offsets-reset", await: &await{path: "/connectors/src/offsets", lacks: `"offset":null`}},
	{name: "offsets-src-reset", method: "GET", path: "/connectors/src/offsets"},
	{name: "stop-snk", method: "PUT", path: "/connectors/snk/stop"},
	{name: "await-snk-stopped", await: &await{connector: "snk", state: "STOPPED", tasks: 0}},
	{name: "alter-offsets-snk", method: "PATCH", path: "/connectors/snk/offsets", body: sinkOffset},
	{name: "offsets-snk-altered", method: "GET", path: "/connectors/snk/offsets"},
	{name: "reset-offsets-snk", method: "DELETE", path: "/connectors/snk/offsets"},
	{name: "offsets-snk-reset", method: "GET", path: "/connectors/snk/offsets"},
	{name: "resume-snk", method: "PUT", path: "/connectors/snk/resume"},
	{name: "await-snk-running", await: running("snk", 1)},

	// Plugins.
	{name: "plugins", method: "GET", path: "/connector-plugins"},
	{name: "plugins-all", method: "GET", path: "/connector-plugins?connectorsOnly=false"},
	{name: "plugin-config-source", method: "GET", path: "/connector-plugins/FileStreamSource/config"},
	{name: "plugin-config-sink", method: "GET", path: "/connector-plugins/org.apache.kafka.connect.file.FileStreamSinkConnector/config"},
	{name: "plugin-config-unknown", method: "GET", path: "/connector-plugins/Nope/config"},

	// Loggers (worker scope).
	{name: "loggers", method: "GET", path: "/admin/loggers"},
	{name: "logger-root", method: "GET", path: "/admin/loggers/root"},
	{name: "logger-set", method: "PUT", path: "/admin/loggers/org.apache.kafka.connect.file", body: `{"level":"DEBUG"}`, compare: compareShape},
	{name: "logger-get", method: "GET", path: "/admin/loggers/org.apache.kafka.connect.file"},
	{name: "logger-set-again", method: "PUT", path: "/admin/loggers/org.apache.kafka.connect.file", body: `{"level":"debug"}`},
	{name: "logger-bad-level", method: "PUT", path: "/admin/loggers/org.apache.kafka.connect.file", body: `{"level":"bogus"}`},
	{name: "logger-no-level", method: "PUT", path: "/admin/loggers/org.apache.kafka.connect.file", body: `{}`},
	{name: "logger-unknown", method: "GET", path: "/admin/loggers/no.such.logger"},

	// Unknown connectors and tasks.
	{name: "get-unknown", method: "GET", path: "/connectors/nope"},
	{name: "config-unknown", method: "GET", path: "/connectors/nope/config"},
	{name: "status-unknown", method: "GET", path: "/connectors/nope/status"},
	{name: "tasks-unknown", method: "GET", path: "/connectors/nope/tasks"},
	{name: "task-status-unknown", method: "GET", path: "/connectors/nope/tasks/0/status"},
	{name: "offsets-unknown", method: "GET", path: "/connectors/nope/offsets"},
	{name: "pause-unknown", method: "PUT", path: "/connectors/nope/pause"},
	{name: "resume-unknown", method: "PUT", path: "/connectors/nope/resume"},
	{name: "stop-unknown", method: "PUT", path: "/connectors/nope/stop"},
	{name: "restart-unknown", method: "POST", path: "/connectors/nope/restart"},
	{name: "restart-unknown-tasks", method: "POST", path: "/connectors/nope/restart?includeTasks=true"},
	{name: "restart-task-unknown", method: "POST", path: "/connectors/nope/tasks/0/restart"},
	{name: "delete-unknown", method: "DELETE", path: "/connectors/nope"},
	{name: "unknown-route", method: "GET", path: "/nope"},
	{name: "method-not-allowed", method: "DELETE", path: "/connectors"},

	// Deletion.
	{name: "delete-snk", method: "DELETE", path: "/connectors/snk"},
	{name: "delete-src", method: "DELETE", path: "/connectors/src"},
	{name: "delete-src-again", method: "DELETE", path: "/connectors/src"},
	{name: "get-deleted", method: "GET", path: "/connectors/src"},
	{name: "list-final", method: "GET", path: "/connectors"},
}
