package restproxy

// v2 consumer instances: Confluent's ConsumersResource
// (/consumers/{group}/instances/{instance}/...). An instance is a franz-go
// client in the group, held by this proxy between requests (consumers.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// routeV2Consumers serves Confluent's v2 consumer instances (kafka-rest's
// ConsumersResource): create and delete an instance, its subscription,
// assignments, records, offsets and positions. Each instance is a
// franz-go member of its group held by this proxy (consumers.go); a path
// naming an instance another proxy or principal made is 404 40403.
func (p *Proxy) routeV2Consumers(mux *http.ServeMux) {
	const inst = "/consumers/{group}/instances/{instance}"
	mux.HandleFunc("POST /consumers/{group}", p.createConsumer)
	mux.HandleFunc("DELETE "+inst, p.deleteConsumer)
	mux.HandleFunc("POST "+inst+"/subscription", p.v2Op(p.subscribe))
	mux.HandleFunc("GET "+inst+"/subscription", p.v2Op(p.getSubscription))
	mux.HandleFunc("DELETE "+inst+"/subscription", p.v2Op(p.unsubscribe))
	mux.HandleFunc("POST "+inst+"/assignments", p.v2Op(p.assign))
	mux.HandleFunc("GET "+inst+"/assignments", p.v2Op(p.getAssignments))
	mux.HandleFunc("GET "+inst+"/records", p.readRecords)
	mux.HandleFunc("POST "+inst+"/offsets", p.v2Op(p.commitOffsets))
	mux.HandleFunc("GET "+inst+"/offsets", p.v2Op(p.committedOffsets))
	mux.HandleFunc("POST "+inst+"/positions", p.v2Op(p.seek))
	mux.HandleFunc("POST "+inst+"/positions/beginning", p.v2Op(p.seekToEdge(true)))
	mux.HandleFunc("POST "+inst+"/positions/end", p.v2Op(p.seekToEdge(false)))
}

// readV2Body decodes a v2 request body into v. The body may be empty
// (empty is true): Confluent takes a missing body as defaults for a
// create and as "everything consumed" for a commit. A body must be one of
// the v2 JSON types or application/json (415 otherwise); unknown fields
// are refused, as everywhere in this proxy.
func (p *Proxy) readV2Body(w http.ResponseWriter, req *http.Request, v any) (empty bool, e *Error) {
	if req.ContentLength > p.cfg.MaxBody {
		return false, errTooLarge(p.cfg.MaxBody)
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, req.Body, p.cfg.MaxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return false, errTooLarge(p.cfg.MaxBody)
		}
		return false, errBadRequest("Bad Request: " + err.Error())
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return true, nil
	}
	if !isV2RequestType(req.Header.Get("Content-Type")) {
		return false, errUnsupportedMediaType()
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return false, errBadRequest("Bad Request: " + err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return false, errBadRequest("Bad Request: more than one JSON value in the body")
	}
	return false, nil
}

func isV2RequestType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	if mt == "application/json" || mt == v2ContentType {
		return true
	}
	f, ok := strings.CutPrefix(mt, "application/vnd.kafka.")
	if !ok {
		return false
	}
	f, ok = strings.CutSuffix(f, ".v2+json")
	_, known := parseEmbeddedFormat(f)
	return ok && known
}

// instanceKeyOf names the instance a request is for, as its principal.
func (p *Proxy) instanceKeyOf(req *http.Request) instanceKey {
	return instanceKey{p.kafka(req.Context()).principal, req.PathValue("group"), req.PathValue("instance")}
}

// v2Op runs an operation on the request's instance, holding it for the
// operation; op answers the body to write (nil: 204 No Content, as
// Confluent's void resources).
func (p *Proxy) v2Op(op func(http.ResponseWriter, *http.Request, *consumerInstance) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		ci, e := p.consumers.get(p.instanceKeyOf(req))
		if e != nil {
			writeV2Error(w, e)
			return
		}
		if e := ci.begin(); e != nil {
			writeV2Error(w, e)
			return
		}
		body, err := op(w, req, ci)
		ci.end(p.consumers.clock.Now())
		switch {
		case err != nil:
			writeV2Error(w, err)
		case body == nil:
			w.WriteHeader(http.StatusNoContent)
		default:
			writeV2(w, http.StatusOK, body)
		}
	}
}

