package connectrt

import (
	"os"
	"testing"

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

// startBroker starts a single-node broker and answers its address.
func startBroker(t testing.TB, args ...string) string {
	t.Helper()
	addr, _ := devcluster.StartTestBroker(t, args...)
	return addr
}
