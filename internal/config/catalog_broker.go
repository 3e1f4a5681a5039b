package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Broker is the catalog of broker configs: what server.properties and dynamic broker
// configs may set, with Kafka 4.x names, defaults and update modes. It covers what Samsa
// implements or an operator's Kafka server.properties commonly carries; ZooKeeper-era and
// removed configs (zookeeper.connect, log.message.format.version ...) are unknown names.
// Samsa's own configs, which Kafka has no equivalent of, are named under SamsaPrefix
// (catalog_samsa.go).
var Broker = newCatalog("broker", brokerEntries())

func brokerEntries() []*Entry {
	var all []*Entry
	for _, part := range [][]*Entry{
		serverEntries(), networkEntries(), securityEntries(), logEntries(),
		cleanerEntries(), replicationEntries(), groupEntries(), groupTypeBrokerEntries(), transactionEntries(), quotaEntries(),
		samsaEntries(), restEntries(), consoleEntries(), connectEntries(), mirrorEntries(), balancerEntries(), confluentBrokerEntries(),
	} {
		all = append(all, part...)
	}
	return all
}

// maxInt is Java's Integer.MAX_VALUE, Kafka's "unlimited" for int configs.
var maxInt = strconv.Itoa(1<<31 - 1)

func serverEntries() []*Entry {
	return []*Entry{
		{Name: "process.roles", Type: TypeList, Default: "", Validator: listOf{"broker", "controller"}, Importance: High,
			Wired: "broker, controller or both; a broker-only node follows the quorum as a Raft non-voter (broker/quorum.go resolveQuorum)",
			Doc:   "Roles this node plays in KRaft mode: broker, controller, or both for a combined node."},
		{Name: "node.id", Type: TypeInt, Default: "-1", Importance: High,
			Wired: "the node's id in its broker registration and controller (serve.go ConfigFromValues)",
			Doc:   "Id of this node in the cluster, shared by its broker and controller roles."},
		{Name: "broker.id", Type: TypeInt, Default: "-1", Importance: High,
			Wired: "synonym of node.id (values.go Parse)",
			Doc:   "Older name for node.id; when both are set they must be equal."},
		{Name: "broker.rack", Type: TypeString, NullDefault: true, Importance: Medium,
			Wired: "the rack of the broker registration, reported by Metadata and DescribeCluster (broker.go startController); new replicas spread over racks first (controller/assign.go; a broker without it is a rack of its own, as in KRaft)",
			Doc:   "Rack of this broker, used to spread replicas across racks and for follower fetching."},
		{Name: "controller.listener.names", Type: TypeString, NullDefault: true, Importance: High,
			Wired: "listeners that carry the quorum's Raft traffic and the controller APIs, never advertised to clients (broker/quorum.go)",
			Doc:   "Comma-separated names of the listeners used by the controller."},
		{Name: "controller.quorum.voters", Type: TypeList, Default: "", Importance: High,
			Wired: "the static quorum, bootstrapped on first start; every node is a voter (broker/quorum.go, controller/raft.go)",
			Doc:   "Static controller quorum as id@host:port entries."},
		{Name: "controller.quorum.bootstrap.servers", Type: TypeList, Default: "", Importance: High,
			Wired: "a broker-only node registers through them, then learns the active controller from the Raft configuration; a controller without controller.quorum.voters bootstraps Raft from the initial voters samsa storage format stored (--standalone, --initial-controllers), and a controller-only node outside them joins as a non-voter until AddRaftVoter promotes it (KIP-853); a combined node naming only itself is the single node (broker/quorum.go, broker/lifecycle.go, controller/raft.go)",
			Doc:   "host:port entries used to find the controller quorum when it is dynamic (KIP-853)."},
		{Name: "controller.quorum.election.timeout.ms", Type: TypeInt, Default: "1000", Validator: atLeast(1), Importance: High,
			Wired: "Raft's heartbeat and election timeouts in a quorum of several voters (controller/raft.go)",
			Doc:   "Time without a leader before a controller starts an election."},
		{Name: "controller.quorum.fetch.timeout.ms", Type: TypeInt, Default: "2000", Importance: High,
			Unsupported: byQuorum,
			Doc:         "Time without a successful fetch from the leader before a voter suspects it."},
		{Name: "controller.quorum.election.backoff.max.ms", Type: TypeInt, Default: "1000", Importance: High,
			Unsupported: byQuorum,
			Doc:         "Largest backoff before starting a new election."},
		{Name: "controller.quorum.append.linger.ms", Type: TypeInt, Default: "25", Importance: Medium,
			Unsupported: byQuorum,
			Doc:         "Time the quorum leader waits to batch metadata writes before flushing them."},
		{Name: "controller.quorum.request.timeout.ms", Type: TypeInt, Default: "2000", Importance: Medium,
			Unsupported: byQuorum,
			Doc:         "Time a quorum request may wait for a response."},
		{Name: "controller.quorum.retry.backoff.ms", Type: TypeInt, Default: "20", Importance: Low,
			Unsupported: byQuorum,
			Doc:         "Wait before retrying a failed quorum request."},
		{Name: "metadata.log.dir", Type: TypeString, NullDefault: true, Importance: High,
			Wired: "directory of the controller's metadata log, __cluster_metadata, and formatted with meta.properties like a log dir (format.go metadataLogDirOf)",
			Doc:   "Directory of the cluster metadata log; by default the first of log.dirs."},
		{Name: "metadata.log.segment.bytes", Type: TypeInt, Default: "1073741824", Validator: atLeast(12), Importance: High,
			Unsupported: byQuorum,
			Doc:         "Segment size of the metadata log."},
		{Name: "metadata.log.segment.ms", Type: TypeLong, Default: "604800000", Importance: High,
			Unsupported: byQuorum,
			Doc:         "Time after which a metadata log segment is rolled."},
		{Name: "metadata.max.retention.bytes", Type: TypeLong, Default: "104857600", Importance: High,
			Unsupported: byQuorum,
			Doc:         "Size of metadata log and snapshots kept before old ones are deleted."},
		{Name: "metadata.max.retention.ms", Type: TypeLong, Default: "604800000", Importance: High,
			Unsupported: byQuorum,
			Doc:         "Age after which metadata log segments and snapshots are deleted."},
		{Name: "metadata.log.max.record.bytes.between.snapshots", Type: TypeLong, Default: "20971520", Validator: atLeast(1), Importance: High,
			Unsupported: byQuorum,
			Doc:         "Metadata bytes appended since the last snapshot that trigger a new one."},
		{Name: "metadata.log.max.snapshot.interval.ms", Type: TypeLong, Default: "3600000", Validator: atLeast(0), Importance: High,
			Unsupported: byQuorum,
			Doc:         "Longest time between metadata snapshots when there are new records; 0 turns the time trigger off."},
		{Name: "metadata.max.idle.interval.ms", Type: TypeInt, Default: "500", Validator: atLeast(0), Importance: Low,
			Unsupported: byQuorum,
			Doc:         "How often the active controller writes a no-op record so followers see the log advance."},
		{Name: "broker.heartbeat.interval.ms", Type: TypeInt, Default: "2000", Importance: Medium,
			Wired: "interval of the broker's heartbeats to the active controller, in a quorum (broker/lifecycle.go)",
			Doc:   "Interval between broker heartbeats to the controller."},
		{Name: "broker.session.timeout.ms", Type: TypeInt, Default: "9000", Importance: Medium,
			Wired: "the active controller fences a broker not heard from for this long (controller/brokers.go), and bounds a controlled shutdown",
			Doc:   "Time without heartbeats after which the controller fences a broker."},
		{Name: "initial.broker.registration.timeout.ms", Type: TypeInt, Default: "60000", Importance: Medium,
			Wired: "how long a starting broker in a quorum waits to be registered and unfenced (broker/lifecycle.go)",
			Doc:   "Time a starting broker waits to register with the controller before giving up."},
		{Name: "auto.create.topics.enable", Type: TypeBoolean, Default: "true", Importance: High,
			Wired: "Metadata creates missing topics (03_metadata.go)",
			Doc:   "Create a topic when a client asks for metadata of one that does not exist."},
		{Name: "delete.topic.enable", Type: TypeBoolean, Default: "true", Importance: High,
			Wired: "DeleteTopics is refused when false (controller/topics.go)",
			Doc:   "Allow topics to be deleted; when false, DeleteTopics is refused."},
		{Name: "num.partitions", Type: TypeInt, Default: "1", Validator: atLeast(1), Importance: Medium,
			Wired: "partition count of topics created without one (controller/topics.go)",
			Doc:   "Partition count of topics created without one."},
		{Name: "default.replication.factor", Type: TypeInt, Default: "1", Importance: Medium,
			Wired: "replication factor of topics created without one (controller/topics.go)",
			Doc:   "Replication factor of topics created without one."},
		{Name: "num.io.threads", Type: TypeInt, Default: "8", Validator: atLeast(1), Importance: High, Mode: ClusterWide,
			NoEffect: "Samsa has no request handler pool: each connection's requests run on that connection's goroutine",
			Doc:      "Threads that handle requests, including disk I/O."},
		{Name: "background.threads", Type: TypeInt, Default: "10", Validator: atLeast(1), Importance: High, Mode: ClusterWide,
			NoEffect: "retention, flushing and cleaning run on goroutines of their own, not on a thread pool",
			Doc:      "Threads for background tasks such as retention and segment deletion."},
		{Name: "request.timeout.ms", Type: TypeInt, Default: "30000", Importance: High,
			Unsupported: "the broker sends no requests of its own yet; " + byCluster,
			Doc:         "Time the broker's own client requests (to the controller, to leaders) wait for a response."},
		{Name: "fetch.max.bytes", Type: TypeInt, Default: "57671680", Validator: atLeast(1024), Importance: Medium,
			Wired: "caps the MaxBytes of every fetch (01_fetch.go)",
			Doc:   "Largest fetch response the broker returns, whatever the client asks."},
		{Name: "max.incremental.fetch.session.cache.slots", Type: TypeInt, Default: "1000", Validator: atLeast(0), Importance: Medium,
			Wired: "size of the fetch session cache; a new session evicts the least recently used one, and with 0 every fetch is sessionless (fetch_session.go)",
			Doc:   "Incremental fetch sessions (KIP-227) the broker keeps."},
		{Name: "max.request.partition.size.limit", Type: TypeInt, Default: "2000", Validator: atLeast(1), Importance: Medium,
			Wired: "most partitions one DescribeTopicPartitions response holds (75_describe_topic_partitions.go)",
			Doc:   "Most partitions one request may name."},
		{Name: "controlled.shutdown.enable", Type: TypeBoolean, Default: "true", Importance: Medium,
			Unsupported: byCluster,
			Doc:         "Move leadership away before the broker shuts down."},
		{Name: "telemetry.max.bytes", Type: TypeInt, Default: "1048576", Validator: atLeast(1), Importance: Low,
			Wired: "the largest PushTelemetry payload as sent (KIP-714; past it TELEMETRY_TOO_LARGE), told to clients by GetTelemetrySubscriptions; decompressed, a payload may be 4 times it (broker/72_push_telemetry.go, internal/telemetry). The telemetry APIs are served with samsa.http.listener set, where pushed metrics are shown",
			Doc:   "Largest metrics payload a client may push (after compression), in bytes."},
		{Name: "metric.reporters", Type: TypeList, Default: "", Importance: Low, Mode: ClusterWide,
			Unsupported: byJava + "; " + byQuotas,
			Doc:         "Metric reporter classes (Java). Samsa serves its metrics in Prometheus' format on /metrics of samsa.http.listener instead."},
	}
}

