package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// SamsaPrefix starts the names of Samsa's own broker configs, the ones
// Apache Kafka has no equivalent of. The prefix keeps them apart from
// Kafka's names, present and future, and tells an operator reading
// server.properties that a Kafka broker would not understand the line.
const SamsaPrefix = "samsa."

// SamsaOwn reports whether the entry is one of Samsa's own configs.
func (e *Entry) SamsaOwn() bool { return strings.HasPrefix(e.Name, SamsaPrefix) }

// samsaEntries are the broker configs Kafka does not have.
func samsaEntries() []*Entry {
	return []*Entry{
		{Name: "samsa.http.listener", Type: TypeString, Default: "127.0.0.1:9644", Validator: hostPort{}, Importance: High,
			Wired: "the HTTP listener of /metrics (Prometheus), /healthz and /readyz, bound when the broker is built: a port in use refuses the start (broker/http.go); empty turns it off",
			Doc:   "host:port of the broker's HTTP listener for metrics and health checks; empty for none. Port 0 picks a free port."},
		{Name: "samsa.schema.registry.listener", Type: TypeString, Default: "127.0.0.1:8081", Validator: hostPort{}, Importance: High,
			Wired: "samsa serve binds this host:port once the broker serves (a port in use, or no PLAINTEXT listener, stops the start) and runs the Schema Registry on it (internal/schemaregistry, docs/DESIGN-schemaregistry.md), a Kafka client of the broker's first PLAINTEXT listener, started in the background and retried until the cluster can hold its store (cmd/samsa/registry.go); empty turns it off",
			Doc:   "host:port of the Schema Registry (Confluent's API) run inside samsa serve, as Confluent's listeners=http://...:8081; empty for none. Port 0 picks a free port. Several nodes on one machine need one port each."},
		{Name: "samsa.schema.registry.topic", Type: TypeString, Default: "_schemas", Importance: Medium,
			Wired: "the Schema Registry's store topic, created compacted with one partition when missing (cmd/samsa/serve.go, internal/schemaregistry/store.go)",
			Doc:   "The compacted topic the Schema Registry keeps its schemas, configs and modes in (Confluent's kafkastore.topic)."},
		{Name: "samsa.schema.registry.group.id", Type: TypeString, Default: "schema-registry", Importance: Medium,
			Wired: "the Kafka group through which the registries sharing the store elect the one that writes; the others forward writes to it (cmd/samsa/serve.go, internal/schemaregistry/election.go)",
			Doc:   "Group of the Schema Registry instances sharing the store topic (Confluent's schema.registry.group.id); empty turns election off, for a store with one instance only."},
		{Name: "samsa.schema.registry.ssl.keystore.location", Type: TypeString, Default: "", Importance: High,
			Wired: "serves the Schema Registry over TLS (https) with this store's key and certificate chain, read by internal/keystore as the broker's stores are; the other instances are forwarded to over https (cmd/samsa/registry.go, internal/schemaregistry)",
			Doc:   "Key store of the Schema Registry's listener (Confluent's ssl.keystore.location); empty serves plain HTTP."},
		{Name: "samsa.schema.registry.ssl.keystore.type", Type: TypeString, Default: "PEM", Validator: oneOf{"PEM", "JKS", "PKCS12"}, Importance: Medium,
			Wired: "the format of samsa.schema.registry.ssl.keystore.location (and of the trust store) (cmd/samsa/registry.go, internal/schemaregistry)",
			Doc:   "Format of the Schema Registry's key store: PEM (the certificate chain and the key in one file), JKS or PKCS12."},
		{Name: "samsa.schema.registry.ssl.keystore.password", Type: TypePassword, Default: "", Importance: Medium,
			Wired: "the JKS or PKCS12 key store's password; refused for PEM (cmd/samsa/registry.go, internal/schemaregistry)",
			Doc:   "Password of the Schema Registry's key store."},
		{Name: "samsa.schema.registry.ssl.key.password", Type: TypePassword, Default: "", Importance: Medium,
			Wired: "the password of an encrypted PEM key, or of a JKS key (cmd/samsa/registry.go, internal/schemaregistry)",
			Doc:   "Password of the Schema Registry's private key."},
		{Name: "samsa.schema.registry.ssl.truststore.location", Type: TypeString, Default: "", Importance: Medium,
			Wired: "the CAs that client certificates are verified against, and that the other instances' certificates are checked against when writes are forwarded; empty: the system's CAs for forwarding (cmd/samsa/registry.go, internal/schemaregistry)",
			Doc:   "Trust store of the Schema Registry's listener (Confluent's ssl.truststore.location), of the same type as the key store."},
		{Name: "samsa.schema.registry.ssl.truststore.password", Type: TypePassword, Default: "", Importance: Medium,
			Wired: "the JKS or PKCS12 trust store's password (cmd/samsa/registry.go, internal/schemaregistry)",
			Doc:   "Password of the Schema Registry's trust store."},
		{Name: "samsa.schema.registry.ssl.client.authentication", Type: TypeString, Default: "NONE", Validator: oneOf{"NONE", "REQUESTED", "REQUIRED"}, Importance: Medium,
			Wired: "whether the listener asks clients for a certificate verified against the trust store; REQUESTED or REQUIRED need TLS and a trust store (cmd/samsa/registry.go, internal/schemaregistry)",
			Doc:   "Client certificate verification on the Schema Registry's listener (Confluent's ssl.client.authentication)."},
		{Name: "samsa.schema.registry.authentication.method", Type: TypeString, Default: "NONE", Validator: oneOf{"NONE", "BASIC"}, Importance: High,
			Wired: "BASIC requires HTTP basic authentication on every request: 401 with WWW-Authenticate, 403 for a role not allowed; it needs a users file or a Kafka login mechanism, which NONE refuses (cmd/samsa/registry.go, internal/schemaregistry)",
			Doc:   "Authentication of the Schema Registry's API (Confluent's authentication.method)."},
		{Name: "samsa.schema.registry.authentication.realm", Type: TypeString, Default: "SchemaRegistry", Importance: Low,
			Wired: "the realm of the WWW-Authenticate challenge (cmd/samsa/registry.go, internal/schemaregistry)",
			Doc:   "Realm of basic authentication (Confluent's authentication.realm)."},
		{Name: "samsa.schema.registry.authentication.roles", Type: TypeList, Default: "*", Importance: Medium,
			Wired: "the roles a user needs one of; * lets every authenticated user in (users checked by a Kafka login have no roles) (cmd/samsa/registry.go, internal/schemaregistry)",
			Doc:   "Roles allowed in (Confluent's authentication.roles)."},
		{Name: "samsa.schema.registry.authentication.users.file", Type: TypeString, Default: "", Importance: Medium,
			Wired: "the users of basic authentication, read at start-up in Jetty's PropertyFileLoginModule format (user: password[,role ...], passwords plain or MD5:) (cmd/samsa/registry.go, internal/schemaregistry)",
			Doc:   "Users file of basic authentication (what Confluent's JAAS PropertyFileLoginModule reads)."},
		{Name: "samsa.schema.registry.authentication.kafka.sasl.mechanism", Type: TypeString, Default: "", Validator: oneOf{"", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}, Importance: Medium,
			Wired: "checks the credentials of users not in the file by a SASL login with them to this broker's first SASL_PLAINTEXT listener, which must enable the mechanism; a success is trusted for 60 s (cmd/samsa/registry.go, internal/schemaregistry)",
			Doc:   "SASL mechanism with which basic-auth credentials are checked against the broker's principals; empty for none."},
	}
}

