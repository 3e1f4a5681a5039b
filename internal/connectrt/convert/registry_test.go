package convert

import (
	"context"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/pkg/serde"
)

// The registry in these tests is Samsa's, inside a real `samsa serve`
// (samsa.schema.registry.listener), built once per test run.
func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

var registryRE = regexp.MustCompile(`msg="schema registry serving".* listener=([0-9.:]+)`)

// startRegistry runs samsa serve with its registry and answers the
// registry's URL; overrides are more broker configs.
func startRegistry(t *testing.T, overrides ...string) string {
	t.Helper()
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	args := []string{"--override", "samsa.http.listener=", "--override", "samsa.rest.listener=", "--override", "samsa.schema.registry.listener=127.0.0.1:0",
		"--listeners", "PLAINTEXT://127.0.0.1:0", "--log.dirs", filepath.Join(t.TempDir(), "data")}
	for _, o := range overrides {
		args = append(args, "--override", o)
	}
	proc, found, err := devcluster.StartServe(ctx, bin, args, registryRE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proc.Kill)
	return "http://" + found[0][1]
}

func newRegistryConverterFor(t *testing.T, class string, isKey bool, props map[string]string) connect.Converter {
	t.Helper()
	c, err := New(class)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Configure(props, isKey); err != nil {
		t.Fatal(err)
	}
	return c
}

func srClient(t *testing.T, url string) *sr.Client {
	cl, err := sr.NewClient(sr.URLs(url))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// richSchema has every type the Avro mapping covers.
func richSchema() *connect.Schema {
	line := connect.NewStruct("com.acme.Line").Field("sku", connect.StringSchema).Field("n", connect.Int16Schema).MustBuild()
	return connect.NewStruct("com.acme.Order").Version(2).Doc("an order").
		Field("id", connect.Int64Schema).
		Field("flag", connect.Int8Schema).
		Field("note", connect.OptionalString).
		Field("ratio", connect.Float32Schema).
		Field("score", connect.OptionalFloat64).
		Field("ok", connect.BooleanSchema).
		Field("raw", connect.BytesSchema).
		Field("price", connect.DecimalSchema(2)).
		Field("day", connect.DateSchema()).
		Field("at", connect.TimestampSchema()).
		Field("tags", connect.ArrayOf(connect.StringSchema)).
		Field("attrs", connect.MapOf(connect.StringSchema, connect.Int32Schema)).
		Field("byID", connect.MapOf(connect.Int32Schema, connect.StringSchema)).
		Field("line", line).
		Field("qty", &connect.Schema{Type: connect.Int32, Default: int32(1)}).
		MustBuild()
}

func richValue(s *connect.Schema) *connect.Struct {
	line, _ := s.Field("line")
	return connect.NewStructValue(s).
		MustPut("id", int64(7)).MustPut("flag", int8(-1)).MustPut("ratio", float32(0.25)).MustPut("ok", true).
		MustPut("raw", []byte{0, 200, 255}).MustPut("price", connect.Decimal{Unscaled: big.NewInt(-1999), Scale: 2}).
		MustPut("day", time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)).MustPut("at", time.UnixMilli(1700000000123).UTC()).
		MustPut("tags", []any{"x", "y"}).MustPut("attrs", map[any]any{"a": int32(1)}).
		MustPut("byID", map[any]any{int32(3): "three", int32(1): "one"}).
		MustPut("line", connect.NewStructValue(line.Schema).MustPut("sku", "S-1").MustPut("n", int16(300))).
		MustPut("qty", int32(5))
}

