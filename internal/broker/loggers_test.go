package broker

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/config"
)

// loggerOp is one IncrementalAlterConfigs operation on a logger; a nil
// level deletes.
func loggerOp(name string, op kmsg.IncrementalAlterConfigOp, level *string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	return kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: name, Op: op, Value: level}
}

// alterLoggerLevels sends IncrementalAlterConfigs for the broker loggers
// of broker and returns "ok" or "CODE: message".
func alterLoggerLevels(r *rawConn, broker string, validateOnly bool, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) string {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = validateOnly
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.Configs = kmsg.ConfigResourceTypeBrokerLogger, broker, ops
	req.Resources = append(req.Resources, rr)
	res := r.roundTrip(req, 1).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
	if res.ErrorCode == 0 {
		return "ok"
	}
	return kerr.ErrorForCode(res.ErrorCode).(*kerr.Error).Message + ": " + orNull(res.ErrorMessage)
}

// loggerLevelsOf describes broker's loggers as "name=LEVEL" by name.
func loggerLevelsOf(t *testing.T, r *rawConn, broker string) map[string]string {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version = 4
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, broker
	req.Resources = append(req.Resources, rr)
	res := r.roundTrip(req, 1).(*kmsg.DescribeConfigsResponse).Resources[0]
	if res.ErrorCode != 0 {
		return map[string]string{"error": kerr.ErrorForCode(res.ErrorCode).(*kerr.Error).Message + ": " + orNull(res.ErrorMessage)}
	}
	out := map[string]string{}
	for _, c := range res.Configs {
		if c.Source != kmsg.ConfigSourceDynamicBrokerLoggerConfig || c.IsSensitive || c.ReadOnly || len(c.ConfigSynonyms) != 0 {
			t.Errorf("logger %s: %+v", c.Name, c)
		}
		out[c.Name] = orNull(c.Value)
	}
	return out
}

