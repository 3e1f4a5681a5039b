package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// ClientMetrics is the catalog of a client metrics subscription's configs (KIP-714): the
// config resource of type CLIENT_METRICS (16), named by the operator, whose configs are the
// subscription. Kafka 4.x's ClientMetricsConfigs defines the three names and their
// defaults; ParseClientMetrics checks a subscription as it does.
var ClientMetrics = newCatalog(clientMetricsScope, clientMetricsEntries())

const clientMetricsScope = "client-metrics"

// The bounds of interval.ms, Kafka's: 100 ms to an hour.
const (
	ClientMetricsMinIntervalMs = 100
	ClientMetricsMaxIntervalMs = 3600000
)

// AllClientMetrics in metrics subscribes the matching clients to every metric.
const AllClientMetrics = "*"

// ClientMatchAttributes are the client attributes a match pattern may test, Kafka's names.
var ClientMatchAttributes = []string{
	"client_instance_id", "client_id", "client_software_name", "client_software_version",
	"client_source_address", "client_source_port",
}

func clientMetricsEntries() []*Entry {
	return []*Entry{
		{Name: "metrics", Type: TypeList, Default: "", Importance: Medium,
			Wired: "the requested metrics of GetTelemetrySubscriptions for the clients the subscription matches (internal/telemetry, broker/71_get_telemetry_subscriptions.go)",
			Doc:   "Prefixes of the metric names the matching clients push; * for every metric, empty for none."},
		{Name: "interval.ms", Type: TypeInt, Default: "300000", Importance: Medium,
			Wired: "the push interval of the matching clients, the shortest of their subscriptions'; pushes faster than it are throttled (internal/telemetry)",
			Doc:   "How often the matching clients push their metrics, from 100 ms to an hour."},
		{Name: "match", Type: TypeList, Default: "", Importance: Medium,
			Wired: "which clients the subscription applies to (internal/telemetry)",
			Doc: "Patterns attribute=regex, all of which a client must match (the whole value); empty matches every client. " +
				"The attributes are " + strings.Join(ClientMatchAttributes, ", ") + "."},
	}
}

// ClientMetricsSubscription is one subscription's configs, parsed and checked.
type ClientMetricsSubscription struct {
	Name string
	// Metrics are the metric name prefixes the clients push, as set: AllClientMetrics
	// for every metric; none for no metric.
	Metrics []string
	// IntervalMs is how often the clients push.
	IntervalMs int32
	// Match are the patterns a client must all match; none matches every client.
	Match []ClientMatch
}

// ClientMatch is one match pattern: a client attribute and the regular expression its
// whole value must match, as Java's Matcher.matches() does. Go's regexp is RE2, the syntax
// Kafka checks patterns with since 4.5 (RE2/J).
type ClientMatch struct {
	Attribute string
	Pattern   string // as given, trimmed
	re        *regexp.Regexp
}

// Matches reports whether an attribute value matches the whole pattern.
func (m ClientMatch) Matches(value string) bool { return m.re.MatchString(value) }

// ParseClientMetrics checks a subscription's complete configs as Kafka's
// ClientMetricsConfigs.validate does, and returns it parsed. As in Kafka, an empty name, an
// unknown config and an interval out of bounds are ErrInvalidRequest; a value of the wrong
// type, an item listed twice and a bad match pattern are ErrInvalidValue. The first problem
// found is the one reported, in that order.
func ParseClientMetrics(name string, raw map[string]string) (ClientMetricsSubscription, error) {
	if name == "" {
		return ClientMetricsSubscription{}, invalidRequest("", "subscription name can't be empty")
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if _, ok := ClientMetrics.byName[k]; !ok {
			return ClientMetricsSubscription{}, ClientMetrics.unknown(k)
		}
	}
	if err := ClientMetrics.Validate(raw); err != nil {
		return ClientMetricsSubscription{}, err
	}
	v, err := parseValid(ClientMetrics, raw)
	if err != nil {
		return ClientMetricsSubscription{}, err
	}
	s := ClientMetricsSubscription{Name: name, Metrics: v.List("metrics"), IntervalMs: v.Int("interval.ms")}
	for _, list := range []string{"metrics", "match"} {
		if err := noDuplicates(list, raw[list], v.List(list)); err != nil {
			return ClientMetricsSubscription{}, err
		}
	}
	if s.IntervalMs < ClientMetricsMinIntervalMs || s.IntervalMs > ClientMetricsMaxIntervalMs {
		return ClientMetricsSubscription{}, invalidRequest("interval.ms", fmt.Sprintf(
			"invalid value %d: the interval must be between %d and %d (1 hour)", s.IntervalMs, ClientMetricsMinIntervalMs, ClientMetricsMaxIntervalMs))
	}
	for _, p := range v.List("match") {
		m, err := parseClientMatch(p)
		if err != nil {
			return ClientMetricsSubscription{}, err
		}
		s.Match = append(s.Match, m)
	}
	return s, nil
}

// noDuplicates is Kafka's ValidList.anyNonDuplicateValues on the two lists.
func noDuplicates(name, raw string, items []string) error {
	for i, it := range items {
		if slices.Contains(items[:i], it) {
			return invalidValue(ClientMetrics.byName[name], name, raw, fmt.Sprintf("configuration '%s' values must not be duplicated (%s)", name, it))
		}
	}
	return nil
}

// parseClientMatch parses attribute=regex, split at the first '=' and both sides trimmed.
func parseClientMatch(p string) (ClientMatch, error) {
	e := ClientMetrics.byName["match"]
	attr, pattern, ok := strings.Cut(p, "=")
	attr, pattern = strings.TrimSpace(attr), strings.TrimSpace(pattern)
	if !ok || !slices.Contains(ClientMatchAttributes, attr) {
		return ClientMatch{}, invalidValue(e, "match", p, fmt.Sprintf("illegal client matching pattern %q: want attribute=regex with an attribute of %s",
			p, strings.Join(ClientMatchAttributes, ", ")))
	}
	if _, err := regexp.Compile(pattern); err != nil {
		return ClientMatch{}, invalidValue(e, "match", p, fmt.Sprintf("client match pattern `%s=%s` is not a valid regular expression: %v", attr, pattern, err))
	}
	// Anchored, as Java's Matcher.matches() tests the whole input; it
	// compiles, as the pattern did.
	return ClientMatch{Attribute: attr, Pattern: pattern, re: regexp.MustCompile(`^(?:` + pattern + `)$`)}, nil
}

// DescribeClientMetrics describes every config of a subscription, or the named ones, as
// Kafka 4.x does since KAFKA-17516: each with its value (CLIENT_METRICS_CONFIG when the
// subscription sets it, else DEFAULT_CONFIG), for a subscription that does not exist too.
func DescribeClientMetrics(raw map[string]string, names []string) []Description {
	var out []Description
	for _, e := range ClientMetrics.entries {
		if names != nil && !slices.Contains(names, e.Name) {
			continue
		}
		d := Description{Name: e.Name, Source: SourceDefault, Type: e.Type, Doc: e.Doc, Value: ptr(e.Default)}
		if v, ok := raw[e.Name]; ok {
			d.Source, d.Value = SourceClientMetrics, ptr(v)
			d.Synonyms = append(d.Synonyms, Synonym{Name: e.Name, Value: ptr(v), Source: SourceClientMetrics})
		}
		d.Synonyms = append(d.Synonyms, Synonym{Name: e.Name, Value: ptr(e.Default), Source: SourceDefault})
		out = append(out, d)
	}
	return out
}
