package transforms

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/samsa-io/samsa/connect"
)

// The connector configs that build a chain, as Kafka's ConnectorConfig:
// transforms=a,b names the stages in order; transforms.a.type is a class
// or alias; transforms.a.<option> configures it; transforms.a.predicate=p
// applies it only to records p matches (negate=true: does not match);
// predicates=p and predicates.p.type / predicates.p.<option> define p.
const (
	TransformsConfig = "transforms"
	PredicatesConfig = "predicates"
	predicateConfig  = "predicate"
	negateConfig     = "negate"
)

// Chain is a connector's transforms, applied in order. Apply may be
// called from several goroutines: stages keep no per-record state.
type Chain struct {
	stages []stage
}

type stage struct {
	alias     string
	class     string
	transform connect.Transformation
	predicate connect.Predicate // nil: apply to every record
	negate    bool
}

// BaseConfigDef is the transforms and predicates keys of Kafka's
// ConnectorConfig (groups Transforms and Predicates), for a runtime's
// connector ConfigDef.
func BaseConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: TransformsConfig, Type: connect.TypeList, Default: []string{}, Validator: uniqueAliases{},
			Importance: connect.Low, Documentation: "Aliases for the transformations to be applied to records.",
			Group: "Transforms", OrderInGroup: 1, Width: connect.WidthLong, DisplayName: "Transforms"}).
		Define(connect.ConfigKey{Name: PredicatesConfig, Type: connect.TypeList, Default: []string{}, Validator: uniqueAliases{},
			Importance: connect.Low, Documentation: "Aliases for the predicates used by transformations.",
			Group: "Predicates", OrderInGroup: 1, Width: connect.WidthLong, DisplayName: "Predicates"})
}

// uniqueAliases refuses a list that names an alias twice.
type uniqueAliases struct{}

func (uniqueAliases) Validate(_ string, v any) error {
	seen := map[string]bool{}
	for _, a := range v.([]string) {
		if seen[a] {
			return errors.New("Duplicate alias provided.")
		}
		seen[a] = true
	}
	return nil
}