// flexString and flexInt take a config value as a JSON string or as a
// bare boolean or number, as Jackson coerces either into Confluent's
// String and Integer fields.
type (
	flexString string
	flexInt    int64
)

func (s *flexString) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err == nil {
		*s = flexString(str)
		return nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v.(type) {
	case bool, float64:
		*s = flexString(strings.TrimSpace(string(b)))
		return nil
	}
	return fmt.Errorf("%s: want a string", b)
}

func (n *flexInt) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		b = []byte(s)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		return fmt.Errorf("%s: want an integer", b)
	}
	*n = flexInt(v)
	return nil
}

// createConsumerRequest is Confluent's CreateConsumerInstanceRequest,
// with its field aliases.
type createConsumerRequest struct {
	ID               *string     `json:"id"`
	Name             *string     `json:"name"`
	Format           *string     `json:"format"`
	AutoOffsetReset  *string     `json:"auto.offset.reset"`
	AutoCommitEnable *flexString `json:"auto.commit.enable"`
	FetchMinBytes    *flexInt    `json:"fetch.min.bytes"`
	ResponseMinBytes *flexInt    `json:"responseMinBytes"`
	RequestTimeoutMs *flexInt    `json:"consumer.request.timeout.ms"`
	RequestWaitMs    *flexInt    `json:"requestWaitMs"`
}

func (p *Proxy) createConsumer(w http.ResponseWriter, req *http.Request) {
	var r createConsumerRequest
	if _, e := p.readV2Body(w, req, &r); e != nil {
		writeV2Error(w, e)
		return
	}
	if r.FetchMinBytes == nil {
		r.FetchMinBytes = r.ResponseMinBytes
	}
	if r.RequestTimeoutMs == nil {
		r.RequestTimeoutMs = r.RequestWaitMs
	}
	cfg, e := parseInstanceConfig(&r)
	if e != nil {
		writeV2Error(w, e)
		return
	}
	group := req.PathValue("group")
	kc := p.kafka(req.Context())
	ci := &consumerInstance{
		key:      instanceKey{kc.principal, group, instanceName(&r)},
		cfg:      cfg,
		kc:       kc,
		opts:     kc.opts,
		consumed: make(map[v2TopicPartition]int64),
	}
	if e := p.consumers.add(ci); e != nil {
		writeV2Error(w, e)
		return
	}
	writeV2(w, http.StatusOK, struct {
		InstanceID string `json:"instance_id"`
		BaseURI    string `json:"base_uri"`
	}{ci.key.name, p.v2BaseURL(req) + "/consumers/" + url.PathEscape(group) + "/instances/" + url.PathEscape(ci.key.name)})
}

// v2BaseURL is the proxy's URL as clients reach it: the configured
// advertised URL, else the request's scheme and Host.
func (p *Proxy) v2BaseURL(req *http.Request) string {
	if p.cfg.AdvertisedURL != "" {
		return strings.TrimSuffix(p.cfg.AdvertisedURL, "/")
	}
	scheme := "http"
	if req.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + req.Host
}

