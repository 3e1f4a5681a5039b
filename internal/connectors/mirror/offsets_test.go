package mirror

import (
	"strings"
	"testing"

	"github.com/samsa-io/samsa/connect"
)

// TestAlterOffsets: Kafka's KIP-875 checks of the three connectors. The
// runtime hands over JSON integers as int64.
func TestAlterOffsets(t *testing.T) {
	src := map[string]any{"cluster": "A", "topic": "t", "partition": int64(0)}
	for _, c := range []struct {
		name    string
		conn    connect.SourceOffsetAlterer
		p, o    map[string]any
		wantErr string
	}{
		{"source ok", &SourceConnector{}, src, map[string]any{"offset": int64(7)}, ""},
		{"source tombstone", &SourceConnector{}, map[string]any{"junk": true}, nil, ""},
		{"source negative", &SourceConnector{}, src, map[string]any{"offset": int64(-1)}, "which cannot be negative"},
		{"source no cluster", &SourceConnector{}, map[string]any{"topic": "t", "partition": int64(0)}, map[string]any{"offset": int64(1)}, "missing the 'cluster' key"},
		{"source partition string", &SourceConnector{}, map[string]any{"cluster": "A", "topic": "t", "partition": "0"}, map[string]any{"offset": int64(1)}, "which must be an integer"},
		{"source offset string", &SourceConnector{}, src, map[string]any{"offset": "1"}, "which must be an integer"},
		{"checkpoint zero", &CheckpointConnector{}, map[string]any{"group": "g", "topic": "A.t", "partition": int64(1)}, map[string]any{"offset": int64(0)}, ""},
		{"checkpoint nonzero", &CheckpointConnector{}, map[string]any{"group": "g", "topic": "A.t", "partition": int64(1)}, map[string]any{"offset": int64(3)}, "the only accepted value is 0"},
		{"heartbeat", &HeartbeatConnector{}, map[string]any{"sourceClusterAlias": "A", "targetClusterAlias": "B"}, map[string]any{"offset": int64(0)}, ""},
		{"heartbeat no target", &HeartbeatConnector{}, map[string]any{"sourceClusterAlias": "A"}, map[string]any{"offset": int64(0)}, "missing the 'targetClusterAlias' key"},
	} {
		ok, err := c.conn.AlterOffsets(nil, []connect.SourcePartitionOffset{{Partition: c.p, Offset: c.o}})
		switch {
		case c.wantErr == "" && (err != nil || !ok):
			t.Errorf("%s: %v %v", c.name, ok, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: %v; want %q", c.name, err, c.wantErr)
		}
	}
}
