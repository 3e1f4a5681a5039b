package broker

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/config"
)

// Broker loggers (Kafka's BROKER_LOGGER config resource, KIP-412): the log
// level of each part of the broker, changed at runtime with
// IncrementalAlterConfigs and read with DescribeConfigs, as
// kafka-configs.sh --entity-type broker-loggers does. A logger is a value
// of the component attribute every line carries (broker, controller, raft,
// group, txn, storage, auth), plus root, whose level every logger without
// one of its own follows; root starts at the level the broker's handler
// was given (samsa serve --log-level). Levels are not persisted, as in
// Kafka: a restart puts them back.
//
// The broker wraps its handler (levelHandler) so that the level is checked
// per component: a logger made with With("component", c) checks c's level
// in Enabled; a line that names its component itself (storage's) is let
// through Enabled by the lowest level any logger has and checked in
// Handle. Lines pass to the wrapped handler without its own level check,
// which is what lets a component log below the level the handler was
// built with.

// rootLogger is Kafka's name for the logger every other one falls back to.
const rootLogger = "root"

// knownLoggers are the components the broker and what it runs log under.
// Others that appear (a With("component", x) not listed) join the list.
var knownLoggers = []string{"auth", "broker", "controller", "group", "raft", "storage", "txn"}

// Log levels by Kafka's names (LogLevelConfig.VALID_LOG_LEVELS). TRACE is
// below slog's DEBUG; nothing logs at FATAL, so it keeps a logger quiet.
var logLevels = map[string]slog.Level{
	"TRACE": slog.LevelDebug - 4,
	"DEBUG": slog.LevelDebug,
	"INFO":  slog.LevelInfo,
	"WARN":  slog.LevelWarn,
	"ERROR": slog.LevelError,
	"FATAL": slog.LevelError + 4,
}

// validLogLevels is the list Kafka's message gives, sorted.
var validLogLevels = strings.Join(slices.Sorted(maps.Keys(logLevels)), ", ")

// levelName is a level by Kafka's name.
func levelName(l slog.Level) string {
	best := "TRACE"
	for name, v := range logLevels {
		if v <= l && v > logLevels[best] {
			best = name
		}
	}
	return best
}

// loggerLevels is the broker's table of levels. Reads are lock-free (a
// log call checks it); changes copy the table under mu.
type loggerLevels struct {
	mu    sync.Mutex
	table atomic.Pointer[levelTable]
}

// levelTable is one immutable state of the levels.
type levelTable struct {
	root slog.Level
	// own holds the loggers with a level of their own; known every logger
	// name, own or following root.
	own   map[string]slog.Level
	known []string // sorted
	// lowest is the lowest level of root and of every own level: a line
	// whose component is not known until Handle must pass Enabled by it.
	lowest slog.Level
}

func (t *levelTable) level(component string) slog.Level {
	if l, ok := t.own[component]; ok {
		return l
	}
	return t.root
}

// newLoggerLevels starts root at the lowest level inner enables.
func newLoggerLevels(inner slog.Handler) *loggerLevels {
	root := logLevels["FATAL"]
	for _, l := range []slog.Level{logLevels["TRACE"], slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
		if inner.Enabled(context.Background(), l) {
			root = l
			break
		}
	}
	lv := &loggerLevels{}
	lv.table.Store(&levelTable{root: root, own: map[string]slog.Level{}, known: append([]string{rootLogger}, knownLoggers...), lowest: root})
	return lv
}

// update applies change to a copy of the table and publishes it.
func (lv *loggerLevels) update(change func(t *levelTable)) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	old := lv.table.Load()
	t := &levelTable{root: old.root, own: maps.Clone(old.own), known: slices.Clone(old.known)}
	change(t)
	t.lowest = t.root
	for _, l := range t.own {
		t.lowest = min(t.lowest, l)
	}
	slices.Sort(t.known)
	lv.table.Store(t)
}

// register adds a component to the known loggers.
func (lv *loggerLevels) register(component string) {
	if component == "" || slices.Contains(lv.table.Load().known, component) {
		return
	}
	lv.update(func(t *levelTable) {
		if !slices.Contains(t.known, component) {
			t.known = append(t.known, component)
		}
	})
}

// set gives a logger a level; root's is every other's default.
func (lv *loggerLevels) set(name string, l slog.Level) {
	lv.update(func(t *levelTable) {
		if name == rootLogger {
			t.root = l
		} else {
			t.own[name] = l
		}
	})
}

// unset makes a logger follow root again.
func (lv *loggerLevels) unset(name string) {
	lv.update(func(t *levelTable) { delete(t.own, name) })
}

// levelHandler is the broker's slog.Handler: inner, with each line's level
// checked against its component's.
type levelHandler struct {
	inner     slog.Handler
	levels    *loggerLevels
	component string // from WithAttrs; "" until then
}

func (h *levelHandler) Enabled(_ context.Context, l slog.Level) bool {
	t := h.levels.table.Load()
	if h.component != "" {
		return l >= t.level(h.component)
	}
	return l >= t.lowest
}

func (h *levelHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.component == "" {
		component := ""
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "component" {
				component = a.Value.String()
				return false
			}
			return true
		})
		if r.Level < h.levels.table.Load().level(component) {
			return nil
		}
	}
	return h.inner.Handle(ctx, r)
}

func (h *levelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.inner = h.inner.WithAttrs(attrs)
	for _, a := range attrs {
		if a.Key == "component" {
			c.component = a.Value.String()
			h.levels.register(c.component)
		}
	}
	return &c
}

