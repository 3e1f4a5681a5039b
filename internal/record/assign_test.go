package record

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAssignOffsets(t *testing.T) {
	cases := []struct {
		name          string
		codec         Codec
		producerLAT   bool // the producer set the LogAppendTime bit itself
		logAppendTime int64
		wantLAT       bool
		wantMaxTs     int64
		wantCRCChange bool
	}{
		{"CreateTime", CodecNone, false, -1, false, testTime + 7, false},
		{"CreateTime compressed", CodecZstd, false, -1, false, testTime + 7, false},
		{"LogAppendTime", CodecNone, false, testTime + 500, true, testTime + 500, true},
		{"LogAppendTime compressed", CodecLZ4, false, testTime + 500, true, testTime + 500, true},
		{"LogAppendTime zero", CodecNone, false, 0, true, 0, true},
		{"producer bit cleared on CreateTime", CodecNone, true, -1, false, testTime + 7, true},
		{"producer bit kept on LogAppendTime", CodecGzip, true, testTime + 500, true, testTime + 500, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := producerBatch(c.codec, 5)
			b.LogAppendTime = c.producerLAT
			batch := build(t, b)
			orig := append([]byte(nil), batch...)
			AssignOffsets(batch, 12345, 9, c.logAppendTime)

			h, err := Validate(batch, ValidateConfig{FromLog: true})
			if err != nil {
				t.Fatalf("Validate after AssignOffsets: %v", err)
			}
			if h.BaseOffset != 12345 || h.PartitionLeaderEpoch != 9 {
				t.Errorf("base offset %d epoch %d", h.BaseOffset, h.PartitionLeaderEpoch)
			}
			if h.LogAppendTime() != c.wantLAT || h.MaxTimestamp != c.wantMaxTs {
				t.Errorf("LogAppendTime %v MaxTimestamp %d, want %v %d", h.LogAppendTime(), h.MaxTimestamp, c.wantLAT, c.wantMaxTs)
			}
			if changed := !bytes.Equal(batch[offCRC:offCRC+4], orig[offCRC:offCRC+4]); changed != c.wantCRCChange {
				t.Errorf("CRC changed %v, want %v", changed, c.wantCRCChange)
			}
			if h.BaseTimestamp != b.Records[0].Timestamp {
				t.Errorf("BaseTimestamp %d changed", h.BaseTimestamp)
			}
			if !bytes.Equal(batch[HeaderSize:], orig[HeaderSize:]) {
				t.Error("records section changed")
			}
			var offsets, stamps []int64
			for _, r := range collect(t, batch) {
				offsets = append(offsets, r.Offset)
				stamps = append(stamps, r.Timestamp)
			}
			if diff := cmp.Diff([]int64{12345, 12346, 12347, 12348, 12349}, offsets); diff != "" {
				t.Errorf("offsets: %s", diff)
			}
			if c.wantLAT {
				for _, ts := range stamps {
					if ts != c.logAppendTime {
						t.Fatalf("record timestamp %d, want the append time %d", ts, c.logAppendTime)
					}
				}
			}
		})
	}
}

// TestAssignOffsetsIdempotent: assigning the same append time twice leaves
// the CRC as the first call set it.
func TestAssignOffsetsIdempotent(t *testing.T) {
	batch := build(t, producerBatch(CodecNone, 3))
	AssignOffsets(batch, 1, 1, testTime)
	first := append([]byte(nil), batch...)
	AssignOffsets(batch, 1, 1, testTime)
	if !bytes.Equal(first, batch) {
		t.Error("second AssignOffsets changed the batch")
	}
}

func TestEndTxnMarker(t *testing.T) {
	for _, commit := range []bool{true, false} {
		r := EndTxnMarker(commit, 77)
		r.Offset, r.Timestamp = 500, testTime
		batch := build(t, Batch{
			BaseOffset: 500, Control: true, Transactional: true,
			ProducerID: 3, ProducerEpoch: 1, BaseSequence: -1, Records: []Record{r},
		})
		h, err := Validate(batch, ValidateConfig{FromLog: true})
		if err != nil || !h.IsControl() || !h.IsTransactional() {
			t.Fatalf("marker batch: %v, header %+v", err, h)
		}
		got := collect(t, batch)
		gotCommit, epoch, err := ParseEndTxnMarker(got[0].Key, got[0].Value)
		if err != nil || gotCommit != commit || epoch != 77 {
			t.Errorf("ParseEndTxnMarker = %v %d %v, want %v 77", gotCommit, epoch, err, commit)
		}
	}
	// Kafka's own bytes: key version 0 type 1 (COMMIT); value version 0, epoch 5.
	key, value := []byte{0, 0, 0, 1}, []byte{0, 0, 0, 0, 0, 5}
	if r := EndTxnMarker(true, 5); !bytes.Equal(r.Key, key) || !bytes.Equal(r.Value, value) {
		t.Errorf("EndTxnMarker bytes %x %x, want %x %x", r.Key, r.Value, key, value)
	}
}

func TestParseControl(t *testing.T) {
	cases := []struct {
		name       string
		key, value []byte
		wantErr    bool
		commit     bool
		epoch      int32
	}{
		{"commit", []byte{0, 0, 0, 1}, []byte{0, 0, 0, 0, 0, 9}, false, true, 9},
		{"abort", []byte{0, 0, 0, 0}, []byte{0, 0, 0xff, 0xff, 0xff, 0xff}, false, false, -1},
		{"newer versions read as 0", []byte{0, 3, 0, 1, 9, 9}, []byte{0, 1, 0, 0, 0, 2, 7}, false, true, 2},
		{"short key", []byte{0, 0, 0}, []byte{0, 0, 0, 0, 0, 9}, true, false, 0},
		{"negative key version", []byte{0x80, 0, 0, 1}, []byte{0, 0, 0, 0, 0, 9}, true, false, 0},
		{"not a marker", []byte{0, 0, 0, 2}, []byte{0, 0, 0, 0, 0, 9}, true, false, 0},
		{"short value", []byte{0, 0, 0, 1}, []byte{0, 0, 0, 0, 0}, true, false, 0},
		{"negative value version", []byte{0, 0, 0, 1}, []byte{0xff, 0xff, 0, 0, 0, 9}, true, false, 0},
		{"null", nil, nil, true, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			commit, epoch, err := ParseEndTxnMarker(c.key, c.value)
			if (err != nil) != c.wantErr {
				t.Fatalf("err %v, want error %v", err, c.wantErr)
			}
			if !c.wantErr && (commit != c.commit || epoch != c.epoch) {
				t.Errorf("got %v %d, want %v %d", commit, epoch, c.commit, c.epoch)
			}
		})
	}
	if typ, err := ParseControlKey([]byte{0, 0, 0, 5}); err != nil || typ != ControlKRaftVersion {
		t.Errorf("ParseControlKey KRaft version: %v %v", typ, err)
	}
}
