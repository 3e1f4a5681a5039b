package config

import (
	"maps"
	"slices"
	"strings"
)

// Description is one config as DescribeConfigs reports it.
type Description struct {
	Name string
	// Value is the effective value in Kafka's string form; nil when null or sensitive.
	Value  *string
	Source Source
	// Synonyms are every place a value for this config is set, most precedent first, the
	// effective one first of all (Kafka's include_synonyms, KIP-226).
	Synonyms  []Synonym
	Sensitive bool
	// ReadOnly: the config cannot be altered (broker configs with update mode read-only,
	// or that Samsa reads at startup only; never for topic configs).
	ReadOnly bool
	Type     Type
	Doc      string
}

// Synonym is one place a config's value is set.
type Synonym struct {
	Name   string
	Value  *string // as given; nil when sensitive
	Source Source
}

// Describe reports one config the way Kafka's DescribeConfigs does.
//
// Synonyms are listed source by source (dynamic topic, dynamic broker, dynamic default,
// static, default) and within a source in precedence order, so describing retention.ms on a
// topic without an override on a broker started with log.retention.hours=100 gives source
// STATIC_BROKER_CONFIG and synonyms [log.retention.hours=100 STATIC_BROKER_CONFIG,
// log.retention.hours=168 DEFAULT_CONFIG], and the value 360000000.
func (v Values) Describe(name string) (Description, error) {
	e, _, ok := v.s.catalog.entryFor(name)
	if !ok {
		return Description{}, unknownConfig(name)
	}
	r, err := v.s.resolveFor(name)
	if err != nil {
		return Description{}, err
	}
	d := Description{
		Name: name, Source: r.source, Sensitive: e.Sensitive(), Type: e.Type, Doc: e.Doc,
		ReadOnly: v.s.catalog.scope == "broker" && (e.Mode == ReadOnly || e.StartupOnly),
		Synonyms: v.s.synonyms(name),
	}
	if r.value != nil && !d.Sensitive {
		d.Value = ptr(formatValue(r.value))
	}
	return d, nil
}

// DescribeAll describes every catalog config, plus per-listener broker configs that are
// set, sorted by name.
func (v Values) DescribeAll() []Description {
	names := slices.Collect(maps.Keys(v.s.effective))
	for _, layer := range v.s.layers {
		for n := range layer {
			if strings.HasPrefix(n, listenerPrefix) && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	out := make([]Description, 0, len(names))
	for _, n := range names {
		d, err := v.Describe(n)
		if err == nil { // layers are validated; a failure here cannot happen
			out = append(out, d)
		}
	}
	return out
}

// resolveFor returns a precomputed effective value, or resolves a per-listener name.
func (s *values) resolveFor(name string) (resolved, error) {
	if r, ok := s.effective[name]; ok {
		return r, nil
	}
	return s.resolve(name)
}

// synonyms lists where name is set, for Describe.
func (s *values) synonyms(name string) []Synonym {
	if s.catalog.scope == "broker" {
		return s.brokerSynonyms(s.catalog.group(name))
	}
	var out []Synonym
	e := s.catalog.byName[name]
	own := SourceDynamicTopic
	if s.catalog.scope == groupScope {
		own = SourceGroup
	}
	if raw, ok := s.layers[own][name]; ok {
		out = append(out, synonym(e, name, raw, own))
	}
	switch {
	case e.ServerDefault != "" && s.broker != nil:
		out = append(out, s.broker.brokerSynonyms(Broker.group(e.ServerDefault))...)
	case e.ServerDefault == "" && own == SourceGroup:
		// Kafka's ConfigHelper.createGroupConfigEntry: a group config without a
		// broker config behind it lists its own default.
		out = append(out, synonym(e, name, e.Default, SourceDefault))
	}
	return out
}

// brokerSynonyms lists a broker group's settings source by source, as Kafka's
// ConfigHelper.configSynonyms does, ending with the defaults that are not null.
//
// Kafka then drops leading entries not named after the described config; for a topic, or a
// broker config whose value came from a unit synonym, that empties the list and reports
// DEFAULT_CONFIG for a value that came from server.properties. We keep the list, so the
// source agrees with the one Kafka's controller reports when it resolves topic configs.
func (s *values) brokerSynonyms(group []member) []Synonym {
	var out []Synonym
	for _, src := range brokerLayers {
		for _, m := range group {
			if raw, ok := s.layers[src][m.name]; ok {
				out = append(out, synonym(m.entry, m.name, raw, src))
			}
		}
	}
	for _, m := range group {
		if !m.entry.NullDefault && !strings.HasPrefix(m.name, listenerPrefix) {
			out = append(out, synonym(m.entry, m.name, m.entry.Default, SourceDefault))
		}
	}
	return out
}

func synonym(e *Entry, name, raw string, src Source) Synonym {
	s := Synonym{Name: name, Source: src}
	if !e.Sensitive() {
		s.Value = ptr(raw)
	}
	return s
}

func ptr(s string) *string { return &s }
