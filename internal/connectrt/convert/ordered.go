package convert

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// obj is a JSON object whose members keep the order they are added in:
// schema texts read best (and diff stably) in the order their format's
// own tools write them.
type obj []member

type member struct {
	key string
	val any
}

func (o obj) with(key string, val any) obj { return append(o, member{key, val}) }

func (o obj) get(key string) (any, bool) {
	for _, m := range o {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

// appendOrdered writes obj, []any, string, bool, the integer types,
// float64, json.Number, json.RawMessage, map[string]string and nil.
func appendOrdered(b []byte, v any) ([]byte, error) {
	var err error
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case obj:
		b = append(b, '{')
		for i, m := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, m.key)
			b = append(b, ':')
			if b, err = appendOrdered(b, m.val); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for i, item := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendOrdered(b, item); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]string:
		o := obj{}
		for _, k := range sortedStrings(x) {
			o = o.with(k, x[k])
		}
		return appendOrdered(b, o)
	case string:
		return appendJSONString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case float64:
		return appendJavaDouble(b, x), nil
	case json.Number:
		return append(b, x...), nil
	case json.RawMessage:
		return append(b, x...), nil
	}
	return nil, fmt.Errorf("cannot write %T as JSON", v)
}

func orderedText(v any) (string, error) {
	b, err := appendOrdered(nil, v)
	return string(b), err
}
