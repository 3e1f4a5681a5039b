package file

import (
	"strings"
	"testing"

	"github.com/samsa-io/samsa/connect"
)

func TestPlugins(t *testing.T) {
	ps := Plugins()
	if len(ps) != 2 {
		t.Fatalf("%d plugins", len(ps))
	}
	src, sink := ps[0], ps[1]
	if src.Class != "org.apache.kafka.connect.file.FileStreamSourceConnector" || src.Type != connect.PluginSource ||
		strings.Join(src.Aliases, ",") != "FileStreamSource,FileStreamSourceConnector" {
		t.Errorf("source plugin = %+v", src)
	}
	if sink.Class != "org.apache.kafka.connect.file.FileStreamSinkConnector" || sink.Type != connect.PluginSink ||
		strings.Join(sink.Aliases, ",") != "FileStreamSink,FileStreamSinkConnector" {
		t.Errorf("sink plugin = %+v", sink)
	}
	if _, ok := src.New().(connect.SourceConnector); !ok {
		t.Error("the source plugin does not make a source connector")
	}
	if _, ok := sink.New().(connect.SinkConnector); !ok {
		t.Error("the sink plugin does not make a sink connector")
	}
	if src.Version == "" || src.New().Version() != src.Version {
		t.Errorf("version %q", src.Version)
	}
}

func TestSourceConfigDefIsKafkas(t *testing.T) {
	def := NewSourceConnector().Config()
	var names []string
	for _, k := range def.Keys() {
		names = append(names, k.Name+":"+string(k.Type))
	}
	if got := strings.Join(names, " "); got != "file:STRING topic:STRING batch.size:INT" {
		t.Fatalf("keys = %s", got)
	}
	if k, _ := def.Key("batch.size"); *k.DefaultString() != "2000" {
		t.Errorf("batch.size default = %v", *k.DefaultString())
	}
	if k, _ := def.Key("topic"); !k.Required() {
		t.Error("topic is not required")
	}
	if k, _ := def.Key("file"); k.Required() || k.DefaultString() != nil {
		t.Error("file should default to null")
	}
}

// Every invalid config is refused by the connector's Start and the task's,
// with Kafka's message.
func TestConfigRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sink  bool
		props map[string]string
		want  string
	}{
		{"no topic", false, map[string]string{"file": "/x"}, `Missing required configuration "topic" which has no default value.`},
		{"empty topic", false, map[string]string{"topic": ""}, "Invalid value  for configuration topic: String must be non-empty"},
		{"batch.size not a number", false, map[string]string{"topic": "t", "batch.size": "many"}, "Invalid value many for configuration batch.size: Not a number of type INT"},
		{"batch.size zero", false, map[string]string{"topic": "t", "batch.size": "0"}, "Invalid value 0 for configuration batch.size: Value must be at least 1"},
		{"batch.size too big", false, map[string]string{"topic": "t", "batch.size": "3000000000"}, "Invalid value 3000000000 for configuration batch.size: Not a number of type INT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := NewSourceConnector().Start(connectorCtx{}, tc.props); err == nil || err.Error() != tc.want {
				t.Errorf("connector start error = %v, want %q", err, tc.want)
			}
			if err := NewSourceTask().Start(newSourceCtx(tc.props), tc.props); err == nil || err.Error() != tc.want {
				t.Errorf("task start error = %v, want %q", err, tc.want)
			}
			if _, err := NewSourceConnector().AlterOffsets(tc.props, nil); err == nil || err.Error() != tc.want {
				t.Errorf("alter offsets error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSourceTaskConfigsOneTask(t *testing.T) {
	c := NewSourceConnector()
	props := map[string]string{"topic": "t", "file": "/x", "batch.size": "5"}
	if err := c.Start(connectorCtx{}, props); err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{1, 4} {
		cfgs, _ := c.TaskConfigs(max)
		if len(cfgs) != 1 || cfgs[0]["file"] != "/x" || cfgs[0]["batch.size"] != "5" {
			t.Errorf("TaskConfigs(%d) = %v", max, cfgs)
		}
	}
}

// KIP-875's checks, in Kafka's order and words.
func TestSourceAlterOffsets(t *testing.T) {
	file := map[string]string{"topic": "t", "file": "/x"}
	part := map[string]any{"filename": "/x"}
	for _, tc := range []struct {
		name    string
		props   map[string]string
		offsets []connect.SourcePartitionOffset
		want    string // "" for accepted
	}{
		{"stdin", map[string]string{"topic": "t"}, nil,
			"Offsets cannot be modified if the 'file' configuration is unspecified. This is because stdin is used for input and offsets are not tracked."},
		{"valid", file, []connect.SourcePartitionOffset{{Partition: part, Offset: map[string]any{"position": int64(10)}}}, ""},
		{"zero", file, []connect.SourcePartitionOffset{{Partition: part, Offset: map[string]any{"position": int64(0)}}}, ""},
		{"other file", file, []connect.SourcePartitionOffset{{Partition: map[string]any{"filename": "/old"}, Offset: map[string]any{"position": int64(3)}}}, ""},
		{"tombstone with garbage partition", file, []connect.SourcePartitionOffset{{Partition: map[string]any{"junk": 1}}}, ""},
		{"tombstone with null partition", file, []connect.SourcePartitionOffset{{}}, ""},
		{"no position", file, []connect.SourcePartitionOffset{{Partition: part, Offset: map[string]any{"pos": int64(1)}}},
			"Offset objects should either be null or contain the key 'position'"},
		{"string position", file, []connect.SourcePartitionOffset{{Partition: part, Offset: map[string]any{"position": "1"}}},
			"The value for the 'position' key in the offset is expected to be a Long value"},
		{"double position", file, []connect.SourcePartitionOffset{{Partition: part, Offset: map[string]any{"position": 1.5}}},
			"The value for the 'position' key in the offset is expected to be a Long value"},
		{"null position", file, []connect.SourcePartitionOffset{{Partition: part, Offset: map[string]any{"position": nil}}},
			"The value for the 'position' key in the offset is expected to be a Long value"},
		{"negative", file, []connect.SourcePartitionOffset{{Partition: part, Offset: map[string]any{"position": int64(-1)}}},
			"The value for the 'position' key in the offset should be a non-negative value"},
		{"null partition", file, []connect.SourcePartitionOffset{{Offset: map[string]any{"position": int64(1)}}},
			"Partition objects cannot be null"},
		{"no filename", file, []connect.SourcePartitionOffset{{Partition: map[string]any{"file": "/x"}, Offset: map[string]any{"position": int64(1)}}},
			"Partition objects should contain the key 'filename'"},
		{"second entry bad", file, []connect.SourcePartitionOffset{
			{Partition: part, Offset: map[string]any{"position": int64(1)}},
			{Partition: part, Offset: map[string]any{"position": int64(-5)}},
		}, "The value for the 'position' key in the offset should be a non-negative value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, err := NewSourceConnector().AlterOffsets(tc.props, tc.offsets)
			if tc.want == "" {
				if err != nil || !ok {
					t.Fatalf("AlterOffsets = %v, %v; want true", ok, err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("AlterOffsets error = %v, want %q", err, tc.want)
			}
		})
	}
}
