package api

import "encoding/json"

// Kafka's entities never carry a JSON null where a list or an object is
// due: a connector without tasks has "tasks":[], a definition without
// dependents "dependents":[]. Go's nil slices and maps encode as null, so
// each entity with one encodes it as empty, whoever built it.

func (c ConnectorInfo) MarshalJSON() ([]byte, error) {
	type plain ConnectorInfo
	p := plain(c)
	p.Config = emptyMap(p.Config)
	p.Tasks = emptySlice(p.Tasks)
	return json.Marshal(p)
}

func (t TaskInfo) MarshalJSON() ([]byte, error) {
	type plain TaskInfo
	p := plain(t)
	p.Config = emptyMap(p.Config)
	return json.Marshal(p)
}

func (c ConnectorStateInfo) MarshalJSON() ([]byte, error) {
	type plain ConnectorStateInfo
	p := plain(c)
	p.Tasks = emptySlice(p.Tasks)
	return json.Marshal(p)
}

func (o ConnectorOffsets) MarshalJSON() ([]byte, error) {
	type plain ConnectorOffsets
	p := plain(o)
	p.Offsets = emptySlice(p.Offsets)
	return json.Marshal(p)
}

func (c ConfigKeyInfo) MarshalJSON() ([]byte, error) {
	type plain ConfigKeyInfo
	p := plain(c)
	p.Dependents = emptySlice(p.Dependents)
	return json.Marshal(p)
}

func (c ConfigValueInfo) MarshalJSON() ([]byte, error) {
	type plain ConfigValueInfo
	p := plain(c)
	p.RecommendedValues = emptySlice(p.RecommendedValues)
	p.Errors = emptySlice(p.Errors)
	return json.Marshal(p)
}

func (c ConfigInfos) MarshalJSON() ([]byte, error) {
	type plain ConfigInfos
	p := plain(c)
	p.Groups = emptySlice(p.Groups)
	p.Configs = emptySlice(p.Configs)
	return json.Marshal(p)
}

func emptySlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func emptyMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}
