package rest

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// TestRequestTimeout: a herder that does not answer within the request
// timeout makes a 500 "Request timed out", as Kafka's.
func TestRequestTimeout(t *testing.T) {
	h := newMemHerder("w")
	h.block = true
	srv := newTestServer(t, h, func(c *Config) { c.RequestTimeout = 50 * time.Millisecond })
	start := time.Now()
	status, body := do(t, "POST", srv.URL+"/connectors", fileSource)
	assertError(t, status, body, http.StatusInternalServerError, msgTimedOut)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the timeout took %v", took)
	}
	status, body = do(t, "GET", srv.URL+"/", "")
	assertError(t, status, body, http.StatusInternalServerError, msgTimedOut)
}

func TestDefaults(t *testing.T) {
	s, err := New(Config{Herder: newMemHerder("w"), Loggers: NewLevelVars(0)})
	if err != nil {
		t.Fatal(err)
	}
	if s.cfg.RequestTimeout != 90*time.Second || s.cfg.HealthCheckTimeout != 10*time.Second {
		t.Errorf("timeouts %v and %v; Kafka's are 90s and 10s", s.cfg.RequestTimeout, s.cfg.HealthCheckTimeout)
	}
	if _, err := New(Config{Loggers: NewLevelVars(0)}); err == nil {
		t.Error("New took a config without a herder")
	}
	if _, err := New(Config{Herder: newMemHerder("w")}); err == nil {
		t.Error("New took a config without loggers")
	}
}

// TestHealth: 200 when the herder's loop answers; past the health check
// timeout 503 "starting" while it starts, 500 "unhealthy" after.
func TestHealth(t *testing.T) {
	for _, tc := range []struct {
		name         string
		block, ready bool
		status       int
		want         workerStatus
	}{
		{"healthy", false, true, http.StatusOK, statusHealthy},
		{"starting", true, false, http.StatusServiceUnavailable, statusStarting},
		{"unhealthy", true, true, http.StatusInternalServerError, statusUnhealthy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newMemHerder("w")
			h.block, h.ready = tc.block, tc.ready
			srv := newTestServer(t, h, func(c *Config) { c.HealthCheckTimeout = 20 * time.Millisecond })
			status, body := do(t, "GET", srv.URL+"/health", "")
			var got workerStatus
			if err := json.Unmarshal([]byte(body), &got); err != nil || status != tc.status || got != tc.want {
				t.Errorf("got %d %s; want %d %+v", status, body, tc.status, tc.want)
			}
		})
	}
}

// TestTopicTrackingDisabled: topic.tracking.enable=false and
// topic.tracking.allow.reset=false answer Kafka's 403s.
func TestTopicTrackingDisabled(t *testing.T) {
	h := newMemHerder("w")
	off := newTestServer(t, h, func(c *Config) { c.TopicTrackingDisabled = true })
	status, body := do(t, "GET", off.URL+"/connectors/c/topics", "")
	assertError(t, status, body, http.StatusForbidden, "Topic tracking is disabled.")
	status, body = do(t, "PUT", off.URL+"/connectors/c/topics/reset", "")
	assertError(t, status, body, http.StatusForbidden, "Topic tracking is disabled.")
	noReset := newTestServer(t, h, func(c *Config) { c.TopicTrackingResetDisabled = true })
	status, body = do(t, "PUT", noReset.URL+"/connectors/c/topics/reset", "")
	assertError(t, status, body, http.StatusForbidden, "Topic tracking reset is disabled.")
	if status, _ := do(t, "GET", noReset.URL+"/connectors/c/topics", ""); status != http.StatusOK {
		t.Errorf("topics with only the reset disabled: %d", status)
	}
}

// TestBodies: what is refused before the herder is asked.
func TestBodies(t *testing.T) {
	h := newMemHerder("w")
	srv := newTestServer(t, h, func(c *Config) { c.MaxBody = 64 })
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		message                  string
	}{
		{"too large", "POST", "/connectors", `{"name":"a","config":{"x":"` + strings.Repeat("y", 100) + `"}}`, 413, "HTTP 413 Request Entity Too Large"},
		{"empty", "POST", "/connectors", " ", 500, "The request body is empty; a JSON value is required"},
		{"null config", "POST", "/connectors", `{"name":"a"}`, 500, "The request body is null; a JSON object is required"},
		{"two values", "PUT", "/connectors/a/config", `{} {}`, 500, "Cannot parse the request body: more than one JSON value"},
		{"array value", "PATCH", "/connectors/a/config", `{"x":[1]}`, 500, `Cannot parse the request body: the value of "x" must be a string, not an array`},
		{"null patch", "PATCH", "/connectors/a/config", `null`, 500, "The request body is null; a JSON object is required"},
		{"initial state", "POST", "/connectors", `{"name":"a","config":{},"initial_state":"paused"}`, 500, `Cannot parse the request body: initial_state "paused" is not one of RUNNING, PAUSED, STOPPED`},
		{"level not a string", "PUT", "/admin/loggers/a", `{"level":{}}`, 500, `Cannot parse the request body: the value of "level" must be a string, not an object`},
	} {
		status, body := do(t, tc.method, srv.URL+tc.path, tc.body)
		var e errorMessage
		json.Unmarshal([]byte(body), &e)
		if status != tc.status || e.Message != tc.message {
			t.Errorf("%s: got %d %s; want %d %q", tc.name, status, body, tc.status, tc.message)
		}
	}
	if calls := h.writes(); len(calls) != 0 {
		t.Errorf("the herder was asked: %v", calls)
	}
}

