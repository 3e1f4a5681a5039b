package transforms

import (
	"testing"

	"github.com/samsa-io/samsa/connect"
)

func newPredicate(t *testing.T, alias string, props map[string]string) (connect.Predicate, error) {
	t.Helper()
	p, ok := LookupPredicate(alias)
	if !ok {
		t.Fatalf("no predicate %s", alias)
	}
	pr := p.New()
	return pr, pr.Configure(props)
}

func TestPredicates(t *testing.T) {
	topic, err := newPredicate(t, "TopicNameMatches", map[string]string{"pattern": "ord.*"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"orders": true, "xorders": false, "ord": true} {
		if got, _ := topic.Test(connect.Record{Topic: name}); got != want {
			t.Fatalf("TopicNameMatches(ord.*) on %s = %v", name, got)
		}
	}
	header, _ := newPredicate(t, "org.apache.kafka.connect.transforms.predicates.HasHeaderKey", map[string]string{"name": "trace"})
	if got, _ := header.Test(connect.Record{Headers: connect.Headers{{Key: "x"}, {Key: "trace"}}}); !got {
		t.Fatal("HasHeaderKey missed the header")
	}
	if got, _ := header.Test(connect.Record{Headers: connect.Headers{{Key: "x"}}}); got {
		t.Fatal("HasHeaderKey found an absent header")
	}
	tomb, _ := newPredicate(t, "RecordIsTombstone", nil)
	if got, _ := tomb.Test(connect.Record{Key: "k"}); !got {
		t.Fatal("RecordIsTombstone missed a null value")
	}
	if got, _ := tomb.Test(connect.Record{Value: "v"}); got {
		t.Fatal("RecordIsTombstone matched a value")
	}

	_, err = newPredicate(t, "TopicNameMatches", map[string]string{"pattern": ""})
	wantErr(t, err, "Invalid value  for configuration pattern: String must be non-empty")
	_, err = newPredicate(t, "TopicNameMatches", map[string]string{"pattern": "[a"})
	wantErr(t, err, "Invalid value [a for configuration pattern: Invalid regex:")
	_, err = newPredicate(t, "HasHeaderKey", map[string]string{})
	wantErr(t, err, `Missing required configuration "name" which has no default value.`)
}

func TestPluginNames(t *testing.T) {
	want := []string{
		"Cast$Key", "Cast$Value", "DropHeaders", "ExtractField$Key", "ExtractField$Value", "Filter",
		"Flatten$Key", "Flatten$Value", "HeaderFrom$Key", "HeaderFrom$Value", "HoistField$Key", "HoistField$Value",
		"InsertField$Key", "InsertField$Value", "InsertHeader", "MaskField$Key", "MaskField$Value", "RegexRouter",
		"ReplaceField$Key", "ReplaceField$Value", "SetSchemaMetadata$Key", "SetSchemaMetadata$Value",
		"TimestampConverter$Key", "TimestampConverter$Value", "TimestampRouter", "ValueToKey",
	}
	plugins := TransformPlugins()
	if len(plugins) != len(want) {
		t.Fatalf("%d transforms, want %d (Kafka's list)", len(plugins), len(want))
	}
	for i, p := range plugins {
		if p.Class != "org.apache.kafka.connect.transforms."+want[i] || p.Aliases[0] != want[i] {
			t.Fatalf("plugin %d: %s %v, want %s", i, p.Class, p.Aliases, want[i])
		}
		// Each New makes a fresh instance: configs must not leak between stages.
		if a, b := p.New(), p.New(); a == b && want[i] != "Filter" {
			t.Fatalf("%s: New returned the same instance", p.Class)
		}
	}
	if _, ok := LookupTransform("Value"); ok {
		t.Fatal("ambiguous alias Value resolved")
	}
	if p, ok := LookupPredicate(" RecordIsTombstone "); !ok || p.Class != "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone" {
		t.Fatalf("predicate lookup: %v %v", p.Class, ok)
	}
}
