package schema

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// fileDescriptorer is how the serde package reaches a Protobuf schema's
// descriptor without importing this package's types.
type fileDescriptorer interface {
	FileDescriptor() protoreflect.FileDescriptor
}

func TestProtobufParseErrors(t *testing.T) {
	tests := []struct {
		name, text string
		refs       []Ref
		want       string
	}{
		{"syntax error", "syntax = \"proto3\";\nmessage M { int32 a = 1 }\n", nil, "default:2:25: syntax error: expecting ';'"},
		{"unknown type", "syntax = \"proto3\";\nmessage M { Foo a = 1; }\n", nil, "default:2:13: field M.a: unknown type Foo"},
		{"import not a reference", "syntax = \"proto3\";\nimport \"other.proto\";\nmessage M {}\n", nil, `default:2:8: import "other.proto" is not one of the schema's references`},
		{"bad reference", "syntax = \"proto3\";\nimport \"other.proto\";\nmessage M {}\n",
			[]Ref{{Name: "other.proto", Subject: "o", Version: 1, Type: Protobuf, Schema: "message {"}}, `reference "other.proto" (subject "o" version 1): other.proto:1:9: syntax error`},
		{"reference of another type", "syntax = \"proto3\";\nmessage M {}\n",
			[]Ref{{Name: "a", Subject: "a", Version: 1, Type: Avro, Schema: `"int"`}}, "is a AVRO schema"},
		{"editions", "edition = \"2023\";\nmessage M { int32 a = 1; }\n", nil, "default: editions (edition = ...) are not supported"},
		{"empty", "", nil, ""},
		{"not base64 either", "!!!", nil, "default:1:1: invalid character"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(Protobuf, tc.text, tc.refs)
			if err == nil {
				if tc.want == "" {
					return // an empty file is a valid, empty schema
				}
				t.Fatalf("Parse succeeded, want error containing %q", tc.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestProtobufImports(t *testing.T) {
	text := `syntax = "proto3";
package app;
import "other.proto";
import "google/protobuf/timestamp.proto";
import "confluent/meta.proto";
import "confluent/type/decimal.proto";
message Order {
  other.Customer customer = 1;
  google.protobuf.Timestamp at = 2;
  confluent.type.Decimal amount = 3 [(confluent.field_meta).doc = "money"];
}
`
	refs := []Ref{{Name: "other.proto", Subject: "customer", Version: 1, Type: Protobuf,
		Schema: "syntax = \"proto3\";\npackage other;\nmessage Customer { string name = 1; }\n"}}
	s, err := Parse(Protobuf, text, refs)
	if err != nil {
		t.Fatal(err)
	}
	fd := s.(fileDescriptorer).FileDescriptor()
	m := fd.Messages().ByName("Order")
	if m == nil {
		t.Fatal("no message Order")
	}
	for name, want := range map[protoreflect.Name]protoreflect.FullName{
		"customer": "other.Customer", "at": "google.protobuf.Timestamp", "amount": "confluent.type.Decimal",
	} {
		if got := m.Fields().ByName(name).Message().FullName(); got != want {
			t.Errorf("field %s is a %s, want %s", name, got, want)
		}
	}
	if fd.Imports().Len() != 4 {
		t.Errorf("%d imports, want 4", fd.Imports().Len())
	}
}

// A schema given as base64 of a FileDescriptorProto parses to the same
// descriptor, and Serialized gives such a text back.
func TestProtobufSerialized(t *testing.T) {
	text := "syntax = \"proto3\";\npackage p;\nmessage M {\n  string a = 1;\n  repeated int64 b = 2;\n}\n"
	s, err := Parse(Protobuf, text, nil)
	if err != nil {
		t.Fatal(err)
	}
	ser, ok := ProtobufSerialized(s)
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
	if fdp.GetPackage() != "p" || len(fdp.GetMessageType()) != 1 || len(fdp.GetMessageType()[0].GetField()) != 2 {
		t.Fatalf("serialized descriptor is %v", fdp)
	}
	s2, err := Parse(Protobuf, ser, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := s2.(fileDescriptorer).FileDescriptor().Messages().ByName("M").Fields().ByName("b")
	if f == nil || f.Kind() != protoreflect.Int64Kind || f.Cardinality() != protoreflect.Repeated {
		t.Fatalf("field b from the serialized schema is %v", f)
	}
}

func protobufDiffSchema(t *testing.T, text string, refs []protobufDiffRef) (*protobufSchema, error) {
	t.Helper()
	var rs []Ref
	for _, r := range refs {
		rs = append(rs, Ref{Name: r.name, Subject: r.subject, Version: r.version, Type: Protobuf, Schema: r.schema})
	}
	s, err := Parse(Protobuf, text, rs)
	if err != nil {
		return nil, err
	}
	return s.(*protobufSchema), nil
}

func TestProtobufDiffConfluentCases(t *testing.T) {
	for _, tc := range protobufDiffCases {
		t.Run(tc.name, func(t *testing.T) {
			o, err := protobufDiffSchema(t, tc.original, tc.originalRefs)
			if err != nil {
				t.Fatalf("original: %v", err)
			}
			u, err := protobufDiffSchema(t, tc.update, tc.updateRefs)
			if err != nil {
				t.Fatalf("update: %v", err)
			}
			var got []string
			for _, d := range protobufDiff(o, u) {
				got = append(got, d.String())
			}
			want := slices.Clone(tc.changes)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("differences\n got %q\nwant %q", got, want)
			}
			incs := CanRead(u, o)
			if (len(incs) == 0) != tc.compatible {
				t.Errorf("compatible = %v, want %v (%v)", len(incs) == 0, tc.compatible, incs)
			}
		})
	}
}

func TestProtobufCanonicalConfluentCases(t *testing.T) {
	for _, tc := range protobufCanonicalCases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(Protobuf, tc.schema, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.canonical != "" && s.Canonical() != tc.canonical {
				t.Errorf("canonical\n got %q\nwant %q", s.Canonical(), tc.canonical)
			}
			if s.Normalized() != tc.normalized {
				t.Errorf("normalized\n got %q\nwant %q", s.Normalized(), tc.normalized)
			}
			// The normalized text is a fixed point, and means the same.
			n, err := Parse(Protobuf, s.Normalized(), nil)
			if err != nil {
				t.Fatalf("normalized text does not parse: %v", err)
			}
			if tc.normalizedNoExtensions != "" {
				if got, _ := ProtobufWithoutExtensions(n); got != tc.normalizedNoExtensions {
					t.Errorf("ignore_extensions of the normalized schema\n got %q\nwant %q", got, tc.normalizedNoExtensions)
				}
			}
			if n.Normalized() != s.Normalized() {
				t.Errorf("normalizing the normalized text changes it:\n%s", n.Normalized())
			}
		})
	}
}

// A schema given as a serialized descriptor prints as Confluent prints
// one (type names as the descriptor has them, map fields as their entry
// messages), and normalizes to what its source text normalizes to.
func TestProtobufSerializedCanonical(t *testing.T) {
	text := `syntax = "proto3";
package p;
import "google/protobuf/timestamp.proto";
option java_package = "com.example";
message M {
  string a_b = 1 [json_name = "x"];
  map<string, int32> m = 2;
  oneof o { int32 b = 3; google.protobuf.Timestamp at = 5; }
  optional int32 c = 4;
  enum E { X = 0; Y = 1 [deprecated = true]; }
  reserved 7 to 9, 11;
  reserved "old";
}
service S { rpc R (M) returns (stream M); }
`
	wantCanonical := `syntax = "proto3";
package p;

import "google/protobuf/timestamp.proto";

option java_package = "com.example";

message M {
  reserved 7 to 9;
  reserved 11;
  reserved "old";

  string a_b = 1 [json_name = "x"];
  repeated .p.M.MEntry m = 2;
  optional int32 c = 4;

  oneof o {
    int32 b = 3;
    .google.protobuf.Timestamp at = 5;
  }

  message MEntry {
    option map_entry = true;
  
    string key = 1;
    int32 value = 2;
  }
  enum E {
    X = 0;
    Y = 1 [deprecated = true];
  }
}

service S {
  rpc R (.p.M) returns (stream .p.M);
}
`
	s, err := Parse(Protobuf, text, nil)
	if err != nil {
		t.Fatal(err)
	}
	ser, _ := ProtobufSerialized(s)
	s2, err := Parse(Protobuf, ser, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Canonical() != wantCanonical {
		t.Errorf("canonical of the serialized form\n got %q\nwant %q", s2.Canonical(), wantCanonical)
	}
	if s2.Normalized() != s.Normalized() {
		t.Errorf("normalized forms differ:\nfrom the descriptor:\n%s\nfrom the text:\n%s", s2.Normalized(), s.Normalized())
	}
	if again, _ := ProtobufSerialized(s2); again != ser {
		t.Errorf("serializing the parsed serialized form changes it")
	}
}

// FuzzProtobufParse: no text crashes the parser, the printers or the
// diff, and an accepted schema's canonical and normalized texts parse to
// themselves and to a schema the original reads without incompatibility.
func FuzzProtobufParse(f *testing.F) {
	for _, s := range []string{
		"syntax = \"proto3\";\npackage p;\nmessage M { string a = 1; map<string, M> m = 2; oneof o { int32 b = 3; } enum E { X = 0; } }\n",
		"syntax = \"proto2\";\nmessage M { required int32 a = 1 [default = 0x10]; extensions 100 to max; reserved 5, 7 to 9; optional group G = 2 { optional int32 x = 1; } }\n",
		"syntax = \"proto3\";\nimport \"google/protobuf/descriptor.proto\";\nextend google.protobuf.FieldOptions { repeated string tag = 5000; }\nmessage M { string a = 1 [(tag) = \"x\", (tag) = \"y\", deprecated = true]; }\nservice S { rpc R (M) returns (stream M) { option deprecated = true; } }\n",
		"syntax = \"proto3\";\nimport \"confluent/meta.proto\";\noption (confluent.file_meta) = { doc: \"d\" tags: [\"a\", \"b\"] params: [{ key: \"k\" value: \"v\" }] };\nmessage M { int32 a = 1 [(confluent.field_meta).doc = \"x\"]; }\n",
		"CgdkZWZhdWx0EgFwIgsKAU0SBgoBYRgBKAk=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse(Protobuf, text, nil)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		for _, form := range []string{s.Canonical(), s.Normalized()} {
			again, err := Parse(Protobuf, form, nil)
			if err != nil {
				t.Fatalf("printed form does not parse: %v\n%s", err, form)
			}
			if form == s.Canonical() && again.Canonical() != form {
				t.Fatalf("canonical not a fixed point:\n%s\n%s", form, again.Canonical())
			}
			if incs := CanRead(again, s); len(incs) != 0 {
				t.Fatalf("printed form reads differently: %v\n%s", incs, form)
			}
		}
	})
}

// ignore_extensions drops custom options, extends and extension ranges,
// and keeps Confluent's own options.
func TestProtobufWithoutExtensions(t *testing.T) {
	text := `syntax = "proto2";
package p;
import "google/protobuf/descriptor.proto";
import "confluent/meta.proto";
extend google.protobuf.FieldOptions { optional string tag = 5000; }
option (confluent.file_meta).doc = "file";
message M {
  option (confluent.message_meta).doc = "m";
  optional string a = 1 [(tag) = "x", deprecated = true, (confluent.field_meta).doc = "a"];
  extensions 100 to 200;
  extend M { optional int32 more = 100; }
}
`
	want := `syntax = "proto2";
package p;

import "google/protobuf/descriptor.proto";
import "confluent/meta.proto";

option (confluent.file_meta).doc = "file";

message M {
  option (confluent.message_meta).doc = "m";

  optional string a = 1 [
    deprecated = true,
    (confluent.field_meta).doc = "a"
  ];
}
`
	s, err := Parse(Protobuf, text, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := ProtobufWithoutExtensions(s)
	if !ok || got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if _, err := Parse(Protobuf, got, nil); err != nil {
		t.Errorf("the text does not parse: %v", err)
	}
}
