package transforms

import (
	"testing"

	"github.com/samsa-io/samsa/connect"
)

// TestKafkaDocumentedExamples runs the connector configs of Kafka
// Connect's user guide (Transformations and Predicates sections) as
// written there.
func TestKafkaDocumentedExamples(t *testing.T) {
	// The FileStream source example: each line hoisted into a map, then a
	// static field added.
	c := mustChain(t, map[string]string{
		"name": "local-file-source", "connector.class": "FileStreamSource", "tasks.max": "1",
		"file": "test.txt", "topic": "connect-test",
		"transforms":                           "MakeMap, InsertSource",
		"transforms.MakeMap.type":              "org.apache.kafka.connect.transforms.HoistField$Value",
		"transforms.MakeMap.field":             "line",
		"transforms.InsertSource.type":         "org.apache.kafka.connect.transforms.InsertField$Value",
		"transforms.InsertSource.static.field": "data_source",
		"transforms.InsertSource.static.value": "test-file-source",
	})
	out, keep, err := c.Apply(connect.Record{Topic: "connect-test", ValueSchema: connect.StringSchema, Value: "foo"})
	if err != nil || !keep {
		t.Fatal(keep, err)
	}
	want := build("", "line", connect.StringSchema, "data_source", connect.OptionalString)
	wantSchema(t, out.ValueSchema, want)
	wantValue(t, out.Value, structOf(want, "line", "foo", "data_source", "test-file-source"))

	// Filter records on topic foo; extract other_field from keys of every
	// topic but bar.
	c = mustChain(t, map[string]string{
		"transforms":                   "Filter,Extract",
		"transforms.Filter.type":       "org.apache.kafka.connect.transforms.Filter",
		"transforms.Filter.predicate":  "IsFoo",
		"transforms.Extract.type":      "org.apache.kafka.connect.transforms.ExtractField$Key",
		"transforms.Extract.field":     "other_field",
		"transforms.Extract.predicate": "IsBar",
		"transforms.Extract.negate":    "true",
		"predicates":                   "IsFoo,IsBar",
		"predicates.IsFoo.type":        "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
		"predicates.IsFoo.pattern":     "foo",
		"predicates.IsBar.type":        "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
		"predicates.IsBar.pattern":     "bar",
	})
	key := map[string]any{"other_field": "k1", "x": "y"}
	for topic, want := range map[string]any{"bar": key, "baz": "k1"} {
		out, keep, err := c.Apply(connect.Record{Topic: topic, Key: key, Value: "v"})
		if err != nil || !keep {
			t.Fatal(topic, keep, err)
		}
		wantValue(t, out.Key, want)
	}
	if _, keep, _ := c.Apply(connect.Record{Topic: "foo", Key: key}); keep {
		t.Fatal("record on foo kept")
	}
}
