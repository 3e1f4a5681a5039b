package datagen

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/samsa-io/samsa/connect"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type connectorCtx struct{}

func (connectorCtx) RequestTaskReconfiguration() {}
func (connectorCtx) RaiseError(error)            {}
func (connectorCtx) Logger() *slog.Logger        { return quiet }

// sourceCtx stores offsets as the runtime does, through JSON, so numbers
// come back as the runtime gives them: int64 for integers.
type sourceCtx struct {
	offsets map[string]map[string]any
}

func newSourceCtx() *sourceCtx { return &sourceCtx{offsets: map[string]map[string]any{}} }

func key(p map[string]any) string { b, _ := json.Marshal(p); return string(b) }

func (c *sourceCtx) Offset(p map[string]any) (map[string]any, error) {
	o, ok := c.offsets[key(p)]
	if !ok {
		return nil, nil
	}
	return o, nil
}
func (c *sourceCtx) Config() map[string]string { return nil }
func (c *sourceCtx) Logger() *slog.Logger      { return quiet }

// commit stores a record's offset as JSON integers read back as int64.
func (c *sourceCtx) commit(t *testing.T, r connect.SourceRecord) {
	b, _ := json.Marshal(r.SourceOffset)
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var raw map[string]json.Number
	if err := dec.Decode(&raw); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for k, v := range raw {
		n, err := v.Int64()
		if err != nil {
			t.Fatal(err)
		}
		out[k] = n
	}
	c.offsets[key(r.SourcePartition)] = out
}

var bg = context.Background()

func props(kv ...string) map[string]string {
	p := map[string]string{"kafka.topic": "t", "quickstart": "users", "max.interval": "0", "random.seed": "42"}
	for i := 0; i < len(kv); i += 2 {
		p[kv[i]] = kv[i+1]
	}
	return p
}

// tasks starts the connector and its tasks as the runtime would.
func tasks(t *testing.T, ctx *sourceCtx, p map[string]string, max int) []*Task {
	t.Helper()
	c := NewConnector()
	if err := c.Start(connectorCtx{}, p); err != nil {
		t.Fatal(err)
	}
	cfgs, err := c.TaskConfigs(max)
	if err != nil || len(cfgs) != max {
		t.Fatalf("task configs = %v, %v", cfgs, err)
	}
	var out []*Task
	for _, cfg := range cfgs {
		task := c.NewTask().(*Task)
		if err := task.Start(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		out = append(out, task)
	}
	return out
}

func take(t *testing.T, task *Task, n int) []connect.SourceRecord {
	t.Helper()
	var out []connect.SourceRecord
	for len(out) < n {
		rs, err := task.Poll(bg)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rs...)
	}
	return out[:n]
}

func values(rs []connect.SourceRecord) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Value.(*connect.Struct).String())
	}
	return out
}

func TestPlugins(t *testing.T) {
	p := Plugins()[0]
	if p.Class != "io.confluent.kafka.connect.datagen.DatagenConnector" || p.Type != connect.PluginSource ||
		!strings.Contains(strings.Join(p.Aliases, ","), "DatagenConnector") {
		t.Fatalf("plugin = %+v", p)
	}
	if _, ok := p.New().(connect.SourceConnector); !ok {
		t.Fatal("not a source connector")
	}
}

