package worker

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/connect/example/counter"
	"github.com/samsa-io/samsa/connect/example/linesink"
)

func TestCheckPlugins(t *testing.T) {
	newConn := func() connect.Connector { return nil }
	ok := connect.Plugin{Class: "com.example.A", Aliases: []string{"A"}, Type: connect.PluginSource, New: newConn}
	cases := []struct {
		name    string
		plugins []connect.Plugin
		want    string
	}{
		{"none", nil, ""},
		{"the examples", []connect.Plugin{counter.Plugin(), linesink.Plugin()}, ""},
		{"one", []connect.Plugin{ok}, ""},
		{"no class", []connect.Plugin{{Aliases: []string{"X"}, Type: connect.PluginSink, New: newConn}}, "connect plugin with aliases [X] has no class name"},
		{"no New", []connect.Plugin{{Class: "com.example.B", Type: connect.PluginSink}}, "connect plugin com.example.B has no New function"},
		{"a converter", []connect.Plugin{{Class: "com.example.C", Type: connect.PluginConverter, New: newConn}}, `connect plugin com.example.C: type "converter" is neither "source" nor "sink"`},
		{"a built-in's class", []connect.Plugin{{Class: "org.apache.kafka.connect.file.FileStreamSourceConnector", Type: connect.PluginSource, New: newConn}},
			"connect plugin org.apache.kafka.connect.file.FileStreamSourceConnector: the name org.apache.kafka.connect.file.FileStreamSourceConnector is already taken by the built-in org.apache.kafka.connect.file.FileStreamSourceConnector"},
		{"a built-in's alias", []connect.Plugin{{Class: "com.example.D", Aliases: []string{"FileStreamSink"}, Type: connect.PluginSink, New: newConn}},
			"connect plugin com.example.D: the name FileStreamSink is already taken by the built-in org.apache.kafka.connect.file.FileStreamSinkConnector"},
		{"twice", []connect.Plugin{ok, {Class: "com.example.E", Aliases: []string{"A"}, Type: connect.PluginSink, New: newConn}},
			"connect plugin com.example.E: the name A is already taken by com.example.A"},
	}
	for _, tc := range cases {
		err := CheckPlugins(tc.plugins)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: CheckPlugins = %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// The command refuses before starting anything: a clashing plugin, a
// missing worker properties file, connector files without --standalone.
func TestCommandRefuses(t *testing.T) {
	dir := t.TempDir()
	clash := connect.Plugin{Class: "FileStreamSource", Type: connect.PluginSource, New: func() connect.Connector { return nil }}
	cases := []struct {
		name    string
		plugins []connect.Plugin
		args    []string
		want    string
	}{
		{"clash", []connect.Plugin{clash}, []string{"w.properties"}, "already taken by the built-in"},
		{"no worker properties", nil, nil, "a worker properties file is needed"},
		{"missing file", nil, []string{filepath.Join(dir, "none.properties")}, "none.properties"},
		{"connectors without standalone", nil, []string{"w.properties", "c.properties"}, "are for --standalone"},
		{"unknown flag", nil, []string{"--distributed"}, "unknown flag: --distributed"},
	}
	for _, tc := range cases {
		cmd := Command(tc.plugins...)
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(tc.args)
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Execute = %v, want %q", tc.name, err, tc.want)
		}
		if strings.Contains(out.String(), "Usage:") && tc.name != "unknown flag" {
			t.Errorf("%s: usage printed for a failure to start:\n%s", tc.name, out.String())
		}
	}
}

func TestRunExitStatusAndName(t *testing.T) {
	if code := run([]string{"/usr/local/bin/my-connect", filepath.Join(t.TempDir(), "none.properties")}, nil); code != 1 {
		t.Errorf("run with a missing file = %d, want 1", code)
	}
	if code := run([]string{"/usr/local/bin/my-connect", "--help"}, nil); code != 0 {
		t.Errorf("run --help = %d, want 0", code)
	}
	cmd := Command()
	if !strings.HasPrefix(cmd.Use, "connect ") {
		t.Errorf("Use = %q", cmd.Use)
	}
}
