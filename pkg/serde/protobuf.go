package serde

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/samsa-io/samsa/internal/schemaregistry/msgindex"
)

// findMessage finds a message of file by full name (package included) or
// by the name of a top-level message; empty is the file's first message,
// as Confluent's serializer takes the first when none is named.
func findMessage(file protoreflect.FileDescriptor, name string) (protoreflect.MessageDescriptor, error) {
	if name == "" {
		if file.Messages().Len() == 0 {
			return nil, fmt.Errorf("serde: %s defines no message", file.Path())
		}
		return file.Messages().Get(0), nil
	}
	if md := file.Messages().ByName(protoreflect.Name(name)); md != nil {
		return md, nil
	}
	if md := findNested(file.Messages(), protoreflect.FullName(name)); md != nil {
		return md, nil
	}
	return nil, fmt.Errorf("serde: no message %q in the schema (package %q)", name, file.Package())
}

func findNested(ms protoreflect.MessageDescriptors, full protoreflect.FullName) protoreflect.MessageDescriptor {
	for i := range ms.Len() {
		md := ms.Get(i)
		if md.FullName() == full {
			return md
		}
		if found := findNested(md.Messages(), full); found != nil {
			return found
		}
	}
	return nil
}

// messageIndexes is a message's path in its file, as Confluent's
// serializer writes it after the ID.
func messageIndexes(md protoreflect.MessageDescriptor) []int { return msgindex.Of(md) }

// messageAt follows a message-index array in file.
func messageAt(file protoreflect.FileDescriptor, indexes []int) (protoreflect.MessageDescriptor, error) {
	md, err := msgindex.Message(file, indexes)
	if err != nil {
		return nil, fmt.Errorf("serde: %w", err)
	}
	return md, nil
}

// marshalProto writes a message's fields in a fixed order: a dynamic
// message's fields are otherwise ranged in map order, so the same record
// would be written as different bytes from one run to the next.
var marshalProto = proto.MarshalOptions{Deterministic: true}

func encodeProto(md protoreflect.MessageDescriptor, v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("a Protobuf schema serializes a proto.Message, not %T", v)
	}
	if got := m.ProtoReflect().Descriptor().FullName(); got != md.FullName() {
		return nil, fmt.Errorf("message %s is not the schema's %s", got, md.FullName())
	}
	return marshalProto.Marshal(m)
}

func protoJSONToBinary(md protoreflect.MessageDescriptor, text []byte) ([]byte, error) {
	m := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal(text, m); err != nil {
		return nil, fmt.Errorf("message %s: %v", md.FullName(), err)
	}
	return marshalProto.Marshal(m)
}

// readMessage reads the message-index array and the message after it.
func readMessage(file protoreflect.FileDescriptor, body []byte) (*dynamicpb.Message, error) {
	indexes, rest, err := ParseMessageIndexes(body)
	if err != nil {
		return nil, err
	}
	md, err := messageAt(file, indexes)
	if err != nil {
		return nil, err
	}
	m := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(rest, m); err != nil {
		return nil, fmt.Errorf("%w: message %s: %v", ErrPayloadMismatch, md.FullName(), err)
	}
	return m, nil
}

// protoBinaryToJSON prints the message compactly: protojson varies its
// spacing on purpose, so its output is compacted to be stable.
func protoBinaryToJSON(file protoreflect.FileDescriptor, body []byte) ([]byte, error) {
	m, err := readMessage(file, body)
	if err != nil {
		return nil, err
	}
	text, err := protojson.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPayloadMismatch, err)
	}
	var out bytes.Buffer
	if err := json.Compact(&out, text); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func decodeProto(file protoreflect.FileDescriptor, body []byte, into any) error {
	target, ok := into.(proto.Message)
	if !ok {
		return fmt.Errorf("a Protobuf schema deserializes into a proto.Message, not %T", into)
	}
	m, err := readMessage(file, body)
	if err != nil {
		return err
	}
	if got, want := target.ProtoReflect().Descriptor().FullName(), m.Descriptor().FullName(); got != want {
		return errors.New("the payload's message is " + string(want) + ", not " + string(got))
	}
	b, err := marshalProto.Marshal(m)
	if err != nil {
		return err
	}
	return proto.Unmarshal(b, target)
}
