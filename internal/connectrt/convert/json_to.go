package convert

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/connect"
)

// envelopeError is Kafka's message for a record that is not an envelope
// while schemas.enable is on.
const envelopeError = `JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional fields.` +
	` If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration.`

// ToConnectData reads JSON written by FromConnectData (or by Kafka's
// JsonConverter); nil or empty data is a null value with no schema (a
// tombstone). Input that does not match its schema is an error, never a
// guess: where Kafka's Jackson would read a string as 0 for an integer
// field, or truncate 1.5 to 1, this refuses the record.
func (c *JSONConverter) ToConnectData(_ string, _ connect.Headers, data []byte) (*connect.Schema, any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, nil
	}
	if !json.Valid(data) {
		if fixed, changed := stripLeadingZeros(data); changed {
			data = fixed
		}
	}
	if !c.schemasEnable {
		node, err := parseJSON(data)
		if err != nil {
			return nil, nil, err
		}
		v, err := c.toConnect(nil, node)
		return nil, v, err
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(data, &env); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, nil, dataErrorf("%s", envelopeError)
		}
		return nil, nil, serializationError(err)
	}
	rawSchema, hasSchema := env["schema"]
	rawPayload, hasPayload := env["payload"]
	if len(env) != 2 || !hasSchema || !hasPayload {
		return nil, nil, dataErrorf("%s", envelopeError)
	}
	schema, err := c.schemaOf(rawSchema)
	if err != nil {
		return nil, nil, err
	}
	payload, err := parseJSON(rawPayload)
	if err != nil {
		return nil, nil, err
	}
	v, err := c.toConnect(schema, payload)
	if err != nil {
		return nil, nil, err
	}
	return schema, v, nil
}

func serializationError(err error) error {
	return dataErrorf("Converting byte[] to Kafka Connect data failed due to serialization error: %v", err)
}

// parseJSON reads one JSON value with its numbers as text; anything but
// white space after it is an error.
func parseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, serializationError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, serializationError(errors.New("data after the JSON value"))
	}
	return v, nil
}

// schemaOf reads the envelope's schema, from the cache when its text was
// seen before.
func (c *JSONConverter) schemaOf(raw json.RawMessage) (*connect.Schema, error) {
	key := string(raw)
	if s, ok := c.toConnectSchema.get(key); ok {
		return s, nil
	}
	node, err := parseJSON(raw)
	if err != nil {
		return nil, err
	}
	s, err := c.asConnectSchema(node)
	if err != nil {
		return nil, err
	}
	c.toConnectSchema.put(key, s)
	return s, nil
}

// jsonSchemaTypes maps JsonSchema's type names back.
var jsonSchemaTypes = func() map[string]connect.Type {
	m := map[string]connect.Type{}
	for t, name := range jsonTypeNames {
		m[name] = t
	}
	return m
}()

// asConnectSchema reads a schema as Kafka's JsonConverter.asConnectSchema.
func (c *JSONConverter) asConnectSchema(node any) (*connect.Schema, error) {
	if node == nil {
		return nil, nil
	}
	obj, _ := node.(map[string]any)
	typeName, ok := obj["type"].(string)
	if !ok {
		return nil, dataErrorf("Schema must contain 'type' field")
	}
	t, ok := jsonSchemaTypes[typeName]
	if !ok {
		return nil, dataErrorf("Unknown schema type: %s", typeName)
	}
	s := &connect.Schema{Type: t}
	if err := c.readNested(s, obj); err != nil {
		return nil, err
	}
	if err := readSchemaMeta(s, obj); err != nil {
		return nil, err
	}
	if def, ok := obj["default"]; ok {
		v, err := c.toConnect(s, def)
		if err != nil {
			return nil, fmt.Errorf("schema default: %w", err)
		}
		s.Default = v
	}
	return s, nil
}

