package connectrt

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// taskRunner runs one task on this worker: a source or sink loop in a
// goroutine, paused and resumed by the connector's target state.
type taskRunner struct {
	w          *Worker
	id         api.TaskID
	config     map[string]string // the task's config
	connConfig map[string]string
	generation int32
	logger     *slog.Logger

	cc      connectorConfig
	keyConv connect.Converter
	valConv connect.Converter
	hdrConv connect.HeaderConverter
	chain   Chain
	errs    *errorHandler

	mu struct {
		sync.Mutex
		target api.TargetState
		state  string
	}
	resumed chan struct{} // closed and replaced on each change of target
	cancel  context.CancelFunc
	done    chan struct{}
}

func (w *Worker) startTask(ctx context.Context, id api.TaskID, connCfg, cfg map[string]string, target api.TargetState, gen int32) *taskRunner {
	t := &taskRunner{w: w, id: id, config: cfg, connConfig: connCfg, generation: gen,
		logger: w.logger.With("connector", id.Connector, "task", id.Task), resumed: make(chan struct{}), done: make(chan struct{})}
	t.mu.target = target
	rctx, cancel := context.WithCancel(ctx)
	t.cancel = cancel
	w.group.Go(func(context.Context) { defer close(t.done); t.run(rctx) })
	return t
}

func (t *taskRunner) target() api.TargetState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.target
}

func (t *taskRunner) setTarget(s api.TargetState) {
	t.mu.Lock()
	t.mu.target = s
	close(t.resumed)
	t.resumed = make(chan struct{})
	t.mu.Unlock()
}

// waitRunning blocks while the target is PAUSED; it reports whether the
// task was paused (so the caller can write the RUNNING status again).
func (t *taskRunner) waitRunning(ctx context.Context) bool {
	paused := false
	for {
		t.mu.Lock()
		target, ch := t.mu.target, t.resumed
		t.mu.Unlock()
		if target != api.TargetPaused || ctx.Err() != nil {
			if paused {
				t.setState(ctx, api.StateRunning, nil)
			}
			return paused
		}
		if !paused {
			paused = true
			t.setState(ctx, api.StatePaused, nil)
		}
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
}

func (t *taskRunner) setState(ctx context.Context, state string, err error) {
	t.mu.Lock()
	t.mu.state = state
	t.mu.Unlock()
	if err != nil {
		t.logger.Error("task failed", "err", err)
	}
	st := status{State: state, Trace: errString(err), WorkerID: t.w.workerID, Generation: t.generation, Version: t.w.pluginVersion(t.connConfig)}
	if werr := t.w.statuses.putTask(ctx, t.id, st); werr != nil && ctx.Err() == nil {
		t.logger.Warn("could not write task status", "err", werr)
	}
}

func (t *taskRunner) failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.state == api.StateFailed
}

func (t *taskRunner) stop() {
	t.cancel()
	select {
	case <-t.done:
	case <-time.After(t.w.cfg.OffsetFlushTimeout + 2*t.w.cfg.TaskShutdownTimeout):
		// Kafka abandons a task that does not stop in time; so does Samsa,
		// logging it, so a stuck connector cannot hold the worker. (The
		// task's last commit is bounded by the flush and shutdown timeouts.)
		t.logger.Error("task did not stop in time; abandoned", "timeout", t.w.cfg.TaskShutdownTimeout)
	}
}

func (t *taskRunner) run(ctx context.Context) {
	pl, err := t.w.plugins.connector(t.connConfig["connector.class"])
	if err == nil {
		err = t.setup(pl)
	}
	if err != nil {
		t.setState(ctx, api.StateFailed, err)
		return
	}
	defer t.chain.Close()
	var runErr error
	if pl.Type == connect.PluginSink {
		runErr = t.runSink(ctx, pl)
	} else {
		runErr = t.runSource(ctx, pl)
	}
	if runErr != nil && ctx.Err() == nil {
		t.setState(context.WithoutCancel(ctx), api.StateFailed, runErr)
	}
}

// setup reads the connector config and makes the converters, the
// transform chain and the error handler.
func (t *taskRunner) setup(pl connect.Plugin) error {
	var err error
	if t.cc, err = parseConnectorConfig(t.connConfig, pl.Type == connect.PluginSink); err != nil {
		return err
	}
	if t.keyConv, err = t.converter("key.converter", t.w.cfg.KeyConverter, true); err != nil {
		return err
	}
	if t.valConv, err = t.converter("value.converter", t.w.cfg.ValueConverter, false); err != nil {
		return err
	}
	if t.hdrConv, err = t.headerConverter(); err != nil {
		return err
	}
	if t.chain, err = t.w.plugins.NewChain(t.connConfig); err != nil {
		return err
	}
	t.errs = &errorHandler{cfg: t.cc, logger: t.logger, connector: t.id.Connector, task: t.id.Task}
	return nil
}

// converter makes the connector's converter, or the worker's: a connector
// that names its own class takes its own options only, as Kafka does.
func (t *taskRunner) converter(prefix, workerClass string, isKey bool) (connect.Converter, error) {
	class, props := workerClass, prefixed(t.w.cfg.ConverterProps, prefix+".")
	if c, ok := t.connConfig[prefix]; ok && strings.TrimSpace(c) != "" {
		class, props = c, prefixed(t.connConfig, prefix+".")
	}
	conv, err := t.w.plugins.NewConverter(class)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", prefix, err)
	}
	if err := conv.Configure(props, isKey); err != nil {
		return nil, fmt.Errorf("%s %s: %w", prefix, class, err)
	}
	return conv, nil
}

func (t *taskRunner) headerConverter() (connect.HeaderConverter, error) {
	class, props := t.w.cfg.HeaderConverter, prefixed(t.w.cfg.ConverterProps, "header.converter.")
	if c, ok := t.connConfig["header.converter"]; ok && strings.TrimSpace(c) != "" {
		class, props = c, prefixed(t.connConfig, "header.converter.")
	}
	conv, err := t.w.plugins.NewHeaderConverter(class)
	if err != nil {
		return nil, fmt.Errorf("header.converter: %w", err)
	}
	if err := conv.Configure(props); err != nil {
		return nil, fmt.Errorf("header.converter %s: %w", class, err)
	}
	return conv, nil
}

// taskConfig is the task's config for the task's Start: Kafka hands the
// task its own config only.
func (t *taskRunner) taskConfig() map[string]string { return maps.Clone(t.config) }

// backoff waits, or returns early when ctx ends.
func backoff(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// clientOverrides turns producer./consumer. settings (the worker's, then
// the connector's producer.override./consumer.override.) into options.
func (t *taskRunner) clientOverrides(worker map[string]string, overridePrefix string) ([]kgo.Opt, error) {
	props := maps.Clone(worker)
	over := prefixed(t.connConfig, overridePrefix)
	if len(over) > 0 && t.w.cfg.ConnectorOverridePolicy == "None" {
		return nil, fmt.Errorf("%s* is set but connector.client.config.override.policy=None forbids connector client overrides", overridePrefix)
	}
	maps.Copy(props, over)
	return clientProps(props)
}