func (p *Proxy) deleteConsumer(w http.ResponseWriter, req *http.Request) {
	if e := p.consumers.remove(p.instanceKeyOf(req)); e != nil {
		writeV2Error(w, e)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type subscriptionRequest struct {
	Topics       *[]string `json:"topics"`
	TopicPattern *string   `json:"topic_pattern"`
}

func (p *Proxy) subscribe(w http.ResponseWriter, req *http.Request, ci *consumerInstance) (any, error) {
	var r subscriptionRequest
	empty, e := p.readV2Body(w, req, &r)
	if e != nil {
		return nil, e
	}
	switch {
	case empty:
		return nil, errBadRequest("Bad Request: the request body is empty")
	case r.Topics != nil && r.TopicPattern != nil:
		return nil, errBadRequest("Bad Request: give topics or topic_pattern, not both")
	case r.Topics == nil && r.TopicPattern == nil:
		return nil, errBadRequest("Bad Request: topics or topic_pattern is required")
	case r.Topics != nil && len(*r.Topics) == 0:
		ci.closeClientLocked() // KafkaConsumer.subscribe of no topics unsubscribes
		return nil, nil
	case r.Topics != nil:
		for _, t := range *r.Topics {
			if t == "" {
				return nil, errBadRequest("Bad Request: a topic name is empty")
			}
		}
		return nil, ci.subscribeLocked(*r.Topics, "")
	}
	if *r.TopicPattern == "" {
		return nil, errBadRequest("Bad Request: topic_pattern is empty")
	}
	return nil, ci.subscribeLocked(nil, *r.TopicPattern)
}

func (p *Proxy) getSubscription(_ http.ResponseWriter, _ *http.Request, ci *consumerInstance) (any, error) {
	topics := ci.subscriptionLocked()
	if topics == nil {
		topics = []string{}
	}
	return struct {
		Topics []string `json:"topics"`
	}{topics}, nil
}

func (p *Proxy) unsubscribe(_ http.ResponseWriter, _ *http.Request, ci *consumerInstance) (any, error) {
	ci.closeClientLocked()
	return nil, nil
}

// partitionsRequest is ConsumerAssignmentRequest, ConsumerSeekToRequest
// and ConsumerCommittedRequest: a list of partitions.
type partitionsRequest struct {
	Partitions []v2TopicPartition `json:"partitions"`
}

// readPartitions reads a partitions body; each needs a topic and a
// partition of at least 0.
func (p *Proxy) readPartitions(w http.ResponseWriter, req *http.Request) ([]v2TopicPartition, bool, *Error) {
	var r partitionsRequest
	empty, e := p.readV2Body(w, req, &r)
	if e != nil || empty {
		return nil, empty, e
	}
	for _, tp := range r.Partitions {
		if e := checkPartition(tp.Topic, tp.Partition); e != nil {
			return nil, false, e
		}
	}
	return r.Partitions, false, nil
}

// readSomePartitions is readPartitions for a request a body is required
// of (400 without one).
func (p *Proxy) readSomePartitions(w http.ResponseWriter, req *http.Request) ([]v2TopicPartition, *Error) {
	tps, empty, e := p.readPartitions(w, req)
	if e == nil && empty {
		e = errBadRequest("Bad Request: the request body is empty")
	}
	return tps, e
}

func checkPartition(topic string, partition int32) *Error {
	if topic == "" {
		return errConstraintViolation("topic must not be empty")
	}
	if partition < 0 {
		return errConstraintViolation(fmt.Sprintf("partition %d must be at least 0", partition))
	}
	return nil
}

func (p *Proxy) assign(w http.ResponseWriter, req *http.Request, ci *consumerInstance) (any, error) {
	tps, e := p.readSomePartitions(w, req)
	if e != nil {
		return nil, e
	}
	ctx, cancel := p.opContext(req)
	defer cancel()
	return nil, ci.assignLocked(ctx, tps)
}

func (p *Proxy) getAssignments(_ http.ResponseWriter, _ *http.Request, ci *consumerInstance) (any, error) {
	tps := ci.assignmentLocked()
	if tps == nil {
		tps = []v2TopicPartition{}
	}
	return partitionsRequest{tps}, nil
}

// v2Record is a record as a v2 consumer reads it: BinaryConsumerRecord,
// JsonConsumerRecord and SchemaConsumerRecord share this shape.
type v2Record struct {
	Topic     string          `json:"topic"`
	Key       json.RawMessage `json:"key"`
	Value     json.RawMessage `json:"value"`
	Partition int32           `json:"partition"`
	Offset    int64           `json:"offset"`
}

func (p *Proxy) readRecords(w http.ResponseWriter, req *http.Request) {
	ci, e := p.consumers.get(p.instanceKeyOf(req))
	if e != nil {
		writeV2Error(w, e)
		return
	}
	format, mediaType, ok := negotiateRecordsFormat(req.Header.Values("Accept"))
	if !ok {
		writeV2Error(w, &Error{http.StatusNotAcceptable, http.StatusNotAcceptable, "HTTP 406 Not Acceptable"})
		return
	}
	if format != ci.cfg.format {
		writeV2Error(w, errConsumerFormatMismatch())
		return
	}
	wait, maxBytes, e := readLimits(req, ci.cfg.requestWait)
	if e != nil {
		writeV2Error(w, e)
		return
	}
	if e := ci.begin(); e != nil {
		writeV2Error(w, e)
		return
	}
	out, err := p.readAndDecode(req.Context(), ci, wait, maxBytes)
	ci.end(p.consumers.clock.Now())
	if err != nil {
		writeV2Error(w, err)
		return
	}
	w.Header().Set("Content-Type", mediaType)
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(out)
}

// readLimits reads timeout and max_bytes as Confluent's read task: the
// wait is the instance's consumer.request.timeout.ms, shortened by a
// positive timeout; max_bytes is bounded by consumer.request.max.bytes.
func readLimits(req *http.Request, wait time.Duration) (time.Duration, int64, *Error) {
	q := req.URL.Query()
	maxBytes := int64(consumerRequestMaxBytes)
	if s := q.Get("timeout"); s != "" {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, 0, errBadRequest(fmt.Sprintf("Bad Request: timeout %q is not a number of milliseconds", s))
		}
		if ms > 0 {
			wait = min(wait, time.Duration(ms)*time.Millisecond)
		}
	}
	if s := q.Get("max_bytes"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, 0, errBadRequest(fmt.Sprintf("Bad Request: max_bytes %q is not a number", s))
		}
		if n > 0 {
			maxBytes = min(maxBytes, n)
		}
	}
	return wait, maxBytes, nil
}