func (c *JSONConverter) readNested(s *connect.Schema, obj map[string]any) error {
	var err error
	switch s.Type {
	case connect.Array:
		if obj["items"] == nil {
			return dataErrorf("Array schema did not specify the element type")
		}
		s.ValueSchema, err = c.asConnectSchema(obj["items"])
	case connect.Map:
		if obj["keys"] == nil {
			return dataErrorf("Map schema did not specify the key type")
		}
		if obj["values"] == nil {
			return dataErrorf("Map schema did not specify the value type")
		}
		if s.KeySchema, err = c.asConnectSchema(obj["keys"]); err != nil {
			return err
		}
		s.ValueSchema, err = c.asConnectSchema(obj["values"])
	case connect.Struct_:
		err = c.readFields(s, obj)
	}
	return err
}

func (c *JSONConverter) readFields(s *connect.Schema, obj map[string]any) error {
	fields, ok := obj["fields"].([]any)
	if !ok {
		return dataErrorf(`Struct schema's "fields" argument is not an array.`)
	}
	for _, f := range fields {
		fobj, _ := f.(map[string]any)
		name, ok := fobj["field"].(string)
		if !ok {
			return dataErrorf("Struct schema's field name not specified properly")
		}
		if _, dup := s.Field(name); dup {
			return dataErrorf("Cannot create field because of field name duplication %s", name)
		}
		fs, err := c.asConnectSchema(fobj)
		if err != nil {
			return err
		}
		s.Fields = append(s.Fields, connect.Field{Name: name, Index: len(s.Fields), Schema: fs})
	}
	return nil
}

// readSchemaMeta reads optional, name, version, doc and parameters; like
// Kafka it skips a member of the wrong JSON type, except parameters'
// values, which must be strings.
func readSchemaMeta(s *connect.Schema, obj map[string]any) error {
	s.Optional, _ = obj["optional"].(bool)
	s.Name, _ = obj["name"].(string)
	if n, ok := obj["version"].(json.Number); ok {
		if v, err := strconv.ParseInt(string(n), 10, 32); err == nil {
			v32 := int32(v)
			s.Version = &v32
		}
	}
	s.Doc, _ = obj["doc"].(string)
	params, ok := obj["parameters"].(map[string]any)
	if !ok {
		return nil
	}
	s.Parameters = make(map[string]string, len(params))
	for k, v := range params {
		str, ok := v.(string)
		if !ok {
			return dataErrorf("Schema parameters must have string values.")
		}
		s.Parameters[k] = str
	}
	return nil
}

// nodeType names a JSON value's kind as Jackson's JsonNodeType does, for
// Kafka's messages.
func nodeType(v any) string {
	switch v.(type) {
	case nil:
		return "NULL"
	case bool:
		return "BOOLEAN"
	case json.Number:
		return "NUMBER"
	case string:
		return "STRING"
	case []any:
		return "ARRAY"
	case map[string]any:
		return "OBJECT"
	}
	return "MISSING"
}

// toConnect converts a JSON value as Kafka's JsonConverter.convertToConnect.
func (c *JSONConverter) toConnect(s *connect.Schema, node any) (any, error) {
	if s == nil {
		return schemalessToConnect(node)
	}
	if node == nil {
		switch {
		case s.Default != nil && c.replaceNull:
			return s.Default, nil
		case s.Optional:
			return nil, nil
		}
		return nil, dataErrorf("Invalid null value for required %s field", s.Type)
	}
	if name := logicalName(s); name != "" {
		return logicalToConnect(s, name, node)
	}
	switch s.Type {
	case connect.Array:
		return c.arrayToConnect(s, node)
	case connect.Map:
		return c.mapToConnect(s, node)
	case connect.Struct_:
		return c.structToConnect(s, node)
	}
	return primitiveToConnect(s.Type, node)
}

