package mirrorconf

import (
	"strings"
	"testing"
	"time"
)

func connectorProps(more ...string) map[string]string {
	m := map[string]string{
		"name": "mm2", "connector.class": "MirrorSourceConnector", "tasks.max": "3",
		"source.cluster.alias": "A", "target.cluster.alias": "B",
		"source.cluster.bootstrap.servers": "a:9092", "target.cluster.bootstrap.servers": "b:9092",
		"key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
		"transforms":    "", "errors.tolerance": "none", "task.class": "x", "task.assigned.partitions": "t-0", "task.index": "0",
	}
	for i := 0; i+1 < len(more); i += 2 {
		m[more[i]] = more[i+1]
	}
	return m
}

func TestParseConnector(t *testing.T) {
	cc, err := ParseConnector(SourceConnector, connectorProps(
		"topics", "orders.*", "offset.lag.max", "7", "emit.checkpoints.interval.seconds", "2",
		"consumer.fetch.min.bytes", "5", "source.consumer.fetch.min.bytes", "9", "target.producer.linger.ms", "3",
		"producer.acks", "all", "source.cluster.security.protocol", "PLAINTEXT", "clusters", "A, B"))
	if err != nil {
		t.Fatal(err)
	}
	f := cc.Flow
	if f == nil || f.Source != "A" || f.Target != "B" || !cc.Enabled {
		t.Fatalf("flow %+v enabled %v", f, cc.Enabled)
	}
	if f.OffsetLagMax != 7 || f.EmitCheckpointsInterval != 2*time.Second || f.TasksMax != 3 ||
		!f.ShouldReplicateTopic("orders.x") || f.ShouldReplicateTopic("other") || f.RemoteTopic("t") != "A.t" ||
		f.OffsetSyncsTopic() != "mm2-offset-syncs.B.internal" {
		t.Errorf("flow %+v", f)
	}
	if cc.Source.Consumer["fetch.min.bytes"] != "9" || cc.Target.Consumer["fetch.min.bytes"] != "5" ||
		cc.Target.Producer["linger.ms"] != "3" || cc.Source.Producer["acks"] != "all" || cc.Target.Producer["acks"] != "all" {
		t.Errorf("overrides: source %+v target %+v", cc.Source, cc.Target)
	}
	if cc.Source.Consumer["isolation.level"] != "read_committed" || cc.Source.Security["security.protocol"] != "PLAINTEXT" {
		t.Errorf("source %+v", cc.Source)
	}
	if got := strings.Join(cc.Source.Bootstrap, ","); got != "a:9092" {
		t.Errorf("bootstrap %s", got)
	}

	hbProps := connectorProps("emit.heartbeats.interval.seconds", "3")
	delete(hbProps, "source.cluster.bootstrap.servers") // heartbeats need only the target
	hb, err := ParseConnector(HeartbeatConnector, hbProps)
	if err != nil {
		t.Fatal(err)
	}
	if hb.Flow == nil || !hb.Flow.EmitHeartbeats || hb.Flow.EmitHeartbeatsInterval != 3*time.Second || !hb.Enabled {
		t.Errorf("heartbeat flow %+v", hb.Flow)
	}
	off, err := ParseConnector(HeartbeatConnector, connectorProps("emit.heartbeats.enabled", "false"))
	if err != nil || off.Flow != nil {
		t.Errorf("heartbeats off: %+v %v", off, err)
	}
	dis, err := ParseConnector(SourceConnector, connectorProps("enabled", "false"))
	if err != nil || dis.Enabled {
		t.Errorf("enabled=false: %+v %v", dis, err)
	}
}

func TestParseConnectorRefusals(t *testing.T) {
	for _, c := range []struct {
		props []string
		want  string
	}{
		{[]string{"source.cluster.alias", ""}, "source.cluster.alias: required"},
		{[]string{"target.cluster.alias", "A"}, "target.cluster.alias: \"A\": want an alias other than the source's"},
		{[]string{"samsa.offset.preserving.enabled", "true"}, "samsa.offset.preserving.enabled: not supported"},
		{[]string{"source.cluster.consumer.isolation.level", "read_committed"}, "source.cluster.consumer.isolation.level: Kafka's mirror connectors read only"},
		{[]string{"topics.exclud", "x"}, "topics.exclud: unknown MirrorMaker setting (nearest known: topics.exclude)"},
		{[]string{"offset.lag.max", "x"}, "offset.lag.max: \"x\": want a whole number"},
		{[]string{"source.consumer.linger.ms", "1"}, "source.consumer.linger.ms: consumer client setting linger.ms is not supported"},
		{[]string{"clusters", "A,C"}, "clusters: \"A,C\" does not name B"},
		{[]string{"target.cluster.bootstrap.servers", ""}, "target.cluster.bootstrap.servers: "},
		{[]string{"replication.policy.class", "x.Y"}, "replication.policy.class: x.Y is not supported"},
	} {
		_, err := ParseConnector(SourceConnector, connectorProps(c.props...))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want %q", c.props, err, c.want)
		}
	}
}
