package mirrorconf

import (
	"strings"
	"testing"
)

func wantErr(t *testing.T, err error, sub string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", sub)
	}
	if !strings.Contains(err.Error(), sub) {
		t.Fatalf("error %q\ndoes not contain %q", err, sub)
	}
}

func TestDefaultTopicFilter(t *testing.T) {
	def, err := NewDefaultTopicFilter(TopicsIncludeDefault, TopicsExcludeDefault)
	if err != nil {
		t.Fatal(err)
	}
	some, err := NewDefaultTopicFilter("foo.*, bar", "")
	if err != nil {
		t.Fatal(err)
	}
	none, err := NewDefaultTopicFilter("", TopicsExcludeDefault)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f     TopicFilter
		topic string
		want  bool
	}{
		{def, "orders", true},
		{def, "A.orders", true},
		{def, "__consumer_offsets", false},
		{def, "mm2-offsets.A.internal", false},
		{def, "connect-configs-internal", false},
		{def, "orders.replica", false},
		{def, "internal", true}, // the exclude needs a - or . before "internal"
		{def, "x_internal", true},
		{def, "_single", true},
		{some, "foo", true},
		{some, "foobar", true},
		{some, "bar", true},
		{some, "barx", false}, // whole-name match, as Java's matches()
		{some, "xbar", false},
		{some, "__x", false},
		{none, "orders", false}, // an empty list matches nothing
	} {
		if got := tc.f.ShouldReplicateTopic(tc.topic); got != tc.want {
			t.Errorf("ShouldReplicateTopic(%q) = %v, want %v", tc.topic, got, tc.want)
		}
	}
	// An empty exclude list excludes nothing.
	all, _ := NewDefaultTopicFilter(".*", "")
	if !all.ShouldReplicateTopic("__consumer_offsets") {
		t.Error("empty topics.exclude excluded __consumer_offsets")
	}
	_, err = NewDefaultTopicFilter("(?=x).*", "")
	wantErr(t, err, "topics: \"(?=x).*\" is not a regular expression Samsa can match")
	_, err = NewDefaultTopicFilter(".*", `(a)\1`)
	wantErr(t, err, "topics.exclude:")
}

func TestDefaultGroupFilter(t *testing.T) {
	def, err := NewDefaultGroupFilter(GroupsIncludeDefault, GroupsExcludeDefault)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		group string
		want  bool
	}{
		{"app", true},
		{"console-consumer-4711", false},
		{"connect-sink", false},
		{"__share", false},
		{"my-connect-app", true},
	} {
		if got := def.ShouldReplicateGroup(tc.group); got != tc.want {
			t.Errorf("ShouldReplicateGroup(%q) = %v, want %v", tc.group, got, tc.want)
		}
	}
	some, _ := NewDefaultGroupFilter("consumer-group1, consumer-group2", GroupsExcludeDefault)
	if !some.ShouldReplicateGroup("consumer-group2") || some.ShouldReplicateGroup("consumer-group3") {
		t.Error("groups list not applied")
	}
	_, err = NewDefaultGroupFilter("a++", "")
	wantErr(t, err, "groups:")
}

func TestDefaultConfigPropertyFilter(t *testing.T) {
	def, err := NewDefaultConfigPropertyFilter(ConfigPropertiesExcludeDefault, UseDefaultsFromDefault)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"retention.ms", true},
		{"cleanup.policy", true},
		{"min.insync.replicas", false},
		{"unclean.leader.election.enable", false},
		{"message.timestamp.type", false},
		{"message.timestamp.difference.max.ms", false},
		{"follower.replication.throttled.replicas", false},
		{"leader.replication.throttled.replicas", false},
		{"xmin.insync.replicas", true},    // anchored
		{"min_insync_replicas", true},     // the dots are escaped
		{"message.timestamp.typeX", true}, // anchored
	} {
		if got := def.ShouldReplicateConfigProperty(tc.name); got != tc.want {
			t.Errorf("ShouldReplicateConfigProperty(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
	if def.ShouldReplicateSourceDefault("retention.ms") {
		t.Error("use.defaults.from=target replicates the source's defaults")
	}
	src, _ := NewDefaultConfigPropertyFilter("", "source")
	if !src.ShouldReplicateSourceDefault("retention.ms") || !src.ShouldReplicateConfigProperty("min.insync.replicas") {
		t.Error("use.defaults.from=source with no excludes")
	}
	_, err = NewDefaultConfigPropertyFilter("", "both")
	wantErr(t, err, `use.defaults.from: "both": want source or target`)
}
