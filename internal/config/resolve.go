package config

import (
	"errors"
	"maps"
	"slices"
)

// member is one name that can set a broker config, and the factor that converts its value
// into the config's units.
type member struct {
	name  string
	scale int64
	entry *Entry
}

// group returns the names that can set a broker config, most precedent first: the name
// itself, then its unit synonyms (log.retention.ms, .minutes, .hours), or for a
// per-listener name the base config it overrides.
func (c *Catalog) group(name string) []member {
	e, base, _ := c.entryFor(name)
	g := []member{{name: name, scale: 1, entry: e}}
	if base != "" {
		return append(g, member{name: base, scale: 1, entry: e})
	}
	for _, s := range e.Synonyms {
		g = append(g, member{name: s.Name, scale: s.Scale, entry: c.byName[s.Name]})
	}
	return g
}

func (s *values) resolve(name string) (resolved, error) {
	switch s.catalog.scope {
	case "topic":
		return s.resolveTopic(name)
	case groupScope:
		return s.resolveGroup(name)
	case clientMetricsScope:
		e := s.catalog.byName[name]
		if raw, ok := s.layers[SourceClientMetrics][name]; ok {
			v, err := parseValue(e, name, raw)
			return resolved{value: v, source: SourceClientMetrics}, err
		}
		return resolved{value: e.DefaultValue, source: SourceDefault}, nil
	}
	return s.resolveBroker(name)
}

// resolveBroker walks the layers most precedent first, and within a layer the group's
// names in order, as Kafka does: a dynamic log.retention.ms beats a static
// log.retention.minutes, which beats a static log.retention.hours.
func (s *values) resolveBroker(name string) (resolved, error) {
	group := s.catalog.group(name)
	for _, src := range brokerLayers {
		for _, m := range group {
			if raw, ok := s.layers[src][m.name]; ok {
				v, err := parseValue(m.entry, m.name, raw)
				return normalize(name, resolved{value: scale(v, m.scale), source: src}), err
			}
		}
	}
	for _, m := range group {
		if !m.entry.NullDefault {
			return normalize(name, resolved{value: scale(m.entry.DefaultValue, m.scale), source: SourceDefault}), nil
		}
	}
	return resolved{source: SourceDefault}, nil
}

// scale converts a unit synonym's value (hours, minutes) into its primary's milliseconds.
// Every primary with unit synonyms is a long.
func scale(v any, factor int64) any {
	if factor == 1 || v == nil {
		return v
	}
	return asInt64(v) * factor
}

// normalize applies Kafka's one special case: any negative log retention time means
// "forever" and is reported as -1 (KafkaConfig.logRetentionTimeMillis), which also keeps it
// valid for retention.ms, whose minimum is -1.
func normalize(name string, r resolved) resolved {
	if n, ok := r.value.(int64); ok && name == "log.retention.ms" && n < 0 {
		r.value = int64(-1)
	}
	return r
}

// resolveTopic takes the topic's override, else the effective value of its server default
// property on the broker, else the topic default.
func (s *values) resolveTopic(name string) (resolved, error) {
	e := s.catalog.byName[name]
	if raw, ok := s.layers[SourceDynamicTopic][name]; ok {
		v, err := parseValue(e, name, raw)
		return resolved{value: v, source: SourceDynamicTopic}, err
	}
	if r, ok := s.broker.fallback(e.ServerDefault); ok {
		if e.Validator != nil {
			// A broker value can be valid for the broker config and not for the topic
			// config (log.roll.ms has no minimum, segment.ms must be at least 1); Kafka
			// refuses such a broker config at startup, and so does Parse.
			if err := e.Validator.Validate(r.value); err != nil {
				return r, invalidValue(e, name, formatValue(r.value), err.Error()+" (from broker config "+e.ServerDefault+")")
			}
		}
		return r, nil
	}
	return resolved{value: e.DefaultValue, source: SourceDefault}, nil
}

// fallback returns the broker's effective value of a topic config's server default
// property, if there is a broker, a property, and a value.
func (s *values) fallback(name string) (resolved, bool) {
	if s == nil || name == "" {
		return resolved{}, false
	}
	r := s.effective[name]
	return r, r.value != nil
}

// ResolveTopic returns a topic's effective configs: its overrides (validated) over the
// broker's effective values of each config's server default property. A zero broker falls
// back to Kafka's defaults.
func ResolveTopic(broker Values, overrides map[string]string) (Values, error) {
	var b *values
	if !broker.IsZero() {
		if broker.s.catalog != Broker {
			panic("config: ResolveTopic needs broker values")
		}
		b = broker.s
	}
	if err := Topic.Validate(overrides); err != nil {
		return Values{}, err
	}
	return build(Topic, map[Source]map[string]string{SourceDynamicTopic: maps.Clone(overrides)}, b)
}

