package convert

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/hamba/avro/v2"

	"github.com/samsa-io/samsa/connect"
)

// avroToConnectSchema is the Connect schema of an Avro schema, as
// Confluent's AvroData.toConnectSchema: connect.* properties restore what
// Avro cannot say (INT8/INT16, names, versions, docs, parameters); a
// record is a STRUCT, a union with null an optional schema, an array of
// key/value MapEntry records a MAP, an enum a STRING, a fixed BYTES.
// Unions of several non-null types and recursive records are refused.
func avroToConnectSchema(hs avro.Schema, optional bool, inProgress map[string]bool) (*connect.Schema, error) {
	hs = deref(hs)
	var s *connect.Schema
	var err error
	switch x := hs.(type) {
	case *avro.UnionSchema:
		return avroUnionToConnect(x, inProgress)
	case *avro.RecordSchema:
		s, err = avroRecordToConnect(x, inProgress)
	case *avro.ArraySchema:
		s, err = avroArrayToConnect(x, inProgress)
	case *avro.MapSchema:
		var values *connect.Schema
		values, err = avroToConnectSchema(x.Values(), false, inProgress)
		s = connect.MapOf(connect.StringSchema, values)
	case *avro.EnumSchema:
		s = &connect.Schema{Type: connect.String}
	case *avro.FixedSchema:
		s = avroBytesToConnect(x.Logical())
	case *avro.PrimitiveSchema:
		s, err = avroPrimitiveToConnect(x)
	default:
		err = dataErrorf("Avro type %s is not mapped to Connect", hs.Type())
	}
	if err != nil {
		return nil, err
	}
	if err := avroMetaToConnect(s, hs); err != nil {
		return nil, err
	}
	s.Optional = optional
	return s, nil
}

func avroUnionToConnect(u *avro.UnionSchema, inProgress map[string]bool) (*connect.Schema, error) {
	if !u.Nullable() {
		return nil, dataErrorf("Avro union %s is not mapped to Connect: only a union of null and one type is", u)
	}
	_, typ := u.Indices()
	return avroToConnectSchema(u.Types()[typ], true, inProgress)
}

func avroRecordToConnect(rs *avro.RecordSchema, inProgress map[string]bool) (*connect.Schema, error) {
	if inProgress[rs.FullName()] {
		return nil, dataErrorf("recursive Avro record %s is not mapped to Connect", rs.FullName())
	}
	inProgress[rs.FullName()] = true
	defer delete(inProgress, rs.FullName())
	name := rs.FullName()
	if rs.Namespace() == avroNamespace && strings.HasPrefix(rs.Name(), avroDefaultName) {
		name = ""
	}
	b := connect.NewStruct(name)
	for _, f := range rs.Fields() {
		fs, err := avroToConnectSchema(f.Type(), false, inProgress)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name(), err)
		}
		if f.HasDefault() && f.Default() != nil {
			if fs.Default, err = connectDefault(fs, f.Default()); err != nil {
				return nil, fmt.Errorf("field %q default: %w", f.Name(), err)
			}
		}
		b.Field(f.Name(), fs)
	}
	return b.Build()
}

func avroArrayToConnect(as *avro.ArraySchema, inProgress map[string]bool) (*connect.Schema, error) {
	if entry, ok := isMapEntry(as.Items()); ok {
		k, err := avroToConnectSchema(entry.Fields()[0].Type(), false, inProgress)
		if err != nil {
			return nil, err
		}
		v, err := avroToConnectSchema(entry.Fields()[1].Type(), false, inProgress)
		if err != nil {
			return nil, err
		}
		return connect.MapOf(k, v), nil
	}
	items, err := avroToConnectSchema(as.Items(), false, inProgress)
	if err != nil {
		return nil, err
	}
	return connect.ArrayOf(items), nil
}

