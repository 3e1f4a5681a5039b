package connectrt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/connect"
)

// stage names where a record failed, as Kafka's Stage enum (the DLQ's
// __connect.errors.stage header).
const (
	stageKeyConverter    = "KEY_CONVERTER"
	stageValueConverter  = "VALUE_CONVERTER"
	stageHeaderConverter = "HEADER_CONVERTER"
	stageTransformation  = "TRANSFORMATION"
	stageTaskPut         = "TASK_PUT"
	stageTaskPoll        = "TASK_POLL"
	stageKafkaProduce    = "KAFKA_PRODUCE"
)

// errToleranceExceeded is the failure when errors.tolerance=none (Kafka's
// "Tolerance exceeded in error handler").
var errToleranceExceeded = errors.New("Tolerance exceeded in error handler")

// errorHandler applies errors.* to one record's conversion and transforms:
// retriable failures retried up to errors.retry.timeout with exponential
// backoff capped at errors.retry.delay.max.ms; then, with tolerance all,
// logged (errors.log.enable), sent to the dead letter queue (sinks) and
// skipped; with none, the task fails.
type errorHandler struct {
	cfg       connectorConfig
	logger    *slog.Logger
	dlq       *kgo.Client // nil without a DLQ
	connector string
	task      int
	failed    int64 // records skipped, for metrics and tests
}

// failure is one failed stage of a record.
type failure struct {
	stage string
	err   error
	raw   *kgo.Record // the consumed record, for sinks' DLQ
}

// run executes fn with retries; it answers (ok, fatal): ok false means the
// record is skipped, fatal a task failure.
func (h *errorHandler) run(ctx context.Context, stage string, raw *kgo.Record, fn func() error) (bool, error) {
	err := h.retry(ctx, fn)
	if err == nil {
		return true, nil
	}
	return false, h.handle(ctx, failure{stage: stage, err: err, raw: raw})
}

func (h *errorHandler) retry(ctx context.Context, fn func() error) error {
	var deadline time.Time
	if h.cfg.retryTimeout > 0 {
		deadline = time.Now().Add(time.Duration(h.cfg.retryTimeout) * time.Millisecond)
	}
	delay := 300 * time.Millisecond
	for {
		err := safe(fn)
		if err == nil || !connect.IsRetriable(err) || h.cfg.retryTimeout == 0 {
			return err
		}
		if h.cfg.retryTimeout > 0 && time.Now().Add(delay).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay *= 2
		if max := time.Duration(h.cfg.retryMaxDelay) * time.Millisecond; delay > max {
			delay = max + time.Duration(rand.Int64N(int64(max/10)+1))
		}
	}
}

// handle decides what a failure does after retries.
func (h *errorHandler) handle(ctx context.Context, f failure) error {
	if h.cfg.tolerance != "all" {
		return fmt.Errorf("%w: %s failed: %w", errToleranceExceeded, f.stage, f.err)
	}
	h.failed++
	if h.cfg.logErrors {
		attrs := []any{"connector", h.connector, "task", h.task, "stage", f.stage, "err", f.err}
		if f.raw != nil {
			attrs = append(attrs, "topic", f.raw.Topic, "partition", f.raw.Partition, "offset", f.raw.Offset)
			if h.cfg.logMessages {
				attrs = append(attrs, "key", string(f.raw.Key), "value", string(f.raw.Value))
			}
		}
		h.logger.Error("error encountered in task; skipping the record (errors.tolerance=all)", attrs...)
	}
	if h.dlq != nil && f.raw != nil {
		return h.toDLQ(ctx, f)
	}
	return nil
}

// toDLQ writes the consumed record as it was read, with Kafka's context
// headers when asked (errors.deadletterqueue.context.headers.enable).
func (h *errorHandler) toDLQ(ctx context.Context, f failure) error {
	r := &kgo.Record{Topic: h.cfg.dlqTopic, Key: f.raw.Key, Value: f.raw.Value, Headers: append([]kgo.RecordHeader(nil), f.raw.Headers...), Timestamp: f.raw.Timestamp}
	if h.cfg.dlqHeaders {
		add := func(k, v string) {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: "__connect.errors." + k, Value: []byte(v)})
		}
		add("topic", f.raw.Topic)
		add("partition", strconv.Itoa(int(f.raw.Partition)))
		add("offset", strconv.FormatInt(f.raw.Offset, 10))
		add("connector.name", h.connector)
		add("task.id", strconv.Itoa(h.task))
		add("stage", f.stage)
		add("class.name", "samsa."+f.stage)
		add("exception.class.name", "org.apache.kafka.connect.errors.DataException")
		add("exception.message", f.err.Error())
		add("exception.stacktrace", f.err.Error())
	}
	if err := h.dlq.ProduceSync(ctx, r).FirstErr(); err != nil {
		return fmt.Errorf("write to the dead letter queue %s: %w", h.cfg.dlqTopic, err)
	}
	return nil
}
