package s3sink

import (
	"bytes"
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hamba/avro/v2/ocf"
	"github.com/parquet-go/parquet-go"
	"github.com/samsa-io/samsa/connect"
)

// TestJSONFilesRotateBySize: flush.size records per file, Confluent's names,
// one JSON value per line, and only whole files committed.
func TestJSONFilesRotateBySize(t *testing.T) {
	s3 := newFakeS3(t)
	task, _ := startTask(t, s3.props(cfgFlushSize, "3"), nil, tp0)
	put(t, task, jsonRecs(tp0, 0, 7))

	want := map[string][]string{
		"topics/orders/partition=0/orders+0+0000000000.json": {`{"n":0}`, `{"n":1}`, `{"n":2}`},
		"topics/orders/partition=0/orders+0+0000000003.json": {`{"n":3}`, `{"n":4}`, `{"n":5}`},
	}
	got := map[string][]string{}
	for k, b := range s3.objects() {
		got[k] = lines(b)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("objects (-want +got):\n%s", d)
	}
	// Record 6 is in an open file: the offset to commit stops before it.
	if d := cmp.Diff(map[connect.TopicPartition]int64{tp0: 6}, preCommit(t, task)); d != "" {
		t.Fatalf("precommit (-want +got):\n%s", d)
	}
}

func TestJSONStructValues(t *testing.T) {
	s3 := newFakeS3(t)
	task, _ := startTask(t, s3.props(cfgFlushSize, "1"), nil, tp0)
	schema := connect.NewStruct("Order").
		Field("id", connect.Int64Schema).
		Field("note", connect.OptionalString).
		Field("at", connect.TimestampSchema()).
		Field("tags", connect.ArrayOf(connect.StringSchema)).
		MustBuild()
	v := connect.NewStructValue(schema).MustPut("id", int64(7)).MustPut("at", time.UnixMilli(1234)).MustPut("tags", []any{"a", "b"})
	put(t, task, []connect.SinkRecord{rec(tp0, 0, time.Now(), schema, v)})
	got := string(s3.objects()["topics/orders/partition=0/orders+0+0000000000.json"])
	if want := `{"id":7,"note":null,"at":1234,"tags":["a","b"]}` + "\n"; got != want {
		t.Fatalf("file = %q, want %q", got, want)
	}
}

func orderSchema() *connect.Schema {
	return connect.NewStruct("com.example.Order").
		Field("id", connect.Int64Schema).
		Field("qty", connect.Int32Schema).
		Field("small", connect.Int8Schema).
		Field("note", connect.OptionalString).
		Field("price", connect.DecimalSchema(2)).
		Field("at", connect.TimestampSchema()).
		Field("tags", connect.ArrayOf(connect.StringSchema)).
		Field("ok", connect.BooleanSchema).
		MustBuild()
}

func orderValue(s *connect.Schema, id int64) *connect.Struct {
	v := connect.NewStructValue(s).
		MustPut("id", id).MustPut("qty", int32(id*2)).MustPut("small", int8(id)).
		MustPut("price", connect.Decimal{Unscaled: big.NewInt(1999 + id), Scale: 2}).
		MustPut("at", time.UnixMilli(1_700_000_000_000+id).UTC()).
		MustPut("tags", []any{"t" + string(rune('a'+id))}).MustPut("ok", id%2 == 0)
	if id%2 == 1 {
		v.MustPut("note", "odd")
	}
	return v
}

