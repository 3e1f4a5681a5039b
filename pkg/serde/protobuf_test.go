package serde

import (
	"errors"
	"slices"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
)

const testProto = `syntax = "proto3";
package p;
message A { string s = 1; repeated int64 n = 2; map<string, A> kids = 3; }
message B { message C { message D { bytes b = 1; } D d = 1; } C c = 1; oneof o { string x = 2; int32 y = 3; } }
`

func parseTestProto(t testing.TB) protoreflect.FileDescriptor {
	t.Helper()
	s, err := schema.Parse(schema.Protobuf, testProto, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.(interface {
		FileDescriptor() protoreflect.FileDescriptor
	}).FileDescriptor()
}

func TestProtoMessageIndexes(t *testing.T) {
	file := parseTestProto(t)
	for _, c := range []struct {
		name string
		want []int
	}{
		{"", []int{0}}, {"A", []int{0}}, {"p.A", []int{0}}, {"B", []int{1}},
		{"p.B.C", []int{1, 0}}, {"p.B.C.D", []int{1, 0, 0}},
	} {
		md, err := findMessage(file, c.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := messageIndexes(md); !slices.Equal(got, c.want) {
			t.Errorf("%q: indexes %v, want %v", c.name, got, c.want)
		}
		back, err := messageAt(file, c.want)
		if err != nil || back.FullName() != md.FullName() {
			t.Errorf("%v: found %v, %v", c.want, back, err)
		}
	}
	for _, bad := range [][]int{{2}, {0, 0}, {0, 1}, {1, 1}, {1, 0, 0, 0}} { // A declares no nested message (its map entry does not count)
		if _, err := messageAt(file, bad); !errors.Is(err, ErrBadMessageIndexes) {
			t.Errorf("%v: %v", bad, err)
		}
	}
}

// MessageName is Confluent's ProtobufSchema.toMessageName.
func TestSchemaMessageName(t *testing.T) {
	parsed, err := schema.Parse(schema.Protobuf, testProto, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSchema(schema.Protobuf, testProto, nil, parsed)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		indexes []int
		want    string
	}{{nil, "p.A"}, {[]int{0}, "p.A"}, {[]int{1, 0, 0}, "p.B.C.D"}} {
		if got, err := s.MessageName(c.indexes); err != nil || got != c.want {
			t.Errorf("%v: %q %v, want %s", c.indexes, got, err, c.want)
		}
	}
	if got, err := s.MessageName([]int{0, 0}); !errors.Is(err, ErrBadMessageIndexes) {
		t.Errorf("[0 0] (A's map entry): %q %v", got, err)
	}
	avro := &Schema{Type: schema.Avro}
	if _, err := avro.MessageName([]int{0}); !errors.Is(err, ErrBadMessageIndexes) {
		t.Errorf("an Avro schema: %v", err)
	}
}

func TestProtoJSONRoundTrip(t *testing.T) {
	file := parseTestProto(t)
	for _, c := range []struct{ message, in string }{
		{"A", `{"s":"x","n":["1","-2"],"kids":{"k":{"s":"y"}}}`},
		{"p.B.C.D", `{"b":"AAE="}`},
		{"B", `{"c":{"d":{}},"y":5}`},
	} {
		md, err := findMessage(file, c.message)
		if err != nil {
			t.Fatal(err)
		}
		bin, err := protoJSONToBinary(md, []byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		body := append(AppendMessageIndexes(nil, messageIndexes(md)), bin...)
		got, err := protoBinaryToJSON(file, body)
		if err != nil || string(got) != c.in {
			t.Errorf("%s: %s, %v; want %s", c.message, got, err, c.in)
		}
	}
}

// FuzzProtoBinaryToJSON: any body (index array and message) decodes or
// fails with a marked error, never a panic.
func FuzzProtoBinaryToJSON(f *testing.F) {
	file := parseTestProto(f)
	f.Add([]byte{0, 0x0a, 1, 'x', 0x10, 1})
	f.Add([]byte{6, 2, 0, 0, 0x0a, 2, 0, 1})
	f.Add([]byte{2, 2, 0x18, 5})
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := protoBinaryToJSON(file, b); err != nil && !errors.Is(err, ErrPayloadMismatch) && !errors.Is(err, ErrBadMessageIndexes) {
			t.Fatalf("unmarked error: %v", err)
		}
	})
}
