package schema

// Protobuf, as Confluent's ProtobufSchemaProvider handles it:
//
//   - Parse compiles the .proto text (proto2 or proto3) with
//     bufbuild/protocompile. The schema reaches other files only through
//     its imports, each resolved from the registry's references (a ref's
//     Name is the import path), from protoc's standard imports
//     (google/protobuf/*.proto) or from the two Confluent files its
//     registry resolves without a reference (confluent/meta.proto,
//     confluent/type/decimal.proto). Any other import is refused: parsing
//     never reads the disk or the network.
//   - A schema may also be given as base64 of a serialized
//     FileDescriptorProto, as Confluent accepts (its toProtoFile falls back
//     to that when the text does not parse).
//   - Canonical is the file re-printed in the fixed layout Confluent's
//     ProtobufSchemaUtils.toString writes (protobuf_canonical.go);
//     Normalized its normalize=true form.
//   - The compatibility rules are Confluent's protobuf diff
//     (protobuf_compat.go).

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/parser"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

var _ = register(Protobuf, parseProtobuf, canReadProtobuf)

// protobufMainFile is the name the schema's own file has for the
// compiler, in its errors and in its FileDescriptorProto: Confluent's
// ProtobufSchema.DEFAULT_NAME.
const protobufMainFile = "default"

// protobufBuiltins are the files Confluent's registry resolves without a
// reference (its KNOWN_DEPENDENCIES beyond protoc's own), written here from
// their published shape: the same packages, messages, field numbers and
// extensions, so data and options using them mean the same.
var protobufBuiltins = map[string]string{
	"confluent/meta.proto": `syntax = "proto3";
package confluent;

import "google/protobuf/descriptor.proto";

option java_package = "io.confluent.protobuf";
option java_outer_classname = "MetaProto";

// Meta is the documentation, parameters, tags and rules Confluent
// attaches to a file, message, field, enum or enum value.
message Meta {
  string doc = 1;
  map<string, string> params = 2;
  repeated string tags = 3;
  repeated Rule rules = 4;
}

message Rule {
  string name = 1;
  string doc = 2;
  string expr = 3;
  string sql = 4;
}

extend google.protobuf.FileOptions { Meta file_meta = 1088; }
extend google.protobuf.MessageOptions { Meta message_meta = 1088; }
extend google.protobuf.FieldOptions { Meta field_meta = 1088; }
extend google.protobuf.EnumOptions { Meta enum_meta = 1088; }
extend google.protobuf.EnumValueOptions { Meta enum_value_meta = 1088; }
`,
	"confluent/type/decimal.proto": `syntax = "proto3";
package confluent.type;

option java_package = "io.confluent.protobuf.type";
option java_multiple_files = true;
option java_outer_classname = "DecimalProto";

// Decimal is an arbitrary-precision decimal: value is the unscaled
// integer, two's complement, big-endian.
message Decimal {
  bytes value = 1;
  uint32 precision = 2;
  int32 scale = 3;
}
`,
}

// protobufSchema is a parsed Protobuf schema.
type protobufSchema struct {
	file       protoreflect.FileDescriptor
	canonical  string
	normalized string
	refs       []Ref
	elems      *pbFile
}

func (s *protobufSchema) Type() Type         { return Protobuf }
func (s *protobufSchema) Canonical() string  { return s.canonical }
func (s *protobufSchema) Normalized() string { return s.normalized }
func (s *protobufSchema) References() []Ref  { return s.refs }

// FileDescriptor is the schema's linked file, its imports resolved: what
// a serializer needs to encode and decode messages of the schema's types
// (dynamicpb), and what the serde package asks for through an interface
// assertion so it need not import this package's types.
func (s *protobufSchema) FileDescriptor() protoreflect.FileDescriptor { return s.file }

// Serialized is base64 of the schema's FileDescriptorProto: what
// Confluent's registry answers for format=serialized.
func (s *protobufSchema) Serialized() string {
	fdp := protodesc.ToFileDescriptorProto(s.file)
	dropDefaultJSONNames(fdp.GetMessageType(), fdp.GetExtension())
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(fdp)
	if err != nil {
		// A descriptor built by the compiler always marshals.
		return ""
	}
	return base64.StdEncoding.EncodeToString(b)
}

// ProtobufSerialized is s's Serialized form; ok is false when s is not a
// Protobuf schema.
func ProtobufSerialized(s Schema) (serialized string, ok bool) {
	ps, ok := s.(*protobufSchema)
	if !ok {
		return "", false
	}
	return ps.Serialized(), true
}

func parseProtobuf(text string, refs []Ref) (Schema, error) {
	files := map[string]protocompile.SearchResult{}
	main, mainElems, err := parseProtobufFile(protobufMainFile, text)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	files[protobufMainFile] = main
	for _, r := range refs {
		if r.Type != "" && r.Type != Protobuf {
			return nil, fmt.Errorf("%w: reference %q (subject %q version %d) is a %s schema; a Protobuf schema can import only Protobuf schemas",
				ErrInvalid, r.Name, r.Subject, r.Version, r.Type)
		}
		if r.Name == protobufMainFile {
			return nil, fmt.Errorf("%w: reference name %q is the name of the schema's own file", ErrInvalid, r.Name)
		}
		res, _, err := parseProtobufFile(r.Name, r.Schema)
		if err != nil {
			return nil, fmt.Errorf("%w: reference %q (subject %q version %d): %v", ErrInvalid, r.Name, r.Subject, r.Version, err)
		}
		files[r.Name] = res
	}
	fd, err := compileProtobuf(files)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	s := &protobufSchema{file: fd, refs: refs, elems: mainElems}
	s.canonical = printProtobuf(mainElems, false)
	s.normalized = normalizeProtobuf(mainElems, fd)
	return s, nil
}

