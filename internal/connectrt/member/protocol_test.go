package member

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// unhex reads hex written with spaces between fields, as Kafka's schema
// comments lay them out.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The bytes below are written by hand from Kafka's ConnectProtocol and
// IncrementalCooperativeConnectProtocol schemas (int16 version header;
// STRING = int16 length + bytes; arrays and BYTES = int32 count, -1 null).
func TestMetadataBytes(t *testing.T) {
	url := "http://w:8083" // 13 bytes
	urlHex := "000d " + hex.EncodeToString([]byte(url))
	assignment := &ExtendedAssignment{
		Version: ProtocolV1, Leader: "L", LeaderURL: "u", ConfigOffset: 3,
		Connectors: []string{"a"}, Tasks: []api.TaskID{{Connector: "a", Task: 0}},
	}
	assignmentHex := "0001 0000 0001 4c 0001 75 0000000000000003" +
		" 00000001 0001 61 00000002 ffffffff 00000000" + // assignment: a -> [-1, 0]
		" 00000000" + // revoked: none
		" 00000000" // delay
	for _, tt := range []struct {
		name string
		got  []byte
		want string
	}{
		{"v0", encodeMetadataV0(url, 7), "0000 " + urlHex + " 0000000000000007"},
		{"v1 no assignment", encodeMetadataV1(WorkerState{URL: url, ConfigOffset: 7}, false),
			"0001 " + urlHex + " 0000000000000007 ffffffff"},
		{"v2 no assignment", encodeMetadataV1(WorkerState{URL: url, ConfigOffset: -1}, true),
			"0002 " + urlHex + " ffffffffffffffff ffffffff"},
		{"v1 with assignment", encodeMetadataV1(WorkerState{URL: url, ConfigOffset: 7, Assignment: assignment}, false),
			"0001 " + urlHex + " 0000000000000007 0000002d " + assignmentHex},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if want := unhex(t, tt.want); string(tt.got) != string(want) {
				t.Fatalf("encoded\n%x\nwant\n%x", tt.got, want)
			}
			ws, err := decodeMetadata(tt.got)
			if err != nil {
				t.Fatal(err)
			}
			if ws.URL != url {
				t.Errorf("url %q", ws.URL)
			}
		})
	}
	ws, err := decodeMetadata(encodeMetadataV1(WorkerState{URL: url, ConfigOffset: 7, Assignment: assignment}, false))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(assignment, ws.Assignment, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("allocation round trip (-want +got):\n%s", diff)
	}
}

func TestAssignmentBytes(t *testing.T) {
	a := ExtendedAssignment{
		Version: ProtocolV2, Error: ConfigMismatch, Leader: "L", LeaderURL: "u", ConfigOffset: 9,
		Connectors: []string{"b"}, Tasks: []api.TaskID{{Connector: "a", Task: 1}, {Connector: "b", Task: 0}},
		RevokedTasks: []api.TaskID{{Connector: "c", Task: 2}}, DelayMillis: 300000,
	}
	want := unhex(t, "0002 0001 0001 4c 0001 75 0000000000000009"+
		" 00000002 0001 62 00000002 ffffffff 00000000 0001 61 00000001 00000001"+
		" 00000001 0001 63 00000001 00000002"+
		" 000493e0")
	got := encodeAssignmentV1(a, true)
	if string(got) != string(want) {
		t.Fatalf("encoded\n%x\nwant\n%x", got, want)
	}
	back, err := decodeAssignment(got)
	if err != nil {
		t.Fatal(err)
	}
	// connectors first appear in assignment order: b's entry, then a's.
	if diff := cmp.Diff(a, back, cmpopts.EquateEmpty(), cmpopts.SortSlices(compareTasksLess)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	// A v0 assignment (an eager leader's) has no revocations and no delay;
	// Kafka's workers read it with the v1 schema and its defaults.
	v0 := encodeAssignmentV0(ExtendedAssignment{Leader: "L", LeaderURL: "u", ConfigOffset: 4, Connectors: []string{"a"}})
	if want := unhex(t, "0000 0000 0001 4c 0001 75 0000000000000004 00000001 0001 61 00000001 ffffffff"); string(v0) != string(want) {
		t.Fatalf("v0 encoded\n%x\nwant\n%x", v0, want)
	}
	back, err = decodeAssignment(v0)
	if err != nil {
		t.Fatal(err)
	}
	if back.Version != ProtocolV0 || back.ConfigOffset != 4 || len(back.Connectors) != 1 || back.DelayMillis != 0 || len(back.RevokedTasks) != 0 {
		t.Errorf("v0 decoded as %+v", back)
	}
}

func compareTasksLess(a, b api.TaskID) bool { return compareTasks(a, b) < 0 }

func TestDecodeMalformed(t *testing.T) {
	for _, tt := range []struct{ name, hex string }{
		{"empty", ""},
		{"short url", "0001 0005 61"},
		{"negative version", "ffff 0001 61 0000000000000000"},
		{"null url", "0001 ffff 0000000000000000"},
		{"huge array", "0001 0000 0000 0000 0000000000000000 7fffffff"},
		{"allocation past the end", "0001 0001 61 0000000000000000 00000010 0001"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := unhex(t, tt.hex)
			_, errM := decodeMetadata(b)
			_, errA := decodeAssignment(b)
			if !errors.Is(errM, ErrMalformed) && !errors.Is(errA, ErrMalformed) {
				t.Fatalf("metadata: %v, assignment: %v", errM, errA)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(encodeMetadataV0("http://x", 1))
	f.Add(encodeMetadataV1(WorkerState{URL: "u", Assignment: &ExtendedAssignment{Connectors: []string{"a"}}}, true))
	f.Add(encodeAssignmentV1(ExtendedAssignment{Tasks: []api.TaskID{{Connector: "a", Task: 3}}}, false))
	f.Fuzz(func(t *testing.T, b []byte) {
		if a, err := decodeAssignment(b); err == nil {
			again, err := decodeAssignment(encodeAssignmentV1(a, a.Version >= ProtocolV2))
			if err != nil || len(again.Tasks) != len(a.Tasks) || again.ConfigOffset != a.ConfigOffset || again.DelayMillis != a.DelayMillis {
				t.Fatalf("re-encoded assignment does not decode alike: %v", err)
			}
		}
		decodeMetadata(b)
	})
}
