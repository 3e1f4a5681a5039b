package connectdiff

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "record the Java worker's answers as testdata/java-*.json")

// knownDifferences are the steps where Samsa's worker answers otherwise
// than Kafka's on purpose, each with its reason (docs/connect/rest.md
// lists them); their comparison is reported, not failed.
var knownDifferences = map[string]string{}

// TestJavaWorker runs the sequence against Apache Kafka's worker and
// checks its answers against testdata/java-*.json (-update records them):
// the goldens stay true to the Java worker, and the normalisation keeps
// only what is stable between runs.
func TestJavaWorker(t *testing.T) {
	w := startJavaWorker(t, startBroker(t))
	got := runSequence(t, w)
	if *update {
		writeGoldens(t, got)
		return
	}
	compareWith(t, "Java worker", readGoldens(t), got, nil)
}

// TestSamsaWorker runs the sequence against `samsa connect` on a Samsa
// broker and compares its answers with the Java worker's goldens.
func TestSamsaWorker(t *testing.T) {
	w, err := startSamsaWorker(t, startBroker(t))
	if err != nil {
		t.Fatal(err)
	}
	compareWith(t, "Samsa worker", ownWords(readGoldens(t)), ownWords(runSequence(t, w)), knownDifferences)
}

// exchange is one recorded call: the request and the normalised answer.
type exchange struct {
	// Seq is the call's place in the sequence; Compare how far answers
	// must agree ("all", "status", "shape"), for readers of the goldens
	// (internal/connectrt/rest replays them).
	Seq         int    `json:"seq"`
	Compare     string `json:"compare"`
	Name        string `json:"name"`
	Method      string `json:"method"`
	Path        string `json:"path"`
	ContentType string `json:"content_type,omitempty"`
	Body        string `json:"body,omitempty"`
	Status      int    `json:"status"`
	Response    any    `json:"response"`
}

// runSequence makes every call of the sequence in turn.
func runSequence(t *testing.T, w *worker) []exchange {
	t.Helper()
	var out []exchange
	for _, s := range sequence {
		if s.await != nil {
			if err := w.wait(t.Context(), s.await); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			continue
		}
		status, body, err := w.call(t.Context(), s)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if os.Getenv("CDIFF_DEBUG") != "" {
			t.Logf("%s -> %d %s", s.name, status, body)
		}
		out = append(out, exchange{Seq: len(out), Compare: s.compare.String(), Name: s.name, Method: s.method, Path: s.path, ContentType: s.contentType,
			Body: s.body, Status: status, Response: normalise(s.name, w.normaliseText(body))})
	}
	return out
}

// call makes one request, the placeholders of its body replaced by the
// worker's own.
func (w *worker) call(ctx context.Context, s step) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var body io.Reader
	if s.body != "" {
		body = strings.NewReader(w.expand(s.body))
	}
	req, err := http.NewRequestWithContext(ctx, s.method, w.url+s.path, body)
	if err != nil {
		return 0, nil, err
	}
	switch ct := s.contentType; {
	case ct == "-":
	case ct != "":
		req.Header.Set("Content-Type", ct)
	case s.body != "":
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// wait polls until the await holds (a minute at most).
func (w *worker) wait(ctx context.Context, a *await) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	path, last := a.path, ""
	if path == "" {
		path = "/connectors/" + a.connector + "/status"
	}
	for {
		status, body, err := w.call(ctx, step{method: "GET", path: path})
		if err == nil && status == http.StatusOK {
			last = string(body)
			if a.holds(w.normaliseText(body)) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waited for %+v; last answer %s (%v)", *a, last, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (a *await) holds(body []byte) bool {
	if a.path != "" {
		return bytes.Contains(body, []byte(a.contains)) && (a.lacks == "" || !bytes.Contains(body, []byte(a.lacks)))
	}
	var st struct {
		Connector struct{ State string }
		Tasks     []struct{ State string }
	}
	if json.Unmarshal(body, &st) != nil || st.Connector.State != a.state || len(st.Tasks) != a.tasks {
		return false
	}
	for _, task := range st.Tasks {
		if task.State != a.taskState {
			return false
		}
	}
	return true
}

// expand puts the worker's directory and topic for the placeholders.
func (w *worker) expand(s string) string {
	return strings.NewReplacer("$DIR", w.dir, "$TOPIC", w.topic).Replace(s)
}

// normaliseText puts the placeholders back for the worker's directory,
// topic, host:port and its broker's cluster ID.
func (w *worker) normaliseText(b []byte) []byte {
	u, _ := url.Parse(w.url)
	pairs := []string{w.dir, "$DIR", w.topic, "$TOPIC", u.Host, "$WORKER", w.clusterID, "$CLUSTER_ID"}
	if w.version != "" {
		// Plugin versions show in config definitions and values (KIP-891).
		pairs = append(pairs, `"`+w.version+`"`, `"$VERSION"`)
	}
	return []byte(strings.NewReplacer(pairs...).Replace(string(b)))
}

// normalise parses an answer and replaces what must differ between two
// workers: versions and commits, traces, modification times; the loggers'
// list keeps the root only (each worker has loggers of its own), the
// plugin lists the FileStream connectors only (Samsa has more plugins).
func normalise(name string, body []byte) any {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return "$NOT_JSON: " + string(body)
	}
	v = placeholders(v)
	switch name {
	case "loggers":
		if m, ok := v.(map[string]any); ok {
			v = map[string]any{"root": m["root"]}
		}
	case "plugins", "plugins-all":
		if l, ok := v.([]any); ok {
			v = slices.DeleteFunc(l, func(p any) bool {
				m, _ := p.(map[string]any)
				class, _ := m["class"].(string)
				return !strings.HasPrefix(class, "org.apache.kafka.connect.file.FileStream")
			})
		}
	}
	return v
}

func placeholders(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			switch {
			case k == "version" || k == "commit":
				v[k] = "$" + strings.ToUpper(k)
			case k == "trace" && e != nil:
				v[k] = "$TRACE"
			case k == "last_modified" && e != nil:
				v[k] = "$TIME"
			default:
				v[k] = placeholders(e)
			}
		}
	case []any:
		for i := range v {
			v[i] = placeholders(v[i])
		}
	}
	return v
}