// TestConfigValues: numbers and booleans in a config become their JSON
// text, as Jackson reads them into a Map<String,String>; nulls are unset.
func TestConfigValues(t *testing.T) {
	h := newMemHerder("w")
	srv := newTestServer(t, h)
	status, body := do(t, "POST", srv.URL+"/connectors",
		`{"name":" c ","config":{"connector.class":"FileStreamSource","tasks.max":1,"batch.size":2.5,"x":true,"file":null},"initial_state":"STOPPED"}`)
	if status != http.StatusCreated {
		t.Fatalf("%d %s", status, body)
	}
	config, _ := h.ConnectorConfig(t.Context(), "c")
	want := map[string]string{"connector.class": "FileStreamSource", "tasks.max": "1", "batch.size": "2.5", "x": "true", "name": "c"}
	if len(config) != len(want) {
		t.Errorf("config %v; want %v", config, want)
	}
	for k, v := range want {
		if config[k] != v {
			t.Errorf("config[%q] = %q; want %q", k, config[k], v)
		}
	}
	if st, _ := h.ConnectorStatus(t.Context(), "c"); st.Connector.State != api.StateStopped {
		t.Errorf("initial_state STOPPED gave %s", st.Connector.State)
	}
}

// TestOffsetNumbers: an offset past 2^53 reaches the herder whole.
func TestOffsetNumbers(t *testing.T) {
	h := newMemHerder("w")
	srv := newTestServer(t, h)
	do(t, "POST", srv.URL+"/connectors", `{"name":"c","config":{"connector.class":"FileStreamSink","topics":"t"},"initial_state":"STOPPED"}`)
	status, body := do(t, "PATCH", srv.URL+"/connectors/c/offsets",
		`{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":9007199254740993}}]}`)
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, body)
	}
	got, _ := h.Offsets(t.Context(), "c")
	if v, ok := got.Offsets[0].Offset["kafka_offset"].(int64); !ok || v != 9007199254740993 {
		t.Errorf("offset %#v", got.Offsets[0].Offset["kafka_offset"])
	}
	if v, ok := got.Offsets[0].Partition["kafka_partition"].(int64); !ok || v != 0 {
		t.Errorf("partition %#v", got.Offsets[0].Partition["kafka_partition"])
	}
}

// TestClusterScopeLoggers: scope=cluster goes to a herder that takes it
// (204) and is refused (501) by one that does not.
func TestClusterScopeLoggers(t *testing.T) {
	h := newMemHerder("w")
	srv := newTestServer(t, h)
	status, body := do(t, "PUT", srv.URL+"/admin/loggers/a.b?scope=cluster", `{"level":"debug"}`)
	if status != http.StatusNotImplemented {
		t.Errorf("cluster scope without herder support: %d %s", status, body)
	}
	ch := &clusterHerder{memHerder: newMemHerder("w"), set: make(chan string, 1)}
	s, err := New(Config{Herder: ch, Loggers: NewLevelVars(0), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(s)
	defer srv2.Close()
	if status, body := do(t, "PUT", srv2.URL+"/admin/loggers/a.b?scope=CLUSTER", `{"level":"debug"}`); status != http.StatusNoContent {
		t.Errorf("cluster scope: %d %s", status, body)
	}
	if got := <-ch.set; got != "a.b=DEBUG" {
		t.Errorf("the herder got %q", got)
	}
}

type clusterHerder struct {
	*memHerder
	set chan string
}

func (c *clusterHerder) SetClusterLoggerLevel(_ context.Context, namespace, level string) error {
	c.set <- namespace + "=" + level
	return nil
}

// TestConnectorsOnly: connectorsOnly is true unless given, read as
// Jersey's Boolean.valueOf.
func TestConnectorsOnly(t *testing.T) {
	srv := newTestServer(t, newMemHerder("w"))
	for query, want := range map[string]int{"": 2, "?connectorsOnly=false": 3, "?connectorsOnly=FALSE": 3, "?connectorsOnly=no": 3, "?connectorsOnly=True": 2} {
		status, body := do(t, "GET", srv.URL+"/connector-plugins"+query, "")
		var plugins []api.PluginInfo
		if err := json.Unmarshal([]byte(body), &plugins); err != nil || status != http.StatusOK || len(plugins) != want {
			t.Errorf("%q: %d %s; want %d plugins", query, status, body, want)
		}
	}
}