func avroBytesToConnect(logical avro.LogicalSchema) *connect.Schema {
	if d, ok := logical.(*avro.DecimalLogicalSchema); ok {
		s := connect.DecimalSchema(d.Scale())
		if d.Precision() != avroDecimalPrecision {
			s.Parameters[avroPrecisionParameter] = strconv.Itoa(d.Precision())
		}
		return s
	}
	return &connect.Schema{Type: connect.Bytes}
}

func avroPrimitiveToConnect(ps *avro.PrimitiveSchema) (*connect.Schema, error) {
	logical := ""
	if l := ps.Logical(); l != nil {
		logical = string(l.Type())
	}
	switch ps.Type() {
	case avro.Int:
		switch {
		case logical == "date":
			return connect.DateSchema(), nil
		case logical == "time-millis":
			return connect.TimeSchema(), nil
		case ps.Prop("connect.type") == "int8":
			return &connect.Schema{Type: connect.Int8}, nil
		case ps.Prop("connect.type") == "int16":
			return &connect.Schema{Type: connect.Int16}, nil
		}
		return &connect.Schema{Type: connect.Int32}, nil
	case avro.Long:
		if logical == "timestamp-millis" {
			return connect.TimestampSchema(), nil
		}
		return &connect.Schema{Type: connect.Int64}, nil
	case avro.Float:
		return &connect.Schema{Type: connect.Float32}, nil
	case avro.Double:
		return &connect.Schema{Type: connect.Float64}, nil
	case avro.Boolean:
		return &connect.Schema{Type: connect.Boolean}, nil
	case avro.String:
		return &connect.Schema{Type: connect.String}, nil
	case avro.Bytes:
		return avroBytesToConnect(ps.Logical()), nil
	}
	return nil, dataErrorf("Avro type %s is not mapped to Connect", ps.Type())
}

// avroMetaToConnect restores connect.name, connect.version, connect.doc
// and connect.parameters.
func avroMetaToConnect(s *connect.Schema, hs avro.Schema) error {
	ps, ok := hs.(avro.PropertySchema)
	if !ok {
		return nil
	}
	if name, ok := ps.Prop("connect.name").(string); ok {
		s.Name = name
	}
	if v, ok := numberProp(ps.Prop("connect.version")); ok {
		s.Version = &v
	}
	if doc, ok := ps.Prop("connect.doc").(string); ok {
		s.Doc = doc
	}
	if params, ok := ps.Prop("connect.parameters").(map[string]any); ok {
		merged := map[string]string{}
		for k, v := range params {
			str, ok := v.(string)
			if !ok {
				return dataErrorf("connect.parameters values must be strings")
			}
			merged[k] = str
		}
		maps.Copy(merged, s.Parameters) // the logical type's own win
		s.Parameters = merged
	}
	return nil
}

func numberProp(v any) (int32, bool) {
	switch n := v.(type) {
	case float64:
		return int32(n), true
	case int:
		return int32(n), true
	case int64:
		return int32(n), true
	case json.Number:
		i, err := strconv.ParseInt(string(n), 10, 32)
		return int32(i), err == nil
	}
	return 0, false
}

// connectDefault is an Avro field default (as hamba parsed it) as a value
// of the Connect schema.
func connectDefault(s *connect.Schema, v any) (any, error) {
	var node any
	switch x := v.(type) {
	case []byte:
		node = latin1(x)
	case string:
		node = x
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if node, err = parseJSON(raw); err != nil {
			return nil, err
		}
	}
	return connectFromAvroJSON(s, node)
}

