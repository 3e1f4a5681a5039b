package mm2

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// unhex reads a vector written with spaces between fields.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad vector %q: %v", s, err)
	}
	return b
}

// The vectors are worked out by hand from Kafka's classes: each Struct is
// its fields in schema order, STRING = int16 length + UTF-8, INT32/INT64
// big-endian two's complement; Checkpoint and Heartbeat values start with
// the int16 version 0 (HEADER_SCHEMA), OffsetSync has no header.

func TestOffsetSyncVectors(t *testing.T) {
	tests := []struct {
		name       string
		sync       OffsetSync
		key, value string
	}{{
		// OffsetSyncStoreTest's tp = topic1-2, synced 100 -> 200.
		name:  "topic1-2",
		sync:  OffsetSync{Topic: "topic1", Partition: 2, UpstreamOffset: 100, DownstreamOffset: 200},
		key:   "0006 746f70696331 00000002",
		value: "0000000000000064 00000000000000c8",
	}, {
		name:  "empty topic, negative and extreme offsets",
		sync:  OffsetSync{Topic: "", Partition: -1, UpstreamOffset: -1, DownstreamOffset: 1<<63 - 1},
		key:   "0000 ffffffff",
		value: "ffffffffffffffff 7fffffffffffffff",
	}, {
		// Lengths count UTF-8 bytes, not characters.
		name:  "non-ASCII topic",
		sync:  OffsetSync{Topic: "é", Partition: 65536, UpstreamOffset: 0, DownstreamOffset: 256},
		key:   "0002 c3a9 00010000",
		value: "0000000000000000 0000000000000100",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, value := unhex(t, tt.key), unhex(t, tt.value)
			if got := tt.sync.Key(); !bytes.Equal(got, key) {
				t.Errorf("Key() = %x, want %x", got, key)
			}
			if got := tt.sync.Value(); !bytes.Equal(got, value) {
				t.Errorf("Value() = %x, want %x", got, value)
			}
			got, err := DecodeOffsetSync(key, value)
			if err != nil || got != tt.sync {
				t.Errorf("DecodeOffsetSync = %+v, %v; want %+v", got, err, tt.sync)
			}
		})
	}
}

func TestCheckpointVectors(t *testing.T) {
	tests := []struct {
		name       string
		cp         Checkpoint
		key, value string
	}{{
		name:  "renamed topic with metadata",
		cp:    Checkpoint{Group: "g1", Topic: "source1.topic1", Partition: 0, UpstreamOffset: 11, DownstreamOffset: 4, Metadata: "meta"},
		key:   "0002 6731 000e 736f75726365312e746f70696331 00000000",
		value: "0000 000000000000000b 0000000000000004 0004 6d657461",
	}, {
		// OffsetAndMetadata turns a null metadata into "", written as length 0.
		name:  "empty metadata",
		cp:    Checkpoint{Group: "group1", Topic: "source1.t1", Partition: 7, UpstreamOffset: 250, DownstreamOffset: 201},
		key:   "0006 67726f757031 000a 736f75726365312e7431 00000007",
		value: "0000 00000000000000fa 00000000000000c9 0000",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, value := unhex(t, tt.key), unhex(t, tt.value)
			if got := tt.cp.Key(); !bytes.Equal(got, key) {
				t.Errorf("Key() = %x, want %x", got, key)
			}
			if got := tt.cp.Value(); !bytes.Equal(got, value) {
				t.Errorf("Value() = %x, want %x", got, value)
			}
			got, err := DecodeCheckpoint(key, value)
			if err != nil || got != tt.cp {
				t.Errorf("DecodeCheckpoint = %+v, %v; want %+v", got, err, tt.cp)
			}
		})
	}
}

