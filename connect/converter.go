package connect

// Converter turns Connect data into the bytes of a Kafka record's key or
// value and back (Kafka's Converter): key.converter and value.converter.
type Converter interface {
	// Configure reads the converter's props (the key.converter. or
	// value.converter. prefix taken off); isKey says which side it is.
	Configure(props map[string]string, isKey bool) error
	FromConnectData(topic string, headers Headers, schema *Schema, value any) ([]byte, error)
	ToConnectData(topic string, headers Headers, data []byte) (*Schema, any, error)
}

// HeaderConverter turns one header's value into bytes and back (Kafka's
// HeaderConverter): header.converter.
type HeaderConverter interface {
	Configure(props map[string]string) error
	FromConnectHeader(topic, key string, schema *Schema, value any) ([]byte, error)
	ToConnectHeader(topic, key string, data []byte) (*Schema, any, error)
}
