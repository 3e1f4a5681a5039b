package config

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// Values is a validated, resolved set of configs of one catalog. Raw strings are kept per
// Source (the layers); every getter returns the effective value: the most precedent layer
// that sets the config, else Kafka's default. A Values never changes after it is built, so
// it is safe for concurrent use and cheap to pass by value; "changing" one (WithDynamic,
// ResolveTopic) builds a new one.
//
// Getters take a config name and panic if it is not in the catalog or has another type:
// names are constants in Samsa's code, so a panic is a bug found by the first test run,
// not a user error. User input is validated when the Values is built.
type Values struct {
	s *values
}

type values struct {
	catalog *Catalog
	// layers holds the raw strings as given, by source. Broker values use
	// SourceDynamicBroker, SourceDynamicDefaultBroker and SourceStaticBroker; topic values
	// use SourceDynamicTopic, group values SourceGroup.
	layers map[Source]map[string]string
	// effective holds every catalog entry's resolved value.
	effective map[string]resolved
	// broker is what topic and group values fall back to; nil for broker values, and for
	// topic values parsed without a broker, which then fall back to Kafka's defaults.
	broker *values
}

// resolved is one effective value and where it came from.
type resolved struct {
	value  any // Go-typed; nil when null
	source Source
}

// brokerLayers are the broker sources in precedence order.
var brokerLayers = []Source{SourceDynamicBroker, SourceDynamicDefaultBroker, SourceStaticBroker}

// Parse validates raw and returns Values holding it: as STATIC_BROKER_CONFIG for the Broker
// catalog, as DYNAMIC_TOPIC_CONFIG for the Topic catalog (falling back to Kafka's defaults,
// not to a broker; use ResolveTopic for that). Every name and value is checked, and so is
// that Samsa supports it (CheckSupported); the error joins one *Error per bad config.
func Parse(c *Catalog, raw map[string]string) (Values, error) {
	if err := errors.Join(c.Validate(raw), c.CheckSupported(raw)); err != nil {
		return Values{}, err
	}
	return parseValid(c, raw)
}

// parseValid is Parse for raw strings already validated.
func parseValid(c *Catalog, raw map[string]string) (Values, error) {
	switch c.scope {
	case "topic":
		return build(c, map[Source]map[string]string{SourceDynamicTopic: maps.Clone(raw)}, nil)
	case clientMetricsScope:
		return build(c, map[Source]map[string]string{SourceClientMetrics: maps.Clone(raw)}, nil)
	case groupScope:
		return build(c, map[Source]map[string]string{SourceGroup: maps.Clone(raw)}, nil)
	}
	static := maps.Clone(raw)
	// Kafka's KafkaConfig.populateSynonyms: node.id and broker.id stand
	// for each other, so a KRaft node describes broker.id as its node id.
	if n, ok := static["node.id"]; ok {
		if _, ok := static["broker.id"]; !ok {
			static["broker.id"] = n
		}
	} else if b, ok := static["broker.id"]; ok {
		static["node.id"] = b
	}
	v, err := build(c, map[Source]map[string]string{SourceStaticBroker: static}, nil)
	if err != nil {
		return Values{}, err
	}
	return checkBroker(v)
}

