package member

import (
	"bufio"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// TestKafkaBytes compares this package's encoders and decoders with bytes
// Kafka's own serializers wrote (testdata/kafka-4.4.0-protocol.txt): each
// value must encode to Kafka's bytes exactly, and Kafka's bytes must decode
// to the value.
func TestKafkaBytes(t *testing.T) {
	kafka := readKafkaBytes(t, "testdata/kafka-4.4.0-protocol.txt")
	tasks := []api.TaskID{{Connector: "a", Task: 0}, {Connector: "a", Task: 1}, {Connector: "b", Task: 0}}
	full := ExtendedAssignment{
		Version: ProtocolV2, Leader: "leader-1", LeaderURL: "http://l:8083", ConfigOffset: 42,
		Connectors: []string{"a"}, Tasks: tasks,
		RevokedConnectors: []string{"c"}, RevokedTasks: []api.TaskID{{Connector: "c", Task: 2}}, DelayMillis: 300000,
	}
	v1 := full
	v1.Version = ProtocolV1
	v0 := ExtendedAssignment{Leader: "leader-1", LeaderURL: "http://l:8083", ConfigOffset: 42, Connectors: []string{"a"}, Tasks: tasks}
	mismatch := ExtendedAssignment{Version: ProtocolV1, Error: ConfigMismatch, Leader: "leader-1", LeaderURL: "http://l:8083", ConfigOffset: 43}
	url := "http://w:8083"

	for _, tt := range []struct {
		name    string
		ours    []byte
		decoded any
		decode  func([]byte) (any, error)
	}{
		{"metadata_v0", encodeMetadataV0(url, 7), WorkerState{URL: url, ConfigOffset: 7}, decodeMetadataAny},
		{"metadata_v1_null", encodeMetadataV1(WorkerState{URL: url, ConfigOffset: 7}, false), WorkerState{URL: url, ConfigOffset: 7}, decodeMetadataAny},
		{"metadata_v2_assignment", encodeMetadataV1(WorkerState{URL: url, ConfigOffset: 7, Assignment: &full}, true),
			WorkerState{URL: url, ConfigOffset: 7, Assignment: &full}, decodeMetadataAny},
		{"assignment_v0", encodeAssignmentV0(v0), v0, decodeAssignmentAny},
		{"assignment_v1", encodeAssignmentV1(v1, false), v1, decodeAssignmentAny},
		{"assignment_v2", encodeAssignmentV1(full, true), full, decodeAssignmentAny},
		{"assignment_v1_mismatch", encodeAssignmentV1(mismatch, false), mismatch, decodeAssignmentAny},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want, ok := kafka[tt.name]
			if !ok {
				t.Fatalf("no %s in the Kafka bytes", tt.name)
			}
			if string(tt.ours) != string(want) {
				t.Errorf("encoded\n%x\nKafka wrote\n%x", tt.ours, want)
			}
			got, err := tt.decode(want)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.decoded, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Kafka's bytes decoded (-want +got):\n%s", diff)
			}
		})
	}
}

func decodeMetadataAny(b []byte) (any, error)   { return decodeMetadata(b) }
func decodeAssignmentAny(b []byte) (any, error) { return decodeAssignment(b) }

func readKafkaBytes(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]byte{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, h, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	return out
}
