package restproxy

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/samsa-io/samsa/pkg/serde"
)

// embeddedFormat is a v2 embedded format: how a record's key and value
// travel inside the JSON of a produce or a consume, named as in
// application/vnd.kafka.{format}.v2+json.
type embeddedFormat string

const (
	formatBinary     embeddedFormat = "binary"     // base64 of the bytes
	formatJSON       embeddedFormat = "json"       // the bytes are JSON text, embedded as is
	formatAvro       embeddedFormat = "avro"       // Confluent's wire format, Avro's JSON encoding
	formatJSONSchema embeddedFormat = "jsonschema" // Confluent's wire format, JSON Schema
	formatProtobuf   embeddedFormat = "protobuf"   // Confluent's wire format, Protobuf's JSON mapping
)

// parseEmbeddedFormat reads a format's name as a content type or a
// consumer instance's "format" field names it.
func parseEmbeddedFormat(s string) (embeddedFormat, bool) {
	switch f := embeddedFormat(s); f {
	case formatBinary, formatJSON, formatAvro, formatJSONSchema, formatProtobuf:
		return f, true
	}
	return "", false
}

// decodeEmbedded turns a record's key (isKey) or value bytes into the JSON
// a v2 consumer of format f is answered with: null for a null key or
// value.
func (p *Proxy) decodeEmbedded(ctx context.Context, f embeddedFormat, topic string, isKey bool, b []byte) (json.RawMessage, error) {
	if b == nil {
		return json.RawMessage("null"), nil
	}
	switch f {
	case formatBinary:
		return quotedBase64(b), nil
	case formatJSON:
		if !json.Valid(b) {
			return nil, fmt.Errorf("the record at this offset is not JSON text, so it cannot be embedded in format json")
		}
		return json.RawMessage(b), nil
	case formatAvro, formatJSONSchema, formatProtobuf:
		return p.decodeSchema(ctx, f, topic, isKey, b)
	}
	return nil, fmt.Errorf("embedded format %s: unknown", f)
}

// quotedBase64 is b in base64 as a JSON string: what json.Marshal of
// the base64 text answers (base64's alphabet needs no escaping, not even
// HTML's), written in place: one allocation a key or value instead of
// three, on the path of every record a binary consumer reads.
func quotedBase64(b []byte) json.RawMessage {
	q := make([]byte, base64.StdEncoding.EncodedLen(len(b))+2)
	q[0], q[len(q)-1] = '"', '"'
	base64.StdEncoding.Encode(q[1:len(q)-1], b)
	return q
}

// decodeSchema reads a record written in Confluent's wire format with the
// schema its ID names, as Confluent's v2 consumer answers it: Avro's JSON
// encoding (a union's branch as {"type": value}), a JSON Schema record's
// document, Protobuf's JSON mapping. A record that is not in the wire
// format, or whose schema is of another format than the consumer's, is
// the deserializer's failure: Confluent's consumer answers it 500 50002
// (a SerializationException is a KafkaException).
func (p *Proxy) decodeSchema(ctx context.Context, f embeddedFormat, topic string, isKey bool, b []byte) (json.RawMessage, error) {
	if p.registry == nil {
		return nil, errNoRegistrySerializer()
	}
	what := "value"
	if isKey {
		what = "key"
	}
	text, sch, err := p.registry.topicSerde().DecodeJSON(ctx, b)
	if err == nil && sch.Type != schemaType(f) {
		err = fmt.Errorf("its schema (id %d) is %s, not %s", sch.ID, typeName(sch.Type), typeName(schemaType(f)))
	}
	if err != nil {
		return nil, &Error{http.StatusInternalServerError, codeKafkaError,
			fmt.Sprintf("Kafka error: the %s of a record of %s cannot be deserialized as %s: %v", what, topic, f, err)}
	}
	return json.RawMessage(text), nil
}

func typeName(t serde.SchemaType) string {
	if t == "" {
		return string(serde.Avro)
	}
	return string(t)
}