func (h *levelHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.inner = h.inner.WithGroup(name)
	return &c
}

// describeLoggers answers DescribeConfigs for this broker's loggers, as
// Kafka's ConfigHelper: every logger with its effective level, source
// DYNAMIC_BROKER_LOGGER_CONFIG, no synonyms; the resource name must be
// this broker's ID. Named configs that are no logger are left out.
func (b *Broker) describeLoggers(name string, names []string) ([]config.Description, int16, string) {
	if name == "" {
		return nil, kerr.InvalidRequest.Code, "Broker id must not be empty"
	}
	if id, err := strconv.Atoi(name); err != nil || int32(id) != b.cfg.NodeID {
		return nil, kerr.InvalidRequest.Code, fmt.Sprintf("Unexpected broker id, expected %d but received %s", b.cfg.NodeID, name)
	}
	t := b.loggers.table.Load()
	var out []config.Description
	for _, logger := range t.known {
		if names != nil && !slices.Contains(names, logger) {
			continue
		}
		level := t.root
		if logger != rootLogger {
			level = t.level(logger)
		}
		out = append(out, config.Description{Name: logger, Value: kmsg.StringPtr(levelName(level)), Source: config.SourceDynamicBrokerLogger})
	}
	return out, 0, ""
}

// alterLoggers applies IncrementalAlterConfigs to this broker's loggers,
// as Kafka's RuntimeLoggerManager: every operation of the resource is
// checked before any is applied (a logger that does not exist or a level
// that is not Kafka's: INVALID_CONFIG; the root logger deleted, APPEND,
// SUBTRACT, another broker's ID: INVALID_REQUEST), and nothing with
// validateOnly. The change is this broker's and lasts until it stops.
func (b *Broker) alterLoggers(r kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) (int16, string) {
	if id, err := strconv.Atoi(r.ResourceName); err != nil {
		return kerr.InvalidRequest.Code, "Node id must be an integer, but it is: " + r.ResourceName
	} else if int32(id) != b.cfg.NodeID {
		return kerr.InvalidRequest.Code, fmt.Sprintf("Unexpected node id. Expected %d, but received %s", b.cfg.NodeID, r.ResourceName)
	}
	seen := map[string]bool{}
	known := b.loggers.table.Load().known
	for _, op := range r.Configs {
		if seen[op.Name] {
			return kerr.InvalidRequest.Code, "Error due to duplicate config keys"
		}
		seen[op.Name] = true
		exists := slices.Contains(known, op.Name)
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if !exists {
				return kerr.InvalidConfig.Code, "Logger " + op.Name + " does not exist!"
			}
			if op.Value == nil {
				return kerr.InvalidRequest.Code, "Null value not supported for : " + op.Name
			}
			if _, ok := logLevels[*op.Value]; !ok {
				return kerr.InvalidConfig.Code, fmt.Sprintf("Cannot set the log level of %s to %s as it is not a supported log level. Valid log levels are %s",
					op.Name, *op.Value, validLogLevels)
			}
		case kmsg.IncrementalAlterConfigOpDelete:
			if !exists {
				return kerr.InvalidConfig.Code, "Logger " + op.Name + " does not exist!"
			}
			if op.Name == rootLogger {
				return kerr.InvalidRequest.Code, "Removing the log level of the root logger is not allowed"
			}
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			return kerr.InvalidRequest.Code, op.Op.String() + " operation is not allowed for the BROKER_LOGGER resource"
		default:
			return kerr.InvalidRequest.Code, fmt.Sprintf("Unknown operation type %d is not allowed for the BROKER_LOGGER resource", op.Op)
		}
	}
	if validateOnly {
		return 0, ""
	}
	for _, op := range r.Configs {
		if op.Op == kmsg.IncrementalAlterConfigOpSet {
			b.loggers.set(op.Name, logLevels[*op.Value])
			b.log.Warn("updated the log level", "logger", op.Name, "level", *op.Value)
		} else {
			b.loggers.unset(op.Name)
			b.log.Warn("unset the log level", "logger", op.Name)
		}
	}
	return 0, ""
}

// alterLoggerResources takes the broker logger resources out of an
// IncrementalAlterConfigs request: it answers each (ALTER_CONFIGS on the
// cluster needed) and returns the answers by position, and the request
// without them, which goes on to the controller. Kafka's broker, too,
// handles them itself rather than forwarding them.
func (b *Broker) alterLoggerResources(c *conn, req *kmsg.IncrementalAlterConfigsRequest) (map[int]kmsg.IncrementalAlterConfigsResponseResource, *kmsg.IncrementalAlterConfigsRequest) {
	var answers map[int]kmsg.IncrementalAlterConfigsResponseResource
	var rest []kmsg.IncrementalAlterConfigsRequestResource
	for i, r := range req.Resources {
		if r.ResourceType != kmsg.ConfigResourceTypeBrokerLogger {
			rest = append(rest, r)
			continue
		}
		if answers == nil {
			answers = map[int]kmsg.IncrementalAlterConfigsResponseResource{}
		}
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		if !b.authorizeCluster(c, kmsg.ACLOperationAlterConfigs) {
			rr.ErrorCode, rr.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
		} else {
			code, msg := b.alterLoggers(r, req.ValidateOnly)
			rr.ErrorCode, rr.ErrorMessage = code, optionalMessage(msg)
		}
		answers[i] = rr
	}
	if answers == nil {
		return nil, req
	}
	cp := *req
	cp.Resources = rest
	return answers, &cp
}
