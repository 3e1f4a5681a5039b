package devcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"time"
)

// TB is the part of testing.TB StartTestBroker uses (this package is also
// linked into the samsa binary, which should not carry package testing).
type TB interface {
	Helper()
	Fatal(args ...any)
	Logf(format string, args ...any)
	Cleanup(func())
	TempDir() string
	Failed() bool
	Context() context.Context
}

var (
	servingRE   = regexp.MustCompile(`samsa serving.*`)
	plaintextRE = regexp.MustCompile(`(?:^|[^A-Z_])PLAINTEXT://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)
)

// StartTestBroker runs a single-node `samsa serve` for a test (cmd/samsa
// built once per test binary: the caller's TestMain calls RemoveBuilt): one
// PLAINTEXT listener on a loopback port the kernel picks, data in the
// test's temporary directory, the HTTP, Schema Registry, REST Proxy and
// console listeners off unless args (more of serve's flags, which win) turn them on.
// The process is killed when the test ends, and a failed test reports its
// log's last lines. It answers the listener's address and the process.
func StartTestBroker(t TB, args ...string) (string, *Serve) {
	t.Helper()
	bin, err := BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	serve, found, err := StartServe(ctx, bin, append([]string{
		"--override", "samsa.http.listener=", "--override", "samsa.schema.registry.listener=", "--override", "samsa.rest.listener=",
		"--override", "samsa.console.listener=",
		"--listeners", "PLAINTEXT://127.0.0.1:0", "--log.dirs", filepath.Join(t.TempDir(), "data"),
	}, args...), servingRE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Kill()
		if t.Failed() {
			t.Logf("broker log (last lines):\n%s", serve.Tail())
		}
	})
	m := plaintextRE.FindStringSubmatch(found[0][0])
	if m == nil {
		t.Fatal(fmt.Sprintf("no PLAINTEXT listener in %q", found[0][0]))
	}
	return m[1], serve
}