func networkEntries() []*Entry {
	return []*Entry{
		{Name: "listeners", Type: TypeString, Default: "PLAINTEXT://:9092", Validator: listenerList{}, Importance: High, Mode: PerBroker,
			Wired: "the addresses bound at startup (broker.go Start)", StartupOnly: true,
			Doc: "Addresses to listen on as NAME://host:port; an empty host binds the default interface, 0.0.0.0 all."},
		{Name: "advertised.listeners", Type: TypeString, NullDefault: true, Validator: listenerList{}, Importance: High, Mode: PerBroker,
			Wired: "the endpoints registered for clients (broker.go startController)", StartupOnly: true,
			Doc: "Addresses given to clients, as NAME://host:port; defaults to listeners."},
		{Name: "listener.security.protocol.map", Type: TypeString, Default: "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
			Validator: protocolMap{}, Importance: Low, Mode: PerBroker,
			Wired: "the security protocol of each listener: TLS on SSL and SASL_SSL, a SASL exchange on SASL_PLAINTEXT and SASL_SSL (broker/security.go); between the nodes of a cluster only PLAINTEXT so far", StartupOnly: true,
			Doc: "Security protocol of each listener name, as NAME:PROTOCOL pairs."},
		{Name: "inter.broker.listener.name", Type: TypeString, NullDefault: true, Importance: Medium,
			Wired: "the listener of the leader a follower fetches from; by default the leader's first client listener (broker/replicas.go leaderAddr)",
			Doc:   "Listener brokers use to talk to each other; set this or security.inter.broker.protocol, not both."},
		{Name: "security.inter.broker.protocol", Type: TypeString, Default: "PLAINTEXT", Validator: securityProtocols, Importance: Medium,
			Unsupported: byCluster,
			Doc:         "Security protocol brokers use to talk to each other."},
		{Name: "early.start.listeners", Type: TypeString, NullDefault: true, Importance: High,
			Unsupported: "every listener starts once the authorizer holds the metadata image's ACLs, except that controller listeners serve the SASL exchange before (so Raft can log in); which listeners start early cannot be chosen",
			Doc:         "Listeners started before authorizer initialisation completes; defaults to the controller listeners."},
		{Name: "socket.send.buffer.bytes", Type: TypeInt, Default: "102400", Importance: High,
			Wired: "SO_SNDBUF of each accepted connection, as Kafka sets it (listen.go configureConn)",
			Doc:   "SO_SNDBUF of server sockets; -1 keeps the OS default."},
		{Name: "socket.receive.buffer.bytes", Type: TypeInt, Default: "102400", Importance: High,
			Wired: "SO_RCVBUF of each listening socket before it binds, inherited by the connections it accepts, as Kafka sets it (listen.go)",
			Doc:   "SO_RCVBUF of server sockets; -1 keeps the OS default."},
		{Name: "socket.request.max.bytes", Type: TypeInt, Default: "104857600", Validator: atLeast(1), Importance: High,
			Wired: "frames larger than this close the connection before anything is allocated (conn.go readLoop)",
			Doc:   "Largest request frame accepted; larger frames close the connection before anything is allocated."},
		{Name: "socket.listen.backlog.size", Type: TypeInt, Default: "50", Validator: atLeast(1), Importance: Medium,
			Wired: "backlog of each listening socket (listen.go)",
			Doc:   "Pending connection backlog of each listening socket."},
		{Name: "socket.connection.setup.timeout.ms", Type: TypeLong, Default: "10000", Importance: Medium,
			Unsupported: "the broker opens no connections of its own yet; " + byCluster,
			Doc:         "Time the broker's own clients wait for a connection to be set up."},
		{Name: "socket.connection.setup.timeout.max.ms", Type: TypeLong, Default: "30000", Importance: Medium,
			Unsupported: "the broker opens no connections of its own yet; " + byCluster,
			Doc:         "Upper bound of the exponentially growing connection setup timeout."},
		{Name: "connections.max.idle.ms", Type: TypeLong, Default: "600000", Importance: Medium,
			Wired: "read and write deadline of every connection (conn.go)",
			Doc:   "Close connections idle for this long."},
		{Name: "connection.failed.authentication.delay.ms", Type: TypeInt, Default: "100", Validator: atLeast(0), Importance: Low,
			Wired: "a failed SASL authentication is answered and its connection closed after this delay (broker/sasl.go authFailed)",
			Doc:   "Delay before closing a connection that failed authentication, to slow brute-force attempts."},
		{Name: "max.connections", Type: TypeInt, Default: maxInt, Validator: atLeast(0), Importance: Medium, Mode: ClusterWide, PerListener: true,
			Wired: "at the limit, broker-wide or of the listener, the acceptor waits for a connection to close before accepting the next, which waits in the listen backlog meanwhile, as in Kafka; dynamic updates apply to new connections (connlimit.go)",
			Doc:   "Most connections the broker accepts, across listeners or per listener with a listener prefix."},
		{Name: "max.connections.per.ip", Type: TypeInt, Default: maxInt, Validator: atLeast(0), Importance: Medium, Mode: ClusterWide,
			Wired: "a connection from an IP at its limit is closed at once, as in Kafka; dynamic updates apply to new connections (connlimit.go)",
			Doc:   "Most connections accepted from one IP address."},
		{Name: "max.connections.per.ip.overrides", Type: TypeString, Default: "", Validator: hostCounts{}, Importance: Medium, Mode: ClusterWide,
			Wired: "limits by IP, a host name counting for each address it resolves to when the value changes (connlimit.go)",
			Doc:   "Per host or IP limits overriding max.connections.per.ip, as host:count pairs."},
		{Name: "max.connection.creation.rate", Type: TypeInt, Default: maxInt, Validator: atLeast(0), Importance: Medium, Mode: ClusterWide, PerListener: true,
			Wired: "past the rate, broker-wide or of the listener, the acceptor waits out the throttle time (at most quota.window.size.seconds) before it takes the connection, as in Kafka (KIP-612, broker/connrate.go)",
			Doc:   "Most new connections per second the broker accepts."},
		{Name: "queued.max.requests", Type: TypeInt, Default: "500", Validator: atLeast(1), Importance: High,
			NoEffect: "Samsa has no shared request queue between network and handler threads: a connection reads its next request only once the current one is answered",
			Doc:      "Requests queued for the request handlers before network threads stop reading."},
		{Name: "queued.max.request.bytes", Type: TypeLong, Default: "-1", Importance: Medium,
			Unsupported: "a broker-wide bound on the memory of requests being read is not there yet; " + byQuotas,
			Doc:         "Bytes of queued requests before network threads stop reading; -1 means no limit."},
		{Name: "num.network.threads", Type: TypeInt, Default: "3", Validator: atLeast(1), Importance: High, Mode: ClusterWide, PerListener: true,
			NoEffect: "each connection has its own reader and writer goroutines; there are no network threads to size",
			Doc:      "Threads that read requests from and write responses to the network."},
	}
}

