package console

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const connectDatagen = "io.confluent.kafka.connect.datagen.DatagenConnector"

// connectREST is a Connect REST call of the test itself (not through
// the console): it answers the status and decodes a JSON answer into
// out when not nil.
func connectREST(t *testing.T, base, method, path string, out any) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx(t), method, base+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == 200 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	return resp.StatusCode
}

// connectWaitState waits until the connector and its tasks are all in
// state (per Connect's REST API).
func connectWaitState(t *testing.T, base, name, state string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st connectStatus
		code := connectREST(t, base, http.MethodGet, "/connectors/"+name+"/status", &st)
		ok := code == 200 && st.Connector.State == state && len(st.Tasks) > 0
		for _, task := range st.Tasks {
			ok = ok && task.State == state
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("connector %s: status %d %+v, want every part %s", name, code, st, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestConnectPage drives the Connect page against the Connect worker
// inside a real samsa serve: a connector created from the built-in
// datagen plugin's generated form (a refused config first, its errors on
// the fields), its page RUNNING with a secret hidden, pause, resume,
// restarts, a config edit that keeps the secret, and delete; every
// effect checked through Connect's REST API.
func TestConnectPage(t *testing.T) {
	addr, _, base, _ := schemasStartServe(t, true)
	tc := startConsoleOn(t, addr, Config{ConnectURL: base})
	deadline := time.Now().Add(30 * time.Second)
	for connectREST(t, base, http.MethodGet, "/health", nil) != 200 {
		if time.Now().After(deadline) {
			t.Fatal("Connect did not become ready")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := tc.Admin.CreateTopic(ctx(t), 1, 1, nil, "gen-users"); err != nil {
		t.Fatal(err)
	}

	t.Run("plugins and form", func(t *testing.T) {
		st, body := tc.get("/connect")
		if st != 200 {
			t.Fatalf("list: %d\n%s", st, body)
		}
		wantContains(t, body, "No connectors", `href="/connect/new"`)
		st, body = tc.get("/connect/new")
		if st != 200 {
			t.Fatalf("plugins: %d\n%s", st, body)
		}
		wantContains(t, body, `href="/connect/new?plugin=`+url.QueryEscape(connectDatagen)+`"`)
		st, body = tc.get("/connect/new?plugin=" + url.QueryEscape(connectDatagen))
		if st != 200 {
			t.Fatalf("form: %d\n%s", st, body)
		}
		// Inputs typed by the plugin's definitions, with their docs.
		wantContains(t, body, `<label for="connect-f-kafka.topic">kafka.topic <span class="badge warn">required</span>`,
			`name="cfg.max.interval" inputmode="numeric" value="" placeholder="500"`, "Topic to write to")
		if st, body := tc.get("/connect/new?plugin=NoSuchPlugin"); st != http.StatusNotFound && st != http.StatusBadRequest {
			t.Fatalf("an unknown plugin's form: %d, want 4xx\n%s", st, body)
		}
	})

	t.Run("refused config", func(t *testing.T) {
		st, body, _ := tc.post("/connect/new", url.Values{"plugin": {connectDatagen}, "name": {"gen"}, "tasks.max": {"1"},
			"cfg.max.interval": {"soon"}, "cfg.quickstart": {"users"}})
		if st != http.StatusBadRequest {
			t.Fatalf("refused config: %d, want 400\n%s", st, body)
		}
		// Each error next to its input, the input marked, what was typed kept.
		wantContains(t, body, `id="connect-f-max.interval-err"`, `aria-invalid="true" aria-describedby="connect-f-max.interval-err"`,
			`id="connect-f-kafka.topic-err"`, `value="soon"`, `value="gen"`, "nothing was changed")
		if !strings.Contains(body, "Error: Invalid value soon for configuration max.interval") {
			t.Fatalf("the worker's message for max.interval is missing:\n%s", body)
		}
		if code := connectREST(t, base, http.MethodGet, "/connectors/gen", nil); code != 404 {
			t.Fatalf("a refused config created the connector: %d", code)
		}
		if st, body, _ := tc.post("/connect/new", url.Values{"plugin": {connectDatagen}, "name": {"gen"}, "other": {"no equals sign"}}); st != http.StatusBadRequest || !strings.Contains(body, "want key=value") {
			t.Fatalf("a bad settings line: %d\n%s", st, body)
		}
	})

	t.Run("create", func(t *testing.T) {
		st, body, loc := tc.post("/connect/new", url.Values{"plugin": {connectDatagen}, "name": {"gen"}, "tasks.max": {"1"},
			"cfg.kafka.topic": {"gen-users"}, "cfg.quickstart": {"users"}, "cfg.max.interval": {"50"},
			"other": {"my.secret.token=hunter2\n"}})
		if st != http.StatusSeeOther || loc != "/connect/gen?done=connector+created" {
			t.Fatalf("create: %d to %q\n%s", st, loc, body)
		}
		connectWaitState(t, base, "gen", "RUNNING")
		var cfg map[string]string
		connectREST(t, base, http.MethodGet, "/connectors/gen/config", &cfg)
		if cfg["kafka.topic"] != "gen-users" || cfg["max.interval"] != "50" || cfg["my.secret.token"] != "hunter2" || cfg["connector.class"] != connectDatagen {
			t.Fatalf("the created connector's config: %v", cfg)
		}
		st, body = tc.get(loc)
		if st != 200 {
			t.Fatalf("connector page: %d\n%s", st, body)
		}
		wantContains(t, body, `id="connect-state">RUNNING`, "connector created", "my.secret.token", "(hidden)", "gen-users")
		if strings.Contains(body, "hunter2") {
			t.Fatalf("the connector page shows a secret:\n%s", body)
		}
		st, body = tc.get("/connect")
		wantContains(t, body, `href="/connect/gen"`, "RUNNING", "1 of 1", "source")
		// Records flow: the connector really runs.
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("gen-users"))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		if fs := cl.PollRecords(ctx(t), 1); fs.Err0() != nil || fs.NumRecords() == 0 {
			t.Fatalf("no records from the connector: %v", fs.Err0())
		}
	})

	t.Run("pause resume restart", func(t *testing.T) {
		if st, body, loc := tc.post("/connect/gen/pause", nil); st != http.StatusSeeOther || !strings.Contains(loc, "pause+requested") {
			t.Fatalf("pause: %d %q\n%s", st, loc, body)
		}
		connectWaitState(t, base, "gen", "PAUSED")
		_, body := tc.get("/connect/gen")
		wantContains(t, body, `id="connect-state">PAUSED`)
		if st, body, _ := tc.post("/connect/gen/resume", nil); st != http.StatusSeeOther {
			t.Fatalf("resume: %d\n%s", st, body)
		}
		connectWaitState(t, base, "gen", "RUNNING")
		if st, body, loc := tc.post("/connect/gen/restart", url.Values{"includeTasks": {"true"}, "onlyFailed": {"true"}}); st != http.StatusSeeOther || !strings.Contains(loc, "failed+tasks") {
			t.Fatalf("restart: %d %q\n%s", st, loc, body)
		}
		if st, body, _ := tc.post("/connect/gen/restart", url.Values{"includeTasks": {"true"}}); st != http.StatusSeeOther {
			t.Fatalf("restart with tasks: %d\n%s", st, body)
		}
		connectWaitState(t, base, "gen", "RUNNING")
		if st, body, loc := tc.post("/connect/gen/tasks/0/restart", nil); st != http.StatusSeeOther || !strings.Contains(loc, "task+0") {
			t.Fatalf("restart task 0: %d %q\n%s", st, loc, body)
		}
		connectWaitState(t, base, "gen", "RUNNING")
		if st, body, _ := tc.post("/connect/gen/tasks/7/restart", nil); st != http.StatusNotFound {
			t.Fatalf("restart task 7: %d, want 404\n%s", st, body)
		}
		if st, body, _ := tc.post("/connect/nosuch/pause", nil); st != http.StatusNotFound {
			t.Fatalf("pause an unknown connector: %d, want 404\n%s", st, body)
		}
	})

	t.Run("edit", func(t *testing.T) {
		st, body := tc.get("/connect/gen/edit")
		if st != 200 {
			t.Fatalf("edit form: %d\n%s", st, body)
		}
		wantContains(t, body, `name="cfg.kafka.topic" value="gen-users"`, "my.secret.token=(hidden)")
		if strings.Contains(body, "hunter2") {
			t.Fatalf("the edit form shows a secret:\n%s", body)
		}
		st, body, _ = tc.post("/connect/gen/edit", url.Values{"tasks.max": {"1"}, "cfg.kafka.topic": {"gen-users"},
			"cfg.quickstart": {"users"}, "cfg.max.interval": {"-5"}, "other": {"my.secret.token=(hidden)"}})
		if st != http.StatusBadRequest || !strings.Contains(body, `id="connect-f-max.interval-err"`) {
			t.Fatalf("a refused edit: %d\n%s", st, body)
		}
		st, body, loc := tc.post("/connect/gen/edit", url.Values{"tasks.max": {"1"}, "cfg.kafka.topic": {"gen-users"},
			"cfg.quickstart": {"users"}, "cfg.max.interval": {"75"}, "other": {"my.secret.token=(hidden)"}})
		if st != http.StatusSeeOther || !strings.Contains(loc, "config+updated") {
			t.Fatalf("edit: %d %q\n%s", st, loc, body)
		}
		var cfg map[string]string
		connectREST(t, base, http.MethodGet, "/connectors/gen/config", &cfg)
		if cfg["max.interval"] != "75" || cfg["my.secret.token"] != "hunter2" {
			t.Fatalf("the edited config: %v", cfg)
		}
	})

	t.Run("failed task", func(t *testing.T) {
		// A FileStreamSink writing into a directory that does not exist:
		// its task fails at start, with a trace.
		missing := filepath.Join(t.TempDir(), "no", "such", "dir", "out.txt")
		st, body, _ := tc.post("/connect/new", url.Values{"plugin": {"FileStreamSink"}, "name": {"sink"}, "tasks.max": {"1"},
			"cfg.file": {missing}, "other": {"topics=gen-users"}})
		if st != http.StatusSeeOther {
			t.Fatalf("create the sink: %d\n%s", st, body)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			var s connectStatus
			connectREST(t, base, http.MethodGet, "/connectors/sink/status", &s)
			if s.Count("FAILED") == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the sink's task did not fail: %+v", s)
			}
			time.Sleep(100 * time.Millisecond)
		}
		st, body = tc.get("/connect/sink")
		if st != 200 {
			t.Fatalf("the sink's page: %d\n%s", st, body)
		}
		wantContains(t, body, `<span class="badge bad">FAILED</span>`, `<details class="connect-trace"><summary>Trace of task 0</summary><pre>`, "no such file or directory")
		_, body = tc.get("/connect?q=sin")
		wantContains(t, body, `<span class="badge bad">1 failed</span>`)
		if strings.Contains(body, `href="/connect/gen"`) {
			t.Fatalf("the search for sin lists gen:\n%s", body)
		}
		if st, body, _ := tc.post("/connect/sink/restart", url.Values{"includeTasks": {"true"}, "onlyFailed": {"true"}}); st != http.StatusSeeOther {
			t.Fatalf("restart the failed task: %d\n%s", st, body)
		}
		if st, body, _ := tc.post("/connect/sink/delete", url.Values{"confirm": {"sink"}}); st != http.StatusSeeOther {
			t.Fatalf("delete the sink: %d\n%s", st, body)
		}
	})

	t.Run("delete", func(t *testing.T) {
		if st, body, _ := tc.post("/connect/gen/delete", url.Values{"confirm": {"ge"}}); st != http.StatusBadRequest {
			t.Fatalf("delete with a wrong confirmation: %d\n%s", st, body)
		}
		if code := connectREST(t, base, http.MethodGet, "/connectors/gen", nil); code != 200 {
			t.Fatalf("a refused delete removed the connector: %d", code)
		}
		if st, body, loc := tc.post("/connect/gen/delete", url.Values{"confirm": {"gen"}}); st != http.StatusSeeOther || !strings.HasPrefix(loc, "/connect?done=") {
			t.Fatalf("delete: %d %q\n%s", st, loc, body)
		}
		if code := connectREST(t, base, http.MethodGet, "/connectors/gen", nil); code != 404 {
			t.Fatalf("after the delete the connector answers %d", code)
		}
		if st, body := tc.get("/connect/gen"); st != http.StatusNotFound {
			t.Fatalf("a deleted connector's page: %d\n%s", st, body)
		}
	})

	t.Run("connect down", func(t *testing.T) {
		down := startConsoleOn(t, addr, Config{ConnectURL: "http://127.0.0.1:1"})
		for _, p := range []string{"/connect", "/connect/gen", "/connect/new"} {
			st, body := down.get(p)
			if st != http.StatusBadGateway {
				t.Fatalf("%s with Connect down: %d, want 502\n%s", p, st, body)
			}
			wantContains(t, body, "Connect at http://127.0.0.1:1 cannot be reached")
		}
		none := startConsoleOn(t, addr, Config{})
		if st, body := none.get("/connect"); st != http.StatusNotFound || strings.Contains(body, `href="/connect"`) {
			t.Fatalf("no Connect configured: %d\n%s", st, body)
		}
	})
}

// TestConnectSensitive: values of PASSWORD definitions and of keys that
// name a secret are hidden; others are shown.
func TestConnectSensitive(t *testing.T) {
	defs := map[string]connectDef{"connection.url": {Type: "STRING"}, "db.pass": {Type: "PASSWORD"}}
	for key, want := range map[string]bool{
		"connection.url": false, "db.pass": true, "connection.password": true, "aws.secret.access.key": true,
		"sasl.jaas.config": true, "auth.token": true, "topic": false, "key.converter": false,
	} {
		if got := connectSensitive(key, defs); got != want {
			t.Errorf("%s: hidden %t, want %t", key, got, want)
		}
	}
}
