package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeProps(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// kraftCombined is the shape of the combined-mode server.properties Kafka 4.x ships.
const kraftCombined = `# a combined broker and controller
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=localhost:9093
listeners=PLAINTEXT://:9092,CONTROLLER://:9093
inter.broker.listener.name=PLAINTEXT
advertised.listeners=PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600
log.dirs=/tmp/kraft-combined-logs
num.partitions=1
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
#log.flush.interval.messages=10000
#log.flush.interval.ms=1000
log.retention.hours=168
#log.retention.bytes=1073741824
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000
`

func TestLoadKafkaServerProperties(t *testing.T) {
	v, err := LoadBrokerProperties(writeProps(t, kraftCombined), nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Int("node.id") != 1 || v.List("process.roles")[1] != "controller" || v.LogDirs()[0] != "/tmp/kraft-combined-logs" {
		t.Error("values not loaded")
	}
	if got := v.Int("offsets.topic.replication.factor"); got != 1 {
		t.Errorf("offsets.topic.replication.factor = %d", got)
	}
	if d, _ := v.Describe("num.io.threads"); d.Source != SourceStaticBroker {
		t.Errorf("num.io.threads source = %s", d.Source)
	}
	if d, _ := v.Describe("queued.max.requests"); d.Source != SourceDefault {
		t.Errorf("queued.max.requests source = %s", d.Source)
	}
}

func TestLoadBrokerProperties(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		overrides map[string]string
		check     func(t *testing.T, v Values)
		wantErr   error
		wantMsg   string
	}{
		{name: "overrides win", body: "node.id=1\nnum.partitions=3\n", overrides: map[string]string{"num.partitions": "6", "broker.rack": "a"},
			check: func(t *testing.T, v Values) {
				if v.Int("num.partitions") != 6 || v.String("broker.rack") != "a" || v.Int("node.id") != 1 {
					t.Error("overrides not applied")
				}
			}},
		{name: "properties syntax", body: "! comment\nnode.id : 4\nbroker.rack rack\\\n  -1\nlog.dir=/d\\u00e9\n",
			check: func(t *testing.T, v Values) {
				if v.Int("node.id") != 4 || v.String("broker.rack") != "rack-1" || v.String("log.dir") != "/dé" {
					t.Errorf("got %d %q %q", v.Int("node.id"), v.String("broker.rack"), v.String("log.dir"))
				}
			}},
		{name: "no variable expansion", body: "log.dirs=/data/${USER}\n",
			check: func(t *testing.T, v Values) {
				if v.LogDirs()[0] != "/data/${USER}" {
					t.Error("${...} was expanded")
				}
			}},
		{name: "not supported yet", body: "principal.builder.class=com.example.Builder\n", wantErr: ErrNotSupported, wantMsg: "principal.builder.class: value com.example.Builder is not supported yet (Samsa cannot load Java classes"},
		{name: "not supported override", overrides: map[string]string{"remote.log.storage.system.enable": "x"}, wantErr: ErrUnknownConfig, wantMsg: "remote.log"},
		{name: "unsupported at its default", body: "ssl.keystore.type=JKS\nsasl.enabled.mechanisms=GSSAPI\n", check: func(t *testing.T, v Values) {}},
		{name: "retention hours", body: "log.retention.hours=1\n", check: func(t *testing.T, v Values) {
			if v.Long("log.retention.ms") != msPerHour {
				t.Error("hours not converted")
			}
		}},
		{name: "unknown in file", body: "zookeeper.connect=localhost:2181\n", wantErr: ErrUnknownConfig, wantMsg: "server.properties:1: config: unknown config zookeeper.connect"},
		{name: "line of a bad value", body: "# c\n\nnode.id=1\nbroker.rack a\\\n  b\nnum.io.threads : 0\n", wantErr: ErrInvalidValue,
			wantMsg: "server.properties:6: config: invalid value 0 for configuration num.io.threads"},
		{name: "line of each bad config", body: "num.io.threads=0\nlog.cleaner.threads=-1\n", wantErr: ErrInvalidValue,
			wantMsg: "server.properties:2: config: invalid value -1 for configuration log.cleaner.threads"},
		{name: "escaped key", body: "node\\.id=x\n", wantErr: ErrInvalidValue, wantMsg: "server.properties:1: config: invalid value x for configuration node.id"},
		{name: "unknown override", overrides: map[string]string{"no.such": "1"}, wantErr: ErrUnknownConfig, wantMsg: "no.such"},
		{name: "bad value", body: "num.io.threads=0\n", wantErr: ErrInvalidValue, wantMsg: "num.io.threads"},
		{name: "bad listener", body: "listeners=localhost:9092\n", wantErr: ErrInvalidValue, wantMsg: "listeners"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeProps(t, tt.body)
			v, err := LoadBrokerProperties(path, tt.overrides)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) || !strings.Contains(err.Error(), path) {
					t.Fatalf("err = %v, want %v naming %s and the file", err, tt.wantErr, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, v)
		})
	}
}

// A line the properties syntax cannot read is reported with its number.
func TestLoadBrokerPropertiesSyntaxErrors(t *testing.T) {
	for body, want := range map[string]string{
		"node.id=1\nlog.dir=/d\\uZZZZ\n": ":2: invalid unicode literal",
		"node.id=1\n\n=orphan\n":         `:3: a line with an empty key: "=orphan"`,
		"node.id=1\nlog.dir=\\":          ":2: premature EOF",
	} {
		path := writeProps(t, body)
		_, err := LoadBrokerProperties(path, nil)
		if err == nil || !strings.Contains(err.Error(), path+want) {
			t.Errorf("%q: %v, want %s%s", body, err, path, want)
		}
	}
}

func TestLoadBrokerPropertiesMissingFile(t *testing.T) {
	_, err := LoadBrokerProperties(filepath.Join(t.TempDir(), "nope.properties"), nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want fs.ErrNotExist", err)
	}
}
