package streamsdiff

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/samsa-io/samsa/internal/devcluster"
)

func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

// The Kafka Streams run is the same for both tests: the first test that
// needs it runs it, the other reuses its outputs.
var (
	javaOnce sync.Once
	javaOut  outputs
)

// javaOutputs answers the Kafka Streams run's outputs, running it first
// if no test did.
func javaOutputs(t *testing.T) outputs {
	t.Helper()
	requireJava(t)
	ran := false
	javaOnce.Do(func() {
		ran = true
		javaOut = runTopologies(t, "java-", startJava)
	})
	if javaOut == nil {
		if ran {
			t.Fatal("the Kafka Streams run produced nothing")
		}
		t.Fatal("the Kafka Streams run failed in an earlier test")
	}
	return javaOut
}

// TestDifferential runs the six topologies on Samsa's library and on
// Kafka Streams 4.4, each on a Samsa broker of its own with the same
// input, and requires the same output records: per output topic and key,
// the same values (nulls included), timestamps and partitions, in the
// same order.
func TestDifferential(t *testing.T) {
	requireJava(t)
	// Samsa's side first: it is the one expected to fail while the
	// library is written, and it fails fast.
	samsa := runTopologies(t, "samsa-", runSamsaTopologies)
	java := javaOutputs(t)
	if diffs := diffOutputs(java, samsa, "Kafka Streams", "Samsa"); len(diffs) > 0 {
		t.Errorf("%d keys differ:\n%s", len(diffs), strings.Join(diffs, "\n"))
	}
}
