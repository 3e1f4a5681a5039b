package transforms

import (
	"fmt"
	"strings"

	"github.com/samsa-io/samsa/connect"
)

// KIP-821's field paths: field.syntax.version V1 names a top-level field
// as written; V2 reads dots as nesting, with backticks around a name that
// holds dots (`a.b`.c) and a backslash before a backtick that belongs to
// the name.

const fieldSyntaxVersionConfig = "field.syntax.version"

var fieldSyntaxVersionKey = connect.ConfigKey{
	Name: fieldSyntaxVersionConfig, Type: connect.TypeString, Default: "V1",
	Validator:  caseInsensitiveOneOf{"V1", "V2"},
	Importance: connect.High,
	Documentation: "Defines the version of the syntax to access fields. If set to `V1`, then the field paths are limited to access the elements at the root level of the struct or map. " +
		"If set to `V2`, the syntax will support accessing nested elements. To access nested elements, dotted notation is used. " +
		"If dots are already included in the field name, then backtick pairs can be used to wrap field names containing dots. " +
		"E.g. to access the subfield `baz` from a field named \"foo.bar\" in a struct/map the following format can be used to access its elements: \"`foo.bar`.baz\".",
}

// caseInsensitiveOneOf is Kafka's CaseInsensitiveValidString, with its
// message.
type caseInsensitiveOneOf []string

func (c caseInsensitiveOneOf) Validate(_ string, v any) error {
	s, _ := v.(string)
	for _, x := range c {
		if strings.EqualFold(x, s) {
			return nil
		}
	}
	return fmt.Errorf("String must be one of (case insensitive): %s", strings.Join(c, ", "))
}

type fieldPath struct{ steps []string }

func newFieldPath(text, version string) (fieldPath, error) {
	if strings.EqualFold(version, "V1") {
		return fieldPath{steps: []string{text}}, nil
	}
	steps, err := parseFieldPathV2(text)
	return fieldPath{steps: steps}, err
}

func parseFieldPathV2(path string) ([]string, error) {
	var steps []string
	i := 0
	for i < len(path) {
		if path[i] != '`' {
			dot := strings.IndexByte(path[i:], '.')
			if dot < 0 {
				steps = append(steps, path[i:])
				i = len(path)
				break
			}
			steps = append(steps, path[i:i+dot])
			i += dot + 1
			continue
		}
		step, next, err := backtickStep(path, i)
		if err != nil {
			return nil, err
		}
		steps = append(steps, step)
		i = next
	}
	if strings.HasSuffix(path, ".") {
		steps = append(steps, "")
	}
	if len(steps) == 0 {
		steps = []string{""}
	}
	return steps, nil
}

// backtickStep reads a `quoted` step starting at the backtick at open; it
// ends at a backtick followed by a dot or the end of the path that no
// backslash escapes.
func backtickStep(path string, open int) (string, int, error) {
	var b strings.Builder
	start := open + 1
	i := start
	for {
		rel := strings.IndexByte(path[i:], '`')
		if rel < 0 {
			return "", 0, incompleteBacktick(path, open)
		}
		i += rel
		escaped := path[i-1] == '\\'
		if i >= len(path)-1 {
			if escaped {
				return "", 0, incompleteBacktick(path, open)
			}
			b.WriteString(path[start:i])
			return b.String(), i + 1, nil
		}
		if path[i+1] != '.' {
			i++
			continue
		}
		if escaped {
			b.WriteString(path[start : i-1])
			b.WriteByte('`')
			i++
			start = i
			continue
		}
		b.WriteString(path[start:i])
		return b.String(), i + 2, nil
	}
}

func incompleteBacktick(path string, at int) error {
	return fmt.Errorf("Incomplete backtick pair in path: [%s], consider adding a backslash before backtick at position %d to escape it", path, at)
}

func (p fieldPath) last() string { return p.steps[len(p.steps)-1] }

// fieldFrom finds the field the path names in a schema, or false.
func (p fieldPath) fieldFrom(s *connect.Schema) (connect.Field, bool) {
	if s == nil {
		return connect.Field{}, false
	}
	cur := s
	for _, step := range p.steps[:len(p.steps)-1] {
		f, ok := cur.Field(step)
		if !ok {
			return connect.Field{}, false
		}
		cur = f.Schema
	}
	return cur.Field(p.last())
}

// valueFromStruct is the value at the path, nil when a step is missing.
func (p fieldPath) valueFromStruct(st *connect.Struct, withDefault bool) (any, error) {
	cur := st
	for _, step := range p.steps[:len(p.steps)-1] {
		f, ok := cur.Schema().Field(step)
		if !ok {
			return nil, nil
		}
		next, err := requireStructOrNil(cur.GetField(f), "nested field access")
		if err != nil || next == nil {
			return nil, err
		}
		cur = next
	}
	f, ok := cur.Schema().Field(p.last())
	if !ok {
		return nil, nil
	}
	return fieldValue(cur, f, withDefault), nil
}

func (p fieldPath) valueFromMap(m map[string]any) (any, error) {
	cur := m
	for _, step := range p.steps[:len(p.steps)-1] {
		next, err := requireMapOrNil(cur[step], "nested field access")
		if err != nil || next == nil {
			return nil, err
		}
		cur = next
	}
	return cur[p.last()], nil
}
