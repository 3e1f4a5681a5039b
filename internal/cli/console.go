package cli

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/console"
)

// newConsoleCommand runs the web console against any Kafka cluster.
func newConsoleCommand() *cobra.Command {
	var conn connection
	var listener, loginMechanism, registryURL, connectURL, tlsCert, tlsKey string
	var adminURLs []string
	var pageSize int
	var sampleInterval time.Duration
	cmd := &cobra.Command{
		Use:   "console",
		Short: "Run the web console in front of a Kafka cluster",
		Long: `Run Samsa's web console: brokers and partition health, topics and their
configs, a message browser, consumer groups (classic, consumer and share)
with lag and offset resets, the Schema Registry (--schema-registry-url),
Connect (--connect-url), ACLs, SCRAM users, quotas and reassignments. It is
a Kafka client of the cluster (the connection flags: TLS and SASL from
flags or --command-config), so it works against any Kafka cluster; the
balancer's state needs a Samsa broker's HTTP listener (--admin-url).

With --login-mechanism every user logs in with their Kafka user and
password and everything they see and do runs as them (the cluster's ACLs
apply); the connection flags then give only the seeds and TLS. It serves
until interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if loginMechanism != "" && (cmd.Flags().Changed("sasl-mechanism") || cmd.Flags().Changed("sasl-user")) {
				return fmt.Errorf("--login-mechanism logs each user in as themselves: drop --sasl-mechanism and --sasl-user")
			}
			opts, err := conn.clientOpts(cmd, nil)
			if err != nil {
				return err
			}
			if loginMechanism != "" {
				// Only the seeds and TLS: each session adds its user's SASL.
				seeds, err := conn.seeds(cmd)
				if err != nil {
					return err
				}
				sec, err := conn.secure(cmd)
				if err != nil {
					return err
				}
				if sec.sasl != nil {
					return fmt.Errorf("--login-mechanism logs each user in as themselves: the connection's own SASL (from --command-config) must go")
				}
				opts = []kgo.Opt{kgo.SeedBrokers(seeds...)}
				if sec.tls != nil {
					opts = append(opts, kgo.DialTLSConfig(sec.tls))
				}
			}
			var serverTLS *tls.Config
			switch {
			case tlsCert != "" && tlsKey != "":
				pair, err := tls.LoadX509KeyPair(tlsCert, tlsKey)
				if err != nil {
					return fmt.Errorf("--listener-tls-cert/--listener-tls-key: %w", err)
				}
				serverTLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
			case tlsCert != "" || tlsKey != "":
				return fmt.Errorf("--listener-tls-cert and --listener-tls-key go together")
			}
			c, err := console.New(console.Config{
				ClientOpts:     opts,
				LoginMechanism: loginMechanism,
				RegistryURL:    registryURL,
				ConnectURL:     connectURL,
				AdminURLs:      adminURLs,
				PageSize:       pageSize,
				SampleInterval: sampleInterval,
				SecureCookies:  serverTLS != nil,
				RequestTimeout: conn.timeout,
				Logger:         slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)),
			})
			if err != nil {
				return err
			}
			defer c.Close()
			ln, err := net.Listen("tcp", listener)
			if err != nil {
				return fmt.Errorf("console: listen on %s: %w", listener, err)
			}
			scheme := "http"
			if serverTLS != nil {
				ln = tls.NewListener(ln, serverTLS)
				scheme = "https"
			}
			defer ln.Close()
			ctx, stop := signalContext(cmd)
			defer stop()
			fmt.Fprintf(cmd.OutOrStdout(), "console serving on %s://%s\n", scheme, ln.Addr())
			return c.Serve(ctx, ln)
		},
	}
	conn.register(cmd)
	f := cmd.Flags()
	f.StringVar(&listener, "listener", "127.0.0.1:8080", "host:port the console listens on (port 0 picks a free one)")
	f.StringVar(&loginMechanism, "login-mechanism", "", "users log in with their Kafka user and password by this SASL mechanism (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512) and act as themselves")
	f.StringVar(&registryURL, "schema-registry-url", "", "a Schema Registry's URL: its page, and decoding of Avro, Protobuf and JSON Schema records")
	f.StringVar(&connectURL, "connect-url", "", "a Kafka Connect cluster's REST URL: its page")
	f.StringSliceVar(&adminURLs, "admin-url", nil, "a Samsa broker's HTTP listener (http://host:9644), read for the balancer's state; repeatable")
	f.IntVar(&pageSize, "page-size", 50, "records per page of the message browser (at most 500)")
	f.DurationVar(&sampleInterval, "sample-interval", 5*time.Second, "how often the live charts sample the cluster while someone watches")
	f.StringVar(&tlsCert, "listener-tls-cert", "", "PEM file of the console's certificate chain, leaf first: serve https")
	f.StringVar(&tlsKey, "listener-tls-key", "", "PEM file of the console certificate's private key")
	return cmd
}