func TestHeartbeatVectors(t *testing.T) {
	h := Heartbeat{SourceCluster: "A", TargetCluster: "B", Timestamp: 1700000000000}
	key, value := unhex(t, "0001 41 0001 42"), unhex(t, "0000 0000018bcfe56800")
	if got := h.Key(); !bytes.Equal(got, key) {
		t.Errorf("Key() = %x, want %x", got, key)
	}
	if got := h.Value(); !bytes.Equal(got, value) {
		t.Errorf("Value() = %x, want %x", got, value)
	}
	got, err := DecodeHeartbeat(key, value)
	if err != nil || got != h {
		t.Errorf("DecodeHeartbeat = %+v, %v; want %+v", got, err, h)
	}
}

// TestDecodeLikeKafka pins what Kafka's Schema.read tolerates: bytes past
// the schema, and a value header with another version (the version check
// is a Java assert, off in production, so version 0's schema reads it).
func TestDecodeLikeKafka(t *testing.T) {
	sync := OffsetSync{Topic: "t", Partition: 1, UpstreamOffset: 2, DownstreamOffset: 3}
	if got, err := DecodeOffsetSync(append(sync.Key(), 0xff), append(sync.Value(), 1, 2, 3)); err != nil || got != sync {
		t.Errorf("trailing bytes: %+v, %v", got, err)
	}
	cp := Checkpoint{Group: "g", Topic: "t", Partition: 1, UpstreamOffset: 2, DownstreamOffset: 3, Metadata: "m"}
	v := cp.Value()
	v[1] = 1 // version 1
	if got, err := DecodeCheckpoint(cp.Key(), append(v, 9)); err != nil || got != cp {
		t.Errorf("checkpoint version 1 with a trailing byte: %+v, %v", got, err)
	}
	h := Heartbeat{SourceCluster: "a", TargetCluster: "b", Timestamp: 5}
	hv := h.Value()
	hv[0] = 0xff
	if got, err := DecodeHeartbeat(h.Key(), hv); err != nil || got != h {
		t.Errorf("heartbeat version -256: %+v, %v", got, err)
	}
}

