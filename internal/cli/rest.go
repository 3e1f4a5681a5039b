package cli

import (
	"fmt"
	"log/slog"
	"net"
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
	var produceRateLimit float64
	var consumerInstanceTimeoutMs int64
	var advertisedURL string
	cmd := &cobra.Command{
		Use:   "rest",
		Short: "Run a REST Proxy (Confluent's v3 API) in front of a Kafka cluster",
		Long: `Run a REST Proxy that speaks Confluent's REST Proxy v3 API over HTTP:
clusters, brokers, topics, partitions and replicas, topic configs, and
producing records (one per request, or a stream of them), and v2
consumer instances. It talks to the cluster as a Kafka client
(the connection flags: TLS and SASL from flags or --command-config), so it
works against any Kafka cluster. It serves until interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := conn.clientOpts(cmd, nil)
			if err != nil {
				return err
			}
			if produceRateLimit < 0 {
				return fmt.Errorf("--produce-rate-limit %g: must not be negative", produceRateLimit)
			}
			if consumerInstanceTimeoutMs <= 0 {
				return fmt.Errorf("--consumer-instance-timeout-ms %d: must be positive", consumerInstanceTimeoutMs)
			}
			if maxBody <= 0 {
				return fmt.Errorf("--max-body %d: must be positive", maxBody)
			}
			proxy, err := restproxy.New(restproxy.Config{
				ClientOpts:              opts,
				MaxBody:                 maxBody,
				ProduceRateLimit:        produceRateLimit,
				Timeout:                 conn.timeout,
				Logger:                  slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)),
				ConsumerInstanceTimeout: time.Duration(consumerInstanceTimeoutMs) * time.Millisecond,
				AdvertisedURL:           advertisedURL,
			})
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
			fmt.Fprintf(cmd.OutOrStdout(), "rest proxy serving on http://%s\n", ln.Addr())
			return proxy.Serve(ctx, ln)
		},
	}
	conn.register(cmd)
	f := cmd.Flags()
	f.StringVar(&listener, "listener", "127.0.0.1:8082", "host:port the HTTP API listens on")
	f.Float64Var(&produceRateLimit, "produce-rate-limit", 0, "most records produced per second (each record of a stream counts); past it a record is answered 429; 0 is no limit")
	f.Int64Var(&consumerInstanceTimeoutMs, "consumer-instance-timeout-ms", restproxy.DefaultConsumerInstanceTimeout.Milliseconds(), "a v2 consumer instance idle this long is closed and leaves its group (Confluent's consumer.instance.timeout.ms)")
	f.StringVar(&advertisedURL, "advertised-url", "", "URL clients reach this proxy at (http[s]://host:port), the start of a v2 consumer instance's base_uri; default: the request's scheme and Host")
	f.Int64Var(&maxBody, "max-body", restproxy.DefaultMaxBody, "largest request body in bytes; a larger one is refused with 413")
	return cmd
}
