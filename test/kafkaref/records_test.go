package kafkaref

import (
	"encoding/hex"
	"maps"
	"strings"
	"testing"
)

// The records below are MirrorMaker 2 4.3.0's, from TestKafkaToKafkaMM2's
// runs (testdata/mm2-a-to-b.txt; the heartbeat's timestamp is another
// run's).
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseMirrorRecords(t *testing.T) {
	s, err := ParseOffsetSync(unhex(t, "00066f726465727300000001"), unhex(t, "00000000000000060000000000000006"))
	if want := (OffsetSync{Topic: "orders", Partition: 1, Upstream: 6, Downstream: 6}); err != nil || s != want {
		t.Errorf("offset sync = %+v, %v; want %+v", s, err, want)
	}
	c, err := ParseCheckpoint(unhex(t, "000a6f72646572732d6170700008412e6f726465727300000002"),
		unhex(t, "00000000000000000004000000000000000400016d"))
	if want := (Checkpoint{Group: "orders-app", Topic: "A.orders", Partition: 2, Upstream: 4, Downstream: 4, Metadata: "m"}); err != nil || c != want {
		t.Errorf("checkpoint = %+v, %v; want %+v", c, err, want)
	}
	h, err := ParseHeartbeat(unhex(t, "000141000142"), unhex(t, "0000000001a244f6bb67"))
	if want := (Heartbeat{SourceAlias: "A", TargetAlias: "B", TimestampMillis: 1796453350247}); err != nil || h != want {
		t.Errorf("heartbeat = %+v, %v; want %+v", h, err, want)
	}
}

func TestParseMirrorRecordsRejects(t *testing.T) {
	for _, tc := range []struct {
		name, key, value, want string
		parse                  func(k, v []byte) error
	}{
		{"sync key truncated", "00066f7264", "00000000000000060000000000000006", "offset-sync key: truncated", syncErr},
		{"sync value left over", "00066f726465727300000001", "0000000000000006000000000000000600", "offset-sync value: 1 bytes left over", syncErr},
		{"checkpoint version 1", "0001670001740000000000", "00010000000000000004000000000000000400016d", "version 1", checkpointErr},
		{"heartbeat negative length", "ffff", "0000000001a244f6bb67", "heartbeat key: truncated", heartbeatErr},
	} {
		err := tc.parse(unhex(t, tc.key), unhex(t, tc.value))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

func syncErr(k, v []byte) error       { _, err := ParseOffsetSync(k, v); return err }
func checkpointErr(k, v []byte) error { _, err := ParseCheckpoint(k, v); return err }
func heartbeatErr(k, v []byte) error  { _, err := ParseHeartbeat(k, v); return err }

func TestParseTranslated(t *testing.T) {
	got, err := parseTranslated("[2026] WARN something (x)\nOFFSET\tA.orders\t0\t10\nOFFSET\tA.orders\t2\t4\n")
	if err != nil || len(got) != 1 || !maps.Equal(got["A.orders"], map[int32]int64{0: 10, 2: 4}) {
		t.Errorf("parseTranslated = %v, %v", got, err)
	}
	if _, err := parseTranslated("OFFSET\tA.orders\tx\t10\n"); err == nil {
		t.Error("a bad partition was accepted")
	}
}
