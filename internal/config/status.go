package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Why a config is not supported yet, by what brings it. Each completes "not supported yet
// (...)", so a refusal says which feature is missing and where it is coming from.
const (
	byQuotas   = "issue 14 brings quotas and metrics"
	byCluster  = "issue 12 is building the cluster; this part of it is not wired yet"
	byQuorum   = "issue 12 is building the controller quorum on hashicorp/raft; this part of it is not wired yet"
	byReassign = "issue 15 brings reassignment, JBOD and racks"
	byTiered   = "tiered storage is not planned"
	byJava     = "Samsa cannot load Java classes"
)

// Status is what Samsa does with a config, one of the three kinds the catalog records.
type Status int8

// Config statuses; see Entry.Wired, Entry.Unsupported and Entry.NoEffect.
const (
	StatusWired Status = iota
	StatusUnsupported
	StatusNoEffect
)

// String returns the status as the reference docs write it.
func (s Status) String() string {
	switch s {
	case StatusWired:
		return "wired"
	case StatusUnsupported:
		return "not supported yet"
	case StatusNoEffect:
		return "no effect by design"
	}
	return fmt.Sprintf("Status(%d)", int8(s))
}

// Status classifies the entry. A partly supported config (Wired and Unsupported) is wired.
func (e *Entry) Status() Status {
	switch {
	case e.Wired != "":
		return StatusWired
	case e.Unsupported != "":
		return StatusUnsupported
	}
	return StatusNoEffect
}

// checkStatus is the rule TestEveryEntryHasAStatus enforces, so that no config joins the
// catalog without someone deciding what Samsa does with it.
func (e *Entry) checkStatus() error {
	set := 0
	for _, s := range []string{e.Wired, e.Unsupported, e.NoEffect} {
		if s != "" {
			set++
		}
	}
	partly := e.Wired != "" && e.Unsupported != "" && e.NoEffect == "" && e.Accepts != nil
	switch {
	case set == 1 && (e.Accepts == nil || e.Unsupported != ""):
	case partly:
	default:
		return fmt.Errorf("config: %s must set exactly one of Wired, Unsupported and NoEffect (or Wired and Unsupported with Accepts), and Accepts only with Unsupported", e.Name)
	}
	if e.StartupOnly && (e.Mode == ReadOnly || e.Wired == "") {
		return fmt.Errorf("config: %s: StartupOnly is for wired configs Kafka can change dynamically", e.Name)
	}
	return nil
}

// CheckSupported refuses the values of raw that Samsa does not support yet: a config whose
// Entry.Unsupported is set, given something other than its default or a value its Accepts
// takes. Names and values are Validate's to check; this skips what Validate refuses. The
// error joins one *Error wrapping ErrNotSupported per refused config, in name order.
//
// Parse, ApplyIncremental and ValidateDynamic call it: it guards what a user sets. Configs
// already stored in the metadata are resolved without it (ResolveTopic, WithDynamic), so
// a broker never fails to start over a value an older Samsa accepted.
func (c *Catalog) CheckSupported(raw map[string]string) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		e, _, ok := c.entryFor(name)
		if !ok {
			continue
		}
		v, err := parseValue(e, name, raw[name])
		if err != nil {
			continue
		}
		if err := checkSupported(e, name, raw[name], v); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func checkSupported(e *Entry, name, raw string, v any) error {
	if e.Unsupported == "" || isDefault(e, v) || (e.Accepts != nil && e.Accepts.Validate(v) == nil) {
		return nil
	}
	if e.Type == TypePassword {
		raw = "[hidden]"
	}
	return notSupported(name, fmt.Sprintf("value %s is not supported yet (%s); only %s is accepted",
		strings.TrimSpace(raw), e.Unsupported, acceptedValues(e)))
}

// isDefault reports whether v is the entry's default. For a null default, an empty
// string or list counts as unset, as Kafka treats advertised.listeners= and the like.
func isDefault(e *Entry, v any) bool {
	if e.NullDefault {
		return formatValue(v) == ""
	}
	return formatValue(v) == formatValue(e.DefaultValue)
}

// acceptedValues names what an unsupported config accepts, for messages and docs.
func acceptedValues(e *Entry) string {
	def := "null"
	if !e.NullDefault {
		def = defaultCell(e)
	}
	s := "the default (" + def + ")"
	if e.Accepts != nil {
		s += " or " + e.Accepts.String()
	}
	return s
}

// sameItems accepts a list holding exactly the given items, in any order: process.roles
// "controller,broker" asks for what "broker,controller" does.
type sameItems []string

func (s sameItems) Validate(v any) error {
	got := slices.Sorted(slices.Values(v.([]string)))
	if !slices.Equal(got, slices.Sorted(slices.Values(s))) {
		return fmt.Errorf("must be %s", strings.Join(s, ","))
	}
	return nil
}

func (s sameItems) String() string { return strings.Join(s, ",") }

// withProtocols accepts a list that holds each of its items, and any
// others.
type withProtocols []string

func (w withProtocols) Validate(v any) error {
	for _, p := range w {
		if !slices.Contains(v.([]string), p) {
			return fmt.Errorf("must include %s", strings.Join(w, " and "))
		}
	}
	return nil
}

func (w withProtocols) String() string { return "any list with " + strings.Join(w, " and ") }

// configuredListeners accepts names of configured listeners; checkListeners checks that they
// are, as Kafka does.
type configuredListeners struct{}

func (configuredListeners) Validate(any) error { return nil }
func (configuredListeners) String() string     { return "names of configured listeners" }

// exactly accepts one value besides the default, in its formatted form.
type exactly string

func (x exactly) Validate(v any) error {
	if formatValue(v) != string(x) {
		return fmt.Errorf("must be %s", string(x))
	}
	return nil
}

func (x exactly) String() string { return string(x) }

// NoEffect returns one line per config set in v that is accepted but does nothing, for the
// broker to log at startup: "<name>=<value> has no effect in Samsa: <why>". These are the
// configs whose status is no effect by design, and the values an unsupported config's
// Accepts lets through. Lines are sorted by name; passwords are hidden.
func (v Values) NoEffect() []string {
	set := map[string]string{}
	for _, layer := range v.s.layers {
		for name, raw := range layer {
			if _, ok := set[name]; !ok {
				set[name] = raw
			}
		}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(set)) {
		e, _, ok := v.s.catalog.entryFor(name)
		if !ok {
			continue
		}
		value := formatValue(v.get(name, e.Type))
		if e.Sensitive() {
			value = "[hidden]"
		}
		switch {
		case e.NoEffect != "":
			out = append(out, fmt.Sprintf("%s=%s has no effect in Samsa: %s", name, value, e.NoEffect))
		case e.Wired == "" && e.Unsupported != "" && !isDefault(e, v.get(name, e.Type)):
			out = append(out, fmt.Sprintf("%s=%s has no effect in Samsa yet: %s", name, value, e.Unsupported))
		}
	}
	return out
}
