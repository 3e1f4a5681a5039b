package schemaregistry

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
)

// Protobuf schemas of the API tests: an order importing a customer
// (through a reference), the order again in another layout, and the
// order with its id field's kind changed.
const (
	pbCustomer = "syntax = \"proto3\";\npackage shop;\n\nmessage Customer {\n  string name = 1;\n}\n"
	pbOrder    = "syntax = \"proto3\";\npackage shop;\n\nimport \"customer.proto\";\n\nmessage Order {\n  string id = 1;\n  Customer customer = 2;\n}\n"
	// pbOrderLoose is pbOrder with comments and another layout: the same
	// canonical text, so the same schema.
	pbOrderLoose = "// orders\nsyntax = \"proto3\"; package shop;\nimport \"customer.proto\";\nmessage Order { string id = 1; /* who */ Customer customer = 2; }"
	pbOrderInt   = "syntax = \"proto3\";\npackage shop;\n\nimport \"customer.proto\";\n\nmessage Order {\n  int32 id = 1;\n  Customer customer = 2;\n}\n"
	pbOrderMore  = "syntax = \"proto3\";\npackage shop;\n\nimport \"customer.proto\";\n\nmessage Order {\n  string id = 1;\n  Customer customer = 2;\n  int64 at = 3;\n}\n"
	// pbRequired adds a required field to pbPlain: FORWARD incompatible
	// (the old schema lacks a field the new one requires).
	pbPlain    = "syntax = \"proto2\";\n\nmessage M {\n  optional string a = 1;\n}\n"
	pbRequired = "syntax = \"proto2\";\n\nmessage M {\n  optional string a = 1;\n  required int32 b = 2;\n}\n"
	pbUnsorted = "syntax = \"proto3\";\nimport \"google/protobuf/timestamp.proto\";\nmessage E {\n  int32 b = 2;\n  google.protobuf.Timestamp a = 1;\n}\n"
)

func pbBody(text string, extra ...any) string {
	return body(text, append([]any{"schemaType", "PROTOBUF"}, extra...)...)
}

