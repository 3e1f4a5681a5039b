package msgindex

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
)

func TestAppendParse(t *testing.T) {
	for _, c := range []struct {
		indexes []int
		wire    []byte
	}{
		{[]int{0}, []byte{0}},                // Confluent's shortcut for the first message
		{[]int{1}, []byte{2, 2}},             // count 1, index 1 (zigzag)
		{[]int{0, 0}, []byte{4, 0, 0}},       // nested: the first message's first
		{[]int{2, 1, 3}, []byte{6, 4, 2, 6}}, // three levels
		{[]int{64}, []byte{2, 0x80, 0x01}},   // a two-byte varint
		{[]int{1, 0}, []byte{4, 2, 0}},
	} {
		got := Append(nil, c.indexes)
		if !bytes.Equal(got, c.wire) {
			t.Errorf("%v: wrote % x, want % x", c.indexes, got, c.wire)
		}
		// franz-go's Confluent header writes the same bytes after the ID.
		franz, _ := (&sr.ConfluentHeader{}).AppendEncode(nil, 9, c.indexes)
		if !bytes.Equal(franz[5:], got) {
			t.Errorf("%v: franz-go writes % x, we write % x", c.indexes, franz[5:], got)
		}
		back, rest, err := Parse(append(got, 0xAA))
		if err != nil || !slices.Equal(back, c.indexes) || !bytes.Equal(rest, []byte{0xAA}) {
			t.Errorf("%v: read %v % x %v", c.indexes, back, rest, err)
		}
	}
	if got, _, err := Parse([]byte{2, 0}); err != nil || !slices.Equal(got, []int{0}) {
		t.Errorf("the long form of [0]: %v %v", got, err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"unterminated count", []byte{0x80}},
		{"negative count", []byte{1}},
		{"count beyond the bytes", []byte{4, 2}},
		{"huge count", []byte{0xfe, 0xff, 0xff, 0xff, 0x0f}},
		{"negative index", []byte{2, 1}},
		{"index beyond int32", []byte{2, 0x80, 0x80, 0x80, 0x80, 0x20}},
		{"unterminated index", []byte{2, 0x80}},
	} {
		if _, _, err := Parse(c.b); !errors.Is(err, ErrBad) {
			t.Errorf("%s: %v, want ErrBad", c.name, err)
		}
	}
}

// A file whose descriptor lists messages the text does not declare: map
// entries (B's, before its nested C), a proto2 group's message (D's G).
const testProto = `syntax = "proto2";
package p;
message A { optional string s = 1; }
message B {
  map<string, int32> m = 1;
  message C { map<int32, A> n = 1; message E {} }
  optional C c = 2;
}
message D {
  optional group G = 1 { optional int32 x = 2; }
  message F {}
}
`

func parseFile(t testing.TB, text string) protoreflect.FileDescriptor {
	t.Helper()
	s, err := schema.Parse(schema.Protobuf, text, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.(interface {
		FileDescriptor() protoreflect.FileDescriptor
	}).FileDescriptor()
}

// Message names what Confluent's ProtobufSchema.toMessageName names, and
// Of gives the indexes Confluent's toMessageIndexes gives.
func TestMessage(t *testing.T) {
	file := parseFile(t, testProto)
	for _, c := range []struct {
		indexes []int
		want    string
	}{
		{nil, "p.A"}, {[]int{0}, "p.A"}, {[]int{1}, "p.B"},
		{[]int{1, 0}, "p.B.C"}, {[]int{1, 0, 0}, "p.B.C.E"},
		{[]int{2}, "p.D"}, {[]int{2, 0}, "p.D.F"},
	} {
		md, err := Message(file, c.indexes)
		if err != nil || string(md.FullName()) != c.want {
			t.Errorf("%v: %v, want %s", c.indexes, fullName(md, err), c.want)
			continue
		}
		want := c.indexes
		if want == nil {
			want = []int{0}
		}
		if got := Of(md); !slices.Equal(got, want) {
			t.Errorf("%s: indexes %v, want %v", c.want, got, want)
		}
	}
	for _, bad := range [][]int{{3}, {0, 0}, {1, 1}, {1, 0, 1}, {2, 1}, {-1}} {
		if md, err := Message(file, bad); !errors.Is(err, ErrBad) {
			t.Errorf("%v: %v, want ErrBad", bad, fullName(md, err))
		}
	}
	if _, err := Message(parseFile(t, `syntax = "proto3"; enum E { Z = 0; }`), nil); !errors.Is(err, ErrBad) {
		t.Errorf("a file without messages: %v", err)
	}
}

// FuzzParse: Parse never panics, what it accepts writes back to bytes
// that read the same (varints may come longer than Go writes them, and
// [0] has two forms), and its reading depends on the prefix only.
func FuzzParse(f *testing.F) {
	f.Add([]byte{0, 'x'})
	f.Add([]byte{6, 4, 2, 6})
	f.Add([]byte{1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		indexes, rest, err := Parse(b)
		if err != nil {
			return
		}
		read := b[:len(b)-len(rest)]
		wrote := Append(nil, indexes)
		again, left, err := Parse(wrote)
		if err != nil || len(left) != 0 || !slices.Equal(again, indexes) {
			t.Fatalf("indexes %v (from % x) written as % x read back as %v, %v", indexes, read, wrote, again, err)
		}
		alone, left, err := Parse(read)
		if err != nil || len(left) != 0 || !slices.Equal(alone, indexes) {
			t.Fatalf("% x read alone as %v, %v; within % x as %v", read, alone, err, b, indexes)
		}
	})
}

func fullName(md protoreflect.MessageDescriptor, err error) any {
	if err != nil {
		return err
	}
	return md.FullName()
}