// TestBrokerLoggers raises one component to DEBUG: its debug lines
// appear and no other's, until it is set back; a line that names its
// component itself (as storage's do) follows that component's level; bad
// levels and loggers get Kafka's errors; a restart resets every level.
func TestBrokerLoggers(t *testing.T) {
	var logs syncBuffer
	dir := t.TempDir()
	values := brokerValuesOf(t, map[string]string{"group.initial.rebalance.delay.ms": "0"})
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	b := startBrokerWith(t, Config{LogDir: dir, Values: values, Logger: logger})
	r := dialRaw(t, b)

	levels := loggerLevelsOf(t, r, "1")
	for _, name := range []string{"root", "broker", "controller", "raft", "group", "txn", "storage", "auth"} {
		if levels[name] != "INFO" {
			t.Errorf("logger %s at %q at the start, want INFO (%v)", name, levels[name], levels)
		}
	}
	// A JoinGroup with a reason (v8+, KIP-800) makes the group
	// coordinator log it at DEBUG; the member is asked for its ID
	// (MEMBER_ID_REQUIRED) and nothing waits.
	join := func(group string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			fc := kmsg.NewPtrFindCoordinatorRequest()
			fc.CoordinatorKey = group
			r.roundTrip(fc, 2) // creates __consumer_offsets the first time
			req := joinReq(8, group, "", "consumer", 10000, kmsg.JoinGroupRequestProtocol{Name: "range", Metadata: []byte{}})
			req.Reason = kmsg.StringPtr("joining-" + group)
			code := r.roundTrip(req, 2).(*kmsg.JoinGroupResponse).ErrorCode
			if code == kerr.MemberIDRequired.Code {
				return
			}
			if (code != kerr.NotCoordinator.Code && code != kerr.CoordinatorLoadInProgress.Code) || time.Now().After(deadline) {
				t.Fatalf("join %s: %v", group, kerr.ErrorForCode(code))
			}
		}
	}
	joined := func(group string) bool {
		return strings.Contains(logs.String(), "reason=joining-"+group)
	}
	// storage names its component on each line, not through With.
	storageDebug := func(marker string) { b.cfg.Logger.Debug(marker, "component", "storage") }

	join("before")
	b.log.Debug("broker-debug-1")
	storageDebug("storage-debug-1")
	if joined("before") || strings.Contains(logs.String(), "-debug-1") {
		t.Fatalf("debug lines at INFO:\n%s", logs.String())
	}

	if got := alterLoggerLevels(r, "1", false, loggerOp("group", kmsg.IncrementalAlterConfigOpSet, ptr("DEBUG")),
		loggerOp("storage", kmsg.IncrementalAlterConfigOpSet, ptr("TRACE"))); got != "ok" {
		t.Fatalf("set group to DEBUG: %s", got)
	}
	levels = loggerLevelsOf(t, r, "1")
	if levels["group"] != "DEBUG" || levels["storage"] != "TRACE" || levels["root"] != "INFO" || levels["broker"] != "INFO" {
		t.Errorf("levels after the change: %v", levels)
	}
	join("during")
	b.log.Debug("broker-debug-2")
	storageDebug("storage-debug-2")
	b.cfg.Logger.Debug("auth-debug-2", "component", "auth") // passes Enabled (group's DEBUG), not Handle
	if !joined("during") || !strings.Contains(logs.String(), "storage-debug-2") || strings.Contains(logs.String(), "broker-debug-2") ||
		strings.Contains(logs.String(), "auth-debug-2") {
		t.Fatalf("with group at DEBUG, storage at TRACE:\n%s", logs.String())
	}

	// Deleting a logger's level puts it back to root's.
	if got := alterLoggerLevels(r, "1", false, loggerOp("group", kmsg.IncrementalAlterConfigOpDelete, nil),
		loggerOp("storage", kmsg.IncrementalAlterConfigOpDelete, nil)); got != "ok" {
		t.Fatalf("delete: %s", got)
	}
	join("after")
	storageDebug("storage-debug-3")
	if joined("after") || strings.Contains(logs.String(), "storage-debug-3") {
		t.Fatalf("debug lines after the levels were deleted:\n%s", logs.String())
	}
	// root moves every logger without a level of its own.
	if got := alterLoggerLevels(r, "1", false, loggerOp("root", kmsg.IncrementalAlterConfigOpSet, ptr("DEBUG")),
		loggerOp("controller", kmsg.IncrementalAlterConfigOpSet, ptr("WARN"))); got != "ok" {
		t.Fatalf("set root: %s", got)
	}
	b.log.Debug("broker-debug-4")
	if levels = loggerLevelsOf(t, r, "1"); levels["broker"] != "DEBUG" || levels["controller"] != "WARN" || !strings.Contains(logs.String(), "broker-debug-4") {
		t.Errorf("root at DEBUG: %v", levels)
	}

	// Refusals, in Kafka's words; a refused resource changes nothing.
	for _, tc := range []struct {
		broker string
		ops    []kmsg.IncrementalAlterConfigsRequestResourceConfig
		want   string
	}{
		{"1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("group", kmsg.IncrementalAlterConfigOpSet, ptr("TRACE")),
			loggerOp("nope", kmsg.IncrementalAlterConfigOpSet, ptr("DEBUG"))}, "INVALID_CONFIG: Logger nope does not exist!"},
		{"1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("group", kmsg.IncrementalAlterConfigOpSet, ptr("VERBOSE"))},
			"INVALID_CONFIG: Cannot set the log level of group to VERBOSE as it is not a supported log level. Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN"},
		{"1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("group", kmsg.IncrementalAlterConfigOpSet, ptr("debug"))},
			"INVALID_CONFIG: Cannot set the log level of group to debug as it is not a supported log level. Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN"},
		{"1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("root", kmsg.IncrementalAlterConfigOpDelete, nil)},
			"INVALID_REQUEST: Removing the log level of the root logger is not allowed"},
		{"1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("nope", kmsg.IncrementalAlterConfigOpDelete, nil)},
			"INVALID_CONFIG: Logger nope does not exist!"},
		{"1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("group", kmsg.IncrementalAlterConfigOpAppend, ptr("DEBUG"))},
			"INVALID_REQUEST: APPEND operation is not allowed for the BROKER_LOGGER resource"},
		{"1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("group", kmsg.IncrementalAlterConfigOpSubtract, ptr("DEBUG"))},
			"INVALID_REQUEST: SUBTRACT operation is not allowed for the BROKER_LOGGER resource"},
		{"1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("group", 9, ptr("DEBUG"))},
			"INVALID_REQUEST: Unknown operation type 9 is not allowed for the BROKER_LOGGER resource"},
		{"1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("group", kmsg.IncrementalAlterConfigOpSet, nil)},
			"INVALID_REQUEST: Null value not supported for : group"},
		{"1", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("group", kmsg.IncrementalAlterConfigOpSet, ptr("DEBUG")),
			loggerOp("group", kmsg.IncrementalAlterConfigOpDelete, nil)}, "INVALID_REQUEST: Error due to duplicate config keys"},
		{"2", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("group", kmsg.IncrementalAlterConfigOpSet, ptr("DEBUG"))},
			"INVALID_REQUEST: Unexpected node id. Expected 1, but received 2"},
		{"", []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("group", kmsg.IncrementalAlterConfigOpSet, ptr("DEBUG"))},
			"INVALID_REQUEST: Node id must be an integer, but it is: "},
	} {
		if got := alterLoggerLevels(r, tc.broker, false, tc.ops...); got != tc.want {
			t.Errorf("%q %v:\n got %s\nwant %s", tc.broker, tc.ops, got, tc.want)
		}
	}
	if got := alterLoggerLevels(r, "1", true, loggerOp("group", kmsg.IncrementalAlterConfigOpSet, ptr("ERROR"))); got != "ok" {
		t.Errorf("validate only: %s", got)
	}
	if levels = loggerLevelsOf(t, r, "1"); levels["group"] != "DEBUG" {
		t.Errorf("a refused or validate-only request changed group to %s", levels["group"])
	}
	for broker, want := range map[string]string{"": "INVALID_REQUEST: Broker id must not be empty", "7": "INVALID_REQUEST: Unexpected broker id, expected 1 but received 7"} {
		if got := loggerLevelsOf(t, r, broker)["error"]; got != want {
			t.Errorf("describe the loggers of %q: %s, want %s", broker, got, want)
		}
	}

	// A broker logger next to a topic in one request: each answered in place.
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	for _, rr := range []kmsg.IncrementalAlterConfigsRequestResource{
		{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "missing", Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("retention.ms", 0, ptr("1"))}},
		{ResourceType: kmsg.ConfigResourceTypeBrokerLogger, ResourceName: "1", Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{loggerOp("txn", 0, ptr("ERROR"))}},
	} {
		req.Resources = append(req.Resources, rr)
	}
	resp := r.roundTrip(req, 3).(*kmsg.IncrementalAlterConfigsResponse)
	if len(resp.Resources) != 2 || resp.Resources[0].ResourceName != "missing" || resp.Resources[0].ErrorCode != kerr.UnknownTopicOrPartition.Code ||
		resp.Resources[1].ResourceName != "1" || resp.Resources[1].ErrorCode != 0 {
		t.Errorf("mixed request: %+v", resp.Resources)
	}

	// Levels are not kept across a restart, as in Kafka.
	b = restartWithLogger(t, b, Config{LogDir: dir, Values: values, Logger: logger})
	levels = loggerLevelsOf(t, dialRaw(t, b), "1")
	if fmt.Sprint(levels["group"], levels["root"], levels["controller"], levels["txn"]) != "INFOINFOINFOINFO" {
		t.Errorf("levels after a restart: %v", levels)
	}
}

func restartWithLogger(t *testing.T, b *Broker, cfg Config) *Broker {
	t.Helper()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	return startBrokerWith(t, cfg)
}

// brokerValuesOf is Samsa's defaults with raw over them, as samsa serve
// resolves them (a single node's internal topics have one replica).
func brokerValuesOf(t *testing.T, raw map[string]string) config.Values {
	t.Helper()
	v, err := LoadConfig("", raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