// aliases reads a list config, first occurrences only (Kafka's
// LinkedHashSet over the parsed list).
func aliases(props map[string]string, name string) []string {
	v, _ := connect.ParseValue(connect.TypeList, props[name])
	var out []string
	seen := map[string]bool{}
	for _, a := range v.([]string) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// EnrichConfigDef is what Kafka's ConnectorConfig.enrich adds for props:
// per transform alias a, the group "Transforms: a" with transforms.a.type,
// transforms.a.predicate, transforms.a.negate and the transform's own
// keys prefixed; per predicate alias p, "Predicates: p" with
// predicates.p.type and the predicate's keys. A type that names no known
// class contributes only its type key, whose validation fails, so
// config/validate reports it there. Two aliases whose keys collide (alias
// "a.target" names transforms.a.target.type, alias a's TimestampConverter
// option) are an error, as Kafka's "defined twice".
func EnrichConfigDef(props map[string]string) (*connect.ConfigDef, error) {
	e := &enricher{def: connect.NewConfigDef()}
	listed := setOf(aliases(props, PredicatesConfig))
	for _, alias := range aliases(props, TransformsConfig) {
		enrichTransform(e, props, alias, listed)
	}
	for _, alias := range aliases(props, PredicatesConfig) {
		enrichPredicate(e, props, alias)
	}
	return e.def, e.err
}

type enricher struct {
	def *connect.ConfigDef
	err error
}

// define adds a key; a second key of one name is the first error.
func (e *enricher) define(k connect.ConfigKey) {
	if _, dup := e.def.Key(k.Name); dup {
		if e.err == nil {
			e.err = fmt.Errorf("Configuration %s is defined twice.", k.Name)
		}
		return
	}
	e.def.Define(k)
}

func transformClasses() []string {
	var out []string
	for _, p := range TransformPlugins() {
		out = append(out, p.Class)
	}
	return out
}

func predicateClasses() []string {
	var out []string
	for _, p := range PredicatePlugins() {
		out = append(out, p.Class)
	}
	return out
}

func enrichTransform(e *enricher, props map[string]string, alias string, predicates map[string]bool) {
	prefix := TransformsConfig + "." + alias + "."
	group := "Transforms: " + alias
	plugin, found := LookupTransform(props[prefix+"type"])
	e.define(connect.ConfigKey{
		Name: prefix + "type", Type: connect.TypeClass, Default: connect.NoDefault, Importance: connect.High,
		Validator: connect.ValidatorFunc(func(_ string, v any) error {
			if _, ok := LookupTransform(v.(string)); !ok {
				return fmt.Errorf("Class %s could not be found.", v)
			}
			return negateWithoutPredicate(props, prefix)
		}),
		Documentation: "Class for the '" + alias + "' transformation.", Group: group, OrderInGroup: 0,
		Width: connect.WidthLong, DisplayName: "Transformation type for " + alias, Recommended: transformClasses(),
	})
	if !found {
		return
	}
	order := 1
	embed := func(k connect.ConfigKey) {
		if k.DisplayName == "" {
			k.DisplayName = k.Name
		}
		k.Name, k.Group, k.OrderInGroup = prefix+k.Name, group, order
		for i, d := range k.Dependents {
			k.Dependents[i] = prefix + d
		}
		order++
		e.define(k)
	}
	embed(connect.ConfigKey{Name: predicateConfig, Type: connect.TypeString, Default: nil, Importance: connect.Medium,
		Validator: connect.ValidatorFunc(func(_ string, v any) error {
			if p, _ := v.(string); !predicates[p] {
				return fmt.Errorf("no predicate %s is listed in %s", p, PredicatesConfig)
			}
			return nil
		}),
		Documentation: "The alias of a predicate used to determine whether to apply this transformation."})
	embed(connect.ConfigKey{Name: negateConfig, Type: connect.TypeBoolean, Default: false, Importance: connect.Medium,
		Documentation: "Whether the configured predicate should be negated."})
	for _, k := range plugin.New().Config().Keys() {
		// The implicit predicate and negate mask a transform's own keys
		// of those names, as in Kafka.
		if k.Name != predicateConfig && k.Name != negateConfig {
			embed(k)
		}
	}
}

func negateWithoutPredicate(props map[string]string, prefix string) error {
	_, negate := props[prefix+negateConfig]
	_, predicate := props[prefix+predicateConfig]
	if negate && !predicate {
		return fmt.Errorf("Config '%s' was provided but there is no config '%s' defining a predicate to be negated.",
			prefix+negateConfig, prefix+predicateConfig)
	}
	return nil
}

func enrichPredicate(e *enricher, props map[string]string, alias string) {
	prefix := PredicatesConfig + "." + alias + "."
	group := "Predicates: " + alias
	plugin, found := LookupPredicate(props[prefix+"type"])
	e.define(connect.ConfigKey{
		Name: prefix + "type", Type: connect.TypeClass, Default: connect.NoDefault, Importance: connect.High,
		Validator: connect.ValidatorFunc(func(_ string, v any) error {
			if _, ok := LookupPredicate(v.(string)); !ok {
				return fmt.Errorf("Class %s could not be found.", v)
			}
			return nil
		}),
		Documentation: "Class for the '" + alias + "' predicate.", Group: group, OrderInGroup: 0,
		Width: connect.WidthLong, DisplayName: "Predicate type for " + alias, Recommended: predicateClasses(),
	})
	if !found {
		return
	}
	for i, k := range plugin.New().Config().Keys() {
		k.Name, k.Group, k.OrderInGroup = prefix+k.Name, group, i+1
		e.define(k)
	}
}

// withPrefix is the props under prefix with the prefix taken off
// (Kafka's originalsWithPrefix).
func withPrefix(props map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		if strings.HasPrefix(k, prefix) {
			out[k[len(prefix):]] = v
		}
	}
	return out
}