// readAndDecode reads records and embeds them in the instance's format.
// Records are consumed only once all are decoded: a record that does not
// decode stays first in line and fails the next read too, as in
// Confluent (whose deserializer throws before the record is taken).
func (p *Proxy) readAndDecode(ctx context.Context, ci *consumerInstance, wait time.Duration, maxBytes int64) ([]v2Record, error) {
	recs, err := ci.readLocked(ctx, wait, maxBytes)
	if err != nil {
		return nil, err
	}
	out := make([]v2Record, 0, len(recs))
	for _, r := range recs {
		vr, err := p.v2RecordOf(ctx, ci.cfg.format, r)
		if err != nil {
			ci.unreadLocked(recs)
			return nil, err
		}
		out = append(out, vr)
	}
	ci.markConsumedLocked(recs)
	// An auto commit that fails is retried at the next interval, as
	// KafkaConsumer's asynchronous auto commit: the records read are
	// answered either way.
	_ = ci.maybeAutoCommitLocked(ctx, time.Now())
	return out, nil
}

func (p *Proxy) v2RecordOf(ctx context.Context, f embeddedFormat, r *kgo.Record) (v2Record, error) {
	key, err := p.decodeEmbedded(ctx, f, r.Topic, true, r.Key)
	if err != nil {
		return v2Record{}, recordDecodeError(r, "key", err)
	}
	value, err := p.decodeEmbedded(ctx, f, r.Topic, false, r.Value)
	if err != nil {
		return v2Record{}, recordDecodeError(r, "value", err)
	}
	return v2Record{Topic: r.Topic, Key: key, Value: value, Partition: r.Partition, Offset: r.Offset}, nil
}

// recordDecodeError is a record that cannot be embedded in the instance's
// format: Confluent's deserializer failure, 500 50002 "Kafka error".
func recordDecodeError(r *kgo.Record, what string, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{http.StatusInternalServerError, codeKafkaError,
		fmt.Sprintf("Kafka error: the %s of %s[%d] at offset %d: %v", what, r.Topic, r.Partition, r.Offset, err)}
}

