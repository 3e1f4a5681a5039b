package cli

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
)

// registryBroker is a Samsa broker running the Schema Registry in its
// process (samsa.schema.registry.listener), as `samsa serve` users run it.
type registryBroker struct {
	*samsaBroker
	url string
}

func newRegistryBroker(t *testing.T) *registryBroker {
	t.Helper()
	b, found := serveSamsa(t, []*regexp.Regexp{registryRE}, samsaArgs(t, "--override", "samsa.schema.registry.listener=127.0.0.1:0"))
	return &registryBroker{samsaBroker: b, url: "http://" + found[0][1]}
}

// schema runs "samsa schema args..." against the registry.
func (b *registryBroker) schema(stdin string, args ...string) result {
	b.t.Helper()
	root := &cobra.Command{Use: "samsa", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(Commands()...)
	var out, errOut bytes.Buffer
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append(append([]string{"schema"}, args...), "--registry-url", b.url, "--timeout", "10s"))
	ctx, cancel := context.WithTimeout(b.t.Context(), time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return result{stdout: out.String(), stderr: errOut.String(), err: err}
}

func (b *registryBroker) schemaOK(args ...string) string {
	b.t.Helper()
	r := b.schema("", args...)
	if r.err != nil {
		b.t.Fatalf("samsa schema %s: %v\nstderr: %s", strings.Join(args, " "), r.err, r.stderr)
	}
	return r.stdout
}

// withRegistry adds --registry-url to produce or consume arguments.
func (b *registryBroker) withRegistry(args ...string) []string {
	return append(args, "--registry-url", b.url)
}

func writeSchemaFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const orderV1 = `{"type":"record","name":"Order","namespace":"com.acme","fields":[
 {"name":"id","type":"long"},
 {"name":"note","type":["null","string"],"default":null},
 {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID"]}}]}`

const orderV2 = `{"type":"record","name":"Order","namespace":"com.acme","fields":[
 {"name":"id","type":"long"},
 {"name":"note","type":["null","string"],"default":null},
 {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID"]}},
 {"name":"qty","type":"int","default":1}]}`

// orderNoDefault adds a field without a default: BACKWARD refuses it.
const orderNoDefault = `{"type":"record","name":"Order","namespace":"com.acme","fields":[
 {"name":"id","type":"long"},
 {"name":"email","type":"string"}]}`

// TestSchemaRecordsAvro: samsa produce registers an Avro schema by
// TopicNameStrategy and writes Confluent's wire format, which franz-go's
// sr.Serde reads; samsa consume prints the records back in Avro's JSON
// encoding; samsa schema lists, reads, diffs, checks, configures and
// deletes.
func TestSchemaRecordsAvro(t *testing.T) {
	b := newRegistryBroker(t)
	v1 := writeSchemaFile(t, "order.avsc", orderV1)
	keyFile := writeSchemaFile(t, "key.avsc", `"string"`)
	lines := `"k1"|{"id":1,"note":{"string":"first"},"status":"NEW"}` + "\n" +
		`"k2"|{"id":2,"note":null,"status":"PAID"}` + "\n"
	r := b.run(lines, b.withRegistry("produce", "orders", "--value-schema", v1, "--key-schema", keyFile, "--key-separator", "|")...)
	if r.err != nil {
		t.Fatalf("produce: %v\n%s", r.err, r.stderr)
	}
	if !strings.Contains(r.stderr, `subject "orders-value": schema id`) || !strings.Contains(r.stderr, `subject "orders-key": schema id`) {
		t.Errorf("produce did not say which schemas:\n%s", r.stderr)
	}

	got := b.ok("", b.withRegistry("consume", "orders", "--value-format", "schema", "--key-format", "schema", "--format", `%k %v\n`)...)
	want := `"k1" {"id":1,"note":{"string":"first"},"status":"NEW"}` + "\n" + `"k2" {"id":2,"note":null,"status":"PAID"}` + "\n"
	if got != want {
		t.Errorf("consume decoded:\n%s\nwant:\n%s", got, want)
	}

	// The raw records are Confluent's wire format: franz-go's Serde reads
	// them with the registry's schema.
	cl := b.client(kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var raw []*kgo.Record
	for len(raw) < 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		raw = append(raw, fs.Records()...)
	}
	id := int(binary.BigEndian.Uint32(raw[0].Value[1:5]))
	if raw[0].Value[0] != 0 {
		t.Fatalf("magic byte %d", raw[0].Value[0])
	}
	srcl, err := sr.NewClient(sr.URLs(b.url))
	if err != nil {
		t.Fatal(err)
	}
	text, err := srcl.SchemaByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	type order struct {
		ID     int64   `avro:"id"`
		Note   *string `avro:"note"`
		Status string  `avro:"status"`
	}
	avs := avro.MustParse(text.Schema)
	var franz sr.Serde
	franz.Register(id, order{}, sr.DecodeFn(func(b []byte, v any) error { return avro.Unmarshal(avs, b, v) }))
	var o order
	if err := franz.Decode(raw[0].Value, &o); err != nil {
		t.Fatalf("franz-go's Serde cannot decode samsa's record: %v", err)
	}
	if o.ID != 1 || o.Note == nil || *o.Note != "first" || o.Status != "NEW" {
		t.Errorf("franz-go's Serde read %+v", o)
	}

	// samsa schema.
	if got := b.schemaOK("list"); got != "orders-key\norders-value\n" {
		t.Errorf("list:\n%s", got)
	}
	if got := b.schemaOK("list", "--prefix", "orders-v"); got != "orders-value\n" {
		t.Errorf("list --prefix:\n%s", got)
	}
	if got := b.schemaOK("get", "orders-value"); !strings.HasPrefix(got, `subject "orders-value" version 1: id `) || !strings.Contains(got, `"name": "status"`) {
		t.Errorf("get:\n%s", got)
	}
	v2 := writeSchemaFile(t, "order2.avsc", orderV2)
	if got := b.schemaOK("register", "orders-value", "--schema-file", v2); !strings.HasPrefix(got, `subject "orders-value" version 2: schema id `) {
		t.Errorf("register:\n%s", got)
	}
	if got := b.schemaOK("versions", "orders-value"); got != "1\n2\n" {
		t.Errorf("versions:\n%s", got)
	}
	diff := b.schemaOK("diff", "orders-value", "1", "2")
	for _, line := range []string{`+       "name": "qty",`, "compatible at level BACKWARD: version 2 against version 1"} {
		if !strings.Contains(diff, line) {
			t.Errorf("diff lacks %q:\n%s", line, diff)
		}
	}
	bad := writeSchemaFile(t, "bad.avsc", orderNoDefault)
	r = b.schema("", "check", "orders-value", "--schema-file", bad)
	if r.err == nil || !strings.Contains(r.stdout, "not compatible") || !strings.Contains(r.stdout, "READER_FIELD_MISSING_DEFAULT_VALUE") {
		t.Errorf("check of an incompatible schema: %v\n%s", r.err, r.stdout)
	}
	if got := b.schemaOK("check", "orders-value", "--schema-file", v2); got != "compatible with subject \"orders-value\"\n" {
		t.Errorf("check:\n%s", got)
	}
	if got := b.schemaOK("config", "set", "orders-value", "--level", "none"); got != "subject \"orders-value\" compatibility level: NONE\n" {
		t.Errorf("config set:\n%s", got)
	}
	if got := b.schemaOK("config", "get", "orders-value"); got != "subject \"orders-value\" compatibility level: NONE\n" {
		t.Errorf("config get:\n%s", got)
	}
	if got := b.schemaOK("mode", "get"); got != "global mode: READWRITE\n" {
		t.Errorf("mode get:\n%s", got)
	}

	// A record written with version 1's ID is refused when --value-schema
	// names version 2; version 1's is accepted.
	r = b.run("", b.withRegistry("consume", "orders", "--value-schema", "subject:orders-value:2")...)
	if r.err == nil || !strings.Contains(r.err.Error(), "partition 0 offset 0: value written with schema id") {
		t.Errorf("consume --value-schema of another version: %v", r.err)
	}
	if got := b.ok("", b.withRegistry("consume", "orders", "--value-schema", "subject:orders-value:1", "--max", "1")...); got != `{"id":1,"note":{"string":"first"},"status":"NEW"}`+"\n" {
		t.Errorf("consume --value-schema subject:orders-value:1:\n%s", got)
	}

	if got := b.schemaOK("delete", "orders-value", "--version", "2"); got != "soft-deleted subject \"orders-value\" version 2\n" {
		t.Errorf("delete:\n%s", got)
	}
	if got := b.schemaOK("versions", "orders-value"); got != "1\n" {
		t.Errorf("versions after delete:\n%s", got)
	}
	if got := b.schemaOK("delete", "orders-value", "--version", "2", "--permanent"); got != "permanently deleted subject \"orders-value\" version 2\n" {
		t.Errorf("delete --permanent:\n%s", got)
	}
	if got := b.schemaOK("versions", "orders-value", "--deleted"); got != "1\n" {
		t.Errorf("versions --deleted after a permanent delete:\n%s", got)
	}
	if got := b.schemaOK("get", "--id", strconv.Itoa(id)); !strings.HasPrefix(got, fmt.Sprintf("subject \"orders-value\" version 1: id %d, type AVRO\n", id)) {
		t.Errorf("get --id:\n%s", got)
	}
	if r := b.schema("", "get", "nosuch"); r.err == nil || r.err.Error() != "schema registry: Subject 'nosuch' not found. (error code 40401)" {
		t.Errorf("get of a missing subject: %v", r.err)
	}
	if got := b.schemaOK("mode", "set", "orders-value", "--mode", "readonly"); got != "subject \"orders-value\" mode: READONLY\n" {
		t.Errorf("mode set:\n%s", got)
	}
	if r := b.schema("", "register", "orders-value", "--schema-file", v2); r.err == nil || !strings.Contains(r.err.Error(), "(error code 42205)") {
		t.Errorf("register in READONLY mode: %v", r.err)
	}
	b.schemaOK("mode", "set", "orders-value", "--mode", "READWRITE")

	// A line the schema does not read stops produce with its number.
	r = b.run(`{"id":3,"status":"NEW"}`+"\n"+`{"id":4}`+"\n", b.withRegistry("produce", "orders", "--value-schema", v1)...)
	if r.err == nil || r.err.Error() != `line 2: value: serde: value does not match schema: $: field "status" of record com.acme.Order is missing and has no default` {
		t.Errorf("produce of a line the schema refuses: %v", r.err)
	}
}

const personSchema = `{"$schema":"http://json-schema.org/draft-07/schema#","title":"Person","type":"object",
 "properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0}},"required":["name"],"additionalProperties":false}`

// TestSchemaRecordsJSON: JSON Schema records are the documents behind the
// wire format's header, validated on produce; consume --json prints them
// as JSON values with their schema ID.
func TestSchemaRecordsJSON(t *testing.T) {
	b := newRegistryBroker(t)
	file := writeSchemaFile(t, "person.json", personSchema)
	b.ok(`{"name":"Ann","age":31}`+"\n"+`{"name":"Bo"}`+"\n", b.withRegistry("produce", "people", "--value-schema", file)...)
	if got := b.ok("", b.withRegistry("consume", "people", "--value-format", "schema")...); got != `{"name":"Ann","age":31}`+"\n"+`{"name":"Bo"}`+"\n" {
		t.Errorf("consume:\n%s", got)
	}
	got := b.ok("", b.withRegistry("consume", "people", "--value-format", "schema", "--json", "--max", "1")...)
	if !strings.Contains(got, `"value":{"name":"Ann","age":31},"value_schema_id":1,`) {
		t.Errorf("consume --json:\n%s", got)
	}
	if got := b.schemaOK("get", "--id", "1"); !strings.HasPrefix(got, `subject "people-value" version 1: id 1, type JSON`) {
		t.Errorf("get --id:\n%s", got)
	}
	r := b.run(`{"name":"Cy","age":-1}`+"\n", b.withRegistry("produce", "people", "--value-schema", file)...)
	if r.err == nil || !strings.Contains(r.err.Error(), "line 1: value: serde: value does not match schema:") || !strings.Contains(r.err.Error(), "minimum") {
		t.Errorf("produce of an invalid document: %v", r.err)
	}
	// Not in the wire format: a clear error with the record's place.
	b.ok("plain text\n", "produce", "people")
	r = b.run("", b.withRegistry("consume", "people", "--value-format", "schema")...)
	if r.err == nil || r.err.Error() != `consume from topic "people": partition 0 offset 2: value: serde: unknown magic byte 112: want 0 (was the record written with a schema registry serializer?)` {
		t.Errorf("consume of a plain record: %v", r.err)
	}
	// A registered schema named by ID; auto-register off finds the file's.
	b.ok(`{"name":"Di"}`+"\n", b.withRegistry("produce", "people2", "--value-schema", "id:1")...)
	b.ok(`{"name":"Ed"}`+"\n", b.withRegistry("produce", "people", "--value-schema", file, "--auto-register=false")...)
	r = b.run(`{"name":"Fa"}`+"\n", b.withRegistry("produce", "people3", "--value-schema", file, "--auto-register=false")...)
	if r.err == nil || !strings.Contains(r.err.Error(), `--value-schema: serde: schema not found: look the schema up under subject "people3-value" (auto-register is off)`) {
		t.Errorf("produce with auto-register off to a new subject: %v", r.err)
	}
}

const shopProto = `syntax = "proto3";
package shop;

message Envelope {
  string id = 1;
}

message Cart {
  message Line {
    string sku = 1;
    int32 qty = 2;
  }
  string owner = 1;
  repeated Line lines = 2;
}
`

// TestSchemaRecordsProtobuf: Protobuf records carry the message-index
// array: [0] for the file's first message (one byte 0), the message's path
// for a nested one; consume finds the message from it.
func TestSchemaRecordsProtobuf(t *testing.T) {
	b := newRegistryBroker(t)
	file := writeSchemaFile(t, "shop.proto", shopProto)
	b.ok(`{"id":"e1"}`+"\n", b.withRegistry("produce", "shop", "--value-schema", file)...)
	b.ok(`{"sku":"a","qty":2}`+"\n", b.withRegistry("produce", "shop", "--value-schema", file, "--value-schema-message", "shop.Cart.Line")...)
	b.ok(`{"owner":"zoe","lines":[{"sku":"b","qty":1}]}`+"\n", b.withRegistry("produce", "shop", "--value-schema", file, "--value-schema-message", "Cart")...)
	got := b.ok("", b.withRegistry("consume", "shop", "--value-format", "schema")...)
	want := `{"id":"e1"}` + "\n" + `{"sku":"a","qty":2}` + "\n" + `{"owner":"zoe","lines":[{"sku":"b","qty":1}]}` + "\n"
	if got != want {
		t.Errorf("consume:\n%s\nwant:\n%s", got, want)
	}
	// The headers on the wire: id 1, then the index arrays.
	raw := b.ok("", "consume", "shop", "--json")
	for _, prefix := range []string{`\u0000\u0000\u0000\u0000\u0001\u0000\n\u0002e1`, `\u0000\u0000\u0000\u0000\u0001\u0004\u0002\u0000\n\u0001a`, `\u0000\u0000\u0000\u0000\u0001\u0002\u0002\n\u0003zoe`} {
		if !strings.Contains(raw, prefix) {
			t.Errorf("raw records lack %s:\n%s", prefix, raw)
		}
	}
	if got := b.schemaOK("get", "shop-value"); !strings.Contains(got, "type PROTOBUF") || !strings.Contains(got, "message Line") {
		t.Errorf("get:\n%s", got)
	}
	r := b.run(`{"id":"e1","nope":1}`+"\n", b.withRegistry("produce", "shop", "--value-schema", file)...)
	if r.err == nil || !strings.Contains(r.err.Error(), `line 1: value: serde: value does not match schema: message shop.Envelope:`) {
		t.Errorf("produce of an unknown field: %v", r.err)
	}
	r = b.run("", b.withRegistry("produce", "shop", "--value-schema", file, "--value-schema-message", "Nope")...)
	if r.err == nil || !strings.Contains(r.err.Error(), `no message "Nope" in the schema`) {
		t.Errorf("produce with an unknown message: %v", r.err)
	}
}
