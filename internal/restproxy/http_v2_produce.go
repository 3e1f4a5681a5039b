package restproxy

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/pkg/serde"
)

// routeV2Produce serves v2 produce: POST /topics/{topic} and /topics/{topic}/partitions/{p},
// as kafka-rest's ProduceToTopicAction and ProduceToPartitionAction. The
// body's embedded format is its Content-Type,
// application/vnd.kafka.{binary|json|avro|jsonschema|protobuf}.v2+json
// (any other is 415, as Jersey refuses a type no resource consumes); the
// schema formats go through the registry (schemas.go). Every record is
// serialized before any is produced, so bad input fails the request as a
// whole; a record Kafka refuses fails alone, in its offsets entry.
func (p *Proxy) routeV2Produce(mux *http.ServeMux) {
	mux.HandleFunc("POST /topics/{topic}", p.v2(p.v2ProduceToTopic))
	mux.HandleFunc("POST /topics/{topic}/partitions/{partition}", p.v2(p.v2ProduceToPartition))
}

// v2ProduceRequest is Confluent's v2 ProduceRequest.
type v2ProduceRequest struct {
	Records       []v2ProduceRecord `json:"records"`
	KeySchemaID   *int              `json:"key_schema_id"`
	KeySchema     *string           `json:"key_schema"`
	ValueSchemaID *int              `json:"value_schema_id"`
	ValueSchema   *string           `json:"value_schema"`
}

type v2ProduceRecord struct {
	Partition *int32          `json:"partition"`
	Key       json.RawMessage `json:"key"`
	Value     json.RawMessage `json:"value"`
}

// v2ProduceResponse is Confluent's: the schema IDs used (null without)
// and one PartitionOffset per record, in order.
type v2ProduceResponse struct {
	Offsets       []v2PartitionOffset `json:"offsets"`
	KeySchemaID   *int                `json:"key_schema_id"`
	ValueSchemaID *int                `json:"value_schema_id"`
}

// v2PartitionOffset is a record's result: partition and offset, or
// error_code and error (the others null).
type v2PartitionOffset struct {
	Partition *int32  `json:"partition"`
	Offset    *int64  `json:"offset"`
	ErrorCode *int    `json:"error_code"`
	Error     *string `json:"error"`
}

func (p *Proxy) v2ProduceToTopic(w http.ResponseWriter, req *http.Request) {
	p.v2Produce(w, req, nil)
}

func (p *Proxy) v2ProduceToPartition(w http.ResponseWriter, req *http.Request) {
	n, err := strconv.ParseInt(req.PathValue("partition"), 10, 32)
	if err != nil || n < 0 {
		writeV2Error(w, errPartitionNotFound())
		return
	}
	part := int32(n)
	p.v2Produce(w, req, &part)
}

// v2Format reads the embedded format from the Content-Type.
func v2Format(req *http.Request) (embeddedFormat, bool) {
	mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil {
		return "", false
	}
	name, ok := strings.CutPrefix(mt, "application/vnd.kafka.")
	if !ok {
		return "", false
	}
	name, ok = strings.CutSuffix(name, ".v2+json")
	if !ok {
		return "", false
	}
	return parseEmbeddedFormat(name)
}

func (p *Proxy) v2Produce(w http.ResponseWriter, req *http.Request, partition *int32) {
	f, ok := v2Format(req)
	if !ok {
		writeV2Error(w, errUnsupportedMediaType())
		return
	}
	body, e := p.v2ReadProduce(w, req)
	if e != nil {
		writeV2Error(w, e)
		return
	}
	topic := req.PathValue("topic")
	ctx, cancel := p.opContext(req)
	defer cancel()
	keyEnc, e := p.v2Encoder(ctx, f, topic, true, body.KeySchemaID, body.KeySchema, body.Records)
	if e != nil {
		writeV2Error(w, e)
		return
	}
	valueEnc, e := p.v2Encoder(ctx, f, topic, false, body.ValueSchemaID, body.ValueSchema, body.Records)
	if e != nil {
		writeV2Error(w, e)
		return
	}
	recs := make([]*kgo.Record, len(body.Records))
	for i, r := range body.Records {
		rec := &kgo.Record{Topic: topic, Partition: -1}
		if rec.Key, e = v2Serialize(f, keyEnc, r.Key); e == nil {
			rec.Value, e = v2Serialize(f, valueEnc, r.Value)
		}
		if e != nil {
			writeV2Error(w, e)
			return
		}
		switch {
		case r.Partition != nil:
			rec.Partition = *r.Partition
		case partition != nil:
			rec.Partition = *partition
		}
		recs[i] = rec
	}
	t, err := p.topicForProduce(ctx, topic, partition)
	if err != nil && kafkaError(err).Code != codeTopicNotFound {
		writeV2Error(w, err)
		return
	}
	if err == nil && partition != nil {
		if _, found := t.partitions[*partition]; !found {
			writeV2Error(w, errPartitionNotFound())
			return
		}
	}
	resp := v2ProduceResponse{Offsets: p.v2ProduceAll(ctx, t, err, recs), KeySchemaID: schemaID(keyEnc), ValueSchemaID: schemaID(valueEnc)}
	writeV2(w, v2ProduceStatus(resp.Offsets), resp)
}