// restEntries configure the REST Proxy run inside samsa serve
// (cmd/samsa/rest.go, internal/restproxy, docs/DESIGN-restproxy.md).
func restEntries() []*Entry {
	const where = " (cmd/samsa/rest.go, internal/restproxy)"
	return append([]*Entry{
		{Name: "samsa.rest.listener", Type: TypeString, Default: "127.0.0.1:8082", Validator: hostPort{}, Importance: High,
			Wired: "samsa serve binds this host:port once the broker serves (a port in use stops the start; no PLAINTEXT listener stops it when set, turns it off when left at the default) and runs the REST Proxy on it (internal/restproxy, docs/DESIGN-restproxy.md), a Kafka client of the broker's first PLAINTEXT listener, with the in-process Schema Registry's URL when that runs (cmd/samsa/rest.go); empty turns it off",
			Doc:   "host:port of the REST Proxy (Confluent's v3 API) run inside samsa serve, as Confluent's listeners=http://...:8082; empty for none. Port 0 picks a free port. Several nodes on one machine need one port each."},
		{Name: "samsa.rest.max.request.bytes", Type: TypeLong, Default: "2097152", Validator: atLeast(1), Importance: Medium,
			Wired: "the largest request body the REST Proxy reads, 413 past it (per record of a chunked produce stream)" + where,
			Doc:   "Largest REST Proxy request body in bytes."},
		{Name: "samsa.rest.produce.rate.limit.per.sec", Type: TypeDouble, Default: "0.0", Validator: nonNegative{}, Importance: Medium,
			Wired: "records one principal (basic-auth user; every client without authentication) may produce per second, each record of a stream counting; past it 429" + where,
			Doc:   "Produce rate limit of the REST Proxy per principal, in records per second (as Confluent's api.v3.produce.rate.limit.max.requests.per.sec, per user); 0 for none."},
		{Name: "samsa.rest.request.rate.limit.per.sec", Type: TypeDouble, Default: "0.0", Validator: nonNegative{}, Importance: Medium,
			Wired: "HTTP requests one principal may make per second; past it 429" + where,
			Doc:   "Request rate limit of the REST Proxy per principal, in requests per second; 0 for none."},
		{Name: "samsa.rest.principal.clients.max", Type: TypeInt, Default: "100", Validator: atLeast(1), Importance: Low,
			Wired: "the most per-principal Kafka clients kept for REST users checked by a Kafka login; past it the least recently used idle one is closed, and with none idle a new user gets 429" + where,
			Doc:   "Most Kafka clients the REST Proxy keeps, one per logged-in REST user."},
		{Name: "samsa.rest.principal.clients.idle.ms", Type: TypeLong, Default: "300000", Validator: atLeast(1), Importance: Low,
			Wired: "a per-principal Kafka client unused this long is closed" + where,
			Doc:   "How long the REST Proxy keeps an unused per-principal Kafka client."},
	}, restSecurityEntries(where)...)
}

