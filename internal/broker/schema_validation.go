package broker

// Broker-side schema ID validation, as Confluent Server offers it
// (docs/DESIGN-schemaregistry.md "Broker-side validation"). A topic with
// confluent.key.schema.validation or confluent.value.schema.validation
// true accepts a produced batch only if every record's key (value) is in
// Confluent's wire format (magic byte 0, then a big-endian 4-byte schema
// ID) with an ID registered under the subject that
// confluent.key/value.subject.name.strategy names:
//
//	TopicNameStrategy        <topic>-key, <topic>-value
//	RecordNameStrategy       the record name of the ID's schema
//	TopicRecordNameStrategy  <topic>-<record name>
//
// A Protobuf schema's record name is that of the message the record's
// message indexes (after the ID) name, as Confluent's serializers write
// and read them; the broker reads the indexes itself (msgindex) and
// refuses a record whose indexes cannot be read or name no message.
//
// A null key or value passes (a tombstone must stay possible on a
// compacted topic; Confluent's documented rule). The payload is not read:
// only the ID (and the indexes a subject's name depends on) is checked,
// as Confluent and Redpanda do.
//
// A batch with one bad record is refused whole with INVALID_RECORD,
// record_errors naming each bad record's batch index (KIP-467). When the
// registry cannot answer, the batch is refused with NOT_ENOUGH_REPLICAS, a
// code every client retries without side effects (the one Kafka's
// leaders answer when the transaction coordinator they must ask cannot be
// reached): the producer retries until its delivery timeout, so an
// outage of the registry delays records and neither accepts them unchecked
// nor fails them for good. A topic that validates on a broker that has no
// registry refuses the batch with INVALID_RECORD saying so; creating or
// altering a topic to validate there is refused at once (INVALID_CONFIG).
//
// The records are checked as record.Validate walks them, so a compressed
// batch is decompressed once; other topics pay one config lookup.

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/schemaregistry/msgindex"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SchemaIDs is what the broker asks the Schema Registry when a topic
// validates schema IDs. cmd/samsa wires it: the registry running in the
// same process, or one reached over HTTP (confluent.schema.registry.url).
// An error means the registry could not answer (the produce is retried);
// it is never a verdict on the record.
type SchemaIDs interface {
	// Registered reports whether id is the ID of a live (not
	// soft-deleted) version of subject.
	Registered(ctx context.Context, subject string, id int32) (bool, error)
	// SchemaType is the type of the schema with this ID (AVRO, JSON,
	// PROTOBUF: the registry's schemaType, AVRO when it has none); found
	// is false when no schema has the ID. The broker asks it under the
	// record name strategies only, to learn whether the record carries
	// Protobuf message indexes after the ID.
	SchemaType(ctx context.Context, id int32) (typ string, found bool, err error)
	// RecordName is the record name of the schema with this ID, as the
	// RecordNameStrategy names its subject: an Avro record's full name, a
	// JSON Schema's title, and for a Protobuf schema the full name of the
	// message that indexes (the message indexes the record carries after
	// the ID; nil for the other types) name in its file. name is "" when
	// there is none, and why then says why (no schema has the ID, an Avro
	// schema that is no record, indexes naming no message...).
	RecordName(ctx context.Context, id int32, indexes []int) (name, why string, err error)
}

// schemaLookupTimeout bounds the registry lookups of one batch, below a
// produce request's usual timeout; the request's own timeout bounds it
// further.
const schemaLookupTimeout = 10 * time.Second

// schemaCheck is a topic's validation settings, read from its config at
// each batch: a config change takes effect on the next batch.
type schemaCheck struct {
	topic string
	parts [2]schemaPart // key, value
}

type schemaPart struct {
	on       bool
	what     string // "key" or "value"
	config   string // the topic config that turned it on
	strategy string // config.TopicNameStrategy ...
}

// schemaCheckOf reads a topic's settings; false when neither key nor
// value is validated.
func schemaCheckOf(name string, cfg config.Values) (schemaCheck, bool) {
	// Every produced batch asks: a topic validating nothing reads two
	// booleans and allocates nothing.
	keyOn, valueOn := cfg.Bool(config.SchemaValidationConfigs[0]), cfg.Bool(config.SchemaValidationConfigs[1])
	if !keyOn && !valueOn {
		return schemaCheck{}, false
	}
	chk := schemaCheck{topic: name}
	for i, what := range [2]string{"key", "value"} {
		chk.parts[i] = schemaPart{
			on:       [2]bool{keyOn, valueOn}[i],
			what:     what,
			config:   config.SchemaValidationConfigs[i],
			strategy: config.SubjectNameStrategy(cfg.String(config.SubjectNameStrategyConfigs[i])),
		}
	}
	return chk, true
}

