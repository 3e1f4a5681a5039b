package config

import (
	"errors"
	"fmt"
)

// Type is the type of a config value. The numbers are Kafka's DescribeConfigs ConfigType
// ids (KIP-569), so the broker can put them on the wire as they are.
type Type int8

// Config types, numbered as in Kafka's DescribeConfigsResponse.ConfigType.
const (
	TypeBoolean  Type = 1
	TypeString   Type = 2
	TypeInt      Type = 3
	TypeShort    Type = 4
	TypeLong     Type = 5
	TypeDouble   Type = 6
	TypeList     Type = 7
	TypeClass    Type = 8
	TypePassword Type = 9
)

var typeNames = map[Type]string{
	TypeBoolean: "boolean", TypeString: "string", TypeInt: "int", TypeShort: "short",
	TypeLong: "long", TypeDouble: "double", TypeList: "list", TypeClass: "class",
	TypePassword: "password",
}

// String returns the type as Kafka's documentation writes it ("int", "list", ...).
func (t Type) String() string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("Type(%d)", int8(t))
}

// Importance is Kafka's documentation hint of how likely an operator is to need the config.
type Importance int8

// Importance levels, as in Kafka's ConfigDef.Importance.
const (
	High Importance = iota
	Medium
	Low
)

// String returns "high", "medium" or "low".
func (i Importance) String() string {
	switch i {
	case High:
		return "high"
	case Medium:
		return "medium"
	case Low:
		return "low"
	}
	return fmt.Sprintf("Importance(%d)", int8(i))
}

// UpdateMode says whether and where a broker config may be changed without a restart, as
// Kafka's broker config documentation lists it. It only has meaning for the Broker catalog:
// every topic config can be changed per topic.
type UpdateMode int8

// Update modes of broker configs.
const (
	// ReadOnly configs are only read from server.properties at startup.
	ReadOnly UpdateMode = iota
	// PerBroker configs may be altered dynamically for one broker (resource name = node
	// id) but not as a cluster-wide default.
	PerBroker
	// ClusterWide configs may be altered per broker or as the cluster-wide default (empty
	// resource name).
	ClusterWide
	// ClusterDefault configs may be altered dynamically only as the cluster-wide default:
	// Samsa's own settings of the active controller (samsa.balancer.*), which would
	// otherwise take effect only while the one broker they were set for happened to be the
	// active controller. Kafka has no such mode.
	ClusterDefault
)

// String returns "read-only", "per-broker", "cluster-wide" or "cluster-default".
func (m UpdateMode) String() string {
	switch m {
	case ReadOnly:
		return "read-only"
	case PerBroker:
		return "per-broker"
	case ClusterWide:
		return "cluster-wide"
	case ClusterDefault:
		return "cluster-default"
	}
	return fmt.Sprintf("UpdateMode(%d)", int8(m))
}

// Source says where an effective value came from. The numbers are Kafka's DescribeConfigs
// ConfigSource ids (KIP-226), in precedence order: a lower number wins.
type Source int8

// Config sources, numbered as in Kafka's DescribeConfigsResponse.ConfigSource.
const (
	SourceUnknown              Source = 0
	SourceDynamicTopic         Source = 1
	SourceDynamicBroker        Source = 2
	SourceDynamicDefaultBroker Source = 3
	SourceStaticBroker         Source = 4
	SourceDefault              Source = 5
	// SourceDynamicBrokerLogger is a broker logger's level (Kafka's
	// BROKER_LOGGER resource), which no catalog holds.
	SourceDynamicBrokerLogger Source = 6
	// SourceClientMetrics is a client metrics subscription's own config (KIP-714).
	SourceClientMetrics Source = 7
	// SourceGroup is a group's own config (KIP-848's GROUP resource); Kafka's admin
	// client calls it DYNAMIC_GROUP_CONFIG.
	SourceGroup Source = 8
)

// String returns Kafka's name for the source.
func (s Source) String() string {
	switch s {
	case SourceDynamicTopic:
		return "DYNAMIC_TOPIC_CONFIG"
	case SourceDynamicBroker:
		return "DYNAMIC_BROKER_CONFIG"
	case SourceDynamicDefaultBroker:
		return "DYNAMIC_DEFAULT_BROKER_CONFIG"
	case SourceStaticBroker:
		return "STATIC_BROKER_CONFIG"
	case SourceDefault:
		return "DEFAULT_CONFIG"
	case SourceClientMetrics:
		return "CLIENT_METRICS_CONFIG"
	case SourceDynamicBrokerLogger:
		return "DYNAMIC_BROKER_LOGGER_CONFIG"
	case SourceGroup:
		return "GROUP_CONFIG"
	}
	return "UNKNOWN"
}

// Marker errors. Every error from this package that a client caused wraps exactly one of
// them; the broker maps them to Kafka error codes.
var (
	// ErrUnknownConfig: the name is not in the catalog (Kafka answers INVALID_CONFIG,
	// "Unknown topic config name").
	ErrUnknownConfig = errors.New("unknown config")
	// ErrInvalidValue: the value does not parse as the config's type or fails its
	// validator (Kafka: INVALID_CONFIG).
	ErrInvalidValue = errors.New("invalid config value")
	// ErrInvalidRequest: the request itself is malformed or not allowed: duplicate keys, a
	// null value for SET, an unknown operation, a read-only or per-broker config changed
	// dynamically where Kafka forbids it (Kafka: INVALID_REQUEST).
	ErrInvalidRequest = errors.New("invalid config request")
	// ErrNotSupported: the value is valid for Kafka but asks for something Samsa does not
	// do yet (Entry.Unsupported), or for a dynamic change of a config Samsa reads only at
	// startup (Entry.StartupOnly). Refused rather than silently ignored (Kafka's nearest
	// answer: INVALID_CONFIG).
	ErrNotSupported = errors.New("config not supported yet")
)

// Error describes one bad config. It wraps one of the marker errors.
type Error struct {
	Name   string // config name as given
	Value  string // value as given; "[hidden]" for passwords
	Reason string // why, in Kafka's words where Kafka has them
	Err    error  // marker: ErrUnknownConfig, ErrInvalidValue, ErrInvalidRequest or ErrNotSupported
}

// Error formats like Kafka's ConfigException ("Invalid value x for configuration y: ..."),
// lower-cased and prefixed with the package, so operators recognise it.
func (e *Error) Error() string {
	switch e.Err {
	case ErrUnknownConfig:
		if e.Reason != "" {
			return "config: " + e.Reason
		}
		return fmt.Sprintf("config: unknown config %s", e.Name)
	case ErrInvalidValue:
		return fmt.Sprintf("config: invalid value %s for configuration %s: %s", e.Value, e.Name, e.Reason)
	}
	return fmt.Sprintf("config: %s: %s", e.Name, e.Reason)
}

// Unwrap returns the marker error.
func (e *Error) Unwrap() error { return e.Err }

func unknownConfig(name string) error {
	return &Error{Name: name, Err: ErrUnknownConfig}
}

func invalidValue(e *Entry, name, raw, reason string) error {
	if e != nil && e.Type == TypePassword {
		raw = "[hidden]"
	}
	return &Error{Name: name, Value: raw, Reason: reason, Err: ErrInvalidValue}
}

func notSupported(name, reason string) error {
	return &Error{Name: name, Reason: reason, Err: ErrNotSupported}
}

func invalidRequest(name, reason string) error {
	return &Error{Name: name, Reason: reason, Err: ErrInvalidRequest}
}