// connectEntries configure the Kafka Connect worker run inside samsa
// serve (cmd/samsa/connect.go, docs/DESIGN-connect.md). Connect is off by
// default, unlike the registry and the REST Proxy: its REST API has no
// authentication yet, and the connectors it creates run with the broker
// process's rights (FileStream reads and writes any file the broker can,
// the HTTP sink and JDBC open connections from it).
func connectEntries() []*Entry {
	const where = " (cmd/samsa/connect.go)"
	const sample = "; the default is the value of Kafka's sample connect-distributed.properties, so a worker started with that file against this cluster joins the same Connect cluster"
	const fileToo = "; setting it here and in samsa.connect.worker.config as well is refused"
	return []*Entry{
		{Name: "samsa.connect.listener", Type: TypeString, Default: "", Validator: hostPort{}, Importance: High,
			Wired: "samsa serve binds this host:port once the broker serves (a port in use, or no PLAINTEXT listener, stops the start) and runs a distributed Kafka Connect worker with Kafka Connect's REST API on it (internal/connectrt, docs/DESIGN-connect.md), a Kafka client of the broker's first PLAINTEXT listener, started in the background and retried until the cluster can hold its topics, stopped before the broker on shutdown; empty turns it off, and then any other samsa.connect.* set is refused" + where,
			Doc:   "host:port of the Kafka Connect worker (Kafka Connect's REST API, as connect-distributed.sh's listeners=http://...:8083) run inside samsa serve; empty (the default) for none. Off by default because the API has no authentication and connectors run with the broker process's file and network access. Port 0 picks a free port. Several nodes on one machine need one port each."},
		{Name: "samsa.connect.group.id", Type: TypeString, Default: "connect-cluster", Importance: Medium,
			Wired: "the worker's group.id: serve nodes with the same one form one Connect cluster, sharing the three storage topics" + fileToo + where,
			Doc:   "Group of the Connect workers run by serve (Kafka's group.id)" + sample + "."},
		{Name: "samsa.connect.config.storage.topic", Type: TypeString, Default: "connect-configs", Importance: Medium,
			Wired: "the worker's config.storage.topic, created compacted with one partition when missing" + fileToo + where,
			Doc:   "Topic of connector and task configs (Kafka's config.storage.topic)" + sample + "."},
		{Name: "samsa.connect.offset.storage.topic", Type: TypeString, Default: "connect-offsets", Importance: Medium,
			Wired: "the worker's offset.storage.topic, created compacted with offset.storage.partitions (25) when missing" + fileToo + where,
			Doc:   "Topic of source connectors' offsets (Kafka's offset.storage.topic)" + sample + "."},
		{Name: "samsa.connect.status.storage.topic", Type: TypeString, Default: "connect-status", Importance: Medium,
			Wired: "the worker's status.storage.topic, created compacted with status.storage.partitions (5) when missing" + fileToo + where,
			Doc:   "Topic of connector and task statuses (Kafka's status.storage.topic)" + sample + "."},
		{Name: "samsa.connect.config.storage.replication.factor", Type: TypeShort, Default: "-1", Validator: atLeast(-1), Importance: Low,
			Wired: "the worker's config.storage.replication.factor; -1 leaves it to default.replication.factor, as the Schema Registry's topic does (KIP-464)" + fileToo + where,
			Doc:   "Replication factor of the config topic when serve creates it; -1 for the broker's default.replication.factor."},
		{Name: "samsa.connect.offset.storage.replication.factor", Type: TypeShort, Default: "-1", Validator: atLeast(-1), Importance: Low,
			Wired: "the worker's offset.storage.replication.factor; -1 leaves it to default.replication.factor" + fileToo + where,
			Doc:   "Replication factor of the offset topic when serve creates it; -1 for the broker's default.replication.factor."},
		{Name: "samsa.connect.status.storage.replication.factor", Type: TypeShort, Default: "-1", Validator: atLeast(-1), Importance: Low,
			Wired: "the worker's status.storage.replication.factor; -1 leaves it to default.replication.factor" + fileToo + where,
			Doc:   "Replication factor of the status topic when serve creates it; -1 for the broker's default.replication.factor."},
		{Name: "samsa.connect.key.converter", Type: TypeString, Default: "org.apache.kafka.connect.json.JsonConverter", Importance: Medium,
			Wired: "the worker's key.converter, checked at start-up (an unknown class stops the start); its options (key.converter.*) go in samsa.connect.worker.config" + fileToo + where,
			Doc:   "Converter of record keys for connectors that name none (Kafka's key.converter)."},
		{Name: "samsa.connect.value.converter", Type: TypeString, Default: "org.apache.kafka.connect.json.JsonConverter", Importance: Medium,
			Wired: "the worker's value.converter, checked at start-up (an unknown class stops the start); its options (value.converter.*) go in samsa.connect.worker.config" + fileToo + where,
			Doc:   "Converter of record values for connectors that name none (Kafka's value.converter)."},
		{Name: "samsa.connect.offset.flush.interval.ms", Type: TypeLong, Default: "10000", Validator: atLeast(1), Importance: Low,
			Wired: "the worker's offset.flush.interval.ms: how often source offsets are written and sink offsets committed" + fileToo + where,
			Doc:   "How often Connect tasks commit their offsets (Kafka's offset.flush.interval.ms); the default is the value of Kafka's sample connect-distributed.properties (a worker's own default is 60000)."},
		{Name: "samsa.connect.worker.config", Type: TypeString, Default: "", Importance: Medium,
			Wired: "read at start-up as a worker properties file (Kafka's names, as samsa connect reads them) for every other worker setting; bootstrap.servers, listeners, security.protocol, ssl.* and sasl.* in it are refused (serve sets the first two; the worker reaches the broker through PLAINTEXT), as is a setting that one of samsa.connect.* also sets" + where,
			Doc:   "Path of a worker.properties with further Connect worker settings (converter options, partitions, timeouts, rest.advertised.*); empty for none."},
	}
}

