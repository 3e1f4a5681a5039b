package config

import (
	"fmt"
	"slices"
	"strings"
)

// Entry describes one config: its Kafka name, type, documented default, validator and how
// it may be changed.
type Entry struct {
	Name string
	Type Type
	// Default is the default as Kafka documents it, in the string form DescribeConfigs
	// returns (lists comma-joined, doubles as Java prints them). Ignored when NullDefault.
	Default string
	// NullDefault: Kafka documents the default as null; the config is unset unless given
	// (log.retention.ms, advertised.listeners, broker.rack ...).
	NullDefault bool
	// DefaultValue is Default parsed to the Go type the getters return (bool, int16, int32,
	// int64, float64, string or []string); nil when NullDefault. Filled in by the catalog.
	DefaultValue any
	Doc          string
	// Validator constrains values beyond their type; nil accepts any value of the type.
	Validator  Validator
	Importance Importance
	// Mode is the dynamic update mode. Broker catalog only.
	Mode UpdateMode
	// PerListener: the config may also be set for one listener as
	// listener.name.<listener>.<name>, which then wins over the plain name for that
	// listener. Broker catalog only; these are the security and connection-limit configs
	// that Kafka reads per listener.
	PerListener bool
	// PerMechanism: like PerListener, and the listener prefix may also carry a lower-case
	// SASL mechanism (listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config), as Kafka
	// allows for JAAS and re-authentication settings.
	PerMechanism bool
	// Synonyms are lower-precedence broker configs that set the same thing in other units,
	// most important first: log.retention.ms has log.retention.minutes (x60000) then
	// log.retention.hours (x3600000). The entry's own name always wins over them. Broker
	// catalog only.
	Synonyms []UnitSynonym
	// ServerDefault is the broker config a topic config falls back to when the topic does
	// not override it (Kafka's "Server Default Property"); empty when there is none.
	// Topic catalog only.
	ServerDefault string

	// What Samsa does with the config. Exactly one of Wired, Unsupported and NoEffect is
	// set, except that a partly supported config sets Wired and Unsupported with Accepts;
	// TestEveryEntryHasAStatus keeps it so, and the reference docs show it.

	// Wired names where the config takes effect.
	Wired string
	// Unsupported completes "not supported yet (...)": what is missing and what brings it.
	// Setting the config to anything but its default, or a value Accepts takes, is
	// refused with ErrNotSupported, at startup and in CreateTopics and the alter APIs.
	Unsupported string
	// Accepts, for an Unsupported config, takes values besides the default: for a partly
	// supported config, the values Samsa honours (process.roles=broker,controller); else
	// values that Kafka's own shipped server.properties sets and that a single node can
	// live with, which are then logged at startup as having no effect.
	Accepts Validator
	// NoEffect says why the config has no effect by design: it tunes a mechanism of
	// Kafka's JVM that Samsa does not have. It is accepted, and logged at startup when set.
	NoEffect string
	// StartupOnly: Samsa reads the config at startup only, although Kafka can change it
	// dynamically (Mode); a dynamic update is refused with ErrNotSupported.
	StartupOnly bool
	// DynamicOnly: the config is a dynamic per-broker setting that the active controller
	// reads from the metadata (samsa.broker.draining), so a value in server.properties,
	// which only the broker itself would see, is refused at startup. Broker catalog only.
	DynamicOnly bool
}

// UnitSynonym is a broker config that sets another config's value in different units.
type UnitSynonym struct {
	Name  string
	Scale int64 // multiply this config's value by Scale to get the primary's units
}

// Sensitive reports whether the value must never be shown (Kafka's PASSWORD type).
func (e *Entry) Sensitive() bool { return e.Type == TypePassword }

// Catalog is the set of configs of one scope. It is immutable and safe for concurrent use.
type Catalog struct {
	scope   string // "broker" or "topic", for messages
	entries []*Entry
	byName  map[string]*Entry
	// primaryOf maps a unit synonym (log.retention.hours) to the config it feeds
	// (log.retention.ms).
	primaryOf map[string]string
}

// newCatalog indexes entries and parses their defaults. A bad catalog is a programming
// error caught by every test run, so it panics.
func newCatalog(scope string, entries []*Entry) *Catalog {
	c := &Catalog{scope: scope, byName: map[string]*Entry{}, primaryOf: map[string]string{}}
	for _, e := range entries {
		if _, dup := c.byName[e.Name]; dup {
			panic(fmt.Sprintf("config: duplicate %s config %s", scope, e.Name))
		}
		if err := e.initDefault(); err != nil {
			panic(err)
		}
		c.byName[e.Name] = e
		for _, s := range e.Synonyms {
			c.primaryOf[s.Name] = e.Name
		}
	}
	c.entries = slices.Clone(entries)
	slices.SortFunc(c.entries, func(a, b *Entry) int { return strings.Compare(a.Name, b.Name) })
	return c
}

func (e *Entry) initDefault() error {
	if e.NullDefault {
		return nil
	}
	v, err := parseValue(e, e.Name, e.Default)
	if err != nil {
		return fmt.Errorf("config: default of %s: %w", e.Name, err)
	}
	e.DefaultValue = v
	return nil
}

// Lookup returns the entry with exactly this name.
func (c *Catalog) Lookup(name string) (*Entry, bool) {
	e, ok := c.byName[name]
	return e, ok
}

// Entries returns every entry, sorted by name. The slice is a copy; the entries are shared
// and must not be modified.
func (c *Catalog) Entries() []*Entry { return slices.Clone(c.entries) }

// listenerPrefix starts Kafka's per-listener config names.
const listenerPrefix = "listener.name."

// entryFor returns the entry that types name: the entry itself, or for a per-listener name
// (listener.name.<listener>[.<mechanism>].<config>) the base config's entry, with base set
// to the base config's name.
func (c *Catalog) entryFor(name string) (e *Entry, base string, ok bool) {
	if e, ok := c.byName[name]; ok {
		return e, "", true
	}
	rest, found := strings.CutPrefix(name, listenerPrefix)
	if !found || c.scope != "broker" {
		return nil, "", false
	}
	listener, cfg, found := strings.Cut(rest, ".")
	if !found || listener == "" {
		return nil, "", false
	}
	if e, ok := c.byName[cfg]; ok && e.PerListener {
		return e, cfg, true
	}
	mechanism, cfg, found := strings.Cut(cfg, ".")
	if e, ok := c.byName[cfg]; ok && found && e.PerMechanism && mechanism != "" {
		return e, cfg, true
	}
	return nil, "", false
}
