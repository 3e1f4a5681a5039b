package httpsink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"time"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/version"
)

// Class is Confluent's class name, so that an HTTP Sink config runs
// unchanged.
const Class = "io.confluent.connect.http.HttpSinkConnector"

// Plugins is the HTTP sink.
func Plugins() []connect.Plugin {
	return []connect.Plugin{{
		Class:   Class,
		Aliases: []string{"HttpSinkConnector", "HttpSink"},
		Type:    connect.PluginSink,
		Version: version.String(),
		New:     func() connect.Connector { return NewConnector() },
	}}
}

// Connector is HttpSinkConnector: tasks.max tasks with the same config.
type Connector struct {
	props map[string]string
}

// NewConnector makes an HTTP sink connector.
func NewConnector() *Connector { return &Connector{} }

var (
	_ connect.SinkConnector      = (*Connector)(nil)
	_ connect.ConnectorValidator = (*Connector)(nil)
	_ connect.SinkTask           = (*Task)(nil)
)

func (c *Connector) Version() string            { return version.String() }
func (c *Connector) Config() *connect.ConfigDef { return configDef() }

func (c *Connector) Start(ctx connect.ConnectorContext, props map[string]string) error {
	if _, err := parseSettings(props); err != nil {
		return err
	}
	c.props = maps.Clone(props)
	return nil
}

func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		out[i] = maps.Clone(c.props)
	}
	return out, nil
}

func (c *Connector) Stop() error               { return nil }
func (c *Connector) NewTask() connect.SinkTask { return NewTask() }

// Validate reports what the definition's own checks cannot see: the
// checks across configs and the refusal of Confluent's configs this sink
// lacks, against the config each is about (the runtime merges them into
// the definition's answer). With a config already invalid on its own it
// adds nothing, as Confluent's validate does.
func (c *Connector) Validate(props map[string]string) []connect.ConfigValue {
	for _, v := range configDef().Validate(props) {
		if len(v.Errors) > 0 {
			return nil
		}
	}
	_, err := parseSettings(props)
	var ce *configError
	if !errors.As(err, &ce) {
		return nil
	}
	return []connect.ConfigValue{{Name: ce.name, Value: props[ce.name], Errors: []string{ce.msg}, Visible: true}}
}

// StatusError is an answer outside 2xx.
type StatusError struct {
	Code int
	Body string // the start of the answer's body
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d %s: %s", e.Code, http.StatusText(e.Code), e.Body)
}

// Task sends records to the API in batches. A batch holds records of one
// URL (http.api.url may name the record's topic and key), in order.
type Task struct {
	log      *slog.Logger
	tctx     connect.SinkTaskContext
	s        settings
	client   *http.Client
	batch    []connect.SinkRecord
	batchURL string
}

// NewTask makes an HTTP sink task.
func NewTask() *Task { return &Task{} }

func (t *Task) Start(ctx connect.SinkTaskContext, props map[string]string) error {
	s, err := parseSettings(props)
	if err != nil {
		return err
	}
	t.tctx, t.log, t.s = ctx, ctx.Logger(), s
	dialer := &net.Dialer{Timeout: s.connectTimeout}
	t.client = &http.Client{
		Timeout: s.requestTimeout,
		// No proxy, not even from the environment: http.proxy.* are refused,
		// so the connector goes where its config says.
		Transport: &http.Transport{DialContext: dialer.DialContext, Proxy: nil, MaxIdleConnsPerHost: 4},
	}
	return nil
}