// v2ReadProduce decodes the body as Confluent's Jackson does: JSON that
// does not parse is 400, JSON of the wrong shape (an unknown field, a
// string for a number) 422, no body or no records 422 (the request's
// @NotNull and @NotEmpty), past the limit 413.
func (p *Proxy) v2ReadProduce(w http.ResponseWriter, req *http.Request) (*v2ProduceRequest, *Error) {
	if req.ContentLength > p.cfg.MaxBody {
		return nil, errTooLarge(p.cfg.MaxBody)
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, req.Body, p.cfg.MaxBody))
	if err != nil {
		return nil, decodeError(err, p.cfg.MaxBody)
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, errUnprocessable(http.StatusUnprocessableEntity, "Null input provided. Data is required.")
	}
	if !json.Valid(raw) {
		var body any
		err := json.Unmarshal(raw, &body)
		return nil, errBadRequest(fmt.Sprintf("Unexpected character in the JSON body: %v", err))
	}
	var body v2ProduceRequest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return nil, errUnprocessable(http.StatusUnprocessableEntity, "Unrecognizable JSON: "+err.Error())
	}
	if len(body.Records) == 0 {
		return nil, errUnprocessable(http.StatusUnprocessableEntity, "records must not be empty")
	}
	return &body, nil
}

// v2Encoder finds the schema a request's keys (isKey) or values are
// serialized with, as Confluent's AbstractProduceAction does: by ID
// first, else the inline schema, registered (when new) under the topic's
// TopicNameStrategy subject. Binary and json take no schema; nil when the
// format has none.
func (p *Proxy) v2Encoder(ctx context.Context, f embeddedFormat, topic string, isKey bool, id *int, text *string, recs []v2ProduceRecord) (*serde.Encoder, *Error) {
	field := "value"
	if isKey {
		field = "key"
	}
	if !isSchemaFormat(f) {
		if id != nil || text != nil {
			return nil, errUnprocessable(http.StatusUnprocessableEntity,
				fmt.Sprintf("%s_schema and %s_schema_id are for the schema formats (avro, jsonschema, protobuf), not %s", field, field, f))
		}
		return nil, nil
	}
	if p.registry == nil {
		if id != nil || text != nil {
			return nil, errNoRegistry()
		}
		if anyData(recs, isKey) {
			return nil, errNoRegistrySerializer()
		}
		return nil, nil
	}
	s := p.registry.topicSerde()
	switch {
	case id != nil:
		enc, err := s.ForID(ctx, *id, "")
		if err != nil {
			return nil, registryError(err, fmt.Sprintf("Error when fetching schema by id. schemaId = %d", *id))
		}
		if enc.Schema().Type != schemaType(f) {
			return nil, errBadRequest(fmt.Sprintf("Bad Request: %s_schema_id %d is a %s schema, not %s", field, *id, typeName(enc.Schema().Type), f))
		}
		return enc, nil
	case text != nil:
		if e := checkSchema(f, *text); e != nil {
			return nil, e
		}
		enc, err := s.ForTopic(ctx, topic, isKey, serde.Source{Type: schemaType(f), Text: *text})
		if err != nil {
			return nil, registryError(err, fmt.Sprintf("Error when registering schema. format = %s, schema = %s", f, *text))
		}
		return enc, nil
	}
	if anyData(recs, isKey) {
		return nil, errSchemaMissing(isKey)
	}
	return nil, nil
}

// anyData says whether a record has a non-null key (isKey) or value.
func anyData(recs []v2ProduceRecord, isKey bool) bool {
	for _, r := range recs {
		d := r.Value
		if isKey {
			d = r.Key
		}
		if !isNull(d) {
			return true
		}
	}
	return false
}