// schemalessToConnect reads plain JSON: integers as int64, other numbers
// as float64, objects as map[string]any.
func schemalessToConnect(node any) (any, error) {
	switch n := node.(type) {
	case json.Number:
		if isIntegral(string(n)) {
			return primitiveToConnect(connect.Int64, n)
		}
		return primitiveToConnect(connect.Float64, n)
	case []any:
		out := make([]any, len(n))
		for i, item := range n {
			v, err := schemalessToConnect(item)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(n))
		for k, item := range n {
			v, err := schemalessToConnect(item)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	}
	return node, nil // nil, bool, string
}

// isIntegral says whether Jackson reads a number as an integer: no point,
// no exponent.
func isIntegral(text string) bool { return !strings.ContainsAny(text, ".eE") }

func wrongNode(t connect.Type, node any) error {
	return dataErrorf("Invalid JSON for %s: found %s", t, nodeType(node))
}

func primitiveToConnect(t connect.Type, node any) (any, error) {
	switch t {
	case connect.Boolean:
		if b, ok := node.(bool); ok {
			return b, nil
		}
	case connect.String:
		if s, ok := node.(string); ok {
			return s, nil
		}
	case connect.Bytes:
		if s, ok := node.(string); ok {
			return decodeBase64(s)
		}
	case connect.Int8, connect.Int16, connect.Int32, connect.Int64:
		if n, ok := node.(json.Number); ok {
			return integerToConnect(t, string(n))
		}
	case connect.Float32, connect.Float64:
		return floatToConnect(t, node)
	}
	return nil, wrongNode(t, node)
}

// decodeBase64 reads bytes as Jackson does: standard base64, padded or not.
func decodeBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if b, err2 := base64.RawStdEncoding.DecodeString(s); err2 == nil {
			return b, nil
		}
		return nil, dataErrorf("Invalid bytes field: %v", err)
	}
	return b, nil
}

var intBits = map[connect.Type]int{connect.Int8: 8, connect.Int16: 16, connect.Int32: 32, connect.Int64: 64}

// integerToConnect reads an integer of t's width; a number with a
// fraction, or out of range, is an error. 1.0 and 1e2 are integers, as
// Jackson's intValue reads them.
func integerToConnect(t connect.Type, text string) (any, error) {
	n, err := strconv.ParseInt(text, 10, intBits[t])
	if err != nil {
		var ok bool
		if n, ok = integralValue(text, intBits[t]); !ok {
			return nil, dataErrorf("Invalid value %s for %s: not an integer in range", text, t)
		}
	}
	switch t {
	case connect.Int8:
		return int8(n), nil
	case connect.Int16:
		return int16(n), nil
	case connect.Int32:
		return int32(n), nil
	}
	return n, nil
}

// integralValue reads a number with a point or an exponent when its value
// is an integer that fits in bits. The exponent is checked before any
// power of ten is computed: 1e999999999 must not cost a gigabyte.
func integralValue(text string, bits int) (int64, bool) {
	u, scale, ok := parseBigDecimal(text)
	if !ok {
		return 0, false
	}
	if u.Sign() == 0 {
		return 0, true
	}
	digits := len(new(big.Int).Abs(u).String())
	if scale < -19 || scale > digits {
		return 0, false
	}
	pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(scale))), nil)
	if scale < 0 {
		u.Mul(u, pow)
	} else {
		var rem big.Int
		if u.QuoRem(u, pow, &rem); rem.Sign() != 0 {
			return 0, false
		}
	}
	if !u.IsInt64() {
		return 0, false
	}
	n := u.Int64()
	if bits < 64 && (n < -(1<<(bits-1)) || n >= 1<<(bits-1)) {
		return 0, false
	}
	return n, true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// floatToConnect reads a number, or the strings Jackson writes for the
// non-finite values.
func floatToConnect(t connect.Type, node any) (any, error) {
	var f float64
	switch n := node.(type) {
	case json.Number:
		var err error
		if f, err = strconv.ParseFloat(string(n), 64); err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, dataErrorf("Invalid value %s for %s", n, t)
		}
	case string:
		switch n {
		case "NaN":
			f = math.NaN()
		case "Infinity":
			f = math.Inf(1)
		case "-Infinity":
			f = math.Inf(-1)
		default:
			return nil, wrongNode(t, node)
		}
	default:
		return nil, wrongNode(t, node)
	}
	if t == connect.Float32 {
		return float32(f), nil
	}
	return f, nil
}

