package group

import (
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
	if got, want := ConfigFrom(v), DefaultConfig(); got != want {
		t.Errorf("ConfigFrom(defaults) = %+v\nwant %+v", got, want)
	}
}

func TestConfigFrom(t *testing.T) {
	v, err := config.Parse(config.Broker, map[string]string{
		"group.min.session.timeout.ms":        "1000",
		"group.initial.rebalance.delay.ms":    "0",
		"group.max.size":                      "7",
		"offsets.retention.minutes":           "60",
		"offsets.retention.check.interval.ms": "5000",
		"offset.metadata.max.bytes":           "10",
		"offsets.topic.num.partitions":        "3",
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
}