func TestConfigRefused(t *testing.T) {
	const prefix = "Datagen connector could not start because of an error in the configuration: "
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  string
	}{
		{"no topic", map[string]string{"quickstart": "users"}, `Missing required configuration "kafka.topic" which has no default value.`},
		{"empty topic", props("kafka.topic", ""), "Invalid value  for configuration kafka.topic: String must be non-empty"},
		{"negative interval", props("max.interval", "-1"), "Invalid value -1 for configuration max.interval: Value must be at least 0"},
		{"interval not a number", props("max.interval", "soon"), "Invalid value soon for configuration max.interval: Not a number of type LONG"},
		{"iterations not a number", props("iterations", "1.5"), "Invalid value 1.5 for configuration iterations: Not a number of type INT"},
		{"seed not a number", props("random.seed", "x"), "Invalid value x for configuration random.seed: Not a number of type LONG"},
		{"unknown quickstart", props("quickstart", "cats"), "Invalid value cats for configuration quickstart: quickstart must be one out of orders,pageviews,users"},
		{"confluent quickstart", props("quickstart", "ratings"), "Invalid value ratings for configuration quickstart: ratings is one of Confluent's quickstarts that Samsa does not generate; quickstart must be one out of orders,pageviews,users"},
		{"schema.string", props("schema.string", `{"type":"record"}`), `Invalid value {"type":"record"} for configuration schema.string: Samsa's datagen generates only its quickstarts (orders, pageviews, users); schema.string is not supported`},
		{"schema.filename", props("schema.filename", "/s.avsc"), "Invalid value /s.avsc for configuration schema.filename: Samsa's datagen generates only its quickstarts (orders, pageviews, users); schema.filename is not supported"},
		{"no quickstart", props("quickstart", ""), "Must set exactly one of schema.string, schema.filename, quickstart"},
		{"unknown key field", props("schema.keyfield", "pageid"), "The schema does not contain the field provided in 'schema.keyfield'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := NewConnector().Start(connectorCtx{}, tc.props)
			if err == nil || err.Error() != prefix+tc.want {
				t.Errorf("connector start error = %v\nwant %q", err, prefix+tc.want)
			}
			task := map[string]string{"task.id": "0"}
			for k, v := range tc.props {
				task[k] = v
			}
			if err := NewTask().Start(newSourceCtx(), task); err == nil || err.Error() != tc.want {
				t.Errorf("task start error = %v\nwant %q", err, tc.want)
			}
		})
	}
}

func TestTaskRefusesMissingTaskID(t *testing.T) {
	err := NewTask().Start(newSourceCtx(), props())
	if err == nil || !strings.Contains(err.Error(), "task.id") {
		t.Fatalf("start error = %v", err)
	}
}

func TestValidateAcrossConfigs(t *testing.T) {
	errorsOf := func(p map[string]string) map[string][]string {
		out := map[string][]string{}
		for _, v := range append(configDef().Validate(p), NewConnector().Validate(p)...) {
			if len(v.Errors) > 0 {
				out[v.Name] = v.Errors
			}
		}
		return out
	}
	one := []string{"Must set exactly one of schema.string, schema.filename, quickstart"}
	if got := errorsOf(props("quickstart", "")); !cmp.Equal(got, map[string][]string{"schema.string": one, "schema.filename": one, "quickstart": one}) {
		t.Errorf("no schema source: %v", got)
	}
	if got := errorsOf(props("schema.keyfield", "nope")); !cmp.Equal(got, map[string][]string{
		"schema.keyfield": {"The schema does not contain the field provided in 'schema.keyfield'"}}) {
		t.Errorf("bad key field: %v", got)
	}
	if got := errorsOf(props("QUICKSTART", "x", "quickstart", "Orders")); len(got) != 0 {
		t.Errorf("valid config: %v", got)
	}
}

// The same seed gives the same data; each task its own.
func TestDeterministicBySeed(t *testing.T) {
	for _, qs := range []string{"users", "pageviews", "orders"} {
		a := tasks(t, newSourceCtx(), props("quickstart", qs), 2)
		b := tasks(t, newSourceCtx(), props("quickstart", qs), 2)
		if diff := cmp.Diff(values(take(t, a[0], 50)), values(take(t, b[0], 50))); diff != "" {
			t.Fatalf("%s: same seed, different data:\n%s", qs, diff)
		}
		fresh := tasks(t, newSourceCtx(), props("quickstart", qs), 2)
		if cmp.Equal(values(take(t, fresh[0], 50)), values(take(t, fresh[1], 50))) {
			t.Fatalf("%s: tasks 0 and 1 made the same data", qs)
		}
		c := tasks(t, newSourceCtx(), props("quickstart", qs, "random.seed", "43"), 1)
		if cmp.Equal(values(take(t, c[0], 50)), values(take(t, b[0], 50))) {
			t.Fatalf("%s: another seed made the same data", qs)
		}
	}
}