func logicalToConnect(s *connect.Schema, name string, node any) (any, error) {
	switch name {
	case connect.DecimalName:
		return decimalToConnect(s, node)
	case connect.DateName, connect.TimeName:
		n, ok := node.(json.Number)
		v, err := strconv.ParseInt(string(n), 10, 32)
		if !ok || err != nil {
			return nil, dataErrorf("Invalid type for %s, underlying representation should be integer but was %s", shortLogical(name), nodeType(node))
		}
		if name == connect.DateName {
			return daysToDate(v), nil
		}
		return millisToTime(v), nil
	}
	n, ok := node.(json.Number)
	v, err := strconv.ParseInt(string(n), 10, 64)
	if !ok || err != nil {
		return nil, dataErrorf("Invalid type for Timestamp, underlying representation should be integral but was %s", nodeType(node))
	}
	return millisToTime(v), nil
}

// decimalToConnect reads a Decimal written as a number (NUMERIC: its scale
// is the number's, as Kafka's decimalValue) or as base64 bytes.
func decimalToConnect(s *connect.Schema, node any) (any, error) {
	switch n := node.(type) {
	case json.Number:
		u, scale, ok := parseBigDecimal(string(n))
		if !ok {
			return nil, dataErrorf("Invalid number %s for Decimal field", n)
		}
		return connect.Decimal{Unscaled: u, Scale: scale}, nil
	case string:
		b, err := base64.StdEncoding.DecodeString(n)
		if err != nil {
			return nil, dataErrorf("Invalid bytes for Decimal field: %v", err)
		}
		return decimalFromBytes(s, b)
	}
	return nil, dataErrorf("Invalid type for Decimal, underlying representation should be numeric or bytes but was %s", nodeType(node))
}

func (c *JSONConverter) arrayToConnect(s *connect.Schema, node any) (any, error) {
	items, ok := node.([]any)
	if !ok {
		return nil, dataErrorf("Arrays should be encoded as JSON arrays, but found %s", nodeType(node))
	}
	out := make([]any, len(items))
	for i, item := range items {
		v, err := c.toConnect(s.ValueSchema, item)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (c *JSONConverter) mapToConnect(s *connect.Schema, node any) (any, error) {
	out := map[any]any{}
	if s.KeySchema != nil && s.KeySchema.Type == connect.String {
		obj, ok := node.(map[string]any)
		if !ok {
			return nil, dataErrorf("Maps with string fields should be encoded as JSON objects, but found %s", nodeType(node))
		}
		for k, item := range obj {
			v, err := c.toConnect(s.ValueSchema, item)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	}
	pairs, ok := node.([]any)
	if !ok {
		return nil, dataErrorf("Maps with non-string fields should be encoded as JSON array of tuples, but found %s", nodeType(node))
	}
	for _, p := range pairs {
		if c.mapEntriesAsObjects {
			if entry, isObj := p.(map[string]any); isObj {
				p = []any{entry["key"], entry["value"]}
			}
		}
		pair, ok := p.([]any)
		if !ok {
			return nil, dataErrorf("Found invalid map entry instead of array tuple: %s", nodeType(p))
		}
		if len(pair) != 2 {
			return nil, dataErrorf("Found invalid map entry, expected length 2 but found :%d", len(pair))
		}
		k, err := c.toConnect(s.KeySchema, pair[0])
		if err != nil {
			return nil, err
		}
		if !canBeMapKey(k) {
			return nil, dataErrorf("map key of type %T cannot be a Go map key", k)
		}
		v, err := c.toConnect(s.ValueSchema, pair[1])
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// canBeMapKey says whether a Connect value can be a Go map key: bytes,
// arrays and maps cannot (Kafka's Java maps take them by identity).
func canBeMapKey(v any) bool {
	switch v.(type) {
	case []byte, []any, map[any]any, map[string]any:
		return false
	}
	return true
}

func (c *JSONConverter) structToConnect(s *connect.Schema, node any) (any, error) {
	obj, ok := node.(map[string]any)
	if !ok {
		return nil, dataErrorf("Structs should be encoded as JSON objects, but found %s", nodeType(node))
	}
	st := connect.NewStructValue(s)
	for _, f := range s.Fields {
		v, err := c.toConnect(f.Schema, obj[f.Name])
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		if err := st.Put(f.Name, v); err != nil {
			return nil, err
		}
	}
	return st, nil
}