// connectFromAvro is a value in Avro's JSON encoding under hs as a value
// of cs (the Connect schema avroToConnectSchema gave for hs).
func connectFromAvro(hs avro.Schema, cs *connect.Schema, node any) (any, error) {
	hs = deref(hs)
	if u, ok := hs.(*avro.UnionSchema); ok {
		if node == nil {
			return nil, nil
		}
		m, ok := node.(map[string]any)
		if !ok || len(m) != 1 {
			return nil, dataErrorf("an Avro union value must be null or a one-member object")
		}
		for name, inner := range m {
			for _, t := range u.Types() {
				if avroBranchName(t) == name {
					return connectFromAvro(t, cs, inner)
				}
			}
			return nil, dataErrorf("Avro union has no branch %q", name)
		}
	}
	switch x := hs.(type) {
	case *avro.RecordSchema:
		return connectRecordFromAvro(x, cs, node)
	case *avro.ArraySchema:
		if entry, ok := isMapEntry(x.Items()); ok {
			return connectMapEntriesFromAvro(entry, cs, node)
		}
		items, ok := node.([]any)
		if !ok {
			return nil, dataErrorf("an Avro array value must be an array")
		}
		out := make([]any, len(items))
		for i, item := range items {
			var err error
			if out[i], err = connectFromAvro(x.Items(), cs.ValueSchema, item); err != nil {
				return nil, err
			}
		}
		return out, nil
	case *avro.MapSchema:
		m, ok := node.(map[string]any)
		if !ok {
			return nil, dataErrorf("an Avro map value must be an object")
		}
		out := make(map[any]any, len(m))
		for k, item := range m {
			v, err := connectFromAvro(x.Values(), cs.ValueSchema, item)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	}
	return connectFromAvroJSON(cs, node)
}

func connectRecordFromAvro(rs *avro.RecordSchema, cs *connect.Schema, node any) (any, error) {
	m, ok := node.(map[string]any)
	if !ok {
		return nil, dataErrorf("an Avro record value must be an object")
	}
	st := connect.NewStructValue(cs)
	for i, f := range rs.Fields() {
		v, err := connectFromAvro(f.Type(), cs.Fields[i].Schema, m[f.Name()])
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name(), err)
		}
		if err := st.Put(f.Name(), v); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func connectMapEntriesFromAvro(entry *avro.RecordSchema, cs *connect.Schema, node any) (any, error) {
	items, ok := node.([]any)
	if !ok {
		return nil, dataErrorf("an Avro array value must be an array")
	}
	out := make(map[any]any, len(items))
	for _, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, dataErrorf("a map entry must be an object")
		}
		k, err := connectFromAvro(entry.Fields()[0].Type(), cs.KeySchema, m["key"])
		if err != nil {
			return nil, err
		}
		if !canBeMapKey(k) {
			return nil, dataErrorf("map key of type %T cannot be a Go map key", k)
		}
		v, err := connectFromAvro(entry.Fields()[1].Type(), cs.ValueSchema, m["value"])
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// connectFromAvroJSON reads a primitive or logical value of cs from its
// Avro JSON form (bytes as latin-1 strings).
func connectFromAvroJSON(cs *connect.Schema, node any) (any, error) {
	if node == nil {
		if cs.Optional {
			return nil, nil
		}
		return nil, dataErrorf("Invalid null value for required %s field", cs.Type)
	}
	switch logicalName(cs) {
	case connect.DecimalName:
		str, ok := node.(string)
		if !ok {
			return nil, wrongNode(cs.Type, node)
		}
		b, err := fromLatin1(str)
		if err != nil {
			return nil, dataErrorf("%v", err)
		}
		return decimalFromBytes(cs, b)
	case connect.DateName, connect.TimeName, connect.TimestampName:
		n, ok := node.(json.Number)
		ms, err := strconv.ParseInt(string(n), 10, 64)
		if !ok || err != nil {
			return nil, wrongNode(cs.Type, node)
		}
		if cs.Name == connect.DateName {
			return daysToDate(ms), nil
		}
		return millisToTime(ms), nil
	}
	if cs.Type == connect.Bytes {
		str, ok := node.(string)
		if !ok {
			return nil, wrongNode(cs.Type, node)
		}
		b, err := fromLatin1(str)
		if err != nil {
			return nil, dataErrorf("%v", err)
		}
		return b, nil
	}
	return primitiveToConnect(cs.Type, node)
}
