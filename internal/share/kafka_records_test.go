package share

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"
)

// kafkaRecordsPath holds a ShareSnapshotValue and a ShareUpdateValue
// record as Apache Kafka 4.4.0's share coordinator wrote them, raw, kept
// by test/kafkaref's TestKafkaShareGroupState (which checks every record
// Kafka wrote against a real share group's consumption) with -update.
const kafkaRecordsPath = "testdata/kafka-4.4-share-group-state.hex"

// TestKafkaWrittenRecords decodes Kafka's own bytes, requires the decoded
// form kept beside them, and encodes it back to the same bytes: the
// timestamps' place and DeliveryCompleteCount's tag as Kafka writes them,
// checked without Java.
func TestKafkaWrittenRecords(t *testing.T) {
	records := readKafkaRecords(t)
	for _, kind := range []string{"snapshot", "update"} {
		rec, ok := records[kind]
		if !ok || rec["key"] == "" || rec["value"] == "" || rec["decoded"] == "" {
			t.Fatalf("%s: no %s key, value and decoded lines", kafkaRecordsPath, kind)
		}
		key, value := unhex(t, rec["key"]), unhex(t, rec["value"])
		k, snap, upd, err := DecodeRecord(key, value)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if k.Group != "share-app" || k.Partition != 0 {
			t.Errorf("%s: key %+v, want group share-app, partition 0", kind, k)
		}
		var decoded string
		var keyAgain, valueAgain []byte
		var done int32
		switch kind {
		case "snapshot":
			if snap == nil {
				t.Fatalf("snapshot: decoded as an update")
			}
			decoded, done = snap.String(), snap.DeliveryCompleteCount
			keyAgain, valueAgain = EncodeSnapshotKey(k), EncodeSnapshotValue(*snap)
			// Both timestamps must be times of the recording: a field out
			// of place would read as a wild number.
			for _, ts := range []int64{snap.CreateTimestamp, snap.WriteTimestamp} {
				if at := time.UnixMilli(ts); at.Year() < 2025 || at.Year() > 2100 {
					t.Errorf("snapshot: timestamp %d (%v) is no time of the recording", ts, at)
				}
			}
		case "update":
			if upd == nil {
				t.Fatalf("update: decoded as a snapshot")
			}
			decoded, done = upd.String(), upd.DeliveryCompleteCount
			keyAgain, valueAgain = EncodeUpdateKey(k), EncodeUpdateValue(*upd)
		}
		if done == -1 {
			t.Errorf("%s: no DeliveryCompleteCount, yet Kafka 4.4 wrote one in these records", kind)
		}
		if decoded != rec["decoded"] {
			t.Errorf("%s decodes as\n %s\nwant\n %s", kind, decoded, rec["decoded"])
		}
		if !bytes.Equal(keyAgain, key) {
			t.Errorf("%s key encodes as\n %x\nKafka's\n %x", kind, keyAgain, key)
		}
		if !bytes.Equal(valueAgain, value) {
			t.Errorf("%s value encodes as\n %x\nKafka's\n %x", kind, valueAgain, value)
		}
	}
}

// readKafkaRecords reads lines "kind field value" (kind snapshot or
// update; field key, value or decoded), '#' lines being comments.
func readKafkaRecords(t testing.TB) map[string]map[string]string {
	t.Helper()
	f, err := os.Open(kafkaRecordsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kind, rest, ok1 := strings.Cut(line, " ")
		field, value, ok2 := strings.Cut(rest, " ")
		if !ok1 || !ok2 {
			t.Fatalf("%s: line %q is not \"kind field value\"", kafkaRecordsPath, line)
		}
		if out[kind] == nil {
			out[kind] = map[string]string{}
		}
		out[kind][field] = value
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("%s: %v", kafkaRecordsPath, err)
	}
	return b
}
