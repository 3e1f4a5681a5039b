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
	if c.scope == "topic" {
		b.WriteString("| Name | Type | Default | Valid values | Server default property | Importance | Description |\n")
		b.WriteString("|---|---|---|---|---|---|---|\n")
	} else {
		b.WriteString("| Name | Type | Default | Valid values | Update mode | Importance | Description |\n")
		b.WriteString("|---|---|---|---|---|---|---|\n")
	}
	for _, e := range c.entries {
		b.WriteString(c.row(e))
	}
	return b.String()
}

func (c *Catalog) intro() string {
	if c.scope == "topic" {
		return "Set per topic at creation or with IncrementalAlterConfigs. A topic that does not set a\n" +
			"config uses the broker config in the \"Server default property\" column, with the same\n" +
			"precedence as Apache Kafka.\n\n"
	}
	return "Set in server.properties or with command-line overrides. \"Update mode\" says whether the\n" +
		"config can also be altered at runtime: read-only (restart needed), per-broker (for one\n" +
		"broker), or cluster-wide (for one broker or as the cluster default). Security and connection\n" +
		"configs marked \"Per-listener\" may be set for one listener as `listener.name.<listener>.<config>`.\n\n"
}

func (c *Catalog) row(e *Entry) string {
	valid := ""
	if e.Validator != nil {
		valid = e.Validator.String()
	}
	fifth := e.Mode.String()
	if c.scope == "topic" {
		fifth = e.ServerDefault
	}
	doc := e.Doc
	if e.PerListener || e.PerMechanism {
		doc += " Per-listener."
	}
	cells := []string{"`" + e.Name + "`", e.Type.String(), defaultCell(e), valid, fifth, e.Importance.String(), doc}
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