// checkBroker refuses what Kafka refuses at startup beyond single values: topic defaults
// that would be invalid, listener configs that disagree (checkListeners), a controller
// quorum that is not this node (checkQuorum), and node.id and broker.id both set but
// different.
func checkBroker(v Values) (Values, error) {
	if _, err := ResolveTopic(v, nil); err != nil {
		return Values{}, err
	}
	if err := errors.Join(checkListeners(v), checkQuorum(v)); err != nil {
		return Values{}, err
	}
	static := v.s.layers[SourceStaticBroker]
	for _, name := range slices.Sorted(maps.Keys(static)) {
		if e, ok := Broker.byName[name]; ok && e.DynamicOnly {
			return Values{}, invalidValue(e, name, static[name], "it is set dynamically for a broker, where the active controller reads it: kafka-configs --entity-type brokers --entity-name <id> --alter --add-config "+name+"=...")
		}
	}
	node, nodeSet := static["node.id"]
	broker, brokerSet := static["broker.id"]
	if nodeSet && brokerSet && v.Int("node.id") != v.Int("broker.id") {
		e := Broker.byName["broker.id"]
		return Values{}, invalidValue(e, "broker.id", broker, "node.id is "+node+"; set node.id to the same value as broker.id")
	}
	return v, nil
}

// WithDynamic returns broker values with the given dynamic configs layered over v's static
// ones: perBroker (DYNAMIC_BROKER_CONFIG, set for this node id) over clusterDefault
// (DYNAMIC_DEFAULT_BROKER_CONFIG, set with an empty resource name). The maps replace any
// dynamic configs v had; pass the complete current sets from the metadata image. Both are
// checked as ValidateDynamic does, except for what Samsa does not support: they were
// accepted when they were set.
func (v Values) WithDynamic(perBroker, clusterDefault map[string]string) (Values, error) {
	if v.s.catalog != Broker {
		panic("config: WithDynamic needs broker values")
	}
	err := errors.Join(Broker.validateDynamic(perBroker, true, false), Broker.validateDynamic(clusterDefault, false, false))
	if err != nil {
		return Values{}, err
	}
	nv, err := build(Broker, map[Source]map[string]string{
		SourceDynamicBroker:        maps.Clone(perBroker),
		SourceDynamicDefaultBroker: maps.Clone(clusterDefault),
		SourceStaticBroker:         v.s.layers[SourceStaticBroker],
	}, nil)
	if err != nil {
		return Values{}, err
	}
	return checkBroker(nv)
}

// ValidateDynamic checks configs about to be set dynamically: known names, valid values,
// and for the Broker catalog Kafka's update modes: read-only configs cannot be set at all,
// per-broker configs only for one broker (perBroker true), not as the cluster default.
// Mode violations wrap ErrInvalidRequest, as Kafka answers INVALID_REQUEST for them. What
// Samsa does not support (CheckSupported, and dynamic changes of StartupOnly configs) wraps
// ErrNotSupported.
func (c *Catalog) ValidateDynamic(raw map[string]string, perBroker bool) error {
	return c.validateDynamic(raw, perBroker, true)
}

// validateDynamic is ValidateDynamic; with supported false it skips the refusals of
// configs Samsa does not support (CheckSupported, Entry.StartupOnly), for configs already
// stored.
func (c *Catalog) validateDynamic(raw map[string]string, perBroker, supported bool) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		if err := c.checkMode(name, perBroker, supported); err != nil {
			errs = append(errs, err)
			continue
		}
		v, err := c.parse(name, raw[name])
		if err == nil && supported {
			e, _, _ := c.entryFor(name)
			err = checkSupported(e, name, raw[name], v)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *Catalog) checkMode(name string, perBroker, supported bool) error {
	e, _, ok := c.entryFor(name)
	switch {
	case !ok || c.scope != "broker":
		return nil // unknown names are reported by parse; every topic config is dynamic
	case e.Mode == ReadOnly:
		return invalidRequest(name, "cannot update this config dynamically, it is read-only")
	case e.Mode == PerBroker && !perBroker:
		return invalidRequest(name, "cannot update this config at default cluster level, broker id must be specified")
	case e.Mode == ClusterDefault && perBroker && supported:
		// Checked only for what a user sets: an image holding one (none
		// can) still resolves.
		return invalidRequest(name, "cannot update this config for one broker: it is read by the active controller, set it at default cluster level (kafka-configs --entity-default)")
	case e.StartupOnly && supported:
		return notSupported(name, "changing this config dynamically is not supported yet: Samsa reads it at startup only; set it in server.properties and restart")
	}
	return nil
}
