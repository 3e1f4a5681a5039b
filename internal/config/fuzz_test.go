package config

// Fuzz targets for what config reads: server.properties files and single
// values. Neither may panic, and a value that is accepted is described in a
// form that is accepted again as the same value (what DescribeConfigs
// shows, a client may send back with AlterConfigs).

import (
	"os"
	"path/filepath"
	"testing"
)

func FuzzLoadBrokerProperties(f *testing.F) {
	f.Add([]byte("node.id=1\nprocess.roles=broker,controller\nlisteners=PLAINTEXT://127.0.0.1:9092\nlog.dirs=/tmp/samsa\nnum.partitions=3\n"))
	f.Add([]byte("# a comment\n! another\nlog.retention.ms : 1000\nlog.cleaner.io.max.bytes.per.second 1.5E3\nlog.seg\\\n   ment.bytes=1048576\n"))
	f.Add([]byte("group.consumer.assignors = uniform, range\nlog.cleanup.policy=compact,delete\ncompression.type=\\u007astd\n"))
	f.Add([]byte("listener.name.plaintext.socket.receive.buffer.bytes=4096\nsasl.jaas.config=${x}\n"))
	path := filepath.Join(f.TempDir(), "server.properties")
	f.Fuzz(func(t *testing.T, content []byte) {
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		v, err := LoadBrokerProperties(path, nil)
		if err != nil {
			return
		}
		for _, d := range v.DescribeAll() {
			if d.Source == SourceStaticBroker && d.Value != nil {
				checkDescribedValue(t, Broker, d)
			}
		}
	})
}

func FuzzParseTopicConfig(f *testing.F) {
	for _, kv := range [][2]string{
		{"retention.ms", "-1"}, {"cleanup.policy", "compact, delete"}, {"min.cleanable.dirty.ratio", "0.5"},
		{"message.timestamp.type", "LogAppendTime"}, {"compression.type", "zstd"}, {"segment.bytes", "1048576"},
		{"unclean.leader.election.enable", "TRUE"}, {"max.compaction.lag.ms", "9223372036854775807"},
		{"message.downconversion.enable", "false"}, {"local.retention.bytes", "-2"},
	} {
		f.Add(kv[0], kv[1])
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		v, err := Parse(Topic, map[string]string{name: value})
		if err != nil {
			return
		}
		d, err := v.Describe(name)
		if err != nil {
			t.Fatalf("%s=%q parses but does not describe: %v", name, value, err)
		}
		if d.Value != nil {
			checkDescribedValue(t, Topic, d)
		}
	})
}

// checkDescribedValue: a described value parses again, and describes the
// same.
func checkDescribedValue(t *testing.T, c *Catalog, d Description) {
	t.Helper()
	v, err := Parse(c, map[string]string{d.Name: *d.Value})
	if err != nil {
		// A broker config may be valid only beside others (checkBroker);
		// alone it must at least be a valid value.
		if _, perr := c.parse(d.Name, *d.Value); perr != nil {
			t.Fatalf("%s is described as %q, which does not parse: %v", d.Name, *d.Value, perr)
		}
		return
	}
	again, err := v.Describe(d.Name)
	if err != nil || again.Value == nil || *again.Value != *d.Value {
		t.Fatalf("%s is described as %q, which describes as %v (%v)", d.Name, *d.Value, again.Value, err)
	}
}