// NewChain reads a connector config's transforms and predicates, checks
// them as Kafka's ConnectorConfig does (the first problem is the error,
// with Kafka's message), and configures every stage.
func NewChain(props map[string]string) (*Chain, error) {
	if _, err := BaseConfigDef().Parse(props); err != nil {
		return nil, err
	}
	enriched, err := EnrichConfigDef(props)
	if err != nil {
		return nil, err
	}
	if _, err := enriched.Parse(props); err != nil {
		return nil, err
	}
	c := &Chain{}
	for _, alias := range aliases(props, TransformsConfig) {
		s, err := newStage(props, alias)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.stages = append(c.stages, s)
	}
	return c, nil
}

func newStage(props map[string]string, alias string) (stage, error) {
	prefix := TransformsConfig + "." + alias + "."
	plugin, ok := LookupTransform(props[prefix+"type"])
	if !ok {
		return stage{}, fmt.Errorf("Class %s could not be found.", props[prefix+"type"])
	}
	s := stage{alias: alias, class: plugin.Class, transform: plugin.New()}
	own := withPrefix(props, prefix)
	predicateAlias, hasPredicate := own[predicateConfig]
	negate := own[negateConfig]
	delete(own, predicateConfig)
	delete(own, negateConfig)
	delete(own, "type")
	if err := refuseUnknown(s.transform.Config(), own, prefix, plugin.Class); err != nil {
		return stage{}, err
	}
	if err := s.transform.Configure(own); err != nil {
		return stage{}, fmt.Errorf("transforms.%s: %w", alias, err)
	}
	if !hasPredicate {
		return s, nil
	}
	s.negate = strings.EqualFold(strings.TrimSpace(negate), "true")
	pprefix := PredicatesConfig + "." + predicateAlias + "."
	pplugin, ok := LookupPredicate(props[pprefix+"type"])
	if !ok {
		s.transform.Close()
		return stage{}, fmt.Errorf("Class %s could not be found.", props[pprefix+"type"])
	}
	s.predicate = pplugin.New()
	pprops := withPrefix(props, pprefix)
	delete(pprops, "type")
	if err := refuseUnknown(s.predicate.Config(), pprops, pprefix, pplugin.Class); err != nil {
		s.transform.Close()
		return stage{}, err
	}
	if err := s.predicate.Configure(pprops); err != nil {
		s.transform.Close()
		return stage{}, fmt.Errorf("predicates.%s: %w", predicateAlias, err)
	}
	return s, nil
}

// refuseUnknown fails on an option the transform or predicate does not
// define: Kafka only logs such a key as unused, but a misspelt option
// silently ignored is a transform that does not do what its config says.
func refuseUnknown(def *connect.ConfigDef, props map[string]string, prefix, class string) error {
	var unknown []string
	for k := range props {
		if _, ok := def.Key(k); !ok {
			unknown = append(unknown, prefix+k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	var known []string
	for _, k := range def.Keys() {
		known = append(known, k.Name)
	}
	has := "it has no configs"
	if len(known) > 0 {
		has = "its configs: " + strings.Join(known, ", ")
	}
	return fmt.Errorf("%s: not a config of %s (%s)", strings.Join(unknown, ", "), class, has)
}

// Apply runs the record through each stage whose predicate allows it;
// keep is false when a stage dropped it. An error names the stage and
// wraps the transform's (connect.ErrData for records that do not fit).
func (c *Chain) Apply(r connect.Record) (connect.Record, bool, error) {
	for _, s := range c.stages {
		if s.predicate != nil {
			match, err := s.predicate.Test(r)
			if err != nil {
				return r, false, fmt.Errorf("transforms.%s: predicate: %w", s.alias, err)
			}
			if match == s.negate {
				continue
			}
		}
		out, keep, err := s.transform.Apply(r)
		if err != nil {
			return r, false, fmt.Errorf("transforms.%s (%s): %w", s.alias, s.class, err)
		}
		if !keep {
			return connect.Record{}, false, nil
		}
		r = out
	}
	return r, true, nil
}

// Len is the number of stages.
func (c *Chain) Len() int { return len(c.stages) }

// Close closes every transform and predicate.
func (c *Chain) Close() error {
	var errs []error
	for _, s := range c.stages {
		errs = append(errs, s.transform.Close())
		if s.predicate != nil {
			errs = append(errs, s.predicate.Close())
		}
	}
	return errors.Join(errs...)
}
