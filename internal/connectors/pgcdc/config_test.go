package pgcdc

import (
	"strings"
	"testing"

	"github.com/samsa-io/samsa/connect"
)

func baseProps(extra ...string) map[string]string {
	p := map[string]string{cfgHostname: "localhost", cfgUser: "u", cfgDBName: "db", cfgTopicPrefix: "srv"}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "<unset>" {
			delete(p, extra[i])
			continue
		}
		p[extra[i]] = extra[i+1]
	}
	return p
}

func TestBadConfigsAreRefusedClearly(t *testing.T) {
	for _, tc := range []struct {
		props []string
		want  string
	}{
		{[]string{cfgTopicPrefix, "<unset>"}, `Missing required configuration "topic.prefix"`},
		{[]string{cfgTopicPrefix, "a b"}, "Topic prefix must contain only"},
		{[]string{cfgHostname, "<unset>"}, `Missing required configuration "database.hostname"`},
		{[]string{cfgPluginName, "decoderbufs"}, "only pgoutput is supported"},
		{[]string{cfgPluginName, "wal2json"}, "only pgoutput is supported"},
		{[]string{cfgSnapshotMode, "when_needed"}, "Invalid value when_needed for configuration snapshot.mode: String must be one of: initial, initial_only, no_data, never, always"},
		{[]string{cfgPublicationMode, "no_tables"}, "publication.autocreate.mode"},
		{[]string{cfgDecimalMode, "exact"}, "decimal.handling.mode"},
		{[]string{cfgTimePrecision, "adaptive_time_microseconds"}, "time.precision.mode"},
		{[]string{cfgSlotName, "Bad-Slot"}, "Valid replication slot name"},
		{[]string{cfgTableInclude, "public.a", cfgTableExclude, "public.b"}, "table.include.list and table.exclude.list cannot both be set"},
		{[]string{cfgColumnInclude, "x", cfgColumnExclude, "y"}, "column.include.list and column.exclude.list cannot both be set"},
		{[]string{cfgTableInclude, "public.(a"}, "not a valid regular expression"},
		{[]string{cfgSkippedOperations, "c,x"}, "skipped.operations list may only contain"},
		{[]string{"schema.include.list", "public"}, "schema.include.list is not supported"},
		{[]string{"provide.transaction.metadata", "true"}, "provide.transaction.metadata=true is not supported"},
		{[]string{cfgPort, "70000"}, "Value must be no more than 65535"},
		{[]string{cfgHeartbeatInterval, "-1"}, "Value must be at least 0"},
	} {
		_, err := parseSettings(baseProps(tc.props...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want it to say %q", tc.props, err, tc.want)
		}
		c := &Connector{}
		if err := c.Start(nil, baseProps(tc.props...)); err == nil {
			t.Errorf("%v: connector Start accepted it", tc.props)
		}
	}
	for _, ok := range [][]string{
		{"provide.transaction.metadata", "false"},
		{cfgSnapshotMode, "never"},
		{cfgPluginName, "pgoutput"},
		{cfgSkippedOperations, "none"},
	} {
		if _, err := parseSettings(baseProps(ok...)); err != nil {
			t.Errorf("%v refused: %v", ok, err)
		}
	}
}

// Validate reports what the ConfigDef alone cannot, per config.
func TestValidateNamesTheConfig(t *testing.T) {
	c := &Connector{}
	got := c.Validate(baseProps("schema.exclude.list", "x", cfgTableInclude, "a", cfgTableExclude, "b"))
	names := map[string]bool{}
	for _, cv := range got {
		names[cv.Name] = len(cv.Errors) > 0
	}
	if !names["schema.exclude.list"] || !names[cfgTableExclude] {
		t.Fatalf("validate = %+v", got)
	}
	if len(c.Validate(baseProps())) != 0 {
		t.Errorf("a good config has errors")
	}
	if len(configDef().Keys()) == 0 || Plugins()[0].Class != "io.debezium.connector.postgresql.PostgresConnector" {
		t.Errorf("plugin %+v", Plugins()[0])
	}
	var _ connect.SourceConnector = Plugins()[0].New().(connect.SourceConnector)
	if n, _ := (&Connector{props: baseProps()}).TaskConfigs(8); len(n) != 1 {
		t.Errorf("TaskConfigs(8) = %d configs, want 1", len(n))
	}
}

// Start refuses a server or a setup it cannot work with, saying why.
func TestStartRefusesWhatTheServerCannotDo(t *testing.T) {
	f := newFixture(t)
	c := &Connector{}
	for _, tc := range []struct {
		props []string
		want  string
	}{
		{[]string{cfgPublicationMode, "disabled"}, "publication dbz_publication does not exist and publication.autocreate.mode is disabled"},
		{[]string{cfgDBName, "nosuchdb"}, "nosuchdb"},
		{[]string{cfgUser, "nobody"}, "nobody"},
	} {
		props := f.props(tc.props...)
		task := c.NewTask().(*Task)
		f.rt.props = props
		err := task.Start(f.rt, props)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: Start err = %v, want it to say %q", tc.props, err, tc.want)
		}
	}
	// A slot made by another plugin is not taken over.
	f.exec(t, `SELECT pg_create_logical_replication_slot('other', 'test_decoding')`)
	task := c.NewTask().(*Task)
	if err := task.Start(f.rt, f.props(cfgSlotName, "other")); err == nil || !strings.Contains(err.Error(), `exists for plugin "test_decoding"`) {
		t.Errorf("foreign slot: %v", err)
	}
}