// schemaWalkFor prepares the topic's schema ID validation of one batch:
// nil when the topic validates nothing, an error code when it does and
// this broker has no registry to ask. The caller releases the walk.
func (b *Broker) schemaWalkFor(ts *topicState, timeout time.Duration) (*schemaWalk, int16, string) {
	chk, on := schemaCheckOf(ts.name, ts.config)
	if !on {
		return nil, 0, ""
	}
	if b.cfg.SchemaIDs == nil {
		return nil, kerr.InvalidRecord.Code, fmt.Sprintf("topic %s validates schema IDs (%s) but broker %d has no schema registry: set confluent.schema.registry.url or samsa.schema.registry.listener",
			ts.name, chk.enabledConfigs(), b.cfg.NodeID)
	}
	ctx, cancel := context.WithTimeout(b.tasks.Context(), min(timeout, schemaLookupTimeout))
	return newSchemaWalk(ctx, cancel, b.cfg.SchemaIDs, chk), 0, ""
}

func (chk schemaCheck) enabledConfigs() string {
	var on []string
	for _, p := range chk.parts {
		if p.on {
			on = append(on, p.config+"=true")
		}
	}
	return strings.Join(on, ", ")
}

// schemaWalk checks a batch's records as record.Validate walks them (its
// EachRecord hook), so a compressed batch is decompressed once. Verdicts
// are memoized by (key or value, ID): a batch's records usually share
// one schema, and a run of one ID skips even the map.
type schemaWalk struct {
	ctx    context.Context
	cancel context.CancelFunc
	ids    SchemaIDs
	chk    schemaCheck
	memo   map[memoKey]string
	types  map[int32]string // schema types asked, "" for an unknown ID
	last   memoKey          // the last ID found registered, when lastOK
	lastOK bool
	bad    []badRecord
	// err is the registry's failure to answer; the records after it are
	// not looked up.
	err error
}

type memoKey struct {
	part int // 0 key, 1 value
	id   int32
	// indexes are the bytes of the Protobuf message indexes after the ID
	// when the subject depends on them (a record name strategy); else "".
	indexes string
}

// badRecord is one refused record: its index in the batch and why.
type badRecord struct {
	index int
	why   string
}

func newSchemaWalk(ctx context.Context, cancel context.CancelFunc, ids SchemaIDs, chk schemaCheck) *schemaWalk {
	return &schemaWalk{ctx: ctx, cancel: cancel, ids: ids, chk: chk, memo: map[memoKey]string{}}
}

// release ends the walk's lookups; nil-safe.
func (w *schemaWalk) release() {
	if w != nil && w.cancel != nil {
		w.cancel()
	}
}

// record checks one record's key and value (nil: null, which passes).
func (w *schemaWalk) record(index int, key, value []byte) {
	if w.err != nil {
		return
	}
	for i, payload := range [2][]byte{key, value} {
		p := w.chk.parts[i]
		if !p.on || payload == nil {
			continue
		}
		var why string
		if why, w.err = w.check(i, p, payload); w.err != nil {
			return
		}
		if why != "" {
			w.bad = append(w.bad, badRecord{index, why})
			return // one reason per record
		}
	}
}

// check is one payload's verdict: "" when it passes, else why not.
func (w *schemaWalk) check(part int, p schemaPart, payload []byte) (string, error) {
	id, why := schemaIDOf(p.what, payload)
	if why != "" {
		return why, nil
	}
	afterID := payload[schemaHeaderSize:]
	// A run of one ID (and, for Protobuf, one message: the indexes Parse
	// read last are read again from bytes that start with them) skips
	// even the map.
	if w.lastOK && w.last.part == part && w.last.id == id &&
		len(afterID) >= len(w.last.indexes) && string(afterID[:len(w.last.indexes)]) == w.last.indexes {
		return "", nil
	}
	k := memoKey{part: part, id: id}
	var indexes []int
	if p.recordNamed() {
		typ, err := w.schemaType(id)
		switch {
		case err != nil:
			return "", err
		case typ == "":
			return fmt.Sprintf("%s schema ID %d is not registered in the schema registry", p.what, id), nil
		case typ == "PROTOBUF":
			var rest []byte
			if indexes, rest, err = msgindex.Parse(afterID); err != nil {
				return fmt.Sprintf("%s schema ID %d is a Protobuf schema, and the message indexes after it cannot be read: %v", p.what, id, err), nil
			}
			k.indexes = string(afterID[:len(afterID)-len(rest)])
		}
	}
	return w.verdict(k, p, indexes)
}

