package schemaregistry

import (
	"fmt"
	"strings"

	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
)

// Compatibility levels, as the API and the store spell them.
const (
	levelNone               = "NONE"
	levelBackward           = "BACKWARD"
	levelBackwardTransitive = "BACKWARD_TRANSITIVE"
	levelForward            = "FORWARD"
	levelForwardTransitive  = "FORWARD_TRANSITIVE"
	levelFull               = "FULL"
	levelFullTransitive     = "FULL_TRANSITIVE"

	// defaultLevel applies when neither the subject nor the registry has
	// one, as in Confluent's registry.
	defaultLevel = levelBackward
)

// parseLevel reads a level from a request; Confluent accepts any case.
func parseLevel(s string) (string, bool) {
	u := strings.ToUpper(s)
	switch u {
	case levelNone, levelBackward, levelBackwardTransitive, levelForward, levelForwardTransitive, levelFull, levelFullTransitive:
		return u, true
	}
	return "", false
}

// transitive reports whether a level checks every live version rather
// than the latest only.
func transitive(level string) bool { return strings.HasSuffix(level, "_TRANSITIVE") }

// previousSchema is one version a candidate is checked against.
type previousSchema struct {
	version int
	text    string
	parsed  schema.Schema
}

// checkCompatibility checks candidate against previous (newest first) by
// level, as Confluent's validator does: BACKWARD asks whether the new
// schema can read what the old one wrote, FORWARD the reverse, FULL both;
// the check stops at the first version it fails, and the messages are
// that version's incompatibilities followed by Confluent's notes on which
// version and level failed. An empty result means compatible.
func checkCompatibility(level string, candidate schema.Schema, previous []previousSchema) []string {
	if level == levelNone || len(previous) == 0 {
		return nil
	}
	if !transitive(level) {
		previous = previous[:1]
	}
	base := strings.TrimSuffix(level, "_TRANSITIVE")
	for _, p := range previous {
		var found []schema.Incompatibility
		if base == levelBackward || base == levelFull {
			found = append(found, schema.CanRead(candidate, p.parsed)...)
		}
		if base == levelForward || base == levelFull {
			found = append(found, schema.CanRead(p.parsed, candidate)...)
		}
		if len(found) == 0 {
			continue
		}
		msgs := make([]string, 0, len(found)+3)
		for _, f := range found {
			msgs = append(msgs, f.String())
		}
		msgs = append(msgs,
			fmt.Sprintf("{oldSchemaVersion: %d}", p.version),
			fmt.Sprintf("{oldSchema: '%s'}", p.text),
			fmt.Sprintf("{validateFields: 'false', compatibility: '%s'}", level))
		return msgs
	}
	return nil
}