// TestAvroFiles: the objects are Avro container files hamba reads back,
// with the records' values.
func TestAvroFiles(t *testing.T) {
	s3 := newFakeS3(t)
	task, _ := startTask(t, s3.props(cfgFormatClass, formatAvro, cfgFlushSize, "2", cfgAvroCodec, "deflate"), nil, tp0)
	s := orderSchema()
	var recs []connect.SinkRecord
	for i := int64(0); i < 4; i++ {
		recs = append(recs, rec(tp0, i, time.Now(), s, orderValue(s, i)))
	}
	put(t, task, recs)

	objs := s3.objects()
	if len(objs) != 2 {
		t.Fatalf("objects = %v, want 2 files", s3.keys())
	}
	for file, first := range map[string]int64{"topics/orders/partition=0/orders+0+0000000000.avro": 0, "topics/orders/partition=0/orders+0+0000000002.avro": 2} {
		dec, err := ocf.NewDecoder(bytes.NewReader(objs[file]))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if codec := string(dec.Metadata()["avro.codec"]); codec != "deflate" {
			t.Fatalf("%s: codec %q", file, codec)
		}
		var got []map[string]any
		for dec.HasNext() {
			var v map[string]any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		if dec.Error() != nil {
			t.Fatal(dec.Error())
		}
		if len(got) != 2 {
			t.Fatalf("%s: %d records", file, len(got))
		}
		for i, v := range got {
			id := first + int64(i)
			if v["id"] != id || v["qty"] != int(id*2) || v["small"] != int(id) || v["ok"] != (id%2 == 0) {
				t.Fatalf("%s record %d = %v", file, i, v)
			}
			if !v["at"].(time.Time).Equal(time.UnixMilli(1_700_000_000_000 + id)) {
				t.Fatalf("at = %v", v["at"])
			}
			price := v["price"].(*big.Rat)
			if price.Cmp(big.NewRat(1999+id, 100)) != 0 {
				t.Fatalf("price = %v", price)
			}
			wantNote := any(nil)
			if id%2 == 1 {
				wantNote = "odd"
			}
			if d := cmp.Diff(wantNote, v["note"]); d != "" {
				t.Fatalf("note: %s", d)
			}
		}
	}
}

// TestParquetFiles: the objects are Parquet files parquet-go reads back,
// named .snappy.parquet as Confluent's.
func TestParquetFiles(t *testing.T) {
	s3 := newFakeS3(t)
	task, _ := startTask(t, s3.props(cfgFormatClass, formatParquet, cfgFlushSize, "3"), nil, tp0)
	s := orderSchema()
	var recs []connect.SinkRecord
	for i := int64(0); i < 3; i++ {
		recs = append(recs, rec(tp0, i, time.Now(), s, orderValue(s, i)))
	}
	put(t, task, recs)
	key := "topics/orders/partition=0/orders+0+0000000000.snappy.parquet"
	body, ok := s3.objects()[key]
	if !ok {
		t.Fatalf("objects = %v, want %s", s3.keys(), key)
	}
	f, err := parquet.OpenFile(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != 3 {
		t.Fatalf("rows = %d", f.NumRows())
	}
	r := parquet.NewReader(f)
	for id := int64(0); id < 3; id++ {
		row := map[string]any{}
		if err := r.Read(&row); err != nil {
			t.Fatal(err)
		}
		if row["id"] != id || row["qty"] != int32(id*2) || row["at"] != 1_700_000_000_000+id || row["ok"] != (id%2 == 0) {
			t.Fatalf("row %d = %#v", id, row)
		}
		if d := cmp.Diff([]any{"t" + string(rune('a'+id))}, row["tags"]); d != "" {
			t.Fatalf("tags: %s", d)
		}
		wantNote := any(nil)
		if id%2 == 1 {
			wantNote = "odd"
		}
		if row["note"] != wantNote {
			t.Fatalf("note = %#v", row["note"])
		}
		if price := row["price"].(*big.Float).Text('f', 2); price != big.NewRat(1999+id, 100).FloatString(2) {
			t.Fatalf("price = %v", row["price"])
		}
	}
	if !strings.Contains(f.Schema().String(), "DECIMAL") && !strings.Contains(f.Schema().String(), "decimal") {
		t.Fatalf("schema has no decimal: %s", f.Schema())
	}
}

func TestByteArrayFiles(t *testing.T) {
	s3 := newFakeS3(t)
	task, _ := startTask(t, s3.props(cfgFormatClass, formatByteArray, cfgFlushSize, "2", cfgByteArraySep, "|"), nil, tp0)
	put(t, task, []connect.SinkRecord{
		rec(tp0, 0, time.Now(), connect.BytesSchema, []byte("ab")),
		rec(tp0, 1, time.Now(), connect.BytesSchema, []byte("cd")),
	})
	if got := string(s3.objects()["topics/orders/partition=0/orders+0+0000000000.bin"]); got != "ab|cd|" {
		t.Fatalf("file = %q (objects %v)", got, s3.keys())
	}
}

// TestSchemaChangeRotates: an Avro file holds one schema; a record with
// another schema commits the open files first.
func TestSchemaChangeRotates(t *testing.T) {
	s3 := newFakeS3(t)
	task, _ := startTask(t, s3.props(cfgFormatClass, formatAvro, cfgFlushSize, "10"), nil, tp0)
	s1 := connect.NewStruct("V").Field("a", connect.Int32Schema).MustBuild()
	s2 := connect.NewStruct("V").Field("a", connect.Int32Schema).Field("b", connect.OptionalString).MustBuild()
	put(t, task, []connect.SinkRecord{
		rec(tp0, 0, time.Now(), s1, connect.NewStructValue(s1).MustPut("a", int32(1))),
		rec(tp0, 1, time.Now(), s2, connect.NewStructValue(s2).MustPut("a", int32(2))),
	})
	if d := cmp.Diff([]string{"topics/orders/partition=0/orders+0+0000000000.avro"}, s3.keys()); d != "" {
		t.Fatalf("keys: %s", d)
	}
	if d := cmp.Diff(map[connect.TopicPartition]int64{tp0: 1}, preCommit(t, task)); d != "" {
		t.Fatalf("precommit: %s", d)
	}
}

func TestNullValues(t *testing.T) {
	s3 := newFakeS3(t)
	task, _ := startTask(t, s3.props(cfgFlushSize, "2", cfgNullValues, "ignore"), nil, tp0)
	recs := jsonRecs(tp0, 0, 3)
	recs[1].Value = nil
	put(t, task, recs)
	if got := lines(s3.objects()["topics/orders/partition=0/orders+0+0000000000.json"]); len(got) != 2 {
		t.Fatalf("lines = %v", got)
	}

	s3b := newFakeS3(t)
	task2, _ := startTask(t, s3b.props(), nil, tp0)
	err := task2.Put(t.Context(), recs)
	if err == nil || connect.IsRetriable(err) || !strings.Contains(err.Error(), "behavior.on.null.values") {
		t.Fatalf("put with a null value and behavior.on.null.values=fail: %v", err)
	}
}

type reporter struct{ offsets []int64 }

func (r *reporter) Report(_ context.Context, rec connect.SinkRecord, err error) error {
	r.offsets = append(r.offsets, rec.Offset())
	return nil
}

// TestErrantRecords: a record the format cannot write goes to the errant
// record reporter when the runtime has one (and the others are written);
// without one it fails the task, not retriably.
func TestErrantRecords(t *testing.T) {
	s3 := newFakeS3(t)
	props := s3.props(cfgFormatClass, formatAvro, cfgFlushSize, "2")
	s := connect.NewStruct("V").Field("a", connect.Int32Schema).MustBuild()
	recs := []connect.SinkRecord{
		rec(tp0, 0, time.Now(), s, connect.NewStructValue(s).MustPut("a", int32(1))),
		rec(tp0, 1, time.Now(), s, connect.NewStructValue(s)), // required field a unset
		rec(tp0, 2, time.Now(), s, connect.NewStructValue(s).MustPut("a", int32(3))),
		// Schemaless: no Avro schema. Its schema differs, so the open file
		// is committed before it is tried (flush.size is not reached).
		rec(tp0, 3, time.Now(), nil, map[string]any{"a": 2}),
	}

	props[cfgFlushSize] = "3"
	task, ctx := startTask(t, props, nil)
	rep := &reporter{}
	ctx.reporter = rep
	put(t, task, recs)
	if d := cmp.Diff([]int64{1, 3}, rep.offsets); d != "" {
		t.Fatalf("reported offsets: %s", d)
	}
	key := "topics/orders/partition=0/orders+0+0000000000.avro"
	if d := cmp.Diff([]string{key}, s3.keys()); d != "" {
		t.Fatalf("keys: %s", d)
	}
	// The file holds the two good records and nothing of the bad ones.
	dec, err := ocf.NewDecoder(bytes.NewReader(s3.objects()[key]))
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	for dec.HasNext() {
		var v map[string]any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v["a"])
	}
	if d := cmp.Diff([]any{1, 3}, got); d != "" || dec.Error() != nil {
		t.Fatalf("records in the file: %s %v", d, dec.Error())
	}

	s3b := newFakeS3(t)
	task2, _ := startTask(t, s3b.props(cfgFormatClass, formatAvro, cfgFlushSize, "2"), nil)
	err = task2.Put(t.Context(), recs)
	if err == nil || connect.IsRetriable(err) || !strings.Contains(err.Error(), "offset 1: field a: null value for a required") {
		t.Fatalf("put of a bad record without a reporter: %v", err)
	}
}