// schemaType asks the type of an ID's schema once a walk.
func (w *schemaWalk) schemaType(id int32) (string, error) {
	if typ, seen := w.types[id]; seen {
		return typ, nil
	}
	typ, found, err := w.ids.SchemaType(w.ctx, id)
	if err != nil {
		return "", err
	}
	if !found {
		typ = ""
	}
	if w.types == nil {
		w.types = map[int32]string{}
	}
	w.types[id] = typ
	return typ, nil
}

func (w *schemaWalk) verdict(k memoKey, p schemaPart, indexes []int) (string, error) {
	why, seen := w.memo[k]
	if !seen {
		var err error
		if why, err = w.chk.verdict(w.ctx, w.ids, p, k.id, indexes); err != nil {
			return "", err
		}
		w.memo[k] = why
	}
	w.last, w.lastOK = k, why == ""
	return why, nil
}

// outcome answers a batch record.Validate accepted: 0 when every record
// passed (or w is nil), NOT_ENOUGH_REPLICAS when the registry could not
// answer, else INVALID_RECORD with record_errors.
func (w *schemaWalk) outcome(sp *kmsg.ProduceResponseTopicPartition) (int16, string) {
	switch {
	case w == nil:
		return 0, ""
	case w.err != nil:
		return kerr.NotEnoughReplicas.Code, "schema registry unavailable, retry: " + w.err.Error()
	case len(w.bad) == 0:
		return 0, ""
	}
	for _, r := range w.bad {
		sp.ErrorRecords = append(sp.ErrorRecords, kmsg.ProduceResponseTopicPartitionErrorRecord{
			RelativeOffset: int32(r.index), ErrorMessage: kmsg.StringPtr(r.why),
		})
	}
	msg := fmt.Sprintf("record %d: %s", w.bad[0].index, w.bad[0].why)
	if len(w.bad) > 1 {
		msg += fmt.Sprintf(" (and %d more records)", len(w.bad)-1)
	}
	return kerr.InvalidRecord.Code, msg
}

// schemaHeaderSize is the wire format's magic byte and schema ID.
const schemaHeaderSize = 5

// schemaIDOf reads the schema ID of Confluent's wire format: magic byte 0
// then the ID, big-endian. why says what is wrong otherwise.
func schemaIDOf(what string, payload []byte) (int32, string) {
	switch {
	case len(payload) == 0 || payload[0] != 0:
		return 0, fmt.Sprintf("%s has no schema ID: it does not start with magic byte 0 of the Schema Registry's wire format", what)
	case len(payload) < schemaHeaderSize:
		return 0, fmt.Sprintf("%s of %d bytes is too short for a schema ID: the wire format is magic byte 0 then a 4-byte ID", what, len(payload))
	}
	return int32(binary.BigEndian.Uint32(payload[1:schemaHeaderSize])), ""
}

// recordNamed: the subject depends on the schema's record name.
func (p schemaPart) recordNamed() bool {
	return p.strategy == config.RecordNameStrategy || p.strategy == config.TopicRecordNameStrategy
}

// verdict checks one ID against the subject the strategy names: "" when
// it is registered there, else why not. Under a record name strategy,
// indexes are the record's Protobuf message indexes (nil for the other
// types).
func (chk schemaCheck) verdict(ctx context.Context, ids SchemaIDs, p schemaPart, id int32, indexes []int) (string, error) {
	subject := chk.topic + "-" + p.what
	if p.recordNamed() {
		name, why, err := ids.RecordName(ctx, id, indexes)
		switch {
		case err != nil:
			return "", err
		case name == "":
			return fmt.Sprintf("%s schema ID %d has no record name for %s: %s", p.what, id, p.strategy, why), nil
		}
		subject = name
		if p.strategy == config.TopicRecordNameStrategy {
			subject = chk.topic + "-" + name
		}
	}
	ok, err := ids.Registered(ctx, subject, id)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return fmt.Sprintf("%s schema ID %d is not registered under subject %s (%s)", p.what, id, subject, p.strategy), nil
	}
	return "", nil
}

// schemaValidationRefusal refuses a topic config that turns schema ID
// validation on where there is no registry to validate against, rather
// than let the topic refuse every record later: nil when allowed. The
// broker that runs the request against its controller decides (each node
// of a cluster is expected to be configured alike; a leader without a
// registry still refuses the topic's batches, never accepting them
// unchecked).
func (b *Broker) schemaValidationRefusal(name string, value *string) *itemError {
	if b.cfg.SchemaIDs != nil || value == nil || !strings.EqualFold(strings.TrimSpace(*value), "true") ||
		(name != config.SchemaValidationConfigs[0] && name != config.SchemaValidationConfigs[1]) {
		return nil
	}
	return &itemError{kerr.InvalidConfig.Code, fmt.Sprintf("%s=true needs a schema registry and broker %d has none: set confluent.schema.registry.url, or samsa.schema.registry.listener to run one in samsa serve",
		name, b.cfg.NodeID)}
}