// compared is an answer as far as its step compares it.
func compared(s step, e exchange) any {
	switch s.compare {
	case compareStatus:
		if m, ok := e.Response.(map[string]any); ok {
			return map[string]any{"status": e.Status, "error_code": m["error_code"]}
		}
		return map[string]any{"status": e.Status}
	case compareShape:
		return map[string]any{"status": e.Status, "kind": fmt.Sprintf("%T", e.Response)}
	}
	return map[string]any{"status": e.Status, "response": e.Response}
}

// ownWords drops from both sides what Samsa words or offers on purpose
// otherwise: config documentation is in Samsa's own words (Kafka's text is
// Kafka's), and the converters a config recommends include Confluent's
// registry converters, which Samsa has built in and Kafka's worker has not.
func ownWords(ex []exchange) []exchange {
	out := make([]exchange, len(ex))
	for i, e := range ex {
		e.Response = dropOwn(e.Response)
		out[i] = e
	}
	return out
}

func dropOwn(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			switch {
			case k == "documentation":
				m[k] = "$DOC"
			case k == "recommended_values":
				l, _ := e.([]any)
				m[k] = slices.DeleteFunc(slices.Clone(l), func(x any) bool {
					s, _ := x.(string)
					return strings.HasPrefix(s, "io.confluent.")
				})
			default:
				m[k] = dropOwn(e)
			}
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i := range v {
			l[i] = dropOwn(v[i])
		}
		return l
	}
	return v
}

// compareWith reports each step whose answer differs from want's.
func compareWith(t *testing.T, who string, want, got []exchange, known map[string]string) {
	t.Helper()
	wantBy := map[string]exchange{}
	for _, e := range want {
		wantBy[e.Name] = e
	}
	steps := map[string]step{}
	for _, s := range sequence {
		steps[s.name] = s
	}
	for _, g := range got {
		w, ok := wantBy[g.Name]
		if !ok {
			t.Errorf("%s: no golden testdata/java-%s.json (run with -update)", g.Name, g.Name)
			continue
		}
		diff := cmp.Diff(compared(steps[g.Name], w), compared(steps[g.Name], g))
		switch {
		case diff == "":
		case known[g.Name] != "":
			t.Logf("%s %s: known difference (%s):\n%s", g.Method, g.Path, known[g.Name], diff)
		default:
			t.Errorf("%s %s (%s): the %s differs from Kafka's (-java +%s):\n%s", g.Method, g.Path, g.Name, who, who, diff)
		}
	}
}

func goldenPath(name string) string { return filepath.Join("testdata", "java-"+name+".json") }

func writeGoldens(t *testing.T, got []exchange) {
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(goldenPath("*"))
	for _, f := range old {
		os.Remove(f)
	}
	for _, e := range got {
		b, err := json.MarshalIndent(e, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPath(e.Name), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readGoldens(t *testing.T) []exchange {
	files, err := filepath.Glob(goldenPath("*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no goldens in testdata (run TestJavaWorker with -update): %v", err)
	}
	var out []exchange
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var e exchange
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, e)
	}
	return out
}