func pbVersion(subject string, v, id int, text string, refs []Reference) string {
	m := map[string]any{"subject": subject, "version": v, "id": id, "schemaType": "PROTOBUF", "schema": text}
	if len(refs) > 0 {
		m["references"] = refs
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// TestAPIProtobuf registers, looks up, checks and serves Protobuf
// schemas through the API, references as imports.
func TestAPIProtobuf(t *testing.T) {
	b := startBroker(t)
	_, srv := startRegistry(t, b, "_schemas")
	orderRefs := []Reference{{Name: "customer.proto", Subject: "customer", Version: 1}}
	serialized := serializedOf(t, pbOrder, pbCustomer)
	jsonText := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	steps := []apiStep{
		{method: "POST", path: "/subjects/customer/versions", body: pbBody(pbCustomer), status: 200, want: `{"id":1}`},
		// An import no reference resolves is an invalid schema, with the
		// compiler's position.
		{method: "POST", path: "/subjects/order/versions", body: pbBody(pbOrder), status: 422, contains: []string{
			`"error_code":42201`, `default:4:8: import \"customer.proto\" is not one of the schema's references`}},
		{method: "POST", path: "/subjects/order/versions", body: pbBody("syntax = \"proto3\";\nmessage M { string a = 1 }"), status: 422, contains: []string{
			`"error_code":42201`, `default:2:26: syntax error`}},
		{method: "POST", path: "/subjects/order/versions", body: pbBody(pbOrder, "references", orderRefs), status: 200, want: `{"id":2}`},
		// The same schema in another layout is the same schema.
		{method: "POST", path: "/subjects/order/versions", body: pbBody(pbOrderLoose, "references", orderRefs), status: 200, want: `{"id":2}`},
		{method: "POST", path: "/subjects/order", body: pbBody(pbOrderLoose, "references", orderRefs), status: 200, want: pbVersion("order", 1, 2, pbOrder, orderRefs)},
		{method: "GET", path: "/subjects/order/versions/1", status: 200, want: pbVersion("order", 1, 2, pbOrder, orderRefs)},
		{method: "GET", path: "/schemas/ids/2", status: 200, contains: []string{`"schemaType":"PROTOBUF"`, `"schema":` + jsonText(pbOrder)}},
		{method: "GET", path: "/subjects/customer/versions/1/referencedby", status: 200, want: `[2]`},

		// format=serialized answers the FileDescriptorProto, base64.
		{method: "GET", path: "/schemas/ids/2?format=serialized", status: 200, contains: []string{`"schema":"` + serialized + `"`}},
		{method: "GET", path: "/schemas/ids/2/schema?format=serialized", status: 200, want: serialized},
		{method: "GET", path: "/subjects/order/versions/1?format=serialized", status: 200, contains: []string{`"schema":"` + serialized + `"`}},
		{method: "GET", path: "/subjects/order/versions/latest/schema?format=SERIALIZED", status: 200, want: serialized},
		{method: "GET", path: "/schemas/ids/1/schema?format=ignore_extensions", status: 200, want: strings.TrimSuffix(pbCustomer, "\n")},
		{method: "GET", path: "/subjects/order/versions/1?format=default", status: 200, want: pbVersion("order", 1, 2, pbOrder, orderRefs)},
		{method: "GET", path: "/schemas/ids/2?format=resolved", status: 422, want: errBody(422, "format=resolved is not supported for PROTOBUF schemas")},
		{method: "GET", path: "/schemas/ids/2?format=bogus", status: 422, want: errBody(422, "format=bogus is not supported by this registry")},
		{method: "GET", path: "/subjects/order/versions/1?format=bogus", status: 422, want: errBody(422, "format=bogus is not supported by this registry")},
		{method: "POST", path: "/subjects/avro/versions", body: body(s1), status: 200, want: `{"id":3}`},
		{method: "GET", path: "/schemas/ids/3?format=serialized", status: 422, want: errBody(422, "format=serialized is not supported for AVRO schemas")},
		// A schema registered as a serialized descriptor is stored as
		// Confluent prints one, and is the same schema again.
		{method: "POST", path: "/subjects/fromdesc/versions", body: pbBody(serialized, "references", orderRefs), status: 200, want: `{"id":4}`},
		{method: "GET", path: "/schemas/ids/4/schema?format=serialized", status: 200, want: serialized},

		// Compatibility in Confluent's words, roles named by direction.
		{method: "POST", path: "/subjects/order/versions", body: pbBody(pbOrderInt, "references", orderRefs), status: 409, contains: []string{
			`{errorType:\"FIELD_SCALAR_KIND_CHANGED\", description:\"The kind of a SCALAR field at path '#/Order/1' in the new schema does not match its kind in the old schema\"}`,
			`{oldSchemaVersion: 1}`, `{validateFields: 'false', compatibility: 'BACKWARD'}`}},
		{method: "POST", path: "/compatibility/subjects/order/versions/latest?verbose=true", body: pbBody(pbOrderInt, "references", orderRefs), status: 200, contains: []string{
			`"is_compatible":false`, `FIELD_SCALAR_KIND_CHANGED`}},
		{method: "POST", path: "/compatibility/subjects/order/versions/latest", body: pbBody(pbOrderMore, "references", orderRefs), status: 200, want: `{"is_compatible":true}`},
		{method: "POST", path: "/subjects/order/versions", body: pbBody(pbOrderMore, "references", orderRefs), status: 200, want: `{"id":5}`},
		{method: "POST", path: "/subjects/plain/versions", body: pbBody(pbPlain), status: 200, want: `{"id":6}`},
		{method: "PUT", path: "/config/plain", body: `{"compatibility":"FORWARD"}`, status: 200, want: `{"compatibility":"FORWARD"}`},
		{method: "POST", path: "/compatibility/subjects/plain/versions/latest?verbose=true", body: pbBody(pbRequired), status: 200, contains: []string{
			`{errorType:\"REQUIRED_FIELD_REMOVED\", description:\"The old schema is missing a required field at path: '#/M/2' in the new schema\"}`,
			`{validateFields: 'false', compatibility: 'FORWARD'}`}},
		{method: "POST", path: "/subjects/plain/versions", body: pbBody(pbRequired), status: 409, contains: []string{`REQUIRED_FIELD_REMOVED`}},

		// normalize=true stores the normalized text.
		{method: "POST", path: "/subjects/norm/versions?normalize=true", body: pbBody(pbUnsorted), status: 200, want: `{"id":7}`},
		{method: "GET", path: "/schemas/ids/7/schema", status: 200, want: "syntax = \"proto3\";\n\nimport \"google/protobuf/timestamp.proto\";\n\nmessage E {\n  .google.protobuf.Timestamp a = 1;\n  int32 b = 2;\n}"}, // the test client trims the final newline
		{method: "POST", path: "/subjects/norm?normalize=true", body: pbBody(pbUnsorted), status: 200, contains: []string{`"id":7`}},
	}
	for i, s := range steps {
		status, got, ct := do(t, srv.URL, s)
		if status != s.status || !matches(got, s) {
			t.Errorf("step %d: %s %s: got %d %s\nwant %d %s %q", i, s.method, s.path, status, got, s.status, s.want, s.contains)
		}
		if ct != contentType {
			t.Errorf("step %d: %s %s: content type %q", i, s.method, s.path, ct)
		}
	}
}

// serializedOf is what format=serialized must answer for text importing
// customer.proto, checked to be a FileDescriptorProto of the order.
func serializedOf(t *testing.T, text, customer string) string {
	t.Helper()
	p, err := schema.Parse(schema.Protobuf, text, []schema.Ref{{Name: "customer.proto", Subject: "customer", Version: 1, Type: schema.Protobuf, Schema: customer}})
	if err != nil {
		t.Fatal(err)
	}
	ser, ok := schema.ProtobufSerialized(p)
	if !ok {
		t.Fatal("not a Protobuf schema")
	}
	raw, err := base64.StdEncoding.DecodeString(ser)
	if err != nil {
		t.Fatal(err)
	}
	fdp := &descriptorpb.FileDescriptorProto{}
	if err := proto.Unmarshal(raw, fdp); err != nil {
		t.Fatal(err)
	}
	if fdp.GetPackage() != "shop" || fdp.GetMessageType()[0].GetName() != "Order" || !strings.Contains(strings.Join(fdp.GetDependency(), ","), "customer.proto") {
		t.Fatalf("serialized form is %v", fdp)
	}
	return ser
}
