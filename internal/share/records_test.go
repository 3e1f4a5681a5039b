package share

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The expected bytes below are written by hand from Kafka's JSON schemas
// (share-coordinator/src/main/resources/common/message, Kafka 4.2), field by
// field, so that a slip in the codec's order, widths or flexible encoding
// fails here rather than matching itself.

// h turns "00 02 | 67 31" into bytes; '|' and spaces only separate fields.
func h(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.NewReplacer(" ", "", "|", "", "\n", "", "\t", "").Replace(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var testKey = Key{Group: "g1", TopicID: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, Partition: 3}

const (
	keyBody = `0002 6731 | 0102030405060708090a0b0c0d0e0f10 | 00000003` // GroupId "g1", TopicId, Partition 3
	// StateBatches: compact array of 2 (varint 3), each FirstOffset int64,
	// LastOffset int64, DeliveryState int8, DeliveryCount int16, no tags.
	batchesHex = `03
		0000000000000064 0000000000000067 00 0002 00
		0000000000000068 0000000000000068 04 0005 00`
)

var testBatches = []StateBatch{{100, 103, Available, 2}, {104, 104, Archived, 5}}

func TestSnapshotRecordBytes(t *testing.T) {
	wantKey := h(t, `0000 |`+keyBody) // record type 0: ShareSnapshotKey
	wantValue := h(t, `0000 | 00000005 | 00000002 | 00000007 | 0000000000000064
		| 0000019a2b3c4d5e | 0000019a2b3c4d5f |`+batchesHex+`
		| 01 00 04 0000000a`) // tagged fields: one, tag 0 (DeliveryCompleteCount), size 4, 10
	snap := Snapshot{SnapshotEpoch: 5, StateEpoch: 2, LeaderEpoch: 7, StartOffset: 100,
		CreateTimestamp: 0x19a2b3c4d5e, WriteTimestamp: 0x19a2b3c4d5f, DeliveryCompleteCount: 10, Batches: testBatches}
	if got := EncodeSnapshotKey(testKey); !bytes.Equal(got, wantKey) {
		t.Fatalf("key\n got %x\nwant %x", got, wantKey)
	}
	if got := EncodeSnapshotValue(snap); !bytes.Equal(got, wantValue) {
		t.Fatalf("value\n got %x\nwant %x", got, wantValue)
	}
	k, gotSnap, upd, err := DecodeRecord(wantKey, wantValue)
	if err != nil || upd != nil || k != testKey || !reflect.DeepEqual(gotSnap, &snap) {
		t.Fatalf("decoded %+v %+v %+v %v", k, gotSnap, upd, err)
	}

	// DeliveryCompleteCount at its default (-1) is not written: an empty
	// tagged-field section, as Kafka before 4.2 wrote it.
	snap.DeliveryCompleteCount, snap.Batches = -1, nil
	wantValue = h(t, `0000 | 00000005 | 00000002 | 00000007 | 0000000000000064
		| 0000019a2b3c4d5e | 0000019a2b3c4d5f | 01 | 00`)
	if got := EncodeSnapshotValue(snap); !bytes.Equal(got, wantValue) {
		t.Fatalf("value without count\n got %x\nwant %x", got, wantValue)
	}
	_, gotSnap, _, err = DecodeRecord(wantKey, wantValue)
	snap.Batches = []StateBatch{}
	if err != nil || !reflect.DeepEqual(gotSnap, &snap) {
		t.Fatalf("decoded %+v %v", gotSnap, err)
	}
}

func TestUpdateRecordBytes(t *testing.T) {
	wantKey := h(t, `0001 |`+keyBody) // record type 1: ShareUpdateKey
	wantValue := h(t, `0000 | 00000005 | 00000007 | ffffffffffffffff |`+batchesHex+` | 00`)
	upd := Update{SnapshotEpoch: 5, LeaderEpoch: 7, StartOffset: -1, DeliveryCompleteCount: -1, Batches: testBatches}
	if got := EncodeUpdateKey(testKey); !bytes.Equal(got, wantKey) {
		t.Fatalf("key\n got %x\nwant %x", got, wantKey)
	}
	if got := EncodeUpdateValue(upd); !bytes.Equal(got, wantValue) {
		t.Fatalf("value\n got %x\nwant %x", got, wantValue)
	}
	k, snap, gotUpd, err := DecodeRecord(wantKey, wantValue)
	if err != nil || snap != nil || k != testKey || !reflect.DeepEqual(gotUpd, &upd) {
		t.Fatalf("decoded %+v %+v %+v %v", k, snap, gotUpd, err)
	}
}

func TestDecodeTombstoneAndTags(t *testing.T) {
	k, snap, upd, err := DecodeRecord(h(t, `0000 |`+keyBody), nil)
	if err != nil || k != testKey || snap != nil || upd != nil {
		t.Fatalf("tombstone: %+v %v %v %v", k, snap, upd, err)
	}
	// Unknown tags, in a batch and in the value, are skipped, as Kafka's
	// readers skip tags they do not know; DeliveryCompleteCount is found
	// among them.
	value := h(t, `0000 | 00000001 | 00000002 | 0000000000000000 | 02
		0000000000000000 0000000000000000 02 0001 | 01 05 02 abcd
		| 02 00 04 00000003 | 07 01 ff`)
	_, _, upd, err = DecodeRecord(h(t, `0001 |`+keyBody), value)
	want := &Update{SnapshotEpoch: 1, LeaderEpoch: 2, DeliveryCompleteCount: 3,
		Batches: []StateBatch{{0, 0, Acknowledged, 1}}}
	if err != nil || !reflect.DeepEqual(upd, want) {
		t.Fatalf("decoded %+v %v, want %+v", upd, err, want)
	}
}

func TestDecodeMalformed(t *testing.T) {
	key := h(t, `0000 |`+keyBody)
	value := EncodeSnapshotValue(Snapshot{StartOffset: 1, DeliveryCompleteCount: 4, Batches: testBatches})
	// Every truncation of the key and of the value fails, without a panic.
	for n := range key {
		if _, _, _, err := DecodeRecord(key[:n], value); !errors.Is(err, ErrMalformed) {
			t.Fatalf("key cut to %d bytes: err %v", n, err)
		}
	}
	for n := range value {
		if _, _, _, err := DecodeRecord(key, value[:n]); !errors.Is(err, ErrMalformed) {
			t.Fatalf("value cut to %d bytes: err %v", n, err)
		}
	}
	cases := map[string][2][]byte{
		"unknown record type":   {h(t, `0002 |`+keyBody), value},
		"unknown value version": {key, append([]byte{0, 1}, value[2:]...)},
		"bytes after the key":   {append(append([]byte{}, key...), 0), value},
		"bytes after the value": {key, append(append([]byte{}, value...), 0)},
		"null batches":          {h(t, `0001 |`+keyBody), h(t, `0000 00000000 00000000 0000000000000000 00 00`)},
		"huge batch count":      {h(t, `0001 |`+keyBody), h(t, `0000 00000000 00000000 0000000000000000 ffffffff0f 00`)},
		"null group":            {h(t, `0000 ffff 0102030405060708090a0b0c0d0e0f10 00000003`), value},
		"count of wrong size":   {h(t, `0001 |`+keyBody), h(t, `0000 00000000 00000000 0000000000000000 01 | 01 00 02 0000`)},
	}
	for name, c := range cases {
		if _, _, _, err := DecodeRecord(c[0], c[1]); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err %v, want ErrMalformed", name, err)
		}
	}
}

// TestCoordinatorKeyAndPartition: the expected strings and partitions were
// computed apart from this code: the topic ID as Java's Uuid.toString
// (URL-safe base64, no padding), the hash as Java's String.hashCode over
// UTF-16 code units (a surrogate pair for the emoji), abs as Kafka's
// Utils.abs.
func TestCoordinatorKeyAndPartition(t *testing.T) {
	if got := CoordinatorKey(testKey); got != "g1:AQIDBAUGBwgJCgsMDQ4PEA:3" {
		t.Fatalf("CoordinatorKey = %q", got)
	}
	if got := PartitionFor(testKey, 50); got != 36 {
		t.Fatalf("PartitionFor = %d, want 36", got)
	}
	k := Key{Group: "grüppe😀"}
	if got := CoordinatorKey(k); got != "grüppe😀:AAAAAAAAAAAAAAAAAAAAAA:0" {
		t.Fatalf("CoordinatorKey = %q", got)
	}
	if got := PartitionFor(k, 50); got != 41 {
		t.Fatalf("PartitionFor = %d, want 41", got)
	}
	// URL-safe base64: '-' and '_', where standard base64 has '+' and '/'.
	k = Key{Group: "g", TopicID: [16]byte{0xfb, 0xff, 0xbf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}
	if got := CoordinatorKey(k); got != "g:-_-__________________w:0" {
		t.Fatalf("CoordinatorKey = %q", got)
	}
	if got := PartitionFor(k, 0); got != 0 {
		t.Fatalf("PartitionFor over 0 partitions = %d", got)
	}
}

// TestSnapshotRoundTripsThroughRecords: a Partition's Snapshot written as a
// ShareSnapshotValue and read back restores the same partition.
func TestSnapshotRoundTripsThroughRecords(t *testing.T) {
	p := New(testConfig(), State{StartOffset: 0})
	p.Acquire("a", []LogBatch{batch(0, 9), {FirstOffset: 10, LastOffset: 10, Skip: true}, batch(11, 14)}, 100, t0)
	p.Acknowledge("a", []AckRange{accept(3, 4), ack(5, 5, AckRelease)}, t0)
	st := p.Snapshot()
	value := EncodeSnapshotValue(Snapshot{StateEpoch: st.StateEpoch, LeaderEpoch: st.LeaderEpoch,
		StartOffset: st.StartOffset, DeliveryCompleteCount: int32(p.DeliveryCompleteCount()), Batches: st.Batches})
	_, snap, _, err := DecodeRecord(EncodeSnapshotKey(testKey), value)
	if err != nil {
		t.Fatal(err)
	}
	q := New(testConfig(), State{StateEpoch: snap.StateEpoch, LeaderEpoch: snap.LeaderEpoch, StartOffset: snap.StartOffset, Batches: snap.Batches})
	if !reflect.DeepEqual(q.Snapshot(), st) || q.DeliveryCompleteCount() != int64(snap.DeliveryCompleteCount) {
		t.Fatalf("restored %+v, want %+v", q.Snapshot(), st)
	}
}

// FuzzDecodeRecord: the decoder never panics, and what it decodes encodes
// to bytes that decode to the same record (the bytes themselves may differ:
// unknown tags are dropped, varints written in shortest form).
func FuzzDecodeRecord(f *testing.F) {
	f.Add(EncodeSnapshotKey(testKey), EncodeSnapshotValue(Snapshot{DeliveryCompleteCount: 3, Batches: testBatches}))
	f.Add(EncodeUpdateKey(testKey), EncodeUpdateValue(Update{StartOffset: -1, DeliveryCompleteCount: -1, Batches: testBatches}))
	for _, rec := range readKafkaRecords(f) { // Kafka 4.4's own bytes
		f.Add(unhex(f, rec["key"]), unhex(f, rec["value"]))
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		k, snap, upd, err := DecodeRecord(key, value)
		if err != nil || (snap == nil && upd == nil) {
			return
		}
		var key2, value2 []byte
		if snap != nil {
			key2, value2 = EncodeSnapshotKey(k), EncodeSnapshotValue(*snap)
		} else {
			key2, value2 = EncodeUpdateKey(k), EncodeUpdateValue(*upd)
		}
		k2, snap2, upd2, err := DecodeRecord(key2, value2)
		if err != nil || k2 != k || !reflect.DeepEqual(snap2, snap) || !reflect.DeepEqual(upd2, upd) {
			t.Fatalf("re-encoded record decodes to %+v %+v %+v %v, was %+v %+v %+v", k2, snap2, upd2, err, k, snap, upd)
		}
	})
}