func securityEntries() []*Entry {
	return []*Entry{
		{Name: "authorizer.class.name", Type: TypeString, Default: "", Importance: Low, Validator: authorizerClass{},
			Wired: "org.apache.kafka.metadata.authorizer.StandardAuthorizer checks every request against the ACLs of the metadata log; empty: no authorizer, everything is allowed and the ACL APIs answer SECURITY_DISABLED (broker/authz.go)",
			Doc:   "Authorizer to use; empty allows every operation."},
		{Name: "super.users", Type: TypeString, NullDefault: true, Importance: Low, Validator: principalList{},
			Wired: "principals the authorizer allows everything, whatever the ACLs say (broker/authz.go)",
			Doc:   "Principals allowed everything, separated by semicolons (User:admin;User:ops)."},
		{Name: "allow.everyone.if.no.acl.found", Type: TypeBoolean, Default: "false", Importance: Low,
			Wired: "the authorizer allows an operation on a resource that no ACL applies to (broker/authz.go)",
			Doc:   "Allow access to resources that have no ACLs at all."},
		{Name: "principal.builder.class", Type: TypeClass, Default: "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder",
			Importance: Medium, Mode: PerBroker, PerListener: true,
			Unsupported: byJava + "; the default builder's rules are wired: the SASL user, or the certificate's subject through ssl.principal.mapping.rules",
			Doc:         "Builds the principal of an authenticated connection."},
		{Name: "sasl.enabled.mechanisms", Type: TypeList, Default: "GSSAPI", Importance: Medium, Mode: PerBroker, PerListener: true,
			Wired: "the mechanisms a SASL_PLAINTEXT or SASL_SSL listener offers in SaslHandshake; PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (GSSAPI is refused at startup) (broker/security.go)", StartupOnly: true,
			Doc: "SASL mechanisms the broker accepts, such as PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512."},
		{Name: "sasl.mechanism.inter.broker.protocol", Type: TypeString, Default: "GSSAPI", Importance: Medium, Mode: PerBroker,
			Wired: "the mechanism this node logs in with to the other brokers' inter-broker listener (replica fetches, markers, Raft to broker-only nodes), with the username and password of that listener's JAAS config for it (broker/peer_security.go)", StartupOnly: true,
			Doc: "SASL mechanism brokers use to talk to each other."},
		{Name: "sasl.mechanism.controller.protocol", Type: TypeString, Default: "GSSAPI", Importance: High,
			Wired: "the mechanism this node logs in with to the controller listeners (registration, heartbeats, forwarded writes, Raft between voters), with the username and password of that listener's JAAS config for it (broker/peer_security.go)",
			Doc:   "SASL mechanism used to talk to the controller."},
		{Name: "sasl.jaas.config", Type: TypePassword, NullDefault: true, Importance: Medium, Mode: PerBroker, PerMechanism: true,
			Wired: "per listener and mechanism: PLAIN's users (user_<name>=\"<password>\"), OAUTHBEARER's unsecured-token options; the unprefixed name is the fallback (broker/security.go)", StartupOnly: true,
			Doc: "JAAS login context, set per listener and mechanism; holds the PLAIN users or SCRAM login."},
		{Name: "sasl.server.max.receive.size", Type: TypeInt, Default: "524288", Importance: Medium,
			Wired: "frames larger than this before authentication completes close the connection (broker/conn.go readLoop)",
			Doc:   "Largest SASL authentication message accepted before authentication completes."},
		{Name: "connections.max.reauth.ms", Type: TypeLong, Default: "0", Importance: Medium, PerListener: true, PerMechanism: true,
			Wired: "SaslAuthenticate's session lifetime (KIP-368), bounded by the credential's expiry; a connection whose session expired is closed at its next request other than a re-authentication (broker/sasl.go)",
			Doc:   "Longest session before a client must re-authenticate (KIP-368); 0 turns re-authentication off."},
		{Name: "sasl.server.callback.handler.class", Type: TypeClass, NullDefault: true, Importance: Medium, Mode: PerBroker, PerMechanism: true, StartupOnly: true,
			Validator: oneOf{oauthValidatorClass, oauthUnsecuredValidatorClass},
			Wired:     "per listener and mechanism: Kafka's OAUTHBEARER validator classes choose JWT validation against sasl.oauthbearer.jwks.endpoint.url or the unsecured validator; no other class can be loaded (broker/security.go)",
			Doc:       "SASL server callback handler; for OAUTHBEARER, Kafka's OAuthBearerValidatorCallbackHandler validates JWTs against a JWKS."},
		{Name: "sasl.oauthbearer.jwks.endpoint.url", Type: TypeString, NullDefault: true, Importance: Medium, Mode: PerBroker, PerMechanism: true, StartupOnly: true,
			Wired: "OAUTHBEARER validates JWTs against this key set (https/http URL, file: URL or path), fetched at startup (broker/security.go)",
			Doc:   "Where the JSON Web Key Set that signs OAUTHBEARER tokens is found."},
		{Name: "sasl.oauthbearer.jwks.endpoint.refresh.ms", Type: TypeLong, Default: "3600000", Validator: atLeast(1), Importance: Low, PerMechanism: true,
			Wired: "the key set is fetched again this often, and soon after a token names a key it lacks (broker/security.go)",
			Doc:   "How often the JWKS is fetched again."},
		{Name: "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", Type: TypeLong, Default: "100", Validator: atLeast(0), Importance: Low, PerMechanism: true,
			Wired: "wait before fetching the key set after a token named an unknown key, and between failed fetches (broker/security.go)",
			Doc:   "Initial wait between attempts to fetch the JWKS."},
		{Name: "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", Type: TypeLong, Default: "10000", Validator: atLeast(0), Importance: Low, PerMechanism: true,
			Wired: "longest wait between failed fetches of the key set (broker/security.go)",
			Doc:   "Longest wait between attempts to fetch the JWKS."},
		{Name: "sasl.oauthbearer.expected.audience", Type: TypeList, Default: "", Importance: Low, PerMechanism: true,
			Wired: "a JWT must name one of these audiences; with none, a JWT that names any is refused, as in Kafka (auth/sasl_oauthbearer.go)",
			Doc:   "Audiences an OAUTHBEARER token must name one of."},
		{Name: "sasl.oauthbearer.expected.issuer", Type: TypeString, NullDefault: true, Importance: Low, PerMechanism: true,
			Wired: "a JWT's iss must equal it when set (auth/sasl_oauthbearer.go)",
			Doc:   "Issuer an OAUTHBEARER token must carry."},
		{Name: "sasl.oauthbearer.sub.claim.name", Type: TypeString, Default: "sub", Importance: Low, PerMechanism: true,
			Wired: "the JWT claim that names the principal (auth/sasl_oauthbearer.go)",
			Doc:   "Claim holding the principal's name."},
		{Name: "sasl.oauthbearer.scope.claim.name", Type: TypeString, Default: "scope", Importance: Low, PerMechanism: true,
			Wired: "the JWT claim that holds the scope (auth/sasl_oauthbearer.go)",
			Doc:   "Claim holding the token's scope."},
		{Name: "sasl.oauthbearer.clock.skew.seconds", Type: TypeInt, Default: "30", Validator: atLeast(0), Importance: Low, PerMechanism: true,
			Wired: "leeway of a JWT's exp, iat and nbf (auth/sasl_oauthbearer.go)",
			Doc:   "Clock difference allowed between the broker and the token issuer."},
		{Name: "delegation.token.secret.key", Type: TypePassword, NullDefault: true, Importance: Medium,
			Wired: "the key of the delegation tokens' HMACs (HmacSHA512 of the token ID), on the controller that creates and renews them and on every broker that logs them in and describes them; unset or empty, the token APIs answer DELEGATION_TOKEN_AUTH_DISABLED and tokenauth logins fail (controller/delegation_tokens.go, broker/token_logins.go, broker/41_describe_delegation_token.go). Kafka 4 removed the older name delegation.token.master.key",
			Doc:   "Secret key that generates and verifies delegation tokens; the same on every broker and controller. Unset or empty turns delegation tokens off."},
		{Name: "delegation.token.max.lifetime.ms", Type: TypeLong, Default: "604800000", Validator: atLeast(1), Importance: Medium,
			Wired: "the longest a token lives, renewals included; CreateDelegationToken may ask for less (controller/delegation_tokens.go)",
			Doc:   "Maximum lifetime of a delegation token, beyond which it cannot be renewed. Default 7 days."},
		{Name: "delegation.token.expiry.time.ms", Type: TypeLong, Default: "86400000", Validator: atLeast(1), Importance: Medium,
			Wired: "how long a token is valid after its creation or a renewal; RenewDelegationToken may ask for less (controller/delegation_tokens.go)",
			Doc:   "Validity of a delegation token before it must be renewed. Default 1 day."},
		{Name: "delegation.token.expiry.check.interval.ms", Type: TypeLong, Default: "3600000", Validator: atLeast(1), Importance: Low,
			Wired: "how often the active controller removes expired tokens from the metadata log; an expired token no longer logs in even before that (controller/delegation_tokens.go)",
			Doc:   "Interval between removals of expired delegation tokens."},
		{Name: "ssl.principal.mapping.rules", Type: TypeString, Default: "DEFAULT", Importance: Low, Mode: ReadOnly, PerListener: true,
			Wired: "maps a client certificate's distinguished name to the principal's name (auth/principal_mapping.go)",
			Doc:   "Rules (RULE:pattern/replacement/[LU], DEFAULT) mapping a certificate's distinguished name to a user name."},
		{Name: "ssl.allow.dn.changes", Type: TypeBoolean, Default: "false", Importance: Low, Mode: PerBroker, PerListener: true,
			Wired: "whether a reloaded key store may change its certificate's subject (auth/tls.go)",
			Doc:   "Allow a key store update to change the certificate's distinguished name."},
		{Name: "ssl.allow.san.changes", Type: TypeBoolean, Default: "false", Importance: Low, Mode: PerBroker, PerListener: true,
			Wired: "whether a reloaded key store may drop subject alternative names (auth/tls.go)",
			Doc:   "Allow a key store update to change the certificate's subject alternative names."},
		{Name: "ssl.protocol", Type: TypeString, Default: "TLSv1.3", Importance: Medium, Mode: PerBroker, PerListener: true,
			NoEffect: "Go's crypto/tls negotiates the highest version ssl.enabled.protocols allows; there is no SSLContext protocol to choose",
			Doc:      "TLS protocol used to build the TLS context."},
		{Name: "ssl.enabled.protocols", Type: TypeList, Default: "TLSv1.2,TLSv1.3", Importance: Medium, Mode: PerBroker, PerListener: true,
			Wired: "the TLS of SSL and SASL_SSL listeners, per listener; key and trust stores reload when their files change, checked at most once a second on a new handshake (auth/tls.go, broker/security.go); a dynamic update applies to new connections (broker/security.go reconfigureTLS)",
			Doc:   "TLS versions accepted on connections."},
		{Name: "ssl.cipher.suites", Type: TypeList, Default: "", Importance: Medium, Mode: PerBroker, PerListener: true,
			Wired: "the TLS of SSL and SASL_SSL listeners, per listener; key and trust stores reload when their files change, checked at most once a second on a new handshake (auth/tls.go, broker/security.go); a dynamic update applies to new connections (broker/security.go reconfigureTLS)",
			Doc:   "Cipher suites allowed; empty allows the runtime's defaults."},
		{Name: "ssl.client.auth", Type: TypeString, Default: "none", Validator: oneOf{"required", "requested", "none"}, Importance: Medium, Mode: PerBroker, PerListener: true,
			Wired: "the TLS of SSL and SASL_SSL listeners, per listener; key and trust stores reload when their files change, checked at most once a second on a new handshake (auth/tls.go, broker/security.go); a dynamic update applies to new connections (broker/security.go reconfigureTLS)",
			Doc:   "Whether TLS clients must, may, or need not present a certificate."},
		{Name: "ssl.endpoint.identification.algorithm", Type: TypeString, Default: "https", Importance: Low, Mode: PerBroker, PerListener: true,
			Validator: oneOf{"https", ""},
			Wired:     "host name verification of this node's TLS connections to the other nodes; empty verifies the certificate chain only (auth/tls.go NewClientTLS)", StartupOnly: true,
			Doc: "Host name verification of the peer certificate; empty turns it off."},
		{Name: "ssl.keystore.type", Type: TypeString, Default: "JKS", Importance: Medium, Mode: PerBroker, PerListener: true,
			Wired: "the TLS of SSL and SASL_SSL listeners, per listener; key and trust stores reload when their files change, checked at most once a second on a new handshake (auth/tls.go, broker/security.go); a dynamic update applies to new connections (broker/security.go reconfigureTLS)",
			Doc:   "Format of the key store file (JKS, PKCS12 or PEM)."},
		{Name: "ssl.keystore.location", Type: TypeString, NullDefault: true, Importance: Medium, Mode: PerBroker, PerListener: true,
			Wired: "the TLS of SSL and SASL_SSL listeners, per listener; key and trust stores reload when their files change, checked at most once a second on a new handshake (auth/tls.go, broker/security.go); a dynamic update applies to new connections (broker/security.go reconfigureTLS)",
			Doc:   "Path of the key store holding the broker's certificate and key."},
		{Name: "ssl.keystore.password", Type: TypePassword, NullDefault: true, Importance: Medium, Mode: PerBroker, PerListener: true,
			Wired: "the TLS of SSL and SASL_SSL listeners, per listener; key and trust stores reload when their files change, checked at most once a second on a new handshake (auth/tls.go, broker/security.go); a dynamic update applies to new connections (broker/security.go reconfigureTLS)",
			Doc:   "Password of the key store file."},
		{Name: "ssl.key.password", Type: TypePassword, NullDefault: true, Importance: Medium, Mode: PerBroker, PerListener: true,
			Wired: "the TLS of SSL and SASL_SSL listeners, per listener; key and trust stores reload when their files change, checked at most once a second on a new handshake (auth/tls.go, broker/security.go); a dynamic update applies to new connections (broker/security.go reconfigureTLS)",
			Doc:   "Password of the private key in the key store."},
		{Name: "ssl.keystore.certificate.chain", Type: TypePassword, NullDefault: true, Importance: Medium, Mode: PerBroker, PerListener: true,
			Wired: "the TLS of SSL and SASL_SSL listeners, per listener; key and trust stores reload when their files change, checked at most once a second on a new handshake (auth/tls.go, broker/security.go); a dynamic update applies to new connections (broker/security.go reconfigureTLS)",
			Doc:   "PEM certificate chain given inline instead of a key store file."},
		{Name: "ssl.keystore.key", Type: TypePassword, NullDefault: true, Importance: Medium, Mode: PerBroker, PerListener: true,
			Wired: "the TLS of SSL and SASL_SSL listeners, per listener; key and trust stores reload when their files change, checked at most once a second on a new handshake (auth/tls.go, broker/security.go); a dynamic update applies to new connections (broker/security.go reconfigureTLS)",
			Doc:   "PEM private key given inline instead of a key store file."},
		{Name: "ssl.truststore.type", Type: TypeString, Default: "JKS", Importance: Medium, Mode: PerBroker, PerListener: true,
			Wired: "the TLS of SSL and SASL_SSL listeners, per listener; key and trust stores reload when their files change, checked at most once a second on a new handshake (auth/tls.go, broker/security.go); a dynamic update applies to new connections (broker/security.go reconfigureTLS)",
			Doc:   "Format of the trust store file (JKS, PKCS12 or PEM)."},
		{Name: "ssl.truststore.location", Type: TypeString, NullDefault: true, Importance: Medium, Mode: PerBroker, PerListener: true,
			Wired: "the TLS of SSL and SASL_SSL listeners, per listener; key and trust stores reload when their files change, checked at most once a second on a new handshake (auth/tls.go, broker/security.go); a dynamic update applies to new connections (broker/security.go reconfigureTLS)",
			Doc:   "Path of the trust store holding the CA certificates that client certificates must chain to."},
		{Name: "ssl.truststore.password", Type: TypePassword, NullDefault: true, Importance: Medium, Mode: PerBroker, PerListener: true,
			Wired: "the TLS of SSL and SASL_SSL listeners, per listener; key and trust stores reload when their files change, checked at most once a second on a new handshake (auth/tls.go, broker/security.go); a dynamic update applies to new connections (broker/security.go reconfigureTLS)",
			Doc:   "Password of the trust store file."},
		{Name: "ssl.truststore.certificates", Type: TypePassword, NullDefault: true, Importance: Medium, Mode: PerBroker, PerListener: true,
			Wired: "the TLS of SSL and SASL_SSL listeners, per listener; key and trust stores reload when their files change, checked at most once a second on a new handshake (auth/tls.go, broker/security.go); a dynamic update applies to new connections (broker/security.go reconfigureTLS)",
			Doc:   "PEM CA certificates given inline instead of a trust store file."},
	}
}

