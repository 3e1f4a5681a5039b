package console

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Bounds of a download: the records it writes, and what it may scan and
// spend to find them (a filter that matches little scans at most this).
const (
	msgsDownloadDefault = 1_000
	msgsDownloadMax     = 100_000
	msgsDownloadTime    = 2 * time.Minute
)

// msgsLine is one record of a download, one JSON object a line. Keys,
// values and headers are the record's bytes: "text" when they are UTF-8
// (the string is the bytes exactly), "base64" otherwise (or when the
// query says decode=hex); a value in the wire format decoded through the
// registry is "registry", the decoded JSON itself, with its schema ID.
// A null key or value is null with the encoding "null".
type msgsLine struct {
	Topic         string           `json:"topic"`
	Partition     int32            `json:"partition"`
	Offset        int64            `json:"offset"`
	Timestamp     string           `json:"timestamp"`
	TimestampType string           `json:"timestamp_type"`
	Key           json.RawMessage  `json:"key"`
	KeyEncoding   string           `json:"key_encoding"`
	KeySchemaID   int              `json:"key_schema_id,omitempty"`
	Value         json.RawMessage  `json:"value"`
	ValueEncoding string           `json:"value_encoding"`
	ValueSchemaID int              `json:"value_schema_id,omitempty"`
	Headers       []msgsLineHeader `json:"headers"`
}

type msgsLineHeader struct {
	Key      string          `json:"key"`
	Value    json.RawMessage `json:"value"`
	Encoding string          `json:"encoding"`
}

// msgsLineBytes encodes bytes for a download line.
func msgsLineBytes(b []byte, null bool, d *msgsDecoded, raw bool) (json.RawMessage, string, int) {
	if null {
		return json.RawMessage("null"), "null", 0
	}
	if d != nil && !raw && d.SchemaID != 0 && !d.Hex && json.Valid(d.decoded) {
		return json.RawMessage(d.decoded), "registry", d.SchemaID
	}
	if !raw && utf8.Valid(b) {
		s, _ := json.Marshal(string(b))
		return s, "text", 0
	}
	s, _ := json.Marshal(base64.StdEncoding.EncodeToString(b))
	return s, "base64", 0
}

// serveMessagesDownload streams the records a browse query selects as
// JSON lines, at most limit of them, each written as it is read: forward
// from the query's start, or, for newest and the older pager, from each
// partition's last limit/partitions records. Partitions interleave as
// they are fetched; each partition's records are in offset order.
func (c *Console) serveMessagesDownload(w http.ResponseWriter, r *http.Request) {
	q, err := msgsParseQuery(r, 0)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	q.limit = msgsDownloadDefault
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > msgsDownloadMax {
			c.fail(w, r, nil, badRequest("limit %q: want 1 to %d records", s, msgsDownloadMax))
			return
		}
		q.limit = n
	}
	lctx, cancel := c.ctx(r)
	o, err := c.msgsListOffsets(lctx, r, q.topic, q.committed)
	cancel()
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	parts, err := msgsPartitions(q, o)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	scanCap := max(10*q.limit, msgsScanRecords)
	window := max(1, (q.limit+len(parts)-1)/len(parts))
	if q.filter.active() {
		window = max(1, scanCap/len(parts))
	}
	cursors, backward, err := c.msgsCursors(r, q, o, parts, window)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	if !backward {
		for _, cur := range cursors {
			cur.limit = 0 // the download's total bounds the read
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", q.topic+".jsonl"))
	h.Set("Cache-Control", "no-store")
	h.Set("Trailer", "X-Download-Notice")
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	ctx, cancelAll := context.WithTimeout(r.Context(), msgsDownloadTime)
	defer cancelAll()
	dec := c.msgsDecoder(r, q.decode)
	raw := q.decode == "hex"
	written, scanned := 0, 0
	var werr error
	res, err := c.msgsScan(ctx, r, q.topic, cursors, q.committed, msgsDownloadTime, func(_ *msgsCursor, rec *kgo.Record) msgsVerdict {
		scanned++
		m := dec.record(ctx, rec)
		ok, ferr := q.filter.match(m)
		if ferr != nil {
			q.filter.noteErr(m, ferr)
		}
		if ok {
			line := msgsLine{Topic: q.topic, Partition: m.Partition, Offset: m.Offset,
				Timestamp: m.Timestamp.Format(time.RFC3339Nano), TimestampType: m.TimestampType, Headers: []msgsLineHeader{}}
			line.Key, line.KeyEncoding, line.KeySchemaID = msgsLineBytes(rec.Key, rec.Key == nil, &m.Key, raw)
			line.Value, line.ValueEncoding, line.ValueSchemaID = msgsLineBytes(rec.Value, rec.Value == nil, &m.Value, raw)
			for _, hd := range rec.Headers {
				v, e, _ := msgsLineBytes(hd.Value, hd.Value == nil, nil, raw)
				line.Headers = append(line.Headers, msgsLineHeader{Key: hd.Key, Value: v, Encoding: e})
			}
			if werr = enc.Encode(&line); werr != nil {
				return msgsStop // the browser went away
			}
			written++
		}
		if written >= q.limit || scanned >= scanCap {
			return msgsStop
		}
		return msgsMore
	})
	_ = bw.Flush()
	switch {
	case err != nil:
		h.Set("X-Download-Notice", "the read failed: "+err.Error())
	case res.Err != nil:
		h.Set("X-Download-Notice", fmt.Sprintf("the read stopped early after %d records: %v", written, res.Err))
	case res.TimedOut:
		h.Set("X-Download-Notice", fmt.Sprintf("the read stopped after %s with %d records", msgsDownloadTime, written))
	case scanned >= scanCap && written < q.limit:
		h.Set("X-Download-Notice", fmt.Sprintf("the filter scanned its bound of %d records and matched %d", scanCap, written))
	}
	if werr != nil {
		c.log.Debug("download ended", "topic", q.topic, "err", werr)
	}
}