func TestAvroConverterRoundTrip(t *testing.T) {
	url := startRegistry(t)
	c := newRegistryConverterFor(t, "AvroConverter", false, map[string]string{"schema.registry.url": url})
	s := richSchema()
	v := richValue(s)
	payload, err := c.FromConnectData("orders", nil, s, v)
	if err != nil {
		t.Fatal(err)
	}
	gotS, gotV, err := c.ToConnectData("orders", nil, payload)
	if err != nil {
		t.Fatal(err)
	}
	if !gotS.Equal(s) {
		t.Fatalf("schema back:\n got %+v\nwant %+v", gotS, s)
	}
	if !connect.ValuesEqual(gotV, v) {
		t.Fatalf("value back: %v, want %v", gotV, v)
	}

	// The registered schema is Confluent's AvroData form.
	ctx := t.Context()
	cl := srClient(t, url)
	ss, err := cl.SchemaByVersion(ctx, "orders-value", -1)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"connect.name":"com.acme.Order"`, `"connect.type":"int8"`, `["null","string"]`, `"logicalType":"decimal"`,
		`"logicalType":"timestamp-millis"`, `"name":"MapEntry","namespace":"io.confluent.connect.avro"`, `"connect.version":2`, `"connect.doc":"an order"`} {
		if !strings.Contains(ss.Schema.Schema, want) {
			t.Errorf("registered schema lacks %s:\n%s", want, ss.Schema.Schema)
		}
	}

	// pkg/serde's deserializer reads the record (Confluent's wire format).
	text, sch, err := serde.New(cl).DecodeJSON(ctx, payload)
	if err != nil {
		t.Fatal(err)
	}
	if sch.ID != ss.ID {
		t.Fatalf("payload's schema ID %d, registered %d", sch.ID, ss.ID)
	}
	want := `{"id":7,"flag":-1,"note":null,"ratio":0.25,"score":null,"ok":true,"raw":"\u0000Èÿ","price":"ø1","day":19783,` +
		`"at":1700000000123,"tags":["x","y"],"attrs":{"a":1},"byID":[{"key":1,"value":"one"},{"key":3,"value":"three"}],"line":{"sku":"S-1","n":300},"qty":5}`
	if string(text) != want {
		t.Fatalf("serde reads\n%s\nwant\n%s", text, want)
	}

	// A null is a tombstone both ways.
	if b, err := c.FromConnectData("orders", nil, s, nil); b != nil || err != nil {
		t.Fatalf("null: %q %v", b, err)
	}
	if s, v, err := c.ToConnectData("orders", nil, nil); s != nil || v != nil || err != nil {
		t.Fatalf("tombstone: %v %v %v", s, v, err)
	}
}

// TestAvroConverterReadsSerdeRecords reads a record pkg/serde wrote with
// a schema from outside Connect: an enum, a nullable union, plain names.
func TestAvroConverterReadsSerdeRecords(t *testing.T) {
	url := startRegistry(t)
	cl := srClient(t, url)
	const text = `{"type":"record","name":"Pay","namespace":"x","fields":[{"name":"id","type":"long"},` +
		`{"name":"st","type":{"type":"enum","name":"St","symbols":["NEW","PAID"]}},{"name":"n","type":["null","int"],"default":null}]}`
	enc, err := serde.New(cl).ForTopic(t.Context(), "pays", false, serde.Source{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	payload, err := enc.EncodeJSON([]byte(`{"id":3,"st":"PAID","n":{"int":4}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := newRegistryConverterFor(t, AvroConverterClass, false, map[string]string{"schema.registry.url": url})
	s, v, err := c.ToConnectData("pays", nil, payload)
	if err != nil {
		t.Fatal(err)
	}
	want := connect.NewStruct("x.Pay").Field("id", connect.Int64Schema).Field("st", connect.StringSchema).Field("n", connect.OptionalInt32).MustBuild()
	if !s.Equal(want) {
		t.Fatalf("schema %+v", s)
	}
	st := v.(*connect.Struct)
	if id, _ := st.Get("id"); id != int64(3) {
		t.Fatalf("id %v", id)
	}
	if stt, _ := st.Get("st"); stt != "PAID" {
		t.Fatalf("st %v", stt)
	}
	if n, _ := st.Get("n"); n != int32(4) {
		t.Fatalf("n %v", n)
	}
	if _, _, err := c.ToConnectData("pays", nil, []byte{1, 0, 0, 0, 1}); err == nil || !errors.Is(err, connect.ErrData) {
		t.Fatalf("bad magic byte: %v", err)
	}
}

func TestJSONSchemaConverterRoundTrip(t *testing.T) {
	url := startRegistry(t)
	c := newRegistryConverterFor(t, "io.confluent.connect.json.JsonSchemaConverter", false, map[string]string{"schema.registry.url": url})
	s := richSchema()
	v := richValue(s)
	payload, err := c.FromConnectData("orders", nil, s, v)
	if err != nil {
		t.Fatal(err)
	}
	gotS, gotV, err := c.ToConnectData("orders", nil, payload)
	if err != nil {
		t.Fatal(err)
	}
	if !gotS.Equal(s) {
		t.Fatalf("schema back:\n got %+v\nwant %+v", gotS, s)
	}
	if !connect.ValuesEqual(gotV, v) {
		t.Fatalf("value back: %v, want %v", gotV, v)
	}
	var doc map[string]any
	sch, err := serde.New(srClient(t, url)).Decode(t.Context(), payload, &doc)
	if err != nil {
		t.Fatal(err)
	}
	if sch.Type != serde.JSON || doc["id"] != 7.0 || doc["note"] != nil || doc["raw"] != "AMj/" {
		t.Fatalf("serde reads %v (%s)", doc, sch.Type)
	}
	// The serializer validates: a value the schema refuses is refused.
	bad := connect.NewStruct("com.acme.Order").Field("id", connect.StringSchema).MustBuild()
	c2 := newRegistryConverterFor(t, JSONSchemaConverterClass, false, map[string]string{"schema.registry.url": url, "use.latest.version": "true", "auto.register.schemas": "false"})
	if _, err := c2.FromConnectData("orders", nil, bad, connect.NewStructValue(bad).MustPut("id", "x")); err == nil || !errors.Is(err, connect.ErrData) {
		t.Fatalf("a string id was written under the latest schema: %v", err)
	}
}

func TestProtobufConverterRoundTrip(t *testing.T) {
	url := startRegistry(t)
	c := newRegistryConverterFor(t, "ProtobufConverter", false, map[string]string{"schema.registry.url": url})
	line := connect.NewStruct("com.acme.Line").Field("sku", connect.StringSchema).MustBuild()
	s := connect.NewStruct("com.acme.Order").
		Field("id", connect.Int64Schema).
		Field("n", connect.Int32Schema).
		Field("note", connect.OptionalString).
		Field("ratio", connect.Float32Schema).
		Field("ok", connect.BooleanSchema).
		Field("raw", connect.BytesSchema).
		Field("tags", connect.ArrayOf(connect.StringSchema)).
		Field("attrs", connect.MapOf(connect.StringSchema, connect.Int64Schema)).
		Field("line", line).
		Field("lines", connect.ArrayOf(line)).
		MustBuild()
	v := connect.NewStructValue(s).MustPut("id", int64(-9)).MustPut("n", int32(3)).MustPut("ratio", float32(1.5)).MustPut("ok", true).
		MustPut("raw", []byte{1, 2}).MustPut("tags", []any{"a"}).MustPut("attrs", map[any]any{"k": int64(2)}).
		MustPut("line", connect.NewStructValue(line).MustPut("sku", "L1")).
		MustPut("lines", []any{connect.NewStructValue(line).MustPut("sku", "L2")})
	payload, err := c.FromConnectData("orders", nil, s, v)
	if err != nil {
		t.Fatal(err)
	}
	gotS, gotV, err := c.ToConnectData("orders", nil, payload)
	if err != nil {
		t.Fatal(err)
	}
	st := gotV.(*connect.Struct)
	if gotS.Name != "com.acme.Order" || len(gotS.Fields) != len(s.Fields) {
		t.Fatalf("schema back %+v", gotS)
	}
	for _, f := range []string{"id", "n", "note", "ratio", "ok", "raw", "tags", "attrs"} {
		got, _ := st.Get(f)
		want, _ := v.Get(f)
		if !connect.ValuesEqual(got, want) {
			t.Errorf("%s: %#v, want %#v", f, got, want)
		}
	}
	if note, _ := gotS.Field("note"); !note.Schema.Optional {
		t.Errorf("note is not optional")
	}
	lineBack, _ := st.Get("line")
	if sku, _ := lineBack.(*connect.Struct).Get("sku"); sku != "L1" {
		t.Errorf("line.sku %v", sku)
	}
	linesBack, _ := st.Get("lines")
	if sku, _ := linesBack.([]any)[0].(*connect.Struct).Get("sku"); sku != "L2" {
		t.Errorf("lines[0].sku %v", sku)
	}

	// pkg/serde reads it as a message of the registered schema.
	text, sch, err := serde.New(srClient(t, url)).DecodeJSON(t.Context(), payload)
	if err != nil {
		t.Fatal(err)
	}
	md := sch.FileDescriptor().Messages().ByName("Order")
	m := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal(text, m); err != nil {
		t.Fatal(err)
	}
	if got := m.Get(md.Fields().ByName("id")).Int(); got != -9 {
		t.Fatalf("serde reads id %d (%s)", got, text)
	}

	if _, err := c.FromConnectData("orders", nil, connect.DateSchema(), time.Unix(0, 0)); err == nil || !strings.Contains(err.Error(), "STRUCT values only") {
		t.Fatalf("a date top-level: %v", err)
	}
	withDate := connect.NewStruct("d").Field("d", connect.DateSchema()).MustBuild()
	if _, err := c.FromConnectData("orders", nil, withDate, connect.NewStructValue(withDate).MustPut("d", time.Unix(0, 0).UTC())); err == nil || !strings.Contains(err.Error(), "not mapped to Protobuf") {
		t.Fatalf("a date field: %v", err)
	}
}

// TestRegistrySubjectNames checks the strategies and the key side name
// the subjects Confluent's would.
func TestRegistrySubjectNames(t *testing.T) {
	url := startRegistry(t)
	s := connect.NewStruct("com.acme.Key").Field("id", connect.Int32Schema).MustBuild()
	v := connect.NewStructValue(s).MustPut("id", int32(1))
	cases := []struct {
		isKey   bool
		props   map[string]string
		subject string
	}{
		{true, nil, "t1-key"},
		{false, map[string]string{"value.subject.name.strategy": "io.confluent.kafka.serializers.subject.RecordNameStrategy"}, "com.acme.Key"},
		{true, map[string]string{"key.subject.name.strategy": "TopicRecordNameStrategy"}, "t1-com.acme.Key"},
	}
	cl := srClient(t, url)
	for _, tc := range cases {
		props := map[string]string{"schema.registry.url": url}
		for k, v := range tc.props {
			props[k] = v
		}
		c := newRegistryConverterFor(t, AvroConverterClass, tc.isKey, props)
		if _, err := c.FromConnectData("t1", nil, s, v); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.SchemaByVersion(t.Context(), tc.subject, -1); err != nil {
			t.Errorf("%v: subject %s: %v", tc.props, tc.subject, err)
		}
	}
}

// TestRegistryAutoRegisterAndLatest: with auto.register.schemas=false an
// unregistered schema is refused; use.latest.version writes with the
// subject's latest schema (its extra field takes its default).
func TestRegistryAutoRegisterAndLatest(t *testing.T) {
	url := startRegistry(t)
	s := connect.NewStruct("com.acme.V").Field("a", connect.Int32Schema).MustBuild()
	v := connect.NewStructValue(s).MustPut("a", int32(5))
	off := newRegistryConverterFor(t, AvroConverterClass, false, map[string]string{"schema.registry.url": url, "auto.register.schemas": "false"})
	if _, err := off.FromConnectData("v", nil, s, v); err == nil || !errors.Is(err, serde.ErrSchemaNotFound) {
		t.Fatalf("unregistered schema written: %v", err)
	}
	latest := `{"type":"record","name":"V","namespace":"com.acme","fields":[{"name":"a","type":"int"},{"name":"b","type":"string","default":"bee"}]}`
	if _, err := srClient(t, url).RegisterSchema(t.Context(), "v-value", sr.Schema{Schema: latest}, -1, -1); err != nil {
		t.Fatal(err)
	}
	c := newRegistryConverterFor(t, AvroConverterClass, false, map[string]string{"schema.registry.url": url, "auto.register.schemas": "false", "use.latest.version": "true"})
	payload, err := c.FromConnectData("v", nil, s, v)
	if err != nil {
		t.Fatal(err)
	}
	gotS, gotV, err := c.ToConnectData("v", nil, payload)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := gotV.(*connect.Struct).Get("b"); b != "bee" || len(gotS.Fields) != 2 {
		t.Fatalf("read %v %v", gotS, gotV)
	}
}

func TestRegistryBasicAuth(t *testing.T) {
	users := filepath.Join(t.TempDir(), "users.properties")
	if err := os.WriteFile(users, []byte("alice: secret,admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := startRegistry(t, "samsa.schema.registry.authentication.method=BASIC", "samsa.schema.registry.authentication.users.file="+users,
		"samsa.schema.registry.authentication.roles=admin")
	s := connect.NewStruct("a.B").Field("x", connect.Int8Schema).MustBuild()
	v := connect.NewStructValue(s).MustPut("x", int8(1))
	anon := newRegistryConverterFor(t, AvroConverterClass, false, map[string]string{"schema.registry.url": url})
	if _, err := anon.FromConnectData("t", nil, s, v); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("no credentials: %v", err)
	}
	wrong := newRegistryConverterFor(t, AvroConverterClass, false, map[string]string{"schema.registry.url": url,
		"basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "alice:wrong"})
	if _, err := wrong.FromConnectData("t", nil, s, v); err == nil {
		t.Fatal("a wrong password was let in")
	}
	for _, props := range []map[string]string{
		{"schema.registry.url": url, "basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "alice:secret"},
		{"schema.registry.url": url, "basic.auth.credentials.source": "USER_INFO", "schema.registry.basic.auth.user.info": "alice:secret"},
		{"schema.registry.url": strings.Replace(url, "http://", "http://alice:secret@", 1)},
	} {
		c := newRegistryConverterFor(t, AvroConverterClass, false, props)
		payload, err := c.FromConnectData("t", nil, s, v)
		if err != nil {
			t.Fatalf("%v: %v", props, err)
		}
		if _, got, err := c.ToConnectData("t", nil, payload); err != nil || !connect.ValuesEqual(got, v) {
			t.Fatalf("%v: read %v %v", props, got, err)
		}
	}
}

func TestRegistryConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		want  string
	}{
		{nil, `Missing required configuration "schema.registry.url" which has no default value.`},
		{map[string]string{"schema.registry.url": "ftp://x"}, "not an http or https URL"},
		{map[string]string{"schema.registry.url": "http://x", "value.subject.name.strategy": "Nope"}, "unknown subject name strategy"},
		{map[string]string{"schema.registry.url": "http://x", "basic.auth.credentials.source": "USER_INFO"}, "needs basic.auth.user.info"},
		{map[string]string{"schema.registry.url": "http://x", "basic.auth.user.info": "a:b"}, "set it to USER_INFO"},
		{map[string]string{"schema.registry.url": "http://x", "basic.auth.credentials.source": "SASL_INHERIT"}, "Invalid value SASL_INHERIT"},
		{map[string]string{"schema.registry.url": "http://x", "enhanced.avro.schema.support": "true"}, "does not know the configuration(s) enhanced.avro.schema.support"},
	} {
		c, _ := New(AvroConverterClass)
		err := c.Configure(tc.props, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrConfig) {
			t.Errorf("%v: %v, want %q", tc.props, err, tc.want)
		}
	}
	c, _ := New(AvroConverterClass)
	if err := c.Configure(map[string]string{"schema.registry.url": "http://x"}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.FromConnectData("t", nil, nil, "schemaless"); err == nil || !strings.Contains(err.Error(), "needs a schema") {
		t.Fatalf("schemaless: %v", err)
	}
}
