package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/samsa-io/samsa/internal/broker"
	"github.com/samsa-io/samsa/internal/schemaregistry"
)

// namedFlags are Kafka config names offered as flags of their own; any
// other config goes through --override name=value.
var namedFlags = []string{"listeners", "advertised.listeners", "log.dirs", "node.id", "num.partitions",
	"auto.create.topics.enable", "log.retention.ms", "log.segment.bytes"}

// configFlags are the flags that resolve the broker config, shared by serve
// and storage format so both read the same directories: --config, the
// named flags and --override.
type configFlags struct {
	propsPath string
	overrides []string
	named     map[string]*string
}

// register adds the flags; short is --config's shorthand ("" for none).
func (f *configFlags) register(cmd *cobra.Command, short string) {
	cmd.Flags().StringVarP(&f.propsPath, "config", short, "", "server.properties file")
	cmd.Flags().StringArrayVar(&f.overrides, "override", nil, "any broker config as name=value (repeatable)")
	f.named = map[string]*string{}
	for _, name := range namedFlags {
		f.named[name] = cmd.Flags().String(name, "", "Kafka's "+name)
	}
}

// given returns the named flags given and the overrides, as config names
// to values.
func (f *configFlags) given(cmd *cobra.Command) (map[string]string, error) {
	ov := map[string]string{}
	for name, val := range f.named {
		if cmd.Flags().Changed(name) {
			ov[name] = *val
		}
	}
	for _, o := range f.overrides {
		k, v, ok := strings.Cut(o, "=")
		if !ok {
			return nil, fmt.Errorf("--override %q: want name=value", o)
		}
		ov[k] = v
	}
	return ov, nil
}

func newServe() *cobra.Command {
	var (
		conf      configFlags
		logFormat string
		logLevel  string
		durable   bool
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a broker (single node: broker and controller in one process)",
		Long: `Run a Samsa broker. With no flags: a single-node cluster listening on
127.0.0.1:9092 with its data in ./samsa-data. Configuration uses Apache
Kafka's names: a server.properties file (--config), the flags below, and
--override name=value for any other broker config. Flags win over the file.

A single node formats its directories itself on first start (meta.properties,
with a new cluster ID). A node configured as part of a quorum
(controller.quorum.voters or controller.quorum.bootstrap.servers) starts only
once samsa storage format has formatted them.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := newLogger(logFormat, logLevel)
			if err != nil {
				return err
			}
			ov, err := conf.given(cmd)
			if err != nil {
				return err
			}
			return serve(cmd.Context(), conf.propsPath, ov, durable, logger)
		},
	}
	conf.register(cmd, "")
	cmd.Flags().StringVar(&logFormat, "log-format", "text", "log format: text or json")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	cmd.Flags().BoolVar(&durable, "durable", false, "acknowledge produces only after a group-committed fsync")
	return cmd
}

func serve(ctx context.Context, propsPath string, overrides map[string]string, durable bool, logger *slog.Logger) error {
	start := time.Now()
	values, err := broker.LoadConfig(propsPath, overrides)
	if err != nil {
		return err
	}
	cfg, err := broker.ConfigFromValues(values)
	if err != nil {
		return err
	}
	cfg.Logger, cfg.Durable = logger, durable
	var inProcess *inProcessIDs
	if cfg.SchemaIDs, inProcess, err = schemaIDsFor(values); err != nil {
		return err
	}
	b, err := broker.New(cfg)
	if err != nil {
		return err
	}
	sig, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The broker serves on a context of its own: a signal during start-up
	// (a quorum that does not form) cancels it, one after start-up asks for
	// Close, whose controlled shutdown needs the broker still running (its
	// heartbeats carry the request to the controller).
	serveCtx, cancelServe := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelServe()
	abortStart := context.AfterFunc(sig, cancelServe)
	err = b.Start(serveCtx)
	abortStart() // from here on a signal is a clean Close
	if err != nil {
		b.Close()
		return err
	}
	logger.Info("samsa serving", append([]any{"component", "main"}, append(b.Summary(), "startup", time.Since(start).Round(time.Millisecond))...)...)
	// The registry, the REST Proxy and Connect are clients of the broker, started
	// once it serves and stopped before it closes.
	onReady := func(*schemaregistry.Registry) {}
	if inProcess != nil {
		onReady = func(reg *schemaregistry.Registry) { inProcess.reg.Store(reg) }
	}
	// Each started part's stop, in start order; they stop in reverse: the
	// mirror and Connect first (Connect's tasks commit their offsets to
	// the broker and leave the group while it still serves), the
	// registry last.
	var stops []func()
	closeAll := func() error {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
		return b.Close()
	}
	started := func(stop func(), err error) error {
		if stop != nil {
			stops = append(stops, stop)
		}
		if err != nil {
			return errors.Join(err, closeAll())
		}
		return nil
	}
	stopRegistry, registryURL, err := startRegistry(b, values, logger, onReady)
	if err := started(stopRegistry, err); err != nil {
		return err
	}
	// The REST Proxy too, with the in-process registry as its registry.
	if err := started(startRestProxy(b, values, logger, registryURL)); err != nil {
		return err
	}
	// Connect next: its connectors may use the others.
	stopConnect, connectURL, err := startConnect(b, values, logger)
	if err := started(stopConnect, err); err != nil {
		return err
	}
	// The console after the services it shows.
	if err := started(startConsole(b, values, logger, registryURL, connectURL)); err != nil {
		return err
	}
	// The mirror last, whose flows may read or write this broker.
	if err := started(startMirror(b, values, logger)); err != nil {
		return err
	}
	select {
	case <-sig.Done():
	case <-ctx.Done(): // the caller's own context (tests) ends the broker too
	case <-b.Failed():
		logger.Error("shutting down after a failure", "component", "main", "err", b.Failure())
		return errors.Join(b.Failure(), closeAll())
	}
	logger.Info("shutting down", "component", "main")
	return closeAll()
}

func newLogger(format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", level, err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}