func isNull(d json.RawMessage) bool {
	return len(d) == 0 || string(d) == "null"
}

// v2Serialize turns one key or value into the record's bytes: binary is
// base64 text, json the value's compact text, a schema format its
// encoder's wire format. null (or absent) is a null key or value.
func v2Serialize(f embeddedFormat, enc *serde.Encoder, d json.RawMessage) ([]byte, *Error) {
	if isNull(d) {
		return nil, nil
	}
	switch f {
	case formatBinary:
		s, ok := jsonString(d)
		if !ok {
			return nil, errBadRequest(fmt.Sprintf("Bad Request: data=%s is not a base64 string.", d))
		}
		b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
		n, err := base64.StdEncoding.Decode(b, s)
		if err != nil {
			return nil, errBadRequest(fmt.Sprintf("Bad Request: data=%s is not a valid base64 string.", d))
		}
		return b[:n], nil
	case formatJSON:
		var b bytes.Buffer
		if err := json.Compact(&b, d); err != nil {
			return nil, errBadRequest("Bad Request: " + err.Error())
		}
		return b.Bytes(), nil
	}
	if enc == nil { // v2Encoder refuses data without a schema; never reached
		return nil, errUnprocessable(codeSerialization, "Error serializing message. No schema to serialize the data with.")
	}
	b, err := enc.EncodeJSON(d)
	if err != nil {
		return nil, valueMismatch(err)
	}
	return b, nil
}

func schemaID(enc *serde.Encoder) *int {
	if enc == nil {
		return nil
	}
	id := enc.Schema().ID
	return &id
}

// v2ProduceAll produces the records together and answers each one's
// result in order. A topic the cluster does not know (topicErr) fails
// each record with Kafka's retriable UNKNOWN_TOPIC_OR_PARTITION, 50003,
// as Confluent's producer fails them; a partition the topic does not
// have fails its record with 40402.
func (p *Proxy) v2ProduceAll(ctx context.Context, t cachedTopic, topicErr error, recs []*kgo.Record) []v2PartitionOffset {
	out := make([]v2PartitionOffset, len(recs))
	kc := p.kafka(ctx)
	var wg sync.WaitGroup
	for i, rec := range recs {
		if topicErr != nil {
			out[i] = v2Failed(topicErr)
			continue
		}
		if rec.Partition >= 0 {
			if _, found := t.partitions[rec.Partition]; !found {
				out[i] = v2Failed(errPartitionNotFound())
				continue
			}
			rec.Context = withManualPartition(ctx)
		}
		if e := p.allowProduce(ctx); e != nil {
			out[i] = v2Failed(e)
			continue
		}
		wg.Add(1)
		kc.client.Produce(ctx, rec, func(rec *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				if staleMetadata(err) {
					kc.metadata.forget(rec.Topic)
				}
				out[i] = v2Failed(err)
				return
			}
			part, off := rec.Partition, rec.Offset
			out[i] = v2PartitionOffset{Partition: &part, Offset: &off}
		})
	}
	wg.Wait()
	return out
}

// v2Failed is a record's error entry. Confluent's per-record codes are
// its producer exception mapping's (AbstractProduceAction): 40101 and
// 40301 authentication and authorization, 50003 a retriable Kafka error
// (an unknown topic is one), 50002 any other; the proxy's own refusals (a
// partition the topic does not have, the rate limit) keep theirs.
func v2Failed(err error) v2PartitionOffset {
	e := kafkaError(err)
	code, msg := e.Code, e.Message
	var ke *kerr.Error
	switch {
	case code == codeAuthentication || code == codeAuthorization:
	case errors.As(err, &ke) && ke.Retriable, code == codeTopicNotFound:
		code = codeKafkaRetriable
	case errors.As(err, &ke):
		code = codeKafkaError
	}
	return v2PartitionOffset{ErrorCode: &code, Error: &msg}
}

// v2ProduceStatus is 401 or 403 when a record failed authentication or
// authorization, else 200 (ProduceResponse.getRequestStatus).
func v2ProduceStatus(offsets []v2PartitionOffset) int {
	for _, o := range offsets {
		switch {
		case o.ErrorCode == nil:
		case *o.ErrorCode == codeAuthentication:
			return http.StatusUnauthorized
		case *o.ErrorCode == codeAuthorization:
			return http.StatusForbidden
		}
	}
	return http.StatusOK
}