// consoleEntries configure the web console run inside samsa serve
// (cmd/samsa/console.go, internal/console, docs/DESIGN-console.md): its
// listener, its TLS (the ssl.* names every HTTP service here shares) and
// its login.
func consoleEntries() []*Entry {
	const where = " (cmd/samsa/console.go, internal/console)"
	entries := []*Entry{
		{Name: "samsa.console.listener", Type: TypeString, Default: "127.0.0.1:8080", Validator: hostPort{}, Importance: High,
			Wired: "samsa serve binds this host:port once the broker serves and runs the web console on it (internal/console, docs/DESIGN-console.md), a Kafka client of the broker's first PLAINTEXT listener (its first SASL_PLAINTEXT one when users log in), with the in-process Schema Registry, Connect worker and this broker's HTTP listener when they run; a port in use (or no listener to reach the broker through) stops the start when set, and turns the console off with a warning in the log when left at the default; empty turns it off" + where,
			Doc:   "host:port of the web console run inside samsa serve; empty for none. Port 0 picks a free port. Several nodes on one machine need one port each."},
		{Name: "samsa.console.authentication.kafka.sasl.mechanism", Type: TypeString, Default: "", Validator: oneOf{"", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}, Importance: High,
			Wired: "users log in to the console with their Kafka user and password, checked by a SASL login with this mechanism to this broker's first SASL_PLAINTEXT listener (which must enable it); each session then reaches the cluster with clients logged in as its user, and the registry and Connect with the same credentials, so the cluster's ACLs apply to everything it shows and does" + where,
			Doc:   "SASL mechanism with which console users log in as the cluster's principals; empty lets everyone in as the console's own client."},
		{Name: "samsa.console.page.size", Type: TypeInt, Default: "50", Validator: between(1, 500), Importance: Low,
			Wired: "how many records the console's message browser reads and shows at once" + where,
			Doc:   "Records per page of the console's message browser."},
		{Name: "samsa.console.sample.interval.ms", Type: TypeLong, Default: "5000", Validator: atLeast(100), Importance: Low,
			Wired: "how often the console's live charts sample the cluster while someone watches them" + where,
			Doc:   "Sampling interval of the console's live charts."},
	}
	for _, e := range listenerSecurityEntries("samsa.console.", "console", "", where) {
		if strings.HasPrefix(e.Name, "samsa.console.ssl.") {
			entries = append(entries, e)
		}
	}
	return entries
}

