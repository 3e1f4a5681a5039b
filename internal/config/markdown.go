package config

import (
	"fmt"
	"strings"
)

// Markdown renders the catalog as a reference table for docs/CONFIG-<scope>.md. The golden
// copies under testdata/ are rewritten by `go test ./internal/config -update`.
func (c *Catalog) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s configs\n\n", titleCase(c.scope))
	b.WriteString("<!-- Generated from internal/config by `go test ./internal/config -update`; do not edit. -->\n\n")
	b.WriteString(c.intro())
	b.WriteString(statusIntro)
	b.WriteString(c.statusCounts())
	switch c.scope {
	case "topic":
		b.WriteString("| Name | Type | Default | Valid values | Server default property | Importance | Description | In Samsa |\n")
	case groupScope:
		b.WriteString("| Name | Type | Default | Valid values | Broker config (default and bounds) | Importance | Description | In Samsa |\n")
	default:
		b.WriteString("| Name | Type | Default | Valid values | Update mode | Importance | Description | In Samsa |\n")
	}
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, e := range c.entries {
		b.WriteString(c.row(e))
	}
	return b.String()
}

func (c *Catalog) intro() string {
	if c.scope == groupScope {
		return "Set per group with IncrementalAlterConfigs or AlterConfigs on a GROUP resource (type 32):\n" +
			"`kafka-configs --alter --entity-type groups --entity-name <group> --add-config share.auto.offset.reset=earliest`.\n" +
			"A group that does not set a config uses the broker config in the \"Broker config\" column. A value\n" +
			"set must lie within the broker's min and max configs named there (INVALID_CONFIG otherwise, with\n" +
			"Kafka's message), each session timeout must exceed its heartbeat interval, and an unknown name is\n" +
			"refused (\"Unknown group config name\"). If the broker's bounds later change, a value outside them is\n" +
			"capped to them, as in Kafka 4.4. DescribeConfigs reports a value the group sets with source\n" +
			"GROUP_CONFIG (DYNAMIC_GROUP_CONFIG in Kafka's admin client), else the broker config's own source.\n" +
			"The configs are in the replicated metadata log and outlive the group: DeleteGroups leaves them, as\n" +
			"Kafka's does; remove them with `--delete-config`.\n\n"
	}
	if c.scope == "topic" {
		return "Set per topic at creation or with IncrementalAlterConfigs. A topic that does not set a\n" +
			"config uses the broker config in the \"Server default property\" column, with the same\n" +
			"precedence as Apache Kafka.\n\n"
	}
	return "Set in server.properties or with command-line overrides. \"Update mode\" says whether the\n" +
		"config can also be altered at runtime: read-only (restart needed), per-broker (for one\n" +
		"broker), cluster-wide (for one broker or as the cluster default), or cluster-default (only as\n" +
		"the cluster default: Samsa's settings of the active controller). Security and connection\n" +
		"configs marked \"Per-listener\" may be set for one listener as `listener.name.<listener>.<config>`.\n" +
		"Names under `samsa.` are Samsa's own: Apache Kafka has no such config.\n\n"
}

func (c *Catalog) row(e *Entry) string {
	valid := ""
	if e.Validator != nil {
		valid = e.Validator.String()
	}
	fifth := e.Mode.String()
	switch c.scope {
	case "topic":
		fifth = e.ServerDefault
	case groupScope:
		fifth = groupBrokerCell(e)
	}
	doc := e.Doc
	if e.SamsaOwn() {
		doc = "Samsa's own; Kafka has no such config. " + doc
	}
	if e.ConfluentOwn() {
		doc = "Confluent Server's; Apache Kafka has no such config. " + doc
	}
	if e.PerListener || e.PerMechanism {
		doc += " Per-listener."
	}
	cells := []string{"`" + e.Name + "`", e.Type.String(), defaultCell(e), valid, fifth, e.Importance.String(), doc, statusCell(e)}
	for i, cell := range cells {
		cells[i] = strings.ReplaceAll(cell, "|", `\|`)
	}
	return "| " + strings.Join(cells, " | ") + " |\n"
}

func defaultCell(e *Entry) string {
	switch {
	case e.NullDefault:
		return "null"
	case e.Default == "":
		return `""`
	}
	return e.Default
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// statusIntro explains the "In Samsa" column.
const statusIntro = "The \"In Samsa\" column says what Samsa does with each config. **wired**: it has its\n" +
	"documented effect, in the place named. **not supported yet**: the feature is missing; any value\n" +
	"but the default (and the few others listed) is refused, at startup from server.properties or\n" +
	"`--override` and by CreateTopics, AlterConfigs and IncrementalAlterConfigs with INVALID_CONFIG, so\n" +
	"a setting is never silently ignored. **no effect by design**: the config tunes a mechanism of\n" +
	"Kafka's JVM that Samsa does not have; it is accepted, and logged at WARN at startup when set.\n" +
	"Wired configs marked \"read at startup only\" are refused by the alter APIs, and DescribeConfigs\n" +
	"reports them read-only.\n\n"

// statusCounts summarises the column.
func (c *Catalog) statusCounts() string {
	n := map[Status]int{}
	for _, e := range c.entries {
		n[e.Status()]++
	}
	return fmt.Sprintf("Of %d %s configs, %d are wired, %d not supported yet and %d have no effect by design.\n\n",
		len(c.entries), c.scope, n[StatusWired], n[StatusUnsupported], n[StatusNoEffect])
}

// statusCell is an entry's "In Samsa" cell.
func statusCell(e *Entry) string {
	var s string
	switch e.Status() {
	case StatusWired:
		s = "**wired**: " + e.Wired + "."
		if e.Unsupported != "" {
			s += " Values other than " + acceptedValues(e) + " are not supported yet (" + e.Unsupported + ")."
		}
		if e.StartupOnly {
			s += " Read at startup only: dynamic updates are refused."
		}
	case StatusUnsupported:
		s = "**not supported yet** (" + e.Unsupported + "): only " + acceptedValues(e) + " is accepted."
		if e.Accepts != nil {
			s += " A value other than the default is logged at startup as having no effect."
		}
	default:
		s = "**no effect by design**: " + e.NoEffect + "."
	}
	return s
}

// groupBrokerCell names the broker configs behind a group config: its default, then its
// bounds.
func groupBrokerCell(e *Entry) string {
	var names []string
	if e.ServerDefault != "" {
		names = append(names, e.ServerDefault)
	}
	if b, ok := groupBounds[e.Name]; ok {
		if b.min != "" {
			names = append(names, b.min)
		}
		names = append(names, b.max)
	}
	return strings.Join(names, ", ")
}
