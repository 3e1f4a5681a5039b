package group

import (
	"reflect"
	"testing"

	"github.com/samsa-io/samsa/internal/config"
)

// The catalog's defaults are Kafka's, and so are DefaultConfig's: reading
// an empty server.properties must give DefaultConfig.
func TestConfigFromDefaults(t *testing.T) {
	v, err := config.Parse(config.Broker, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ConfigFrom(v), DefaultConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("ConfigFrom(defaults) = %+v\nwant %+v", got, want)
	}
}

func TestConfigFrom(t *testing.T) {
	v, err := config.Parse(config.Broker, map[string]string{
		"group.min.session.timeout.ms":         "1000",
		"group.initial.rebalance.delay.ms":     "0",
		"group.max.size":                       "7",
		"offsets.retention.minutes":            "60",
		"offsets.retention.check.interval.ms":  "5000",
		"offset.metadata.max.bytes":            "10",
		"offsets.topic.num.partitions":         "3",
		"group.consumer.session.timeout.ms":    "50000",
		"group.consumer.heartbeat.interval.ms": "3000",
		"group.consumer.max.size":              "4",
		"group.consumer.assignors":             "range,org.apache.kafka.coordinator.group.assignor.UniformAssignor,nope",
	})
	if err != nil {
		t.Fatal(err)
	}
	c := ConfigFrom(v)
	if c.MinSessionTimeout.Milliseconds() != 1000 || c.InitialRebalanceDelay != 0 || c.MaxSize != 7 ||
		c.OffsetsRetention.Minutes() != 60 || c.OffsetsRetentionCheckInterval.Milliseconds() != 5000 ||
		c.OffsetMetadataMaxBytes != 10 || c.OffsetsTopicNumPartitions != 3 {
		t.Errorf("ConfigFrom = %+v", c)
	}
	if c.ConsumerSessionTimeout.Milliseconds() != 50000 || c.ConsumerHeartbeatInterval.Milliseconds() != 3000 ||
		c.ConsumerMaxSize != 4 {
		t.Errorf("ConfigFrom = %+v", c)
	}
	// Assignors are known by their short names once the coordinator has
	// the config; unknown ones are dropped.
	c.fill()
	if want := []string{"range", "uniform"}; !reflect.DeepEqual(c.ConsumerAssignors, want) {
		t.Errorf("assignors = %q, want %q", c.ConsumerAssignors, want)
	}
}
