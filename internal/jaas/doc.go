// Package jaas reads the value of Kafka's sasl.jaas.config: one JAAS login
// module entry, as Java's JAAS configuration parser reads it. It is a leaf
// so that the broker's SASL mechanisms (internal/auth) and the client-side
// commands (internal/cli, --command-config) parse the same text the same
// way, and a value that works with Kafka's tools works with both.
//
// It only parses. What the options of a login module mean is decided by
// its reader: internal/auth for a listener's users and validators,
// internal/cli for a client's credentials. Errors never repeat a value,
// since values are passwords.
package jaas