// Put adds the records to the batch, sending it whenever it is full or the
// next record is for another URL. A record with a null value does what
// behavior.on.null.values says.
func (t *Task) Put(ctx context.Context, records []connect.SinkRecord) error {
	for _, r := range records {
		if r.Value == nil {
			if err := t.null(ctx, r); err != nil {
				return err
			}
			continue
		}
		u := t.s.recordURL(r)
		if len(t.batch) > 0 && u != t.batchURL {
			if err := t.send(ctx); err != nil {
				return err
			}
		}
		t.batch, t.batchURL = append(t.batch, r), u
		if len(t.batch) >= t.s.batchMax {
			if err := t.send(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// Flush sends what is buffered: after it, every record Put received is in
// the API (or handled by behavior.on.error), so the offsets may be
// committed.
func (t *Task) Flush(ctx context.Context, offsets map[connect.TopicPartition]int64) error {
	return t.send(ctx)
}

func (t *Task) Stop() error {
	if t.client != nil {
		t.client.CloseIdleConnections()
	}
	return nil
}

// send sends the batch and empties it, whatever the outcome.
func (t *Task) send(ctx context.Context) error {
	if len(t.batch) == 0 {
		return nil
	}
	records, u := t.batch, t.batchURL
	t.batch, t.batchURL = nil, ""
	err := t.deliver(ctx, t.s.method, u, t.s.batchBody(records))
	if err != nil {
		return t.failed(ctx, records, err)
	}
	return nil
}

// null handles a record with a null value (a tombstone).
func (t *Task) null(ctx context.Context, r connect.SinkRecord) error {
	switch t.s.onNull {
	case onNullLog:
		t.log.Info("httpsink: a record with a null value is skipped", "topic", r.Topic, "partition", r.OriginalPartition,
			"offset", r.Offset(), "key", text(r.Key))
	case onNullDelete:
		if err := t.send(ctx); err != nil { // what came before goes first
			return err
		}
		if err := t.deliver(ctx, http.MethodDelete, t.s.recordURL(r), nil); err != nil {
			return t.failed(ctx, []connect.SinkRecord{r}, err)
		}
	case onNullFail:
		err := fmt.Errorf("the record at %s-%d offset %d has a null value and %s is fail", r.Topic, r.OriginalPartition, r.Offset(), NullValuesConfig)
		return t.failed(ctx, []connect.SinkRecord{r}, err)
	}
	return nil
}

// failed handles records that could not be sent as behavior.on.error says.
func (t *Task) failed(ctx context.Context, records []connect.SinkRecord, err error) error {
	switch t.s.onError {
	case onErrorIgnore:
		t.log.Debug("httpsink: a failed request is ignored", "records", len(records), "error", err)
		return nil
	case onErrorLog:
		reporter := t.tctx.ErrantRecordReporter()
		t.log.Error("httpsink: a request failed; its records are skipped", "records", len(records),
			"reported", reporter != nil, "error", err)
		if reporter == nil {
			return nil
		}
		for _, r := range records {
			if rerr := reporter.Report(ctx, r, err); rerr != nil {
				return fmt.Errorf("httpsink: report a failed record: %w", rerr)
			}
		}
		return nil
	}
	return fmt.Errorf("httpsink: %w", err)
}

// deliver sends one request, again after a backoff while the failure is one
// to retry and retries remain.
func (t *Task) deliver(ctx context.Context, method, u string, body []byte) error {
	for attempt := 0; ; attempt++ {
		err := t.do(ctx, method, u, body)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", method, u, ctx.Err())
		}
		if !t.retriable(err) || attempt >= t.s.maxRetries {
			return fmt.Errorf("%s %s failed after %d attempts: %w", method, u, attempt+1, err)
		}
		t.log.Warn("httpsink: request failed, retrying", "method", method, "url", u, "attempt", attempt+1, "error", err)
		if !wait(ctx, t.backoff(attempt)) {
			return fmt.Errorf("%s %s: %w", method, u, ctx.Err())
		}
	}
}

func (t *Task) do(ctx context.Context, method, u string, body []byte) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", t.s.contentType())
	}
	req.Header.Set("User-Agent", "samsa-http-sink/"+version.String())
	set := map[string]bool{}
	for _, h := range t.s.headers {
		if set[h[0]] {
			req.Header.Add(h[0], h[1])
		} else {
			req.Header.Set(h[0], h[1])
			set[h[0]] = true
		}
	}
	if t.s.basic {
		req.SetBasicAuth(t.s.basicUser, t.s.basicPassword)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // lets the connection be reused
	if resp.StatusCode/100 == 2 {
		return nil
	}
	return &StatusError{Code: resp.StatusCode, Body: string(head)}
}

// retriable: a network failure or timeout, 408 and 429 always, and the
// codes of retry.on.status.codes.
func (t *Task) retriable(err error) bool {
	var se *StatusError
	if !errors.As(err, &se) {
		return true
	}
	if se.Code == http.StatusRequestTimeout || se.Code == http.StatusTooManyRequests {
		return true
	}
	for _, r := range t.s.retryCodes {
		if se.Code >= r.lo && se.Code <= r.hi {
			return true
		}
	}
	return false
}

// backoffCap bounds an exponential wait: Put blocks while it retries, and
// a consumer that does not poll for max.poll.interval.ms (5 minutes by
// default) leaves its group; with the defaults the waits of the ten
// retries add up to under 4 minutes.
const backoffCap = 30 * time.Second

// backoff is retry.backoff.ms, or with EXPONENTIAL_WITH_JITTER that doubled
// per retry, up to backoffCap (or retry.backoff.ms if more), drawn from its
// upper half so that tasks failing together do not retry together.
func (t *Task) backoff(attempt int) time.Duration {
	if !t.s.exponential || t.s.backoff <= 0 {
		return t.s.backoff
	}
	d := max(t.s.backoff, backoffCap)
	if attempt < 30 && t.s.backoff<<attempt < d {
		d = t.s.backoff << attempt
	}
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
