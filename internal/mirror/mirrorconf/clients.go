package mirrorconf

import "math"

// Client overrides, <alias>.producer.X, <alias>.consumer.X and <alias>.admin.X. In Kafka's
// MirrorMaker they reach the clients that write to, read from, or administer the cluster
// <alias> (the herders' worker configs and the connectors' source./target. prefixes). Samsa
// accepts the ones below, each of which the runtime must honour by mapping it to its franz-go
// client; any other is refused at parse time, so the runtime never meets one it cannot map.
var clientSettings = map[string]map[string]check{
	"producer": {
		"acks":                                  oneOf("all", "-1", "0", "1"),
		"compression.type":                      oneOf("none", "gzip", "snappy", "lz4", "zstd"),
		"linger.ms":                             atLeast(0, math.MaxInt64),
		"batch.size":                            atLeast(1, math.MaxInt32),
		"max.request.size":                      atLeast(1, math.MaxInt32),
		"buffer.memory":                         atLeast(1, math.MaxInt64),
		"request.timeout.ms":                    atLeast(1, math.MaxInt32),
		"delivery.timeout.ms":                   atLeast(1, math.MaxInt32),
		"max.in.flight.requests.per.connection": atLeast(1, math.MaxInt32),
		"enable.idempotence":                    isBool,
		"retries":                               atLeast(0, math.MaxInt32),
		"retry.backoff.ms":                      atLeast(0, math.MaxInt64),
		"transaction.timeout.ms":                atLeast(1, math.MaxInt32),
		"client.id":                             isAny,
		"bootstrap.servers":                     isList,
	},
	"consumer": {
		"isolation.level":           oneOf("read_committed", "read_uncommitted"),
		"auto.offset.reset":         oneOf("earliest", "latest"),
		"fetch.min.bytes":           atLeast(0, math.MaxInt32),
		"fetch.max.bytes":           atLeast(0, math.MaxInt32),
		"max.partition.fetch.bytes": atLeast(0, math.MaxInt32),
		"fetch.max.wait.ms":         atLeast(0, math.MaxInt32),
		"max.poll.records":          atLeast(1, math.MaxInt32),
		"request.timeout.ms":        atLeast(1, math.MaxInt32),
		"retry.backoff.ms":          atLeast(0, math.MaxInt64),
		"client.rack":               isAny,
		"client.id":                 isAny,
		// MirrorMaker always turns auto-commit off (MirrorConnectorConfig puts false);
		// only false is accepted, so the file does not claim what cannot be.
		"enable.auto.commit": oneOf("false"),
		"bootstrap.servers":  isList,
	},
	"admin": {
		"request.timeout.ms":     atLeast(1, math.MaxInt32),
		"default.api.timeout.ms": atLeast(1, math.MaxInt32),
		"retry.backoff.ms":       atLeast(0, math.MaxInt64),
		"client.id":              isAny,
		"bootstrap.servers":      isList,
	},
}

// isSecurity: the client security settings Kafka's MirrorClientConfig.CLIENT_CONFIG_DEF
// defines (security.protocol and the ssl. and sasl. families). They go to Cluster.Security
// for the caller to turn into client options (internal/cli's --command-config reader, which
// refuses what it cannot honour).
func isSecurity(name string) bool {
	return name == "security.protocol" || hasPrefix(name, "ssl.") || hasPrefix(name, "sasl.")
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }
