package restproxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// The cluster behind the proxy in these tests is a real Samsa broker:
// cmd/samsa built once per test run and started as "samsa serve". The
// package itself never imports the broker.
func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

var (
	brokerServingRE = regexp.MustCompile(`samsa serving.*`)
	listenerRE      = regexp.MustCompile(`(?:^|[^A-Z_])PLAINTEXT://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)
)

// startBroker starts a single-node broker with one PLAINTEXT listener and
// answers its address; args are more of samsa serve's flags.
func startBroker(t testing.TB, args ...string) string {
	t.Helper()
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	serve, found, err := devcluster.StartServe(ctx, bin, append([]string{
		"--override", "samsa.http.listener=", "--override", "samsa.schema.registry.listener=", "--override", "samsa.rest.listener=",
		"--listeners", "PLAINTEXT://127.0.0.1:0", "--log.dirs", filepath.Join(t.TempDir(), "data"),
	}, args...), brokerServingRE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Kill()
		if t.Failed() {
			t.Logf("broker log (last lines):\n%s", serve.Tail())
		}
	})
	m := listenerRE.FindStringSubmatch(found[0][0])
	if m == nil {
		t.Fatalf("no PLAINTEXT listener in %q", found[0][0])
	}
	return m[1]
}

// testProxy is a proxy on a real broker, served on a loopback httptest
// server, with the cluster's ID as an independent client reads it.
type testProxy struct {
	broker    string
	url       string
	clusterID string
	admin     *kadm.Client
}

func startProxy(t testing.TB, cfg Config, brokerArgs ...string) *testProxy {
	t.Helper()
	addr := startBroker(t, brokerArgs...)
	cfg.ClientOpts = append(cfg.ClientOpts, kgo.SeedBrokers(addr))
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p.Handler())
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		p.Close()
		cl.Close()
	})
	admin := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	md, err := admin.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &testProxy{broker: addr, url: srv.URL, clusterID: md.Cluster, admin: admin}
}

// v3 is the path of a resource of the test's cluster: v3("/topics/a").
func (tp *testProxy) v3(path string) string { return "/v3/clusters/" + tp.clusterID + path }

// link is an absolute link as the proxy writes them.
func (tp *testProxy) link(path string) string { return tp.url + tp.v3(path) }

// do sends a request (a JSON body when body is not "") and answers the
// status and the decoded JSON body (nil when empty).
func (tp *testProxy) do(t *testing.T, method, path, contentType, body string) (int, any) {
	t.Helper()
	resp, raw := send(t, t.Context(), method, tp.url+path, contentType, "", body)
	if len(raw) == 0 {
		return resp.StatusCode, nil
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: content type %q, body %s", method, path, ct, raw)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s %s: body %s: %v", method, path, raw, err)
	}
	return resp.StatusCode, v
}

// jsonOf decodes a JSON literal, for comparing against answers.
func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("test JSON %s: %v", s, err)
	}
	return v
}

// send makes one HTTP request, with a body, Content-Type and Accept when
// not "", and answers the response (its body closed) and the body read.
func send(t testing.TB, ctx context.Context, method, url, contentType, accept, body string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}
