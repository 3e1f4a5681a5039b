package connectrt

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// connectorRunner runs one connector instance on this worker: started when
// its target is RUNNING, asked for task configs, which it writes to the
// config topic when they changed.
type connectorRunner struct {
	w          *Worker
	name       string
	config     map[string]string
	target     api.TargetState
	generation int32
	plugin     connect.Plugin
	conn       connect.Connector
	logger     *slog.Logger

	mu          sync.Mutex
	started     bool
	state       string
	reconfigure chan struct{}
	cancel      context.CancelFunc
	done        chan struct{}
}

// startConnector makes and starts a runner; it never blocks on the
// connector (Start runs in the runner's goroutine).
func (w *Worker) startConnector(ctx context.Context, name string, cfg map[string]string, target api.TargetState, gen int32) *connectorRunner {
	c := &connectorRunner{w: w, name: name, config: cfg, target: target, generation: gen,
		logger: w.logger.With("connector", name), reconfigure: make(chan struct{}, 1), done: make(chan struct{})}
	rctx, cancel := context.WithCancel(ctx)
	c.cancel = cancel
	w.group.Go(func(context.Context) { defer close(c.done); c.run(rctx) })
	return c
}

func (c *connectorRunner) setState(ctx context.Context, state string, err error) {
	c.mu.Lock()
	c.state = state
	c.mu.Unlock()
	if err != nil {
		c.logger.Error("connector failed", "err", err)
	}
	st := status{State: state, Trace: errString(err), WorkerID: c.w.workerID, Generation: c.generation, Version: c.w.pluginVersion(c.config)}
	if werr := c.w.statuses.putConnector(ctx, c.name, st); werr != nil && ctx.Err() == nil {
		c.logger.Warn("could not write connector status", "err", werr)
	}
}

func (c *connectorRunner) failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state == api.StateFailed
}

func (c *connectorRunner) run(ctx context.Context) {
	switch c.target {
	case api.TargetStopped:
		c.setState(ctx, api.StateStopped, nil)
		c.writeTaskConfigs(ctx, nil) // a stopped connector has no tasks (KIP-875)
		return
	case api.TargetPaused:
		c.setState(ctx, api.StatePaused, nil)
		return
	}
	pl, conn, err := c.w.connectorPlugin(c.config["connector.class"])
	if err != nil {
		c.setState(ctx, api.StateFailed, err)
		return
	}
	c.plugin, c.conn = pl, conn
	if err := safe(func() error { return conn.Start(connectorContext{c}, maps.Clone(c.config)) }); err != nil {
		c.setState(ctx, api.StateFailed, fmt.Errorf("connector %s failed to start: %w", c.name, err))
		return
	}
	c.mu.Lock()
	c.started = true
	c.mu.Unlock()
	c.setState(ctx, api.StateRunning, nil)
	c.requestReconfiguration()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.reconfigure:
			if err := c.reconfigureTasks(ctx); err != nil && ctx.Err() == nil {
				c.setState(ctx, api.StateFailed, err)
				return
			}
		}
	}
}

func (c *connectorRunner) requestReconfiguration() {
	select {
	case c.reconfigure <- struct{}{}:
	default:
	}
}

// reconfigureTasks asks the connector for task configs and writes them
// when they differ from the committed ones.
func (c *connectorRunner) reconfigureTasks(ctx context.Context) error {
	cc, err := parseConnectorConfig(c.config, c.plugin.Type == connect.PluginSink)
	if err != nil {
		return err
	}
	var cfgs []map[string]string
	err = safe(func() error {
		var err error
		cfgs, err = c.conn.TaskConfigs(cc.tasksMax)
		return err
	})
	if err != nil {
		return fmt.Errorf("connector %s could not generate task configs: %w", c.name, err)
	}
	if len(cfgs) > cc.tasksMax && cc.enforceMax {
		return fmt.Errorf("The connector %s has generated %d tasks, which is greater than %d, the maximum number of tasks it is configured to create. This behaviour should be considered a bug and may be reported to the developers of the connector.", c.name, len(cfgs), cc.tasksMax)
	}
	// Kafka gives each task the connector's config under its own, so the
	// runtime's settings (converters, transforms, topics) reach the task.
	full := make([]map[string]string, len(cfgs))
	for i, t := range cfgs {
		m := maps.Clone(t)
		if m == nil {
			m = map[string]string{}
		}
		if _, ok := m["task.class"]; !ok {
			m["task.class"] = taskClass(c.plugin)
		}
		if c.plugin.Type == connect.PluginSink {
			if v, ok := c.config["topics"]; ok {
				m["topics"] = v
			}
			if v, ok := c.config["topics.regex"]; ok {
				m["topics.regex"] = v
			}
		}
		full[i] = m
	}
	return c.writeTaskConfigs(ctx, full)
}

// writeTaskConfigs writes task-<name>-<i> records and the commit record,
// unless the committed configs are the same.
func (c *connectorRunner) writeTaskConfigs(ctx context.Context, cfgs []map[string]string) error {
	w := c.w
	w.mu.Lock()
	current := w.mu.state.tasks[c.name]
	_, exists := w.mu.state.connectors[c.name]
	same := len(current) == len(cfgs)
	for i := 0; same && i < len(cfgs); i++ {
		same = maps.Equal(current[i], cfgs[i])
	}
	_, committed := w.mu.state.tasks[c.name]
	w.mu.Unlock()
	if !exists || same && committed {
		return nil
	}
	recs := make([]*kgo.Record, 0, len(cfgs)+1)
	for i, cfg := range cfgs {
		recs = append(recs, &kgo.Record{Key: taskKey(api.TaskID{Connector: c.name, Task: i}), Value: propertiesValue(cfg)})
	}
	recs = append(recs, &kgo.Record{Key: commitKey(c.name), Value: commitValue(len(cfgs))})
	if err := w.writeConfigs(ctx, recs); err != nil {
		return err
	}
	c.logger.Info("task configs written", "tasks", strconv.Itoa(len(cfgs)))
	return nil
}

// stop stops the connector and waits.
func (c *connectorRunner) stop() {
	c.cancel()
	<-c.done
	c.mu.Lock()
	started := c.started
	c.mu.Unlock()
	if started {
		if err := safe(c.conn.Stop); err != nil {
			c.logger.Warn("connector stop failed", "err", err)
		}
	}
}

// connectorContext is the connector's connect.ConnectorContext.
type connectorContext struct{ c *connectorRunner }

func (x connectorContext) RequestTaskReconfiguration() { x.c.requestReconfiguration() }
func (x connectorContext) RaiseError(err error) {
	x.c.setState(x.c.w.group.Context(), api.StateFailed, err)
}
func (x connectorContext) Logger() *slog.Logger { return x.c.logger }

// safe runs plugin code, turning a panic into an error: a connector's bug
// fails the connector, not the worker.
func safe(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return fn()
}

// taskClass names a connector's task class as Kafka's task.class shows it:
// the plugin's, or the connector's class with Task for Connector.
func taskClass(p connect.Plugin) string {
	if p.TaskClass != "" {
		return p.TaskClass
	}
	return strings.TrimSuffix(p.Class, "Connector") + "Task"
}

// pluginVersion is the version of a config's connector plugin ("" when
// unknown).
func (w *Worker) pluginVersion(cfg map[string]string) string {
	pl, err := w.plugins.connector(cfg["connector.class"])
	if err != nil {
		return ""
	}
	return pl.Version
}
