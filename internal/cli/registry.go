package cli

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/samsa-io/samsa/internal/schemaregistry"
)

// newRegistryCommand runs Confluent's Schema Registry API against any
// Kafka cluster, its state in a compacted topic of that cluster.
func newRegistryCommand() *cobra.Command {
	var conn connection
	var listener, topic, group, advertised string
	var rf int16
	var lf listenerSecurityFlags
	cmd := &cobra.Command{
		Use:   "registry",
		Short: "Run a Schema Registry (Confluent's API) backed by a Kafka topic",
		Long: `Run a Schema Registry that speaks Confluent's REST API, with its schemas,
configs and modes kept in a compacted topic of the cluster (--topic, created
if missing). It works against any Kafka cluster. Several instances may share
a store topic: they elect one primary through a Kafka group (--group), and
the others forward writes to it. It serves until interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := conn.clientOpts(cmd, nil)
			if err != nil {
				return err
			}
			serverTLS, forwardTLS, err := lf.tls()
			if err != nil {
				return err
			}
			auth, _, err := lf.auth(cmd, &conn)
			if err != nil {
				return err
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			ln, err := net.Listen("tcp", listener)
			if err != nil {
				return fmt.Errorf("registry: listen on %s: %w", listener, err)
			}
			defer ln.Close()
			url := advertised
			if url == "" {
				url = advertisedURL(ln.Addr().(*net.TCPAddr), serverTLS != nil)
			}
			reg, err := schemaregistry.New(schemaregistry.Config{
				ClientOpts:        opts,
				Topic:             topic,
				ReplicationFactor: rf,
				Timeout:           conn.timeout,
				Logger:            slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)),
				GroupID:           group,
				URL:               url,
				TLS:               serverTLS,
				ForwardTLS:        forwardTLS,
				Auth:              auth,
			})
			if err != nil {
				return err
			}
			defer reg.Close()
			startCtx, cancel := conn.opContext(ctx)
			err = reg.Start(startCtx)
			cancel()
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			scheme := "http"
			if serverTLS != nil {
				scheme = "https"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "schema registry serving on %s://%s (store topic %s)\n", scheme, ln.Addr(), topic)
			return reg.Serve(ctx, ln)
		},
	}
	conn.register(cmd)
	f := cmd.Flags()
	f.StringVar(&listener, "listener", "127.0.0.1:8081", "host:port the HTTP API listens on")
	f.StringVar(&topic, "topic", schemaregistry.DefaultTopic, "the store topic (Confluent's kafkastore.topic)")
	f.StringVar(&group, "group", "schema-registry",
		"Kafka group through which the instances sharing the store topic elect the one that writes (Confluent's schema.registry.group.id); empty: no election, and this must be the topic's only instance")
	f.StringVar(&advertised, "advertised-url", "",
		"URL the other instances forward writes to (default: http:// and the listener's address, the host name when it listens on all addresses)")
	f.Int16Var(&rf, "replication-factor", 0, "replication factor of the store topic when created; 0 takes the cluster's default.replication.factor")
	lf.register(f, "SchemaRegistry", "other instances' certificates when writes are forwarded (default for forwarding: the system's)")
	return cmd
}

// advertisedURL is the URL of a listener for other instances: its address,
// or the host name when it listens on every address.
func advertisedURL(a *net.TCPAddr, https bool) string {
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	scheme := "http://"
	if https {
		scheme = "https://"
	}
	return scheme + net.JoinHostPort(host, strconv.Itoa(a.Port))
}
