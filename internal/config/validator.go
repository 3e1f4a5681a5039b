package config

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Validator constrains a typed config value beyond its type.
type Validator interface {
	// Validate checks a value of the entry's Go type. The error text completes Kafka's
	// "Invalid value v for configuration c: <text>".
	Validate(v any) error
	// String gives the valid values as Kafka's documentation writes them ("[1,...]").
	String() string
}

// intRange bounds integer configs (Kafka's Range.atLeast and Range.between).
type intRange struct {
	min, max int64
	hasMax   bool
}

func atLeast(min int64) Validator      { return intRange{min: min} }
func between(min, max int64) Validator { return intRange{min: min, max: max, hasMax: true} }

func (r intRange) Validate(v any) error {
	n := asInt64(v)
	if n < r.min {
		return fmt.Errorf("value must be at least %d", r.min)
	}
	if r.hasMax && n > r.max {
		return fmt.Errorf("value must be no more than %d", r.max)
	}
	return nil
}

func (r intRange) String() string {
	if r.hasMax {
		return fmt.Sprintf("[%d,...,%d]", r.min, r.max)
	}
	return fmt.Sprintf("[%d,...]", r.min)
}

func asInt64(v any) int64 {
	switch x := v.(type) {
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	}
	panic(fmt.Sprintf("config: integer validator on %T", v))
}

// ratio bounds a double to [0, 1], the only bounded double Kafka has.
type ratio struct{}

func (ratio) Validate(v any) error {
	if f := v.(float64); f < 0 || f > 1 {
		if f < 0 {
			return errors.New("value must be at least 0")
		}
		return errors.New("value must be no more than 1")
	}
	return nil
}

func (ratio) String() string { return "[0,...,1]" }

// oneOf accepts exactly one of the given strings, case-sensitively (Kafka's ValidString).
type oneOf []string

func (o oneOf) Validate(v any) error {
	if !slices.Contains(o, v.(string)) {
		return fmt.Errorf("string must be one of: %s", strings.Join(o, ", "))
	}
	return nil
}

func (o oneOf) String() string { return "[" + strings.Join(o, ", ") + "]" }

// listOf accepts lists whose every item is one of the given strings (Kafka's ValidList).
type listOf []string

func (l listOf) Validate(v any) error {
	for _, it := range v.([]string) {
		if !slices.Contains(l, it) {
			return fmt.Errorf("invalid value %s, must be one of: %s", it, strings.Join(l, ", "))
		}
	}
	return nil
}

func (l listOf) String() string { return "[" + strings.Join(l, ", ") + "]" }

// rangeOr is a range plus one special value, for codec levels where -1 means "the codec's
// own default" (gzip).
type rangeOr struct {
	intRange
	also int64
}

func (r rangeOr) Validate(v any) error {
	if asInt64(v) == r.also {
		return nil
	}
	return r.intRange.Validate(v)
}

func (r rangeOr) String() string { return fmt.Sprintf("%s or %d", r.intRange, r.also) }

// throttledReplicas checks leader/follower.replication.throttled.replicas: "*" alone or
// partition:broker pairs. Each number must fit Kafka's int, which Kafka's own validator does
// not check (its broker then fails to parse the list when it applies it).
type throttledReplicas struct{}

func (throttledReplicas) Validate(v any) error {
	items := v.([]string)
	if len(items) == 1 && items[0] == "*" {
		return nil
	}
	for _, it := range items {
		p, b, ok := strings.Cut(it, ":")
		if !ok || !isDigits(p) || !isDigits(b) || !fitsInt32(p) || !fitsInt32(b) {
			return errors.New("must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")
		}
	}
	return nil
}

func (throttledReplicas) String() string {
	return "[partitionId]:[brokerId],[partitionId]:[brokerId],..."
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// listenerList checks listeners and advertised.listeners: comma-separated NAME://host:port
// with distinct names. Kafka checks this when it builds endpoints; doing it while parsing
// reports a typo before anything binds.
type listenerList struct{}

func (listenerList) Validate(v any) error {
	s := v.(string)
	if s == "" {
		return nil
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(s, ",") {
		name, err := checkListener(strings.TrimSpace(l))
		if err != nil {
			return err
		}
		if seen[name] {
			return fmt.Errorf("each listener must have a different name, %s appears more than once", name)
		}
		seen[name] = true
	}
	return nil
}

func (listenerList) String() string { return "NAME://host:port,..." }

func checkListener(l string) (string, error) {
	name, hostPort, ok := strings.Cut(l, "://")
	if !ok || !isListenerName(name) {
		return "", fmt.Errorf("unable to parse %s to a broker endpoint", l)
	}
	i := strings.LastIndexByte(hostPort, ':')
	if i < 0 {
		return "", fmt.Errorf("unable to parse %s to a broker endpoint", l)
	}
	if port, err := strconv.Atoi(hostPort[i+1:]); err != nil || port < 0 || port > 65535 {
		return "", fmt.Errorf("unable to parse %s to a broker endpoint", l)
	}
	return strings.ToUpper(name), nil
}

func isListenerName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		ok := r == '_' || r == '-' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !ok {
			return false
		}
	}
	return true
}

// securityProtocols are Kafka's SecurityProtocol names.
var securityProtocols = oneOf{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}

// protocolMap checks listener.security.protocol.map: NAME:PROTOCOL pairs.
type protocolMap struct{}

func (protocolMap) Validate(v any) error {
	s := v.(string)
	if s == "" {
		return nil
	}
	for _, pair := range strings.Split(s, ",") {
		name, proto, ok := strings.Cut(strings.TrimSpace(pair), ":")
		if !ok || !isListenerName(name) || securityProtocols.Validate(proto) != nil {
			return fmt.Errorf("map entry %q must be LISTENER_NAME:PROTOCOL with PROTOCOL one of %s", pair, strings.Join(securityProtocols, ", "))
		}
	}
	return nil
}

func (protocolMap) String() string { return "NAME:PROTOCOL,..." }

// hostCounts checks max.connections.per.ip.overrides: host:count pairs, the host a name or
// an IP address, the count a non-negative int.
type hostCounts struct{}

func (hostCounts) Validate(v any) error {
	s := strings.TrimSpace(v.(string))
	if s == "" {
		return nil
	}
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		i := strings.LastIndexByte(pair, ':')
		if i <= 0 {
			return fmt.Errorf("entry %q must be host:count", pair)
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(pair[i+1:]), 10, 32); err != nil || n < 0 {
			return fmt.Errorf("entry %q must be host:count with count a non-negative int", pair)
		}
	}
	return nil
}

func (hostCounts) String() string { return "host:count,..." }

// fitsInt32 reports whether a string of digits is at most Java's largest int.
func fitsInt32(s string) bool {
	_, err := strconv.ParseInt(s, 10, 32)
	return err == nil
}