// negotiateRecordsFormat chooses the format a records read answers in, as
// Jersey chooses among ConsumersResource's read methods: the Accept range
// of the highest q, and among equal q the method of the highest qs
// (binary 1, application/vnd.kafka.v2+json 0.9 and read as binary, the
// others 0.1). No Accept, or */*, is binary. ok is false when nothing
// acceptable is offered (406).
func negotiateRecordsFormat(accepts []string) (embeddedFormat, string, bool) {
	if len(accepts) == 0 {
		return formatBinary, "application/vnd.kafka.binary.v2+json", true
	}
	bestQ, bestQS := -1.0, -1.0
	var best embeddedFormat
	var bestType string
	for _, header := range accepts {
		for _, r := range strings.Split(header, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(r))
			if err != nil {
				continue
			}
			q := 1.0
			if s, ok := params["q"]; ok {
				if q, err = strconv.ParseFloat(s, 64); err != nil {
					continue
				}
			}
			if q <= 0 {
				continue
			}
			f, typ, qs, ok := offeredRecordsType(mt)
			if !ok {
				continue
			}
			if q > bestQ || (q == bestQ && qs > bestQS) {
				bestQ, bestQS, best, bestType = q, qs, f, typ
			}
		}
	}
	return best, bestType, bestQ > 0
}

// offeredRecordsType is the read method a media range selects: its
// format, the type answered and the method's qs.
func offeredRecordsType(mt string) (embeddedFormat, string, float64, bool) {
	switch mt {
	case "*/*", "application/*", "application/vnd.kafka.binary.v2+json":
		return formatBinary, "application/vnd.kafka.binary.v2+json", 1, true
	case v2ContentType:
		return formatBinary, v2ContentType, 0.9, true
	}
	name, ok := strings.CutPrefix(mt, "application/vnd.kafka.")
	if !ok {
		return "", "", 0, false
	}
	name, ok = strings.CutSuffix(name, ".v2+json")
	f, known := parseEmbeddedFormat(name)
	if !ok || !known {
		return "", "", 0, false
	}
	return f, mt, 0.1, true
}

// offsetRequest is TopicPartitionOffsetMetadata: a partition, the offset
// of the last record consumed from it, and commit metadata.
type offsetRequest struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Offset    int64   `json:"offset"`
	Metadata  *string `json:"metadata"`
}

func (p *Proxy) commitOffsets(w http.ResponseWriter, req *http.Request, ci *consumerInstance) (any, error) {
	var r struct {
		Offsets *[]offsetRequest `json:"offsets"`
	}
	empty, e := p.readV2Body(w, req, &r)
	if e != nil {
		return nil, e
	}
	var offsets map[v2TopicPartition]kadm.Offset
	if empty || r.Offsets == nil {
		offsets = ci.consumedOffsetsLocked()
	} else {
		offsets = make(map[v2TopicPartition]kadm.Offset)
		for _, o := range *r.Offsets {
			if e := checkPartition(o.Topic, o.Partition); e != nil {
				return nil, e
			}
			if o.Offset < 0 {
				return nil, errConstraintViolation(fmt.Sprintf("offset %d must be at least 0", o.Offset))
			}
			ko := kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: o.Offset + 1, LeaderEpoch: -1}
			if o.Metadata != nil {
				ko.Metadata = *o.Metadata
			}
			offsets[v2TopicPartition{o.Topic, o.Partition}] = ko
		}
	}
	// ?async is accepted and the commit is synchronous either way: an
	// answer after the commit is done (or failed) says more than
	// Confluent's commitAsync, whose failure is only logged.
	if a := req.URL.Query().Get("async"); a != "" && a != "true" && a != "false" {
		return nil, errBadRequest(fmt.Sprintf("Bad Request: async %q: want true or false", a))
	}
	ctx, cancel := p.opContext(req)
	defer cancel()
	if err := ci.commitLocked(ctx, offsets); err != nil {
		return nil, err
	}
	// Confluent answers the empty list its commit builds.
	return []struct{}{}, nil
}

