package restproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/twmb/franz-go/pkg/kgo"
)

// produceResult is one record's answer: its ProduceResponse or its error.
type produceResult struct {
	ok  *produceResponse
	err *Error
}

func (r produceResult) body() any {
	if r.err != nil {
		return r.err
	}
	return r.ok
}

// streamPending bounds the records produced and not yet answered in one
// stream: past it the reader waits for the writer, so a client that never
// reads its answers cannot make the proxy hold unbounded results.
const streamPending = 1024

// produceRecord answers POST .../records. A body of one ProduceRequest
// sent with its length is answered as Confluent answers a single record:
// the result's own HTTP status. Anything else (several concatenated
// ProduceRequests, or a chunked body whose end is not known when the
// first record arrives) is a stream, answered 200 with one JSON result
// per record, in order, each written and flushed as it completes, as
// Confluent's ProduceAction streams its answers. A record's error is its
// line; the stream goes on.
func (p *Proxy) produceRecord(w http.ResponseWriter, req *http.Request) {
	mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		writeError(w, errUnsupportedMediaType())
		return
	}
	if req.ContentLength < 0 {
		limit := &recordLimit{r: req.Body, max: p.cfg.MaxBody}
		dec := json.NewDecoder(limit)
		limit.dec = dec
		p.streamProduce(w, req, dec)
		return
	}
	if req.ContentLength > p.cfg.MaxBody {
		writeError(w, errTooLarge(p.cfg.MaxBody))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, p.cfg.MaxBody))
	if err != nil {
		writeError(w, decodeError(err, p.cfg.MaxBody))
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var first json.RawMessage
	if err := dec.Decode(&first); err != nil {
		writeError(w, decodeError(err, p.cfg.MaxBody))
		return
	}
	if dec.More() {
		p.streamProduce(w, req, json.NewDecoder(bytes.NewReader(body)))
		return
	}
	r := <-p.produceOne(req, first)
	if r.err != nil {
		writeError(w, r.err)
		return
	}
	writeJSON(w, http.StatusOK, r.ok)
}

// streamProduce reads records from dec until the body ends, produces each
// as it is read and answers each in order as it completes. A body that is
// not JSON cannot be resynchronised: it gets its error line and ends the
// stream; every record before it is still answered.
func (p *Proxy) streamProduce(w http.ResponseWriter, req *http.Request, dec *json.Decoder) {
	rc := http.NewResponseController(w)
	// HTTP/1.1 stops reading a request body once the answer starts unless
	// told otherwise, and a stream answers while it reads.
	_ = rc.EnableFullDuplex()
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	pending := make(chan chan produceResult, streamPending)
	written := make(chan struct{})
	go func() {
		defer close(written)
		writeResults(w, rc, pending)
	}()
	dec.DisallowUnknownFields()
	for {
		// Each record is decoded once, straight from the stream: decoding
		// it to raw JSON first and then again strictly cost a third of the
		// stream's CPU (docs/DESIGN-restproxy.md, Performance).
		var body produceRequest
		at := dec.InputOffset()
		err := dec.Decode(&body)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && dec.InputOffset() == at {
			// Nothing was consumed: the body is not JSON (or could not be
			// read), and the decoder keeps answering this error.
			pending <- resolved(produceResult{err: decodeError(err, p.cfg.MaxBody)})
			break
		}
		// Past a whole JSON value, an error is that record's own (an
		// unknown field, a wrong type): its line, and the stream goes on.
		pending <- p.produceDecoded(req, &body, err)
	}
	close(pending)
	<-written
}

// writeResults writes each result as it completes, in the order the
// records came; it flushes whenever no later result is ready, so a
// client sees each answer without waiting for the next.
func writeResults(w io.Writer, rc *http.ResponseController, pending <-chan chan produceResult) {
	enc := json.NewEncoder(w)
	for ch := range pending {
		_ = enc.Encode((<-ch).body()) // the client may be gone; the produces still complete
		if len(pending) == 0 {
			_ = rc.Flush()
		}
	}
}

func resolved(r produceResult) chan produceResult {
	ch := make(chan produceResult, 1)
	ch <- r
	return ch
}

// produceOne produces one record of raw JSON and answers a channel its
// result arrives on; the produce itself is asynchronous, so the records
// of a stream are in flight together.
func (p *Proxy) produceOne(req *http.Request, raw json.RawMessage) chan produceResult {
	var body produceRequest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(&body)
	return p.produceDecoded(req, &body, err)
}

// produceDecoded is produceOne past decoding: decodeErr is the record's
// strict decoding error, answered 400 once the record is within the
// produce rate limit (a record over it is 429, whatever its body).
func (p *Proxy) produceDecoded(req *http.Request, body *produceRequest, decodeErr error) chan produceResult {
	if e := p.allowProduce(req.Context()); e != nil {
		return resolved(produceResult{err: e})
	}
	if decodeErr != nil {
		return resolved(produceResult{err: errBadRequest("Bad Request: " + decodeErr.Error())})
	}
	topic := req.PathValue("topic_name")
	rec, keySize, valueSize, e := body.recordWith(topic, p.v3Schemas(req, topic))
	if e != nil {
		return resolved(produceResult{err: e})
	}
	ctx, cancel := p.opContext(req)
	t, err := p.produceTopic(ctx, req, topic, body.PartitionID)
	if err != nil {
		cancel()
		return resolved(produceResult{err: kafkaError(err)})
	}
	cluster := t.cluster
	if body.PartitionID != nil {
		if _, found := t.partitions[*body.PartitionID]; !found {
			cancel()
			return resolved(produceResult{err: errPartitionNotFound()})
		}
		rec.Partition = *body.PartitionID
		rec.Context = withManualPartition(ctx)
	}
	ch := make(chan produceResult, 1)
	kc := p.kafka(ctx)
	kc.client.Produce(ctx, rec, func(rec *kgo.Record, err error) {
		cancel()
		if err != nil {
			if staleMetadata(err) {
				kc.metadata.forget(topic)
			}
			ch <- produceResult{err: kafkaError(err)}
			return
		}
		ch <- produceResult{ok: &produceResponse{
			ErrorCode:   http.StatusOK,
			ClusterID:   cluster,
			TopicName:   topic,
			PartitionID: rec.Partition,
			Offset:      rec.Offset,
			Timestamp:   rec.Timestamp.UTC().Format("2006-01-02T15:04:05.999Z07:00"),
			Key:         keySize,
			Value:       valueSize,
		}}
	})
	return ch
}

// errRecordTooLarge is what recordLimit's reader answers past the limit.
var errRecordTooLarge = errors.New("record too large")

// recordLimit bounds one record of a chunked stream, not the stream: a
// stream may run for hours, but no record in it may hold more than max
// bytes unread by the decoder.
type recordLimit struct {
	r   io.Reader
	dec *json.Decoder
	max int64
	n   int64
}

func (l *recordLimit) Read(b []byte) (int, error) {
	if l.n-l.dec.InputOffset() > l.max {
		return 0, errRecordTooLarge
	}
	n, err := l.r.Read(b)
	l.n += int64(n)
	return n, err
}

// decodeError maps an error reading or decoding a body: past the limit
// 413, nothing 400, anything else 400 with the decoder's words.
func decodeError(err error, limit int64) *Error {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge), errors.Is(err, errRecordTooLarge):
		return errTooLarge(limit)
	case errors.Is(err, io.EOF):
		return errBadRequest("Bad Request: the request body is empty")
	default:
		return errBadRequest(fmt.Sprintf("Bad Request: %v", err))
	}
}