// restSecurityEntries are the REST Proxy's listener security: the
// registry's, and a user the Kafka login accepts runs its requests with a
// Kafka client logged in as itself.
func restSecurityEntries(where string) []*Entry {
	entries := listenerSecurityEntries("samsa.rest.", "REST Proxy", "KafkaRest", where)
	for _, e := range entries {
		if e.Name == "samsa.rest.authentication.kafka.sasl.mechanism" {
			e.Wired = "checks the credentials of users not in the file by a SASL login with them to this broker's first SASL_PLAINTEXT listener, which must enable the mechanism (a success trusted for 60 s); each such user's requests then run with a Kafka client of its own logged in with the same mechanism, so the cluster's ACLs apply to it (pooled: samsa.rest.principal.clients.*)" + where
		}
	}
	return entries
}

// listenerSecurityEntries are the TLS (ssl.*) and basic authentication
// (authentication.*) configs of a client-side service's HTTP listener,
// Confluent's names under prefix, read by internal/httpauth.
func listenerSecurityEntries(prefix, service, realm, where string) []*Entry {
	return []*Entry{
		{Name: prefix + "ssl.keystore.location", Type: TypeString, Default: "", Importance: High,
			Wired: "serves the " + service + " over TLS (https) with this store's key and certificate chain, read by internal/keystore as the broker's stores are" + where,
			Doc:   "Key store of the " + service + "'s listener (Confluent's ssl.keystore.location); empty serves plain HTTP."},
		{Name: prefix + "ssl.keystore.type", Type: TypeString, Default: "PEM", Validator: oneOf{"PEM", "JKS", "PKCS12"}, Importance: Medium,
			Wired: "the format of " + prefix + "ssl.keystore.location (and of the trust store)" + where,
			Doc:   "Format of the " + service + "'s key store: PEM (the certificate chain and the key in one file), JKS or PKCS12."},
		{Name: prefix + "ssl.keystore.password", Type: TypePassword, Default: "", Importance: Medium,
			Wired: "the JKS or PKCS12 key store's password; refused for PEM" + where,
			Doc:   "Password of the " + service + "'s key store."},
		{Name: prefix + "ssl.key.password", Type: TypePassword, Default: "", Importance: Medium,
			Wired: "the password of an encrypted PEM key, or of a JKS key" + where,
			Doc:   "Password of the " + service + "'s private key."},
		{Name: prefix + "ssl.truststore.location", Type: TypeString, Default: "", Importance: Medium,
			Wired: "the CAs that client certificates are verified against" + where,
			Doc:   "Trust store of the " + service + "'s listener (Confluent's ssl.truststore.location), of the same type as the key store."},
		{Name: prefix + "ssl.truststore.password", Type: TypePassword, Default: "", Importance: Medium,
			Wired: "the JKS or PKCS12 trust store's password" + where,
			Doc:   "Password of the " + service + "'s trust store."},
		{Name: prefix + "ssl.client.authentication", Type: TypeString, Default: "NONE", Validator: oneOf{"NONE", "REQUESTED", "REQUIRED"}, Importance: Medium,
			Wired: "whether the listener asks clients for a certificate verified against the trust store; REQUESTED or REQUIRED need TLS and a trust store" + where,
			Doc:   "Client certificate verification on the " + service + "'s listener (Confluent's ssl.client.authentication)."},
		{Name: prefix + "authentication.method", Type: TypeString, Default: "NONE", Validator: oneOf{"NONE", "BASIC"}, Importance: High,
			Wired: "BASIC requires HTTP basic authentication on every request: 401 with WWW-Authenticate, 403 for a role not allowed; it needs a users file or a Kafka login mechanism, which NONE refuses" + where,
			Doc:   "Authentication of the " + service + "'s API (Confluent's authentication.method)."},
		{Name: prefix + "authentication.realm", Type: TypeString, Default: realm, Importance: Low,
			Wired: "the realm of the WWW-Authenticate challenge" + where,
			Doc:   "Realm of basic authentication (Confluent's authentication.realm)."},
		{Name: prefix + "authentication.roles", Type: TypeList, Default: "*", Importance: Medium,
			Wired: "the roles a user needs one of; * lets every authenticated user in (users checked by a Kafka login have no roles)" + where,
			Doc:   "Roles allowed in (Confluent's authentication.roles)."},
		{Name: prefix + "authentication.users.file", Type: TypeString, Default: "", Importance: Medium,
			Wired: "the users of basic authentication, read at start-up in Jetty's PropertyFileLoginModule format (user: password[,role ...], passwords plain or MD5:)" + where,
			Doc:   "Users file of basic authentication (what Confluent's JAAS PropertyFileLoginModule reads)."},
		{Name: prefix + "authentication.kafka.sasl.mechanism", Type: TypeString, Default: "", Validator: oneOf{"", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}, Importance: Medium,
			Wired: "checks the credentials of users not in the file by a SASL login with them to this broker's first SASL_PLAINTEXT listener, which must enable the mechanism; a success is trusted for 60 s" + where,
			Doc:   "SASL mechanism with which basic-auth credentials are checked against the broker's principals; empty for none."},
	}
}

