package transforms

import (
	"errors"
	"strings"

	"github.com/samsa-io/samsa/connect"
)

// ReplaceField (Key and Value) drops fields (exclude, or keeps only
// include) and renames them (renames=old:new,...). The names Kafka 2.x
// used, whitelist and blacklist, are read when include and exclude are
// not given, as Kafka's translateDeprecatedConfigs.
type replaceField struct {
	side                   side
	exclude, include       map[string]bool
	renames, reverse       map[string]string
	replaceNullWithDefault bool
	cache                  schemaCache
}

func replaceFieldConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "exclude", Type: connect.TypeList, Default: []string{}, Importance: connect.Medium,
			Documentation: "Fields to exclude. This takes precedence over the fields to include."}).
		Define(connect.ConfigKey{Name: "include", Type: connect.TypeList, Default: []string{}, Importance: connect.Medium,
			Documentation: "Fields to include. If specified, only these fields will be used."}).
		Define(connect.ConfigKey{Name: "blacklist", Type: connect.TypeList, Default: nil, Importance: connect.Low,
			Documentation: "Deprecated. Use exclude instead."}).
		Define(connect.ConfigKey{Name: "whitelist", Type: connect.TypeList, Default: nil, Importance: connect.Low,
			Documentation: "Deprecated. Use include instead."}).
		Define(connect.ConfigKey{Name: "renames", Type: connect.TypeList, Default: []string{}, Importance: connect.Medium,
			Validator: connect.ValidatorFunc(func(_ string, v any) error {
				_, err := parseRenames(v.([]string))
				return err
			}),
			Documentation: "Field rename mappings."}).
		Define(replaceNullWithDefaultKey)
}

// parseRenames reads old:new pairs, splitting as Java's String.split
// (trailing empty parts dropped), so "a:" and "a:b:c" are refused.
func parseRenames(mappings []string) (map[string]string, error) {
	out := make(map[string]string, len(mappings))
	for _, m := range mappings {
		parts := javaSplit(m, ":")
		if len(parts) != 2 {
			return nil, errors.New("Invalid rename mapping: " + m)
		}
		out[parts[0]] = parts[1]
	}
	return out, nil
}

// javaSplit is Java's String.split(sep) for a literal separator: trailing
// empty strings are removed.
func javaSplit(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func (t *replaceField) Config() *connect.ConfigDef { return replaceFieldConfig() }

// translateDeprecated copies a deprecated name's value to its
// replacement when only the deprecated one is set.
func translateDeprecated(props map[string]string, pairs [][2]string) map[string]string {
	out := make(map[string]string, len(props))
	for k, v := range props {
		out[k] = v
	}
	for _, p := range pairs {
		target, old := p[0], p[1]
		if _, ok := out[target]; ok {
			continue
		}
		if v, ok := out[old]; ok {
			out[target] = v
		}
	}
	return out
}

func (t *replaceField) Configure(props map[string]string) error {
	props = translateDeprecated(props, [][2]string{{"include", "whitelist"}, {"exclude", "blacklist"}})
	c, err := parseConfig(replaceFieldConfig(), props)
	if err != nil {
		return err
	}
	t.exclude = setOf(c.List("exclude"))
	t.include = setOf(c.List("include"))
	t.renames, _ = parseRenames(c.List("renames"))
	t.reverse = make(map[string]string, len(t.renames))
	for k, v := range t.renames {
		t.reverse[v] = k
	}
	t.replaceNullWithDefault = c.Bool(replaceNullWithDefaultConfig)
	return nil
}

func setOf(l []string) map[string]bool {
	out := make(map[string]bool, len(l))
	for _, s := range l {
		out[s] = true
	}
	return out
}

func (t *replaceField) keep(name string) bool {
	return !t.exclude[name] && (len(t.include) == 0 || t.include[name])
}

func (t *replaceField) renamed(name string) string {
	if n, ok := t.renames[name]; ok {
		return n
	}
	return name
}

func (t *replaceField) original(name string) string {
	if n, ok := t.reverse[name]; ok {
		return n
	}
	return name
}

const replacePurpose = "field replacement"

func (t *replaceField) Apply(r connect.Record) (connect.Record, bool, error) {
	v := t.side.value(r)
	if v == nil {
		return r, true, nil
	}
	if t.side.schema(r) == nil {
		m, err := requireMap(v, replacePurpose)
		if err != nil {
			return r, false, err
		}
		out := make(map[string]any, len(m))
		for k, fv := range m {
			if t.keep(k) {
				out[t.renamed(k)] = fv
			}
		}
		return t.side.with(r, nil, out), true, nil
	}
	st, err := requireStruct(v, replacePurpose)
	if err != nil {
		return r, false, err
	}
	schema, err := t.cache.getOrBuild(st.Schema(), t.updatedSchema)
	if err != nil {
		return r, false, err
	}
	out, err := newStruct(schema, func(f connect.Field) (any, error) {
		orig, err := fieldOf(st, t.original(f.Name))
		if err != nil {
			return nil, err
		}
		return fieldValue(st, orig, t.replaceNullWithDefault), nil
	})
	if err != nil {
		return r, false, err
	}
	return t.side.with(r, schema, out), true, nil
}

func (t *replaceField) updatedSchema(in *connect.Schema) (*connect.Schema, error) {
	b := structBasics(in)
	for _, f := range in.Fields {
		if t.keep(f.Name) {
			b.field(t.renamed(f.Name), f.Schema)
		}
	}
	return b.build()
}

func (t *replaceField) Close() error { return nil }