// parseProtobufFile reads one file's text: .proto source, or else base64
// of a serialized FileDescriptorProto (named name, whatever name it
// carries). The error is the source parser's when neither reading works,
// since a mistyped .proto is far likelier than a damaged descriptor.
func parseProtobufFile(name, text string) (protocompile.SearchResult, *pbFile, error) {
	h := reporter.NewHandler(nil)
	node, perr := parser.Parse(name, strings.NewReader(text), h)
	if perr == nil && node.Edition != nil {
		// Confluent's parser (Wire) reads proto2 and proto3 only, and the
		// canonical layout has no edition line: refused, not reprinted as
		// a file of another meaning.
		return protocompile.SearchResult{}, nil, fmt.Errorf("%s: editions (edition = ...) are not supported; use syntax = \"proto2\" or \"proto3\"", name)
	}
	if perr == nil {
		res, err := parser.ResultFromAST(node, true, h)
		if err != nil {
			return protocompile.SearchResult{}, nil, err
		}
		return protocompile.SearchResult{ParseResult: res}, pbFileFromAST(node), nil
	}
	fdp, ok := decodeSerializedProtobuf(text)
	if !ok {
		return protocompile.SearchResult{}, nil, perr
	}
	if fdp.GetSyntax() == "editions" {
		return protocompile.SearchResult{}, nil, fmt.Errorf("%s: editions are not supported; use proto2 or proto3", name)
	}
	fdp.Name = proto.String(name)
	fdp.SourceCodeInfo = nil
	elems := pbFileFromDescriptor(fdp)
	// The linker takes a descriptor's json_name as given, so one left
	// out (as in Confluent's own serialized form) is filled in.
	fillDefaultJSONNames(fdp.GetMessageType(), fdp.GetExtension())
	return protocompile.SearchResult{Proto: fdp}, elems, nil
}

// decodeSerializedProtobuf reads text as base64 (standard alphabet,
// padded, as Java's Base64.getDecoder) of a FileDescriptorProto.
func decodeSerializedProtobuf(text string) (*descriptorpb.FileDescriptorProto, bool) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	if err != nil || len(b) == 0 {
		return nil, false
	}
	fdp := &descriptorpb.FileDescriptorProto{}
	if err := proto.Unmarshal(b, fdp); err != nil {
		return nil, false
	}
	return fdp, true
}

// errImportNotFound answers an import that is not among the refs.
var errImportNotFound = errors.New("is not one of the schema's references: a Protobuf schema may import only registered subjects (as references), google/protobuf/*.proto and Confluent's confluent/meta.proto and confluent/type/decimal.proto")

// compileProtobuf links the main file with the files it imports.
func compileProtobuf(files map[string]protocompile.SearchResult) (fd protoreflect.FileDescriptor, err error) {
	resolver := protocompile.ResolverFunc(func(path string) (protocompile.SearchResult, error) {
		if res, ok := files[path]; ok {
			return res, nil
		}
		if src, ok := protobufBuiltins[path]; ok {
			return protocompile.SearchResult{Source: strings.NewReader(src)}, nil
		}
		return protocompile.SearchResult{}, fmt.Errorf("import %q %w", path, errImportNotFound)
	})
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(resolver),
		// One goroutine: the registry parses on request paths and the
		// machine is shared.
		MaxParallelism: 1,
		Reporter:       reporter.NewReporter(nil, func(reporter.ErrorWithPos) {}),
	}
	defer func() {
		// The compiler is third-party code fed user input: a panic in it
		// is an invalid schema, never a crashed registry.
		if p := recover(); p != nil {
			fd, err = nil, fmt.Errorf("the Protobuf compiler failed: %v", p)
		}
	}()
	linked, err := c.Compile(context.Background(), protobufMainFile)
	if err != nil {
		return nil, err
	}
	return linked[0], nil
}

// dropDefaultJSONNames clears each json_name the compiler filled in with
// its default: Confluent's descriptor carries only those a schema sets.
func dropDefaultJSONNames(ms []*descriptorpb.DescriptorProto, exts []*descriptorpb.FieldDescriptorProto) {
	walkFields(ms, exts, func(f *descriptorpb.FieldDescriptorProto) {
		if f.GetJsonName() == defaultJSONName(f.GetName()) {
			f.JsonName = nil
		}
	})
}

func fillDefaultJSONNames(ms []*descriptorpb.DescriptorProto, exts []*descriptorpb.FieldDescriptorProto) {
	walkFields(ms, exts, func(f *descriptorpb.FieldDescriptorProto) {
		if f.JsonName == nil {
			f.JsonName = proto.String(defaultJSONName(f.GetName()))
		}
	})
}

// walkFields calls fn with every field and extension of the messages
// and extensions given, nested ones included.
func walkFields(ms []*descriptorpb.DescriptorProto, exts []*descriptorpb.FieldDescriptorProto, fn func(*descriptorpb.FieldDescriptorProto)) {
	for _, f := range exts {
		fn(f)
	}
	for _, m := range ms {
		for _, f := range m.GetField() {
			fn(f)
		}
		walkFields(m.GetNestedType(), m.GetExtension(), fn)
	}
}

// defaultJSONName is protoc's JSON name of a field: underscores dropped,
// each letter after one upper-cased.
func defaultJSONName(name string) string {
	var b strings.Builder
	upper := false
	for _, r := range name {
		switch {
		case r == '_':
			upper = true
		case upper && 'a' <= r && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
			upper = false
		default:
			b.WriteRune(r)
			upper = false
		}
	}
	return b.String()
}
