package config

import "strings"

// ConfluentPrefix starts the names of the configs Samsa takes from
// Confluent Server rather than Apache Kafka: broker-side schema ID
// validation (docs/DESIGN-schemaregistry.md "Broker-side validation").
// Confluent's names are kept so that topics created for Confluent Server,
// and the tools that set them, work unchanged; Redpanda accepts the same
// names in its Confluent-compatible mode.
const ConfluentPrefix = "confluent."

// ConfluentOwn reports whether the entry is one of Confluent Server's
// configs, which Apache Kafka does not have.
func (e *Entry) ConfluentOwn() bool { return strings.HasPrefix(e.Name, ConfluentPrefix) }

// Subject name strategies, as Confluent's serializers name them (the
// class names Confluent Server's topic configs take); the short names are
// accepted too, as Redpanda writes them.
const (
	subjectStrategyPackage  = "io.confluent.kafka.serializers.subject."
	TopicNameStrategy       = "TopicNameStrategy"
	RecordNameStrategy      = "RecordNameStrategy"
	TopicRecordNameStrategy = "TopicRecordNameStrategy"
)

// SubjectNameStrategy returns the short name (TopicNameStrategy...) of a
// validated subject name strategy value.
func SubjectNameStrategy(v string) string { return strings.TrimPrefix(v, subjectStrategyPackage) }

var subjectNameStrategies = oneOf{
	subjectStrategyPackage + TopicNameStrategy, subjectStrategyPackage + RecordNameStrategy,
	subjectStrategyPackage + TopicRecordNameStrategy, TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy,
}

// SchemaValidationConfigs are the topic configs that turn validation on,
// for the key and for the value.
var SchemaValidationConfigs = [2]string{"confluent.key.schema.validation", "confluent.value.schema.validation"}

// SubjectNameStrategyConfigs name the key's and the value's subject
// strategy, in the order of SchemaValidationConfigs.
var SubjectNameStrategyConfigs = [2]string{"confluent.key.subject.name.strategy", "confluent.value.subject.name.strategy"}

// confluentTopicEntries are the topic configs of Confluent Server's
// broker-side schema ID validation.
func confluentTopicEntries() []*Entry {
	const wired = "checked on produce: each record's %s must carry, in Confluent's wire format, the ID of a schema registered under the subject the strategy names, else the batch is refused with INVALID_RECORD (broker/schema_validation.go); turning it on needs a schema registry (confluent.schema.registry.url or samsa.schema.registry.listener)"
	return []*Entry{
		{Name: "confluent.key.schema.validation", Type: TypeBoolean, Default: "false", Importance: Medium,
			Wired: strings.ReplaceAll(wired, "%s", "key (a null key passes)"),
			Doc:   "Refuse produced records whose key does not carry a schema ID registered in the Schema Registry under the key subject."},
		{Name: "confluent.key.subject.name.strategy", Type: TypeString, Default: subjectStrategyPackage + TopicNameStrategy,
			Validator: subjectNameStrategies, Importance: Medium,
			Wired: "the subject key validation checks the ID against: <topic>-key, the schema's record name, or <topic>-<record name> (broker/schema_validation.go)",
			Doc:   "Subject name strategy of key validation, as Confluent's serializers name it (the short name is accepted too)."},
		{Name: "confluent.value.schema.validation", Type: TypeBoolean, Default: "false", Importance: Medium,
			Wired: strings.ReplaceAll(wired, "%s", "value (a tombstone, a null value, passes)"),
			Doc:   "Refuse produced records whose value does not carry a schema ID registered in the Schema Registry under the value subject."},
		{Name: "confluent.value.subject.name.strategy", Type: TypeString, Default: subjectStrategyPackage + TopicNameStrategy,
			Validator: subjectNameStrategies, Importance: Medium,
			Wired: "the subject value validation checks the ID against: <topic>-value, the schema's record name, or <topic>-<record name> (broker/schema_validation.go)",
			Doc:   "Subject name strategy of value validation, as Confluent's serializers name it (the short name is accepted too)."},
	}
}

// confluentBrokerEntries are Confluent Server's broker configs that Samsa
// takes.
func confluentBrokerEntries() []*Entry {
	return []*Entry{
		{Name: "confluent.schema.registry.url", Type: TypeList, Default: "", Importance: Medium,
			Wired: "the Schema Registry that topics with confluent.key/value.schema.validation check IDs against, over HTTP with answers cached (cmd/samsa/validation.go); when samsa.schema.registry.listener runs one in the process it is asked directly instead, so setting both is refused",
			Doc:   "URLs of the Schema Registry that broker-side schema ID validation asks; empty when none."},
	}
}