// Validate checks every name and value of raw against the catalog without building Values.
// The error joins one *Error per bad config, in name order.
func (c *Catalog) Validate(raw map[string]string) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		if _, err := c.parse(name, raw[name]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// parse types and validates one raw value.
func (c *Catalog) parse(name, raw string) (any, error) {
	e, _, ok := c.entryFor(name)
	if !ok {
		return nil, c.unknown(name)
	}
	return parseValue(e, name, raw)
}

// unknown is the error of a name the catalog does not have. Kafka answers
// INVALID_CONFIG for an unknown topic, broker or group config ("Unknown group
// config name: x"), and INVALID_REQUEST for an unknown client metrics config
// (ClientMetricsConfigs.validate).
func (c *Catalog) unknown(name string) error {
	switch c.scope {
	case clientMetricsScope:
		return invalidRequest(name, "unknown client metrics configuration (there are metrics, interval.ms and match)")
	case groupScope:
		return &Error{Name: name, Reason: "Unknown group config name: " + name, Err: ErrUnknownConfig}
	}
	return unknownConfig(name)
}

// build resolves every entry over the layers. Layers are already validated.
func build(c *Catalog, layers map[Source]map[string]string, broker *values) (Values, error) {
	s := &values{catalog: c, layers: layers, effective: map[string]resolved{}, broker: broker}
	for _, e := range c.entries {
		r, err := s.resolve(e.Name)
		if err != nil {
			return Values{}, err
		}
		s.effective[e.Name] = r
	}
	return Values{s: s}, nil
}

// IsZero reports whether v was never built (the zero Values).
func (v Values) IsZero() bool { return v.s == nil }

// Catalog returns the catalog v was built from.
func (v Values) Catalog() *Catalog { return v.s.catalog }

// SameValues reports whether v and w, of one catalog, resolve every config
// to the same value, wherever each came from: a broker default changed
// dynamically changes a topic's values without changing its overrides.
func (v Values) SameValues(w Values) bool {
	if v.s == nil || w.s == nil || v.s.catalog != w.s.catalog {
		return v.s == w.s
	}
	for name, r := range v.s.effective {
		if !reflect.DeepEqual(r.value, w.s.effective[name].value) {
			return false
		}
	}
	return true
}

// Given returns a copy of the raw strings set at one source, as they were given: the
// server.properties contents for SourceStaticBroker, a topic's overrides for
// SourceDynamicTopic.
func (v Values) Given(src Source) map[string]string {
	return maps.Clone(v.s.layers[src])
}

// get returns the effective value of name, which must have one of the types.
func (v Values) get(name string, types ...Type) any {
	e, base, ok := v.s.catalog.entryFor(name)
	if !ok {
		panic(fmt.Sprintf("config: %s is not a %s config", name, v.s.catalog.scope))
	}
	if !slices.Contains(types, e.Type) {
		panic(fmt.Sprintf("config: %s is a %s, not a %s", name, e.Type, types[0]))
	}
	if base == "" {
		return v.s.effective[name].value
	}
	r, _ := v.s.resolve(name) // per-listener names are resolved on demand; layers are valid
	return r.value
}

// IsSet reports whether some layer sets exactly name: for a per-listener name, the
// listener's own setting, not the base config it falls back to.
func (v Values) IsSet(name string) bool {
	for _, layer := range v.s.layers {
		if _, ok := layer[name]; ok {
			return true
		}
	}
	return false
}

// IsNull reports whether name has no value: Kafka's null default and nothing set.
func (v Values) IsNull(name string) bool {
	return v.get(name, TypeBoolean, TypeString, TypeInt, TypeShort, TypeLong, TypeDouble, TypeList, TypeClass, TypePassword) == nil
}

// Bool returns a boolean config.
func (v Values) Bool(name string) bool {
	b, _ := v.get(name, TypeBoolean).(bool)
	return b
}

// Int returns an int (or short) config; 0 when null.
func (v Values) Int(name string) int32 {
	switch x := v.get(name, TypeInt, TypeShort).(type) {
	case int32:
		return x
	case int16:
		return int32(x)
	}
	return 0
}

// Long returns a long config, or an int or short one widened; 0 when null.
func (v Values) Long(name string) int64 {
	switch x := v.get(name, TypeLong, TypeInt, TypeShort).(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	}
	return 0
}

// Double returns a double config.
func (v Values) Double(name string) float64 {
	f, _ := v.get(name, TypeDouble).(float64)
	return f
}

// String returns a string, class or password config; "" when null.
func (v Values) String(name string) string {
	s, _ := v.get(name, TypeString, TypeClass, TypePassword).(string)
	return s
}

// List returns a copy of a list config; empty when null.
func (v Values) List(name string) []string {
	l, _ := v.get(name, TypeList).([]string)
	return slices.Clone(l)
}

// LogDirs returns the data directories as Kafka chooses them: log.dirs when set, else
// log.dir, split on commas.
func (v Values) LogDirs() []string {
	dirs := v.String("log.dirs")
	if v.IsNull("log.dirs") {
		dirs = v.String("log.dir")
	}
	var out []string
	for _, d := range strings.Split(dirs, ",") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}
