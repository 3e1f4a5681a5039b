// Package config is Samsa's catalog of configuration, with Apache Kafka's own names, types,
// defaults, validators and dynamic-update modes, one catalog per scope: Broker
// (server.properties and dynamic broker configs) and Topic (per-topic overrides).
//
// It owns four jobs that must agree with each other, which is why they live together:
//
//   - parsing: LoadBrokerProperties reads a server.properties file, applies command-line
//     overrides and validates every name and value; Parse does the same for any map.
//   - resolution: a Values is an immutable, typed view over layered raw strings. Broker
//     values layer DYNAMIC_BROKER_CONFIG over DYNAMIC_DEFAULT_BROKER_CONFIG over
//     STATIC_BROKER_CONFIG over DEFAULT_CONFIG (see WithDynamic); ResolveTopic puts a topic's
//     overrides on top and falls back, per config, to the broker config Kafka names as its
//     "server default property" (retention.ms <- log.retention.ms <- log.retention.minutes
//     <- log.retention.hours).
//   - describing: Describe reports value, ConfigSource and the synonym list in the order
//     Kafka's DescribeConfigs does, so kafka-configs.sh and admin UIs show familiar output.
//   - altering: ApplyIncremental implements IncrementalAlterConfigs (KIP-339) SET, DELETE,
//     APPEND and SUBTRACT; ValidateDynamic enforces Kafka's read-only / per-broker /
//     cluster-wide update modes.
//
// Every entry also records what Samsa does with it (Entry.Wired, Unsupported, NoEffect),
// so that no config is accepted and silently ignored: the catalog is the audit, and the
// reference docs (docs/CONFIG-*.md) print it.
//
// A value Samsa does not support yet is refused where a user sets it: Parse (server.properties
// and flags), ApplyIncremental and ValidateDynamic refuse it with ErrNotSupported, and so does
// the controller for CreateTopics and AlterConfigs through CheckSupported. Values already in
// the metadata are resolved as they are, so a data directory never stops a broker starting.
//
// Errors wrap marker errors (ErrUnknownConfig, ErrInvalidValue, ErrInvalidRequest,
// ErrNotSupported) so the broker can map them to Kafka error codes with errors.Is without
// this package importing the wire protocol.
//
// The package is an L1 model: it imports only the standard library and
// github.com/magiconair/properties, and it does no I/O except reading the properties file.
// The storage engine does not see Values; the broker maps them into storage's own plain
// Config struct.
package config
