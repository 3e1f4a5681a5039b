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
		var msgs []string
		// describe renders one incompatibility as Confluent does: Avro's
		// and Protobuf's descriptions name the new and old schema in the
		// roles of the check's direction (reader, writer).
		describe := func(found []schema.Incompatibility, reader, writer string) {
			for _, f := range found {
				switch candidate.Type() {
				case schema.Avro:
					msgs = append(msgs, schema.AvroDifference(f, reader, writer))
				case schema.Protobuf:
					msgs = append(msgs, schema.ProtobufDifference(f, reader, writer))
				default:
					msgs = append(msgs, f.String())
				}
			}
		}
		if base == levelBackward || base == levelFull {
			describe(schema.CanRead(candidate, p.parsed), "new", "old")
		}
		if base == levelForward || base == levelFull {
			describe(schema.CanRead(p.parsed, candidate), "old", "new")
		}
		if len(msgs) == 0 {
			continue
		}
		msgs = append(msgs,
			fmt.Sprintf("{oldSchemaVersion: %d}", p.version),
			fmt.Sprintf("{oldSchema: '%s'}", p.text),
			fmt.Sprintf("{validateFields: 'false', compatibility: '%s'}", level))
		return msgs
	}
	return nil
}
