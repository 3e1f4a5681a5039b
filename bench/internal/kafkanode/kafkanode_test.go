package kafkanode

import (
	"context"
	"strings"
	"testing"
)

// A malformed extra property is refused before anything starts (no Java
// needed).
func TestStartRefusesBadExtra(t *testing.T) {
	for _, kv := range []string{"no-equals", "=value", " =x"} {
		_, err := Start(context.Background(), Options{Java: "false", Extra: []string{kv}}, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "not key=value") {
			t.Errorf("extra %q: %v", kv, err)
		}
	}
}

// A single node's properties: the listeners on the given addresses, the
// standalone controller quorum and replication factor 1 for the internal
// topics, share groups' state included.
func TestSingleNodeProperties(t *testing.T) {
	text := strings.Join(append(CombinedProperties("PLAINTEXT", "127.0.0.1:1", "127.0.0.1:2", "/d"),
		SingleNodeProperties("127.0.0.1:2")...), "\n")
	for _, want := range []string{"listeners=PLAINTEXT://127.0.0.1:1,CONTROLLER://127.0.0.1:2",
		"controller.quorum.bootstrap.servers=127.0.0.1:2", "log.dirs=/d", "node.id=1",
		"share.coordinator.state.topic.replication.factor=1", "offsets.topic.replication.factor=1"} {
		if !strings.Contains(text, want+"\n") && !strings.HasSuffix(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
}

func TestNewClusterID(t *testing.T) {
	for range 200 {
		id := NewClusterID()
		if len(id) != 22 || id[0] == '-' {
			t.Fatalf("cluster ID %q", id)
		}
	}
}
