package transforms

import (
	"strings"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/version"
)

const (
	transformsPackage = "org.apache.kafka.connect.transforms."
	predicatesPackage = "org.apache.kafka.connect.transforms.predicates."
)

// keyValue registers a transform's Key and Value variants.
func keyValue(name string, make func(side) connect.Transformation) []connect.TransformPlugin {
	return []connect.TransformPlugin{
		transformPlugin(name+"$Key", func() connect.Transformation { return make(keySide) }),
		transformPlugin(name+"$Value", func() connect.Transformation { return make(valueSide) }),
	}
}

// transformPlugin names a transform by Kafka's class name, with the
// class's own name (InsertField$Value, RegexRouter) as its alias.
func transformPlugin(simple string, make func() connect.Transformation) connect.TransformPlugin {
	return connect.TransformPlugin{Class: transformsPackage + simple, Aliases: []string{simple}, Version: version.String(), New: make}
}

// TransformPlugins are the transforms Kafka ships, by Kafka's class names.
func TransformPlugins() []connect.TransformPlugin {
	var out []connect.TransformPlugin
	out = append(out, keyValue("Cast", func(s side) connect.Transformation { return &cast{side: s} })...)
	out = append(out, transformPlugin("DropHeaders", func() connect.Transformation { return &dropHeaders{} }))
	out = append(out, keyValue("ExtractField", func(s side) connect.Transformation { return &extractField{side: s} })...)
	out = append(out, transformPlugin("Filter", func() connect.Transformation { return filter{} }))
	out = append(out, keyValue("Flatten", func(s side) connect.Transformation { return &flatten{side: s} })...)
	out = append(out, keyValue("HeaderFrom", func(s side) connect.Transformation { return &headerFrom{side: s} })...)
	out = append(out, keyValue("HoistField", func(s side) connect.Transformation { return &hoistField{side: s} })...)
	out = append(out, keyValue("InsertField", func(s side) connect.Transformation { return &insertField{side: s} })...)
	out = append(out, transformPlugin("InsertHeader", func() connect.Transformation { return &insertHeader{} }))
	out = append(out, keyValue("MaskField", func(s side) connect.Transformation { return &maskField{side: s} })...)
	out = append(out, transformPlugin("RegexRouter", func() connect.Transformation { return &regexRouter{} }))
	out = append(out, keyValue("ReplaceField", func(s side) connect.Transformation { return &replaceField{side: s} })...)
	out = append(out, keyValue("SetSchemaMetadata", func(s side) connect.Transformation { return &setSchemaMetadata{side: s} })...)
	out = append(out, keyValue("TimestampConverter", func(s side) connect.Transformation { return &timestampConverter{side: s} })...)
	out = append(out, transformPlugin("TimestampRouter", func() connect.Transformation { return &timestampRouter{} }))
	out = append(out, transformPlugin("ValueToKey", func() connect.Transformation { return &valueToKey{} }))
	return out
}

func predicatePlugin(simple string, make func() connect.Predicate) connect.PredicatePlugin {
	return connect.PredicatePlugin{Class: predicatesPackage + simple, Aliases: []string{simple}, Version: version.String(), New: make}
}

// PredicatePlugins are the predicates Kafka ships (KIP-585).
func PredicatePlugins() []connect.PredicatePlugin {
	return []connect.PredicatePlugin{
		predicatePlugin("HasHeaderKey", func() connect.Predicate { return &hasHeaderKey{} }),
		predicatePlugin("RecordIsTombstone", func() connect.Predicate { return recordIsTombstone{} }),
		predicatePlugin("TopicNameMatches", func() connect.Predicate { return &topicNameMatches{} }),
	}
}

// LookupTransform finds a transform by class name or alias.
func LookupTransform(name string) (connect.TransformPlugin, bool) {
	name = strings.TrimSpace(name)
	for _, p := range TransformPlugins() {
		if p.Class == name || contains(p.Aliases, name) {
			return p, true
		}
	}
	return connect.TransformPlugin{}, false
}

// LookupPredicate finds a predicate by class name or alias.
func LookupPredicate(name string) (connect.PredicatePlugin, bool) {
	name = strings.TrimSpace(name)
	for _, p := range PredicatePlugins() {
		if p.Class == name || contains(p.Aliases, name) {
			return p, true
		}
	}
	return connect.PredicatePlugin{}, false
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
