package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// OpType is an IncrementalAlterConfigs operation (KIP-339), numbered as on the wire.
type OpType int8

// Incremental alter operations.
const (
	OpSet      OpType = 0
	OpDelete   OpType = 1
	OpAppend   OpType = 2
	OpSubtract OpType = 3
)

// AlterOp is one operation of an IncrementalAlterConfigs resource.
type AlterOp struct {
	Name string
	Op   OpType
	// Value is the operand; nil is only allowed for OpDelete, as on the wire.
	Value *string
}

// ApplyIncremental applies ops to a resource's current dynamic configs (a topic's overrides,
// or a broker's dynamic configs) and returns the new set; current is not modified. The
// result is validated against the catalog, and refused where Samsa does not support it
// (CheckSupported). For broker resources, call ValidateDynamic on
// the result as well to enforce update modes.
//
// As in Kafka: a name may appear once per request and only DELETE may have a null value
// (INVALID_REQUEST); APPEND and SUBTRACT are only for list configs (INVALID_CONFIG, which
// is what Kafka returns although KIP-339 speaks of INVALID_REQUEST); APPEND adds the items
// not yet present, SUBTRACT removes the given items, and both start from the catalog
// default when the resource does not set the config; SUBTRACT of every item leaves an
// empty list set, not the default.
func (c *Catalog) ApplyIncremental(current map[string]string, ops []AlterOp) (map[string]string, error) {
	if err := checkOps(ops); err != nil {
		return nil, err
	}
	next := maps.Clone(current)
	if next == nil {
		next = map[string]string{}
	}
	for _, op := range ops {
		if err := c.applyOp(next, op); err != nil {
			return nil, err
		}
	}
	if err := errors.Join(c.Validate(next), c.CheckSupported(next)); err != nil {
		return nil, err
	}
	return next, nil
}

// checkOps rejects what Kafka rejects before looking at any config.
func checkOps(ops []AlterOp) error {
	seen := map[string]bool{}
	for _, op := range ops {
		switch {
		case seen[op.Name]:
			return invalidRequest(op.Name, "error due to duplicate config keys")
		case op.Op < OpSet || op.Op > OpSubtract:
			return invalidRequest(op.Name, fmt.Sprintf("unknown operation type %d", op.Op))
		case op.Value == nil && op.Op != OpDelete:
			return invalidRequest(op.Name, "null value not supported")
		}
		seen[op.Name] = true
	}
	return nil
}

func (c *Catalog) applyOp(next map[string]string, op AlterOp) error {
	e, _, ok := c.entryFor(op.Name)
	if !ok {
		return c.unknown(op.Name)
	}
	switch op.Op {
	case OpSet:
		next[op.Name] = *op.Value
		return nil
	case OpDelete:
		delete(next, op.Name)
		return nil
	}
	if e.Type != TypeList {
		return invalidValue(e, op.Name, *op.Value, fmt.Sprintf("can't %s to key %s because its type is not LIST", opVerb(op.Op), op.Name))
	}
	cur, ok := next[op.Name]
	if !ok {
		cur = e.Default
	}
	items, operand := splitItems(cur), splitItems(*op.Value)
	if op.Op == OpAppend {
		next[op.Name] = strings.Join(appendNew(items, operand), ",")
	} else {
		next[op.Name] = strings.Join(subtract(items, operand), ",")
	}
	return nil
}

func opVerb(op OpType) string {
	if op == OpAppend {
		return "APPEND"
	}
	return "SUBTRACT"
}

// splitItems returns the non-empty items of a raw list value.
func splitItems(raw string) []string {
	var out []string
	for _, it := range parseList(strings.TrimSpace(raw)) {
		if it != "" {
			out = append(out, it)
		}
	}
	return out
}

func appendNew(items, add []string) []string {
	for _, a := range add {
		if !slices.Contains(items, a) {
			items = append(items, a)
		}
	}
	return items
}

func subtract(items, remove []string) []string {
	return slices.DeleteFunc(items, func(it string) bool { return slices.Contains(remove, it) })
}