// balancerEntries configure the active controller's balancer
// (controller/balancer.go, docs/DESIGN-balance.md). They are dynamic at
// the cluster default only: the active controller reads them from the
// metadata, so a live cluster turns the balancer on with one
// IncrementalAlterConfigs and a failover keeps it on.
func balancerEntries() []*Entry {
	const where = " (controller/balancer.go)"
	return []*Entry{
		{Name: "samsa.balancer.enable", Type: TypeBoolean, Default: "false", Importance: High, Mode: ClusterDefault,
			Wired: "turns the active controller's balancer on: it plans with internal/balance and moves replicas and preferred leaders" + where,
			Doc:   "Run the automatic balancer on the active controller: replicas, preferred leaders and bytes kept within their spreads, draining brokers and brokers down too long emptied."},
		{Name: "samsa.balancer.interval.ms", Type: TypeLong, Default: "60000", Validator: atLeast(100), Importance: Medium, Mode: ClusterDefault,
			Wired: "the time between two plans; a broker fenced, registered or marked draining, a config change or a move ending plans at once" + where,
			Doc:   "How often the balancer plans when nothing has changed."},
		{Name: "samsa.balancer.replica.spread", Type: TypeInt, Default: "2", Validator: atLeast(1), Importance: Medium, Mode: ClusterDefault,
			Wired: "the planner's ReplicaSpread" + where,
			Doc:   "Most two brokers' replica counts may differ before replicas move."},
		{Name: "samsa.balancer.leader.spread", Type: TypeInt, Default: "2", Validator: atLeast(1), Importance: Medium, Mode: ClusterDefault,
			Wired: "the planner's LeaderSpread" + where,
			Doc:   "Most two brokers' preferred-leader counts may differ before preferred leaders move."},
		{Name: "samsa.balancer.bytes.spread", Type: TypeDouble, Default: "0.2", Validator: nonNegative{}, Importance: Medium, Mode: ClusterDefault,
			Wired: "the planner's BytesSpread, over replica sizes the controller asks the brokers for with DescribeLogDirs" + where,
			Doc:   "Most two brokers' bytes may differ, as a fraction of the mean, before replicas move for size; 0 turns byte balancing off."},
		{Name: "samsa.balancer.max.concurrent.moves", Type: TypeInt, Default: "10", Validator: atLeast(1), Importance: Medium, Mode: ClusterDefault,
			Wired: "the planner's MaxMoves: reassignments in progress (anyone's) plus new ones never exceed it" + where,
			Doc:   "Most partitions being reassigned at once."},
		{Name: "samsa.balancer.max.leader.moves", Type: TypeInt, Default: "100", Validator: atLeast(0), Importance: Low, Mode: ClusterDefault,
			Wired: "the planner's MaxLeaderMoves, and the preferred-leader elections of one round" + where,
			Doc:   "Most preferred-leader changes in one plan; 0 leaves leaders as they are."},
		{Name: "samsa.balancer.broker.down.timeout.ms", Type: TypeLong, Default: "1800000", Validator: atLeast(0), Importance: Medium, Mode: ClusterDefault,
			Wired: "the planner's DownTimeout, counted from the fencing time the metadata records (for a failed log directory, from when the active controller first knew); moves onto a broker down that long are cancelled" + where,
			Doc:   "How long a broker may be fenced, or a replica be on a failed log directory, before the replicas move to other brokers; 0 never moves them for being down."},
		{Name: "samsa.balancer.throttle.bytes.per.second", Type: TypeLong, Default: "104857600", Validator: atLeast(0), Importance: Medium, Mode: ClusterDefault,
			Wired: "set as leader/follower.replication.throttled.rate on the brokers of every reassignment in progress, with the topics' leader/follower.replication.throttled.replicas, as kafka-reassign-partitions.sh --throttle does, and removed when no move is left" + where,
			Doc:   "Replication throttle of the balancer's moves, in bytes per second; 0 leaves the throttle configs alone."},
		{Name: "samsa.broker.draining", Type: TypeBoolean, Default: "false", Importance: Medium, Mode: PerBroker, DynamicOnly: true,
			Wired: "marks a broker for decommission: the balancer moves every replica and preferred leadership off it (controller/balancer_state.go)",
			Doc:   "Set dynamically for one broker (kafka-configs --entity-type brokers --entity-name ID) to move everything off it while the balancer is on."},
	}
}