// Kafka's OAUTHBEARER validator callback handlers, the only server callback
// classes Samsa recognises.
const (
	oauthValidatorClass          = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
	oauthUnsecuredValidatorClass = "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler"
)

func quotaEntries() []*Entry {
	return []*Entry{
		{Name: "quota.window.num", Type: TypeInt, Default: "11", Validator: atLeast(1), Importance: Low,
			Wired: "the windows a client quota's rate is measured over (quota/rate.go)",
			Doc:   "Samples kept in memory for client quotas."},
		{Name: "quota.window.size.seconds", Type: TypeInt, Default: "1", Validator: atLeast(1), Importance: Low,
			Wired: "the length of each client quota window (quota/rate.go)",
			Doc:   "Length of each client quota sample."},
		{Name: "replication.quota.window.num", Type: TypeInt, Default: "11", Validator: atLeast(1), Importance: Low,
			Wired: "the windows the replication throttles' rates are measured over (quota/replication.go)",
			Doc:   "Samples kept in memory for replication quotas."},
		{Name: "replication.quota.window.size.seconds", Type: TypeInt, Default: "1", Validator: atLeast(1), Importance: Low,
			Wired: "the length of each replication throttle window (quota/replication.go)",
			Doc:   "Length of each replication quota sample."},
		{Name: "controller.quota.window.num", Type: TypeInt, Default: "11", Validator: atLeast(1), Importance: Low,
			Wired: "with controller.quota.window.size.seconds, the burst of the controller mutation quota's token bucket: quota × windows × size (quota/bucket.go)",
			Doc:   "Samples kept in memory for controller mutation quotas."},
		{Name: "controller.quota.window.size.seconds", Type: TypeInt, Default: "1", Validator: atLeast(1), Importance: Low,
			Wired: "see controller.quota.window.num (quota/bucket.go)",
			Doc:   "Length of each controller mutation quota sample."},
		{Name: "client.quota.callback.class", Type: TypeClass, NullDefault: true, Importance: Low,
			Unsupported: byJava + "; " + byQuotas,
			Doc:         "Custom client quota callback; Samsa has none and accepts the name for compatibility."},
		{Name: "leader.replication.throttled.rate", Type: TypeLong, Default: maxLong, Validator: atLeast(0), Importance: Medium, Mode: ClusterWide,
			Wired: "the leader's replication throttle, over the replicas of this broker that the topics' leader.replication.throttled.replicas list, for followers outside the ISR (broker/replication_throttle.go, fetch_replica.go); live on every change. A server.properties value is the rate until a dynamic one is set, where Kafka reads only dynamic ones",
			Doc:   "Bytes per second of replication traffic a leader sends for throttled replicas."},
		{Name: "follower.replication.throttled.rate", Type: TypeLong, Default: maxLong, Validator: atLeast(0), Importance: Medium, Mode: ClusterWide,
			Wired: "the follower's replication throttle, over the replicas of this broker that the topics' follower.replication.throttled.replicas list, while out of sync (broker/replication_throttle.go, replicas.go); live on every change. A server.properties value is the rate until a dynamic one is set, where Kafka reads only dynamic ones",
			Doc:   "Bytes per second of replication traffic a follower fetches for throttled replicas."},
		{Name: "replica.alter.log.dirs.io.max.bytes.per.second", Type: TypeLong, Default: maxLong, Validator: atLeast(0), Importance: Medium, Mode: ClusterWide,
			Wired: "paces the copy of replicas moved between log directories by AlterReplicaLogDirs, reads and writes together, read before each 1 MiB chunk (34_alter_replica_log_dirs.go pace)",
			Doc:   "Bytes per second of disk traffic for moving replicas between log directories."},
	}
}

