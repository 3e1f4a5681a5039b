package rest

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// javaExchange is one call of test/connectdiff's sequence as Apache
// Kafka's worker answered it (testdata/java-*.json there).
type javaExchange struct {
	Seq         int    `json:"seq"`
	Compare     string `json:"compare"`
	Name        string `json:"name"`
	Method      string `json:"method"`
	Path        string `json:"path"`
	ContentType string `json:"content_type"`
	Body        string `json:"body"`
	Status      int    `json:"status"`
	Response    any    `json:"response"`
}

// notFromMemory are the calls whose answers come from what only a real
// worker has: ConfigDef's definitions and validation messages, offsets a
// running task committed.
var notFromMemory = map[string]bool{
	"create-invalid":       true, // ConfigDef's messages
	"validate-good":        true, // ConfigDef's definitions
	"validate-bad":         true,
	"plugin-config-source": true,
	"plugin-config-sink":   true,
	"offsets-src-running":  true, // the offset the source task committed
}

// TestJavaAnswers replays the Java worker's recorded sequence through the
// handler over the in-memory herder and wants Kafka's status codes and
// bodies: routes, methods, error bodies, the 201/200/202/204 of each
// call, query flags, empty lists, the body checks made before the herder.
func TestJavaAnswers(t *testing.T) {
	want := readJavaExchanges(t)
	h := newMemHerder("")
	srv := newTestServer(t, h)
	h.workerID = strings.TrimPrefix(srv.URL, "http://")
	compared := 0
	for _, e := range want {
		got := replay(t, srv.URL, h, e)
		if notFromMemory[e.Name] {
			continue
		}
		compared++
		if diff := cmp.Diff(comparable(e), comparable(got)); diff != "" {
			t.Errorf("%s %s (%s): differs from Kafka's answer (-java +ours):\n%s", e.Method, e.Path, e.Name, diff)
		}
	}
	if compared < 80 {
		t.Errorf("compared %d answers; the goldens have %d", compared, len(want))
	}
}

func readJavaExchanges(t *testing.T) []javaExchange {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "test", "connectdiff", "testdata", "java-*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Java goldens: %v", err)
	}
	var out []javaExchange
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var e javaExchange
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b javaExchange) int { return a.Seq - b.Seq })
	return out
}

func newTestServer(t *testing.T, h *memHerder, opts ...func(*Config)) *httptest.Server {
	t.Helper()
	cfg := Config{Herder: h, Loggers: NewLevelVars(slog.LevelInfo), Logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

// replay makes e's request and answers ours, normalised as test/connectdiff
// normalises the Java worker's.
func replay(t *testing.T, base string, h *memHerder, e javaExchange) javaExchange {
	t.Helper()
	var body io.Reader
	if e.Body != "" {
		body = strings.NewReader(e.Body)
	}
	req, err := http.NewRequest(e.Method, base+e.Path, body)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case e.ContentType == "-":
	case e.ContentType != "":
		req.Header.Set("Content-Type", e.ContentType)
	case e.Body != "":
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	u, _ := url.Parse(base)
	b = []byte(strings.NewReplacer(u.Host, "$WORKER", h.clusterID, "$CLUSTER_ID").Replace(string(b)))
	got := e
	got.Status = resp.StatusCode
	got.Response = normaliseAnswer(e.Name, b)
	return got
}

// normaliseAnswer is test/connectdiff's normalise: versions, commits,
// traces and times as placeholders, the loggers' list cut to the root, the
// plugin lists to the FileStream connectors.
func normaliseAnswer(name string, body []byte) any {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return "$NOT_JSON: " + string(body)
	}
	v = answerPlaceholders(v)
	if m, ok := v.(map[string]any); ok && name == "loggers" {
		v = map[string]any{"root": m["root"]}
	}
	if l, ok := v.([]any); ok && (name == "plugins" || name == "plugins-all") {
		v = slices.DeleteFunc(l, func(p any) bool {
			m, _ := p.(map[string]any)
			class, _ := m["class"].(string)
			return !strings.HasPrefix(class, "org.apache.kafka.connect.file.FileStream")
		})
	}
	return v
}

func answerPlaceholders(v any) any {
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
				v[k] = answerPlaceholders(e)
			}
		}
	case []any:
		for i := range v {
			v[i] = answerPlaceholders(v[i])
		}
	}
	return v
}

// comparable is an answer as far as its call compares it.
func comparable(e javaExchange) any {
	switch e.Compare {
	case "status":
		if m, ok := e.Response.(map[string]any); ok {
			return map[string]any{"status": e.Status, "error_code": m["error_code"]}
		}
		return map[string]any{"status": e.Status}
	case "shape":
		_, isList := e.Response.([]any)
		return map[string]any{"status": e.Status, "list": isList}
	}
	return map[string]any{"status": e.Status, "response": e.Response}
}