// A task restarted from a stored offset goes on with the same sequence and
// count, in the next generation.
func TestRestartFromStoredOffset(t *testing.T) {
	for _, qs := range []string{"users", "pageviews", "orders"} {
		whole := take(t, tasks(t, newSourceCtx(), props("quickstart", qs), 1)[0], 10)

		ctx := newSourceCtx()
		first := take(t, tasks(t, ctx, props("quickstart", qs), 1)[0], 4)
		ctx.commit(t, first[3])
		rest := take(t, tasks(t, ctx, props("quickstart", qs), 1)[0], 6)
		if diff := cmp.Diff(values(whole), values(append(first, rest...))); diff != "" {
			t.Fatalf("%s: restarted sequence differs:\n%s", qs, diff)
		}
		h, _ := rest[0].Headers.Last("current.iteration")
		g, _ := rest[0].Headers.Last("task.generation")
		if h.Value != int64(4) || g.Value != int64(1) {
			t.Fatalf("%s: after restart current.iteration %v generation %v", qs, h.Value, g.Value)
		}
		if rest[5].SourceOffset["current.iteration"] != int64(10) || rest[5].SourceOffset["task.generation"] != int64(2) {
			t.Fatalf("%s: offset %v", qs, rest[5].SourceOffset)
		}
	}
}

func TestStoredOffsetRefused(t *testing.T) {
	ctx := newSourceCtx()
	ctx.offsets[key(map[string]any{"task.id": 0})] = map[string]any{"task.generation": int64(1), "current.iteration": "3", "random.seed": int64(1)}
	task := NewTask()
	p := props("task.id", "0")
	err := task.Start(ctx, p)
	if err == nil || !strings.Contains(err.Error(), "current.iteration") {
		t.Fatalf("start error = %v", err)
	}
}

func TestIterations(t *testing.T) {
	ctx := newSourceCtx()
	task := tasks(t, ctx, props("iterations", "3"), 1)[0]
	rs, err := task.Poll(bg)
	if err != nil || len(rs) != 3 {
		t.Fatalf("poll = %d records, %v", len(rs), err)
	}
	ctx.commit(t, rs[2])
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	if rs, err := task.Poll(cancelled); len(rs) != 0 || err != nil {
		t.Fatalf("after iterations: %d records, %v", len(rs), err)
	}
	again := tasks(t, ctx, props("iterations", "3"), 1)[0]
	if rs, _ := again.Poll(cancelled); len(rs) != 0 {
		t.Fatalf("restarted after iterations: %d records", len(rs))
	}
	more := tasks(t, ctx, props("iterations", "5"), 1)[0]
	if rs, _ := more.Poll(bg); len(rs) != 2 {
		t.Fatalf("iterations raised to 5: %d records, want 2", len(rs))
	}

	// One record a poll when records are spaced out: the count still ends it.
	spaced := tasks(t, newSourceCtx(), props("iterations", "2", "max.interval", "1"), 1)[0]
	take(t, spaced, 2)
	for range 5 {
		if rs, _ := spaced.Poll(cancelled); len(rs) != 0 {
			t.Fatalf("spaced out, after iterations: %d records", len(rs))
		}
		time.Sleep(2 * time.Millisecond) // past any record's time
	}
}

// Each task has its own source partition and task.id header.
func TestTasksSplit(t *testing.T) {
	ts := tasks(t, newSourceCtx(), props(), 3)
	for i, task := range ts {
		r := take(t, task, 1)[0]
		if !cmp.Equal(r.SourcePartition, map[string]any{"task.id": int32(i)}) {
			t.Fatalf("task %d partition %v", i, r.SourcePartition)
		}
		if h, _ := r.Headers.Last("task.id"); h.Value != int64(i) {
			t.Fatalf("task %d header %v", i, h.Value)
		}
	}
}