// StandardAuthorizer is the one authorizer.class.name Samsa implements:
// KRaft's, over the ACLs of the metadata log.
const StandardAuthorizer = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

// authorizerClass accepts no authorizer ("") or StandardAuthorizer, and
// says why Kafka's other classes are refused.
type authorizerClass struct{}

func (authorizerClass) Validate(v any) error {
	switch v.(string) {
	case "", StandardAuthorizer:
		return nil
	case "kafka.security.authorizer.AclAuthorizer", "kafka.security.auth.SimpleAclAuthorizer":
		return fmt.Errorf("ZooKeeper's ACL authorizer, removed in Kafka 4; a KRaft cluster uses %s", StandardAuthorizer)
	}
	return fmt.Errorf("no such authorizer here: use %s, or leave it empty for none", StandardAuthorizer)
}

func (authorizerClass) String() string { return `["", ` + StandardAuthorizer + "]" }

// principalList is super.users: Type:Name principals separated by
// semicolons, each checked as Kafka's StandardAuthorizer does when it is
// configured (an empty item is skipped).
type principalList struct{}

func (principalList) Validate(v any) error {
	for _, p := range strings.Split(v.(string), ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if t, _, ok := strings.Cut(p, ":"); !ok || t == "" {
			return fmt.Errorf("expected a string in format principalType:principalName but got %s", p)
		}
	}
	return nil
}

func (principalList) String() string { return "Type:Name;..." }
