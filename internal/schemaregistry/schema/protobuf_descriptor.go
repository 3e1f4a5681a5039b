package schema

import "google.golang.org/protobuf/types/descriptorpb"

func pbFileFromDescriptor(fdp *descriptorpb.FileDescriptorProto) *pbFile {
	return &pbFile{}
}