// The values follow Confluent's quickstart definitions.
func TestQuickstartValues(t *testing.T) {
	users := take(t, tasks(t, newSourceCtx(), props("quickstart", "users", "random.seed", "7"), 1)[0], 500)
	genders := map[string]bool{}
	for _, r := range users {
		v := r.Value.(*connect.Struct)
		mustValid(t, r)
		inRange(t, "registertime", get(v, "registertime").(int64), timeMin, timeMax-1)
		matches(t, `^User_[1-9]$`, get(v, "userid"))
		matches(t, `^Region_[1-9]$`, get(v, "regionid"))
		genders[get(v, "gender").(string)] = true
		if r.Key != get(v, "userid") || r.KeySchema != connect.StringSchema {
			t.Fatalf("key %v %v", r.Key, r.KeySchema)
		}
	}
	if len(genders) != 3 || !genders["MALE"] || !genders["FEMALE"] || !genders["OTHER"] {
		t.Fatalf("genders %v", genders)
	}

	views := take(t, tasks(t, newSourceCtx(), props("quickstart", "pageviews"), 1)[0], 500)
	for i, r := range views {
		v := r.Value.(*connect.Struct)
		mustValid(t, r)
		if get(v, "viewtime") != int64(1+10*i) || r.Key != get(v, "viewtime") {
			t.Fatalf("viewtime %v key %v at %d", get(v, "viewtime"), r.Key, i)
		}
		matches(t, `^User_[1-9]$`, get(v, "userid"))
		matches(t, `^Page_[1-9][0-9]$`, get(v, "pageid"))
	}

	orders := take(t, tasks(t, newSourceCtx(), props("quickstart", "orders"), 1)[0], 500)
	itemLens := map[int]bool{}
	for i, r := range orders {
		v := r.Value.(*connect.Struct)
		mustValid(t, r)
		if get(v, "orderid") != int32(i) || r.Key != int32(i) || r.KeySchema != connect.Int32Schema {
			t.Fatalf("orderid %v key %v at %d", get(v, "orderid"), r.Key, i)
		}
		inRange(t, "ordertime", get(v, "ordertime").(int64), timeMin, timeMax-1)
		matches(t, `^Item_[1-9][0-9]{0,2}$`, get(v, "itemid"))
		itemLens[len(get(v, "itemid").(string))] = true
		if u := get(v, "orderunits").(float64); u < 0.1 || u >= 10.0 {
			t.Fatalf("orderunits %v", u)
		}
		a := get(v, "address").(*connect.Struct)
		matches(t, `^City_[1-9]{0,2}$`, get(a, "city"))
		matches(t, `^State_[1-9]{0,2}$`, get(a, "state"))
		inRange(t, "zipcode", get(a, "zipcode").(int64), 10000, 99998)
	}
	if len(itemLens) != 3 {
		t.Fatalf("item id lengths %v", itemLens)
	}
}

func get(s *connect.Struct, f string) any { v, _ := s.Get(f); return v }

func mustValid(t *testing.T, r connect.SourceRecord) {
	t.Helper()
	if err := connect.Validate(r.ValueSchema, r.Value); err != nil {
		t.Fatal(err)
	}
	if err := connect.Validate(r.KeySchema, r.Key); err != nil {
		t.Fatal(err)
	}
}

func inRange(t *testing.T, name string, v, min, max int64) {
	t.Helper()
	if v < min || v > max {
		t.Fatalf("%s %d not in [%d, %d]", name, v, min, max)
	}
}

func matches(t *testing.T, re string, v any) {
	t.Helper()
	if s, _ := v.(string); !regexp.MustCompile(re).MatchString(s) {
		t.Fatalf("%q does not match %s", v, re)
	}
}

// max.interval spaces records out; a poll waits at most a second and ends
// with its context.
func TestMaxInterval(t *testing.T) {
	task := tasks(t, newSourceCtx(), props("max.interval", "30"), 1)[0]
	start := time.Now()
	for range 5 {
		rs, err := task.Poll(bg)
		if err != nil || len(rs) != 1 {
			t.Fatalf("poll = %d records, %v", len(rs), err)
		}
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("polls took too long")
	}

	slow := tasks(t, newSourceCtx(), props("max.interval", "3600000"), 1)[0]
	slow.nextAt = time.Now().Add(time.Hour)
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer cancel()
	start = time.Now()
	rs, _ := slow.Poll(ctx)
	if len(rs) != 0 || time.Since(start) > 2*time.Second {
		t.Fatalf("a poll before the record's time: %d records after %v", len(rs), time.Since(start))
	}
}