func TestDecodeErrors(t *testing.T) {
	syncKey := OffsetSync{Topic: "topic1", Partition: 2}.Key()
	syncValue := OffsetSync{UpstreamOffset: 1, DownstreamOffset: 2}.Value()
	cp := Checkpoint{Group: "g1", Topic: "t", Partition: 1, Metadata: "meta"}
	hb := Heartbeat{SourceCluster: "a", TargetCluster: "b"}
	tests := []struct {
		name    string
		decode  func() error
		message string
	}{
		{"sync nil key", func() error { _, err := DecodeOffsetSync(nil, syncValue); return err }, "no key"},
		{"sync nil value", func() error { _, err := DecodeOffsetSync(syncKey, nil); return err }, "no value"},
		{"sync empty key", func() error { _, err := DecodeOffsetSync([]byte{}, syncValue); return err }, "field 'topic'"},
		{"sync key cut in the string", func() error { _, err := DecodeOffsetSync(syncKey[:5], syncValue); return err },
			"Error reading string of length 6, only 3 bytes available"},
		{"sync key without partition", func() error { _, err := DecodeOffsetSync(syncKey[:8], syncValue); return err }, "field 'partition'"},
		{"sync negative string length", func() error { _, err := DecodeOffsetSync(unhex(t, "ffff 00000000"), syncValue); return err },
			"String length -1 cannot be negative"},
		{"sync value cut", func() error { _, err := DecodeOffsetSync(syncKey, syncValue[:15]); return err }, "field 'offset'"},
		{"checkpoint empty value", func() error { _, err := DecodeCheckpoint(cp.Key(), []byte{}); return err }, "field 'version'"},
		{"checkpoint value without metadata", func() error { _, err := DecodeCheckpoint(cp.Key(), cp.Value()[:18]); return err }, "field 'metadata'"},
		{"checkpoint key without topic", func() error { _, err := DecodeCheckpoint(cp.Key()[:4], cp.Value()); return err }, "field 'topic'"},
		{"checkpoint nil key", func() error { _, err := DecodeCheckpoint(nil, cp.Value()); return err }, "no key"},
		{"heartbeat value cut", func() error { _, err := DecodeHeartbeat(hb.Key(), hb.Value()[:9]); return err }, "field 'timestamp'"},
		{"heartbeat key cut", func() error { _, err := DecodeHeartbeat(hb.Key()[:3], hb.Value()); return err }, "field 'targetClusterAlias'"},
		{"heartbeat nil value", func() error { _, err := DecodeHeartbeat(hb.Key(), nil); return err }, "no value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.decode()
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
			if !strings.Contains(err.Error(), tt.message) {
				t.Errorf("err = %q, want it to mention %q", err, tt.message)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	long := strings.Repeat("x", MaxStringLen+1)
	justFits := strings.Repeat("x", MaxStringLen)
	if err := (OffsetSync{Topic: justFits}).Validate(); err != nil {
		t.Errorf("topic of MaxStringLen bytes: %v", err)
	}
	for name, err := range map[string]error{
		"sync topic":       OffsetSync{Topic: long}.Validate(),
		"checkpoint group": Checkpoint{Group: long}.Validate(),
		"checkpoint topic": Checkpoint{Topic: long}.Validate(),
		"checkpoint meta":  Checkpoint{Metadata: long}.Validate(),
		"heartbeat source": Heartbeat{SourceCluster: long}.Validate(),
		"heartbeat target": Heartbeat{TargetCluster: long}.Validate(),
	} {
		if err == nil || !strings.Contains(err.Error(), "larger than the maximum string length") {
			t.Errorf("%s: Validate() = %v, want the length refused", name, err)
		}
	}
	// A string of MaxStringLen bytes round-trips (its length is 0x7fff).
	cp := Checkpoint{Group: "g", Topic: "t", Metadata: justFits}
	if got, err := DecodeCheckpoint(cp.Key(), cp.Value()); err != nil || got != cp {
		t.Errorf("metadata of MaxStringLen bytes: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Key() of an over-long topic did not panic")
		}
	}()
	OffsetSync{Topic: long}.Key()
}

func FuzzDecodeOffsetSync(f *testing.F) {
	s := OffsetSync{Topic: "topic1", Partition: 2, UpstreamOffset: 100, DownstreamOffset: 200}
	f.Add(s.Key(), s.Value())
	f.Add([]byte{0xff, 0xff}, []byte{})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		got, err := DecodeOffsetSync(key, value)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error not ErrMalformed: %v", err)
			}
			return
		}
		// What decodes re-encodes to a prefix of the input (trailing
		// bytes are ignored).
		if !bytes.HasPrefix(key, got.Key()) || !bytes.HasPrefix(value, got.Value()) {
			t.Fatalf("%+v does not re-encode to a prefix of %x / %x", got, key, value)
		}
	})
}

func FuzzDecodeCheckpoint(f *testing.F) {
	c := Checkpoint{Group: "g1", Topic: "source1.topic1", UpstreamOffset: 11, DownstreamOffset: 4, Metadata: "meta"}
	f.Add(c.Key(), c.Value())
	f.Add([]byte{0, 1}, []byte{0, 0, 1})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		got, err := DecodeCheckpoint(key, value)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error not ErrMalformed: %v", err)
			}
			return
		}
		// The version bytes are not kept, so compare past them.
		if !bytes.HasPrefix(key, got.Key()) || !bytes.HasPrefix(value[2:], got.Value()[2:]) {
			t.Fatalf("%+v does not re-encode to a prefix of %x / %x", got, key, value)
		}
	})
}

func FuzzDecodeHeartbeat(f *testing.F) {
	h := Heartbeat{SourceCluster: "A", TargetCluster: "B", Timestamp: 1700000000000}
	f.Add(h.Key(), h.Value())
	f.Add([]byte{0x80, 0}, []byte{0})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		got, err := DecodeHeartbeat(key, value)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error not ErrMalformed: %v", err)
			}
			return
		}
		if !bytes.HasPrefix(key, got.Key()) || !bytes.HasPrefix(value[2:], got.Value()[2:]) {
			t.Fatalf("%+v does not re-encode to a prefix of %x / %x", got, key, value)
		}
	})
}
