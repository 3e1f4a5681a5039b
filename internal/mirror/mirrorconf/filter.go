package mirrorconf

import (
	"fmt"
	"regexp"
	"strings"
)

// TopicFilter selects the source topics a flow replicates (topics, topics.exclude).
type TopicFilter interface{ ShouldReplicateTopic(topic string) bool }

// GroupFilter selects the source consumer groups a flow checkpoints (groups, groups.exclude).
type GroupFilter interface{ ShouldReplicateGroup(group string) bool }

// ConfigPropertyFilter selects the topic configs a flow copies to remote topics
// (config.properties.exclude, use.defaults.from), as Kafka 4's DefaultConfigPropertyFilter.
type ConfigPropertyFilter interface {
	ShouldReplicateConfigProperty(name string) bool
	// ShouldReplicateSourceDefault: whether a config the source topic leaves at its default
	// is set on the remote topic to the source's default value (use.defaults.from=source) or
	// left to the target's default (target, Kafka's default).
	ShouldReplicateSourceDefault(name string) bool
}

// Kafka's defaults, with their Java constant names.
const (
	// DefaultTopicFilter.TOPICS_INCLUDE_DEFAULT
	TopicsIncludeDefault = ".*"
	// DefaultTopicFilter.TOPICS_EXCLUDE_DEFAULT
	TopicsExcludeDefault = `.*[\-\.]internal, .*\.replica, __.*`
	// DefaultGroupFilter.GROUPS_INCLUDE_DEFAULT
	GroupsIncludeDefault = ".*"
	// DefaultGroupFilter.GROUPS_EXCLUDE_DEFAULT
	GroupsExcludeDefault = "console-consumer-.*, connect-.*, __.*"
	// DefaultConfigPropertyFilter.CONFIG_PROPERTIES_EXCLUDE_DEFAULT
	ConfigPropertiesExcludeDefault = `follower\.replication\.throttled\.replicas, ` +
		`leader\.replication\.throttled\.replicas, ` +
		`message\.timestamp\.difference\.max\.ms, ` +
		`message\.timestamp\.type, ` +
		`unclean\.leader\.election\.enable, ` +
		`min\.insync\.replicas`
	// DefaultConfigPropertyFilter.USE_DEFAULTS_FROM_DEFAULT
	UseDefaultsFromDefault = "target"
)

// patternList is a list of regular expressions matched against whole names, as Kafka's
// MirrorUtils.compilePatternList: the entries joined with "|" into one pattern. An empty
// list matches nothing (a nil pattern), not everything.
type patternList struct {
	text string // as configured, for messages
	re   *regexp.Regexp
}

// splitList splits a value as Kafka's ConfigDef LIST type does: trimmed, then split around
// commas with any whitespace beside them; "" is the empty list. Empty entries stay (Kafka
// keeps them: "a,,b" holds an empty pattern that matches only the empty name).
func splitList(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// compilePatternList compiles a LIST value. Kafka compiles Java regular expressions; Go's
// RE2 has the same syntax for the patterns filters use (literals, classes, ., *, +, ?, |,
// groups, \Q..\E) but no look-around, back-references or possessive quantifiers: such a
// pattern is refused here rather than matched differently. Java's Matcher.matches() matches
// the whole name, hence the anchors.
func compilePatternList(name, v string) (patternList, error) {
	fields := splitList(v)
	pl := patternList{text: v}
	if len(fields) == 0 {
		return pl, nil
	}
	joined := strings.Join(fields, "|")
	re, err := regexp.Compile(`^(?:` + joined + `)$`)
	if err != nil {
		return pl, &Error{Key: name, Msg: fmt.Sprintf("%q is not a regular expression Samsa can match (Go's RE2 syntax: no look-around, back-references or possessive quantifiers): %v",
			joined, err)}
	}
	pl.re = re
	return pl, nil
}

func (p patternList) matches(s string) bool { return p.re != nil && p.re.MatchString(s) }

// DefaultTopicFilter is Kafka's DefaultTopicFilter: included and not excluded.
type DefaultTopicFilter struct{ include, exclude patternList }

// NewDefaultTopicFilter compiles topics and topics.exclude values.
func NewDefaultTopicFilter(topics, exclude string) (*DefaultTopicFilter, error) {
	in, err := compilePatternList("topics", topics)
	if err != nil {
		return nil, err
	}
	ex, err := compilePatternList("topics.exclude", exclude)
	if err != nil {
		return nil, err
	}
	return &DefaultTopicFilter{include: in, exclude: ex}, nil
}

func (f *DefaultTopicFilter) ShouldReplicateTopic(topic string) bool {
	return f.include.matches(topic) && !f.exclude.matches(topic)
}

// DefaultGroupFilter is Kafka's DefaultGroupFilter: included and not excluded.
type DefaultGroupFilter struct{ include, exclude patternList }

// NewDefaultGroupFilter compiles groups and groups.exclude values.
func NewDefaultGroupFilter(groups, exclude string) (*DefaultGroupFilter, error) {
	in, err := compilePatternList("groups", groups)
	if err != nil {
		return nil, err
	}
	ex, err := compilePatternList("groups.exclude", exclude)
	if err != nil {
		return nil, err
	}
	return &DefaultGroupFilter{include: in, exclude: ex}, nil
}

func (f *DefaultGroupFilter) ShouldReplicateGroup(group string) bool {
	return f.include.matches(group) && !f.exclude.matches(group)
}

// DefaultConfigPropertyFilter is Kafka 4's DefaultConfigPropertyFilter.
type DefaultConfigPropertyFilter struct {
	exclude         patternList
	useDefaultsFrom string
}

// NewDefaultConfigPropertyFilter compiles config.properties.exclude; useDefaultsFrom is
// "source" or "target".
func NewDefaultConfigPropertyFilter(exclude, useDefaultsFrom string) (*DefaultConfigPropertyFilter, error) {
	ex, err := compilePatternList("config.properties.exclude", exclude)
	if err != nil {
		return nil, err
	}
	if useDefaultsFrom != "source" && useDefaultsFrom != "target" {
		return nil, &Error{Key: "use.defaults.from", Msg: fmt.Sprintf("%q: want source or target", useDefaultsFrom)}
	}
	return &DefaultConfigPropertyFilter{exclude: ex, useDefaultsFrom: useDefaultsFrom}, nil
}

func (f *DefaultConfigPropertyFilter) ShouldReplicateConfigProperty(name string) bool {
	return !f.exclude.matches(name)
}

func (f *DefaultConfigPropertyFilter) ShouldReplicateSourceDefault(string) bool {
	return f.useDefaultsFrom == "source"
}