// nonNegative accepts a double of 0 or more.
type nonNegative struct{}

func (nonNegative) Validate(v any) error {
	if v.(float64) < 0 {
		return errors.New("value must be at least 0")
	}
	return nil
}

func (nonNegative) String() string { return "[0,...]" }

// hostPort accepts host:port with a port from 0 to 65535, or the empty
// string for "none".
type hostPort struct{}

func (hostPort) Validate(v any) error {
	s := v.(string)
	if s == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("must be host:port or empty: %v", err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("port %q must be a number from 0 to 65535", port)
	}
	return nil
}

func (hostPort) String() string { return "host:port, or empty" }

// mirrorEntries configure the mirror samsa serve can run (issue 20,
// cmd/samsa/mirror.go, docs/DESIGN-mirror.md).
func mirrorEntries() []*Entry {
	return []*Entry{
		{Name: "samsa.mirror.config", Type: TypeString, Default: "", Importance: Medium,
			Wired: "samsa serve reads this MirrorMaker 2 properties file at start (an unreadable or refused file stops the start), runs every flow of it in the background once the broker serves (internal/mirror), adds the mirror's metrics to the broker's /metrics, and stops it before the broker on shutdown; empty turns it off (cmd/samsa/mirror.go)",
			Doc:   "Path of a MirrorMaker 2 dedicated-mode properties file (the file `samsa mirror --config` takes) whose flows samsa serve runs in-process; empty (the default) for none. The clusters' bootstrap servers are given in the file, this broker's included."},
	}
}
