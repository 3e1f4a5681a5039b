package cli

import (
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/magiconair/properties"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/connectrt"
	"github.com/samsa-io/samsa/internal/connectrt/api"
	"github.com/samsa-io/samsa/internal/connectrt/builtin"
	"github.com/samsa-io/samsa/internal/connectrt/rest"
	"github.com/samsa-io/samsa/internal/version"
)

// NewConnectCommand is samsa connect: a Kafka Connect worker with the
// built-in connectors and extra ones (the public connect/worker package
// passes a user's own).
func NewConnectCommand(extra ...connect.Plugin) *cobra.Command {
	var conn connection
	var configFile string
	var standalone bool
	cmd := &cobra.Command{
		Use:   "connect [--standalone] [--config] worker.properties [connector.properties ...]",
		Short: "Run a Kafka Connect worker (distributed, or --standalone)",
		Long: `Run a Kafka Connect worker with Kafka's worker properties (the files
connect-distributed.sh and connect-standalone.sh take): distributed by
default (workers sharing group.id split the connectors and keep configs,
offsets and statuses in three compacted topics), or --standalone (one worker,
offsets in offset.storage.file.filename, the connector property files given
after the worker's are created at start). It serves Kafka Connect's REST API
on listeners (127.0.0.1:8083 by default) and runs the built-in connectors
(FileStream, datagen, HTTP sink, S3 sink, JDBC, PostgreSQL CDC, MirrorMaker
2's three), converters and transforms. A Kafka client only: it runs against
any Kafka cluster.
Security settings (security.protocol, ssl.*, sasl.*) are read from the worker
properties with Kafka's names. It serves until interrupted.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if configFile == "" {
				if len(args) == 0 {
					return fmt.Errorf("a worker properties file is needed: --config worker.properties")
				}
				configFile, args = args[0], args[1:]
			}
			if !standalone && len(args) > 0 {
				return fmt.Errorf("connector property files (%s) are for --standalone; a distributed worker takes connectors through its REST API", strings.Join(args, ", "))
			}
			props, err := readProperties(configFile)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("bootstrap-server") {
				props["bootstrap.servers"] = conn.bootstrap
			}
			if cmd.Flags().Changed("client-id") {
				props["client.id"] = conn.clientID
			}
			cfg, err := connectrt.ParseWorkerConfig(props, !standalone)
			if err != nil {
				return fmt.Errorf("%s: %w", configFile, err)
			}
			var connectors []map[string]string
			for _, f := range args {
				c, err := readProperties(f)
				if err != nil {
					return err
				}
				connectors = append(connectors, c)
			}
			opts, err := workerClientOpts(cfg)
			if err != nil {
				return fmt.Errorf("%s: %w", configFile, err)
			}
			// Security from the flags (or --command-config), when the worker
			// properties have none: one place or the other, not both.
			sec, err := conn.secure(cmd)
			if err != nil {
				return err
			}
			if sec.tls != nil || sec.sasl != nil {
				if len(cfg.Security) > 0 {
					return fmt.Errorf("security is set both in %s and in flags: set it in one place", configFile)
				}
				if sec.tls != nil {
					opts = append(opts, kgo.DialTLSConfig(sec.tls))
				}
				if sec.sasl != nil {
					opts = append(opts, kgo.SASL(sec.sasl))
				}
			}
			opts = append(opts, kgo.RetryTimeout(conn.timeout))
			levels := rest.NewLevelVars(slog.LevelInfo)
			logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: levels.LevelVar("org.apache.kafka.connect")}))
			ctx, stop := signalContext(cmd)
			defer stop()
			r, err := builtin.Start(ctx, builtin.Options{Config: cfg, ClientOpts: opts, Extra: extra, Logger: logger, Levels: levels, Version: version.String()})
			if err != nil {
				return err
			}
			defer r.Stop()
			for i, c := range connectors {
				name := c["name"]
				if name == "" {
					return fmt.Errorf("%s: no name", args[i])
				}
				if _, _, err := r.Worker.PutConnectorConfig(ctx, name, c, true, api.TargetRunning); err != nil {
					return fmt.Errorf("%s: %w", args[i], err)
				}
			}
			mode := "distributed"
			if standalone {
				mode = "standalone"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "connect worker (%s) serving on %s\n", mode, r.URL)
			<-ctx.Done()
			return nil
		},
	}
	conn.register(cmd)
	f := cmd.Flags()
	f.StringVar(&configFile, "config", "", "the worker properties file (Kafka's worker config names); --bootstrap-server and --client-id override its bootstrap.servers and client.id, the security flags stand for its security.protocol, ssl.* and sasl.*")
	f.BoolVar(&standalone, "standalone", false, "run a standalone worker (offsets in a file, connectors from the files given)")
	return cmd
}

func newConnectCommand() *cobra.Command { return NewConnectCommand() }

// readProperties reads a Java properties file with no ${} expansion.
func readProperties(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	loader := properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	p, err := loader.LoadBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p.Map(), nil
}

// workerClientOpts are the seed brokers and the security settings of the
// worker properties, read as --command-config reads them.
func workerClientOpts(cfg connectrt.WorkerConfig) ([]kgo.Opt, error) {
	sec, err := securityOpts(cfg.Security, "")
	if err != nil {
		return nil, err
	}
	return append([]kgo.Opt{kgo.SeedBrokers(cfg.BootstrapServers...)}, sec...), nil
}

// securityOpts are the TLS and SASL client options of Kafka client
// security properties (security.protocol, ssl.*, sasl.*), read as
// --command-config reads them; prefix names where they came from in errors.
func securityOpts(props map[string]string, prefix string) ([]kgo.Opt, error) {
	if len(props) == 0 {
		return nil, nil
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if !knownProperty(k) {
			return nil, fmt.Errorf("security property %s%s is not supported (read: %s)", prefix, k, commandConfigReads)
		}
	}
	s, err := commandConfigSettings(props)
	if err != nil {
		return nil, err
	}
	tlsCfg, err := s.tlsConfig()
	if err != nil {
		return nil, err
	}
	var opts []kgo.Opt
	if tlsCfg != nil {
		opts = append(opts, kgo.DialTLSConfig(tlsCfg))
	}
	if m := s.saslMechanism(time.Now); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}
