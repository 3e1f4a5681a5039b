package restproxy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Produce: one ProduceRequest as the body, one ProduceResponse as the
// answer; or, streaming (http_produce_stream.go), several ProduceRequests
// concatenated and one result per record. The batch endpoint is not
// served yet; the schema formats (AVRO, JSONSCHEMA, PROTOBUF) go through
// the Schema Registry (schemas.go).
func (p *Proxy) routeRecords(mux *http.ServeMux) {
	mux.HandleFunc("POST /v3/clusters/{cluster_id}/topics/{topic_name}/records", p.produceRecord)
}

// produceRequest is the spec's ProduceRequest.
type produceRequest struct {
	PartitionID *int32          `json:"partition_id"`
	Headers     []produceHeader `json:"headers"`
	Key         *produceData    `json:"key"`
	Value       *produceData    `json:"value"`
	Timestamp   *time.Time      `json:"timestamp"`
}

type produceHeader struct {
	Name  string `json:"name"`
	Value []byte `json:"value"` // format: byte, base64
}

// produceData is the spec's ProduceRequestData.
type produceData struct {
	Type                string          `json:"type"`
	Data                json.RawMessage `json:"data"`
	Subject             *string         `json:"subject"`
	SubjectNameStrategy *string         `json:"subject_name_strategy"`
	SchemaID            *int            `json:"schema_id"`
	SchemaVersion       *int            `json:"schema_version"`
	Schema              *string         `json:"schema"`
}

// produceResponse is the spec's ProduceResponse.
type produceResponse struct {
	ErrorCode   int              `json:"error_code"`
	ClusterID   string           `json:"cluster_id"`
	TopicName   string           `json:"topic_name"`
	PartitionID int32            `json:"partition_id"`
	Offset      int64            `json:"offset"`
	Timestamp   string           `json:"timestamp"`
	Key         *produceDataSize `json:"key,omitempty"`
	Value       *produceDataSize `json:"value,omitempty"`
}

type produceDataSize struct {
	Type     string  `json:"type"`
	Size     int     `json:"size"`
	Subject  *string `json:"subject,omitempty"`   // the schema's subject, when known
	SchemaID *int    `json:"schema_id,omitempty"` // the schema formats'
}

// schemaSerializer serializes a key (isKey) or value through the Schema
// Registry: one of a schema format, or with schema fields, or data
// without a type (the subject's latest schema).
type schemaSerializer func(isKey bool, d *produceData) ([]byte, *produceDataSize, *Error)

// hasSchema says whether d names a schema.
func (d *produceData) hasSchema() bool {
	return d.Subject != nil || d.SubjectNameStrategy != nil || d.SchemaID != nil || d.SchemaVersion != nil || d.Schema != nil
}

// serialize turns a key or value into the record's bytes: BINARY is
// base64 text, STRING a JSON string's UTF-8, JSON the value's compact
// text, the schema formats (and data without a type) schemas' (nil:
// refused, as without a registry). A missing or null data is a null key
// or value.
func (d *produceData) serialize(field string, schemas schemaSerializer) ([]byte, *produceDataSize, *Error) {
	if d == nil {
		return nil, nil, nil
	}
	typ := strings.ToUpper(d.Type)
	null := len(d.Data) == 0 || string(d.Data) == "null"
	if typ == "AVRO" || typ == "JSONSCHEMA" || typ == "PROTOBUF" || (typ == "" && !null) || (typ == "" && d.hasSchema()) {
		if schemas == nil {
			return nil, nil, errNoRegistry()
		}
		return schemas(field == "key", d)
	}
	if d.hasSchema() {
		return nil, nil, errBadRequest(fmt.Sprintf("Bad Request: %s: schemas (subject, subject_name_strategy, schema_id, schema_version, schema) are for the types AVRO, JSONSCHEMA and PROTOBUF, not %s", field, typ))
	}
	var raw []byte
	switch typ {
	case "BINARY", "STRING":
		if null {
			break
		}
		s, ok := jsonString(d.Data)
		if !ok {
			return nil, nil, errBadRequest(fmt.Sprintf("Bad Request: %s: data=%s is not a string.", field, d.Data))
		}
		raw = s
		if typ == "BINARY" {
			b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
			n, err := base64.StdEncoding.Decode(b, s)
			if err != nil {
				return nil, nil, errBadRequest(fmt.Sprintf("Bad Request: %s: data=%s is not a base64 string.", field, d.Data))
			}
			raw = b[:n]
		}
	case "JSON":
		if null {
			break
		}
		var b bytes.Buffer
		if err := json.Compact(&b, d.Data); err != nil {
			return nil, nil, errBadRequest(fmt.Sprintf("Bad Request: %s: %v", field, err))
		}
		raw = b.Bytes()
	case "":
		return nil, nil, nil
	default:
		return nil, nil, errBadRequest(fmt.Sprintf("Bad Request: %s: unknown type %s", field, d.Type))
	}
	if null {
		return nil, &produceDataSize{Type: typ, Size: 0}, nil
	}
	return raw, &produceDataSize{Type: typ, Size: len(raw)}, nil
}

// record builds the Kafka record of a request, or the 400 of its input.
func (r *produceRequest) record(topic string) (*kgo.Record, *produceDataSize, *produceDataSize, *Error) {
	return r.recordWith(topic, nil)
}

// recordWith is record with the schema formats serialized by schemas.
func (r *produceRequest) recordWith(topic string, schemas schemaSerializer) (*kgo.Record, *produceDataSize, *produceDataSize, *Error) {
	key, keySize, e := r.Key.serialize("key", schemas)
	if e != nil {
		return nil, nil, nil, e
	}
	value, valueSize, e := r.Value.serialize("value", schemas)
	if e != nil {
		return nil, nil, nil, e
	}
	rec := &kgo.Record{Topic: topic, Key: key, Value: value}
	for _, h := range r.Headers {
		if h.Name == "" {
			return nil, nil, nil, errBadRequest("Bad Request: a header without a name")
		}
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h.Name, Value: h.Value})
	}
	if r.Timestamp != nil {
		rec.Timestamp = *r.Timestamp
	}
	return rec, keySize, valueSize, nil
}

// jsonString answers the UTF-8 of data, a JSON string, or false for any
// other JSON value. A string without escapes and of valid UTF-8 is its
// own bytes between the quotes (data is decoded JSON, so it is one whole
// value: no bare quote or control character inside); any other goes
// through json.Unmarshal, which resolves escapes and replaces invalid
// UTF-8 as it always did. The shortcut saves a reflective decode and two
// copies per record of a stream.
func jsonString(data json.RawMessage) ([]byte, bool) {
	if n := len(data); n >= 2 && data[0] == '"' && data[n-1] == '"' {
		inner := data[1 : n-1]
		if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			return inner, true
		}
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, false
	}
	return []byte(s), true
}
