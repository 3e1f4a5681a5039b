package cli

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/samsa-io/samsa/internal/restproxy"
)

// newRestCommand runs Confluent's REST Proxy API (the part built so far
// of v3) against any Kafka cluster, as a Kafka client of it.
func newRestCommand() *cobra.Command {
	var conn connection
	var listener string
	var maxBody int64
	var produceRateLimit, requestRateLimit float64
	var registryURL, registryUser, registryPassword string
	var maxPrincipalClients int
	var principalIdle time.Duration
	var lf listenerSecurityFlags
	var consumerInstanceTimeoutMs int64
	var advertisedURL string
	cmd := &cobra.Command{
		Use:   "rest",
		Short: "Run a REST Proxy (Confluent's v3 API) in front of a Kafka cluster",
		Long: `Run a REST Proxy that speaks Confluent's REST Proxy v3 API over HTTP:
clusters, brokers, topics, partitions and replicas, topic configs, and
producing records (one per request, or a stream of them); v2's topics,
partitions, brokers and produce in the embedded formats binary, json, avro,
jsonschema and protobuf (the last three through --schema-registry-url), and
v2 consumer instances. It talks to the cluster as a Kafka client
(the connection flags: TLS and SASL from flags or --command-config), so it
works against any Kafka cluster. It serves until interrupted.

The HTTP listener takes TLS (--listener-tls-*) and basic authentication
(--auth-*). Users checked with --auth-kafka-mechanism are the cluster's
SASL principals, and each one's requests run with a Kafka client logged in
as that user (pooled), so the cluster's ACLs apply to REST users as to
Kafka clients; users of --auth-users run as the proxy's own client.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := conn.clientOpts(cmd, nil)
			if err != nil {
				return err
			}
			if produceRateLimit < 0 {
				return fmt.Errorf("--produce-rate-limit %g: must not be negative", produceRateLimit)
			}
			if registryPassword == "" {
				registryPassword = os.Getenv("SAMSA_SCHEMA_REGISTRY_PASSWORD")
			}
			if requestRateLimit < 0 {
				return fmt.Errorf("--request-rate-limit %g: must not be negative", requestRateLimit)
			}
			if consumerInstanceTimeoutMs <= 0 {
				return fmt.Errorf("--consumer-instance-timeout-ms %d: must be positive", consumerInstanceTimeoutMs)
			}
			if maxBody <= 0 {
				return fmt.Errorf("--max-body %d: must be positive", maxBody)
			}
			serverTLS, _, err := lf.tls()
			if err != nil {
				return err
			}
			auth, loginOpts, err := lf.auth(cmd, &conn)
			if err != nil {
				return err
			}
			cfg := restproxy.Config{
				ClientOpts:       opts,
				MaxBody:          maxBody,
				ProduceRateLimit: produceRateLimit,
				RequestRateLimit: requestRateLimit,
				Timeout:          conn.timeout,
				TLS:              serverTLS,
				Auth:             auth,
				Logger:           slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)),

				ConsumerInstanceTimeout: time.Duration(consumerInstanceTimeoutMs) * time.Millisecond,
				AdvertisedURL:           advertisedURL,
				SchemaRegistryURL:       registryURL,
				SchemaRegistryUser:      registryUser,
				SchemaRegistryPassword:  registryPassword,
			}
			if loginOpts != nil {
				cfg.PrincipalMechanism, cfg.PrincipalClientOpts = lf.kafkaMechanism, loginOpts
				cfg.MaxPrincipalClients, cfg.PrincipalClientIdle = maxPrincipalClients, principalIdle
			} else if cmd.Flags().Changed("principal-clients-max") || cmd.Flags().Changed("principal-clients-idle") {
				return fmt.Errorf("--principal-clients-max and --principal-clients-idle need --auth-kafka-mechanism: only users the cluster logs in get clients of their own")
			}
			if maxPrincipalClients <= 0 || principalIdle <= 0 {
				return fmt.Errorf("--principal-clients-max and --principal-clients-idle must be positive")
			}
			proxy, err := restproxy.New(cfg)
			if err != nil {
				return err
			}
			defer proxy.Close()
			ctx, stop := signalContext(cmd)
			defer stop()
			pingCtx, cancel := conn.opContext(ctx)
			err = proxy.Ping(pingCtx)
			cancel()
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			ln, err := net.Listen("tcp", listener)
			if err != nil {
				return fmt.Errorf("rest: listen on %s: %w", listener, err)
			}
			defer ln.Close()
			scheme := "http"
			if serverTLS != nil {
				scheme = "https"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "rest proxy serving on %s://%s\n", scheme, ln.Addr())
			return proxy.Serve(ctx, ln)
		},
	}
	conn.register(cmd)
	f := cmd.Flags()
	f.StringVar(&listener, "listener", "127.0.0.1:8082", "host:port the HTTP API listens on")
	f.Float64Var(&produceRateLimit, "produce-rate-limit", 0, "most records produced per second by one principal (basic-auth user; without authentication, all clients together), each record of a stream counting; past it a record is answered 429; 0 is no limit")
	f.Int64Var(&consumerInstanceTimeoutMs, "consumer-instance-timeout-ms", restproxy.DefaultConsumerInstanceTimeout.Milliseconds(), "a v2 consumer instance idle this long is closed and leaves its group (Confluent's consumer.instance.timeout.ms)")
	f.StringVar(&advertisedURL, "advertised-url", "", "URL clients reach this proxy at (http[s]://host:port), the start of a v2 consumer instance's base_uri; default: the request's scheme and Host")
	f.Int64Var(&maxBody, "max-body", restproxy.DefaultMaxBody, "largest request body in bytes; a larger one is refused with 413")
	f.StringVar(&registryURL, "schema-registry-url", "", "Schema Registry URL (or a comma-separated list) for the schema formats: avro, jsonschema, protobuf (Confluent's schema.registry.url); without it those formats are refused with 422")
	f.StringVar(&registryUser, "schema-registry-user", "", "user name for the registry's HTTP basic auth (Confluent's basic.auth.user.info)")
	f.StringVar(&registryPassword, "schema-registry-password", "", "password for --schema-registry-user (env SAMSA_SCHEMA_REGISTRY_PASSWORD when the flag is not given)")
	f.Float64Var(&requestRateLimit, "request-rate-limit", 0, "most HTTP requests per second of one principal (basic-auth user; without authentication, all clients together); past it 429; 0 is no limit")
	f.IntVar(&maxPrincipalClients, "principal-clients-max", restproxy.DefaultMaxPrincipalClients, "most Kafka clients kept for users of --auth-kafka-mechanism, one each; past it the least recently used idle one is closed")
	f.DurationVar(&principalIdle, "principal-clients-idle", restproxy.DefaultPrincipalClientIdle, "how long an unused user's Kafka client is kept")
	lf.register(f, "KafkaRest", "")
	return cmd
}