func (p *Proxy) committedOffsets(w http.ResponseWriter, req *http.Request, ci *consumerInstance) (any, error) {
	tps, empty, e := p.readPartitions(w, req)
	if e != nil {
		return nil, e
	}
	if empty {
		return nil, errPartitionNotFound() // Confluent's answer to no body
	}
	ctx, cancel := p.opContext(req)
	defer cancel()
	committed, err := ci.kc.admin.FetchOffsets(ctx, ci.key.group)
	if err != nil {
		return nil, err
	}
	type offsetMetadata struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		Offset    int64  `json:"offset"`
		Metadata  string `json:"metadata"`
	}
	out := []offsetMetadata{}
	for _, tp := range tps {
		if o, ok := committed.Lookup(tp.Topic, tp.Partition); ok && o.Err == nil && o.At >= 0 {
			out = append(out, offsetMetadata{tp.Topic, tp.Partition, o.At, o.Metadata})
		}
	}
	return struct {
		Offsets []offsetMetadata `json:"offsets"`
	}{out}, nil
}

// seekRequest is ConsumerSeekRequest: offsets to seek to, and partitions
// to seek to the first offset at or after a time.
type seekRequest struct {
	Offsets []struct {
		Topic     string  `json:"topic"`
		Partition int32   `json:"partition"`
		Offset    int64   `json:"offset"`
		Metadata  *string `json:"metadata"`
	} `json:"offsets"`
	Timestamps []struct {
		Topic     string    `json:"topic"`
		Partition int32     `json:"partition"`
		Timestamp time.Time `json:"timestamp"`
		Metadata  *string   `json:"metadata"`
	} `json:"timestamps"`
}

func (p *Proxy) seek(w http.ResponseWriter, req *http.Request, ci *consumerInstance) (any, error) {
	var r seekRequest
	empty, e := p.readV2Body(w, req, &r)
	if e != nil {
		return nil, e
	}
	if empty {
		return nil, errBadRequest("Bad Request: the request body is empty")
	}
	to := make(map[v2TopicPartition]int64)
	for _, o := range r.Offsets {
		if e := checkPartition(o.Topic, o.Partition); e != nil {
			return nil, e
		}
		if o.Offset < 0 {
			return nil, errConstraintViolation(fmt.Sprintf("offset %d must be at least 0", o.Offset))
		}
		to[v2TopicPartition{o.Topic, o.Partition}] = o.Offset
	}
	if len(r.Timestamps) > 0 {
		ctx, cancel := p.opContext(req)
		defer cancel()
		for _, ts := range r.Timestamps {
			if e := checkPartition(ts.Topic, ts.Partition); e != nil {
				return nil, e
			}
			listed, err := ci.kc.admin.ListOffsetsAfterMilli(ctx, ts.Timestamp.UnixMilli(), ts.Topic)
			if err != nil {
				return nil, err
			}
			o, ok := listed.Lookup(ts.Topic, ts.Partition)
			if !ok {
				return nil, errPartitionNotFound()
			}
			if o.Err != nil {
				return nil, o.Err
			}
			to[v2TopicPartition{ts.Topic, ts.Partition}] = o.Offset
		}
	}
	return nil, ci.seekLocked(to)
}

// seekToEdge seeks partitions to their log start (beginning) or end.
func (p *Proxy) seekToEdge(beginning bool) func(http.ResponseWriter, *http.Request, *consumerInstance) (any, error) {
	return func(w http.ResponseWriter, req *http.Request, ci *consumerInstance) (any, error) {
		tps, e := p.readSomePartitions(w, req)
		if e != nil {
			return nil, e
		}
		ctx, cancel := p.opContext(req)
		defer cancel()
		var topics []string
		for _, tp := range tps {
			topics = append(topics, tp.Topic)
		}
		list := ci.kc.admin.ListEndOffsets
		if beginning {
			list = ci.kc.admin.ListStartOffsets
		}
		listed, err := list(ctx, topics...)
		if err != nil {
			return nil, err
		}
		to := make(map[v2TopicPartition]int64)
		for _, tp := range tps {
			o, ok := listed.Lookup(tp.Topic, tp.Partition)
			if !ok {
				return nil, errPartitionNotFound()
			}
			if o.Err != nil {
				return nil, o.Err
			}
			to[tp] = o.Offset
		}
		return nil, ci.seekLocked(to)
	}
}
