package connectrt

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// The cluster in these tests is a real Samsa broker: cmd/samsa built once
// per test run and started as "samsa serve". The runtime is a Kafka client
// of it only.
func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

var (
	brokerServingRE = regexp.MustCompile(`samsa serving.*`)
	listenerRE      = regexp.MustCompile(`(?:^|[^A-Z_])PLAINTEXT://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)
)

// startBroker starts a single-node broker and answers its address.
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
