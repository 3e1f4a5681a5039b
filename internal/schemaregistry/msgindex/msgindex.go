package msgindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// ErrBad wraps every failure to read or follow an array: truncated,
// a count or an index out of range, or indexes naming no message.
var ErrBad = errors.New("bad message-index array")

// maxDepth bounds the count: no schema nests messages this deep, and a
// count read from a hostile payload must not size an allocation.
const maxDepth = 100

// Append appends indexes as Confluent writes them: a zigzag varint count,
// then each index as a zigzag varint; the common [0] (the file's first
// message) is the single byte 0.
func Append(dst []byte, indexes []int) []byte {
	if len(indexes) == 1 && indexes[0] == 0 {
		return append(dst, 0)
	}
	dst = binary.AppendVarint(dst, int64(len(indexes)))
	for _, i := range indexes {
		dst = binary.AppendVarint(dst, int64(i))
	}
	return dst
}

// Parse reads an array at the start of b and returns the bytes after it.
// A count of 0 is [0], as Confluent's MessageIndexes.readFrom reads it.
// Reading is decided by b's prefix alone: bytes that start with an array
// Parse read before read as the same indexes.
func Parse(b []byte) (indexes []int, rest []byte, err error) {
	count, n := binary.Varint(b)
	if n <= 0 {
		return nil, nil, fmt.Errorf("%w: cannot read the count", ErrBad)
	}
	b = b[n:]
	switch {
	case count == 0:
		return []int{0}, b, nil
	case count < 0 || count > maxDepth:
		return nil, nil, fmt.Errorf("%w: count %d, want 0 to %d", ErrBad, count, maxDepth)
	}
	indexes = make([]int, 0, count)
	for range count {
		i, n := binary.Varint(b)
		if n <= 0 {
			return nil, nil, fmt.Errorf("%w: %d indexes announced, only %d readable", ErrBad, count, len(indexes))
		}
		if i < 0 || i > math.MaxInt32 {
			return nil, nil, fmt.Errorf("%w: index %d", ErrBad, i)
		}
		indexes = append(indexes, int(i))
		b = b[n:]
	}
	return indexes, b, nil
}

// Message follows indexes in file: the top-level message at the first,
// then its nested message at the next, and so on, as Confluent's
// ProtobufSchema.toMessageName does. Empty indexes are [0]. Indexes count
// the messages the .proto text declares, as Confluent's parser sees them:
// the synthetic entry message of a map field and a proto2 group's message
// are not counted, though the descriptor lists them among the messages.
func Message(file protoreflect.FileDescriptor, indexes []int) (protoreflect.MessageDescriptor, error) {
	if len(indexes) == 0 {
		indexes = []int{0}
	}
	ms := file.Messages()
	var md protoreflect.MessageDescriptor
	for depth, i := range indexes {
		next := declared(ms, i)
		if next == nil {
			where := "the file"
			if md != nil {
				where = "message " + string(md.FullName())
			}
			return nil, fmt.Errorf("%w: %v: %s declares %d messages, no index %d (level %d)", ErrBad, indexes, where, countDeclared(ms), i, depth)
		}
		md = next
		ms = md.Messages()
	}
	return md, nil
}

// declared is the i-th declared message of ms, nil when there is none.
func declared(ms protoreflect.MessageDescriptors, i int) protoreflect.MessageDescriptor {
	for j := range ms.Len() {
		md := ms.Get(j)
		if !isDeclared(md) {
			continue
		}
		if i == 0 {
			return md
		}
		i--
	}
	return nil
}

func countDeclared(ms protoreflect.MessageDescriptors) int {
	n := 0
	for j := range ms.Len() {
		if isDeclared(ms.Get(j)) {
			n++
		}
	}
	return n
}

// isDeclared tells a message the text declares from one the compiler
// made: a map field's entry, or a proto2 group's message (a field of
// kind group in the same scope whose type it is).
func isDeclared(md protoreflect.MessageDescriptor) bool {
	if md.IsMapEntry() {
		return false
	}
	if md.ParentFile().Syntax() != protoreflect.Proto2 {
		return true // groups are proto2's
	}
	var scopes []fieldList
	switch p := md.Parent().(type) {
	case protoreflect.MessageDescriptor:
		scopes = append(scopes, p.Fields(), p.Extensions())
	case protoreflect.FileDescriptor:
		scopes = append(scopes, p.Extensions())
	}
	for _, fs := range scopes {
		for k := range fs.Len() {
			f := fs.Get(k)
			if f.Kind() == protoreflect.GroupKind && f.Message() != nil && f.Message().FullName() == md.FullName() {
				return false
			}
		}
	}
	return true
}

// Of is md's indexes in its file, as Message follows them: the index of
// its top-level message among the declared ones, then of each nested
// message down to it.
func Of(md protoreflect.MessageDescriptor) []int {
	var path []int
	for d := md; ; {
		siblings := d.ParentFile().Messages()
		parent, nested := d.Parent().(protoreflect.MessageDescriptor)
		if nested {
			siblings = parent.Messages()
		}
		path = append(path, declaredIndex(siblings, d))
		if !nested {
			break
		}
		d = parent
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

// fieldList is what fields and extensions have in common.
type fieldList interface {
	Len() int
	Get(i int) protoreflect.FieldDescriptor
}

func declaredIndex(ms protoreflect.MessageDescriptors, md protoreflect.MessageDescriptor) int {
	n := 0
	for j := range md.Index() {
		if isDeclared(ms.Get(j)) {
			n++
		}
	}
	return n
}
