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
// A null key or value passes (a tombstone must stay possible on a
// compacted topic; Confluent's documented rule). The payload is not read:
// only the ID is checked, as Confluent and Redpanda do.
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
// The batch is decompressed a second time (after record.Validate) only
// for a topic that validates; other topics pay one config lookup.

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/record"
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
	// RecordName is the record name of the schema with this ID, as the
	// RecordNameStrategy names its subject: an Avro schema's full name, a
	// JSON Schema's title. found is false when no schema has the ID; name
	// is "" when the schema has none that can be derived.
	RecordName(ctx context.Context, id int32) (name string, found bool, err error)
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
	chk := schemaCheck{topic: name}
	for i, what := range [2]string{"key", "value"} {
		chk.parts[i] = schemaPart{
			on:       cfg.Bool(config.SchemaValidationConfigs[i]),
			what:     what,
			config:   config.SchemaValidationConfigs[i],
			strategy: config.SubjectNameStrategy(cfg.String("confluent." + what + ".subject.name.strategy")),
		}
	}
	return chk, chk.parts[0].on || chk.parts[1].on
}

// validateSchemaIDs applies the topic's schema ID validation to a batch
// record.Validate accepted; 0 when the topic validates nothing.
func (b *Broker) validateSchemaIDs(ts *topicState, batch []byte, timeout time.Duration, sp *kmsg.ProduceResponseTopicPartition) (int16, string) {
	chk, on := schemaCheckOf(ts.name, ts.config)
	if !on {
		return 0, ""
	}
	if b.cfg.SchemaIDs == nil {
		return kerr.InvalidRecord.Code, fmt.Sprintf("topic %s validates schema IDs (%s) but broker %d has no schema registry: set confluent.schema.registry.url or samsa.schema.registry.listener",
			ts.name, chk.enabledConfigs(), b.cfg.NodeID)
	}
	ctx, cancel := context.WithTimeout(b.tasks.Context(), min(timeout, schemaLookupTimeout))
	defer cancel()
	bad, err := checkSchemaIDs(ctx, b.cfg.SchemaIDs, chk, batch)
	if err != nil {
		return schemaLookupErrorCode(err)
	}
	if len(bad) == 0 {
		return 0, ""
	}
	for _, r := range bad {
		sp.ErrorRecords = append(sp.ErrorRecords, kmsg.ProduceResponseTopicPartitionErrorRecord{
			RelativeOffset: int32(r.index), ErrorMessage: kmsg.StringPtr(r.why),
		})
	}
	msg := fmt.Sprintf("record %d: %s", bad[0].index, bad[0].why)
	if len(bad) > 1 {
		msg += fmt.Sprintf(" (and %d more records)", len(bad)-1)
	}
	return kerr.InvalidRecord.Code, msg
}

// schemaLookupErrorCode answers a batch whose check could not finish:
// a corrupt batch (Validate read it, so only a bound can trip here) is
// refused as Validate would; a registry that could not answer is
// retriable.
func schemaLookupErrorCode(err error) (int16, string) {
	if re, ok := err.(recordWalkError); ok {
		return recordErrorCode(re.err), strings.TrimPrefix(re.err.Error(), "record: ")
	}
	return kerr.NotEnoughReplicas.Code, "schema registry unavailable, retry: " + err.Error()
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

// badRecord is one refused record: its index in the batch and why.
type badRecord struct {
	index int
	why   string
}

// recordWalkError is a failure to read the batch's records, as opposed
// to a registry that could not answer.
type recordWalkError struct{ err error }

func (e recordWalkError) Error() string { return e.err.Error() }

// checkSchemaIDs walks the batch's records and returns the refused ones.
// Verdicts are memoized per batch by (key or value, ID): a batch's records
// usually share one schema.
func checkSchemaIDs(ctx context.Context, ids SchemaIDs, chk schemaCheck, batch []byte) ([]badRecord, error) {
	type memoKey struct {
		part int
		id   int32
	}
	memo := map[memoKey]string{}
	var bad []badRecord
	var lookupErr error
	index := 0
	walkErr := record.Iterate(batch, record.DefaultMaxDecompressedBytes, func(r *record.Record) bool {
		for i, payload := range [2][]byte{r.Key, r.Value} {
			p := chk.parts[i]
			if !p.on || payload == nil {
				continue
			}
			id, why := schemaIDOf(p.what, payload)
			if why == "" {
				k := memoKey{i, id}
				var seen bool
				if why, seen = memo[k]; !seen {
					if why, lookupErr = chk.verdict(ctx, ids, p, id); lookupErr != nil {
						return false
					}
					memo[k] = why
				}
			}
			if why != "" {
				bad = append(bad, badRecord{index, why})
				break // one reason per record
			}
		}
		index++
		return true
	})
	switch {
	case lookupErr != nil:
		return nil, lookupErr
	case walkErr != nil:
		return nil, recordWalkError{walkErr}
	}
	return bad, nil
}

// schemaIDOf reads the schema ID of Confluent's wire format: magic byte 0
// then the ID, big-endian. why says what is wrong otherwise.
func schemaIDOf(what string, payload []byte) (int32, string) {
	switch {
	case len(payload) == 0 || payload[0] != 0:
		return 0, fmt.Sprintf("%s has no schema ID: it does not start with magic byte 0 of the Schema Registry's wire format", what)
	case len(payload) < 5:
		return 0, fmt.Sprintf("%s of %d bytes is too short for a schema ID: the wire format is magic byte 0 then a 4-byte ID", what, len(payload))
	}
	return int32(binary.BigEndian.Uint32(payload[1:5])), ""
}

// verdict checks one ID against the subject the strategy names: "" when
// it is registered there, else why not.
func (chk schemaCheck) verdict(ctx context.Context, ids SchemaIDs, p schemaPart, id int32) (string, error) {
	var subject string
	switch p.strategy {
	case config.RecordNameStrategy, config.TopicRecordNameStrategy:
		name, found, err := ids.RecordName(ctx, id)
		switch {
		case err != nil:
			return "", err
		case !found:
			return fmt.Sprintf("%s schema ID %d is not registered in the schema registry", p.what, id), nil
		case name == "":
			return fmt.Sprintf("%s schema ID %d has no record name for %s (Samsa derives it for Avro and JSON Schema)", p.what, id, p.strategy), nil
		}
		subject = name
		if p.strategy == config.TopicRecordNameStrategy {
			subject = chk.topic + "-" + name
		}
	default:
		subject = chk.topic + "-" + p.what
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
