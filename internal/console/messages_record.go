package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/pkg/serde"
)

// msgsRecordView is one record's page.
type msgsRecordView struct {
	Topic    string
	Rec      *msgsRecord
	Decode   string
	Tabs     []msgsTab
	Produced bool
}

// msgsOpen lists the topic's offsets within the request's bounded
// context: nil offsets when it has answered the error. The caller
// defers cancel either way.
func (c *Console) msgsOpen(w http.ResponseWriter, r *http.Request, topic string) (context.Context, context.CancelFunc, *msgsOffsets) {
	ctx, cancel := c.ctx(r)
	o, err := c.msgsListOffsets(ctx, r, topic, false)
	if err != nil {
		c.fail(w, r, nil, err)
		return ctx, cancel, nil
	}
	return ctx, cancel, o
}

// serveMessagesRecord shows one record with its headers and metadata.
func (c *Console) serveMessagesRecord(w http.ResponseWriter, r *http.Request) {
	topic := r.PathValue("name")
	p, err1 := strconv.ParseInt(r.PathValue("partition"), 10, 32)
	off, err2 := strconv.ParseInt(r.PathValue("offset"), 10, 64)
	if err1 != nil || err2 != nil || p < 0 || off < 0 {
		c.fail(w, r, nil, badRequest("want /topics/%s/messages/<partition>/<offset> with numbers", topic))
		return
	}
	mode := r.URL.Query().Get("decode")
	switch mode {
	case "":
		mode = "auto"
	case "auto", "text", "json", "hex":
	default:
		c.fail(w, r, nil, badRequest("decode %q: want auto, text, json or hex", mode))
		return
	}
	ctx, cancel, o := c.msgsOpen(w, r, topic)
	defer cancel()
	if o == nil {
		return
	}
	part := int32(p)
	if _, ok := o.end[part]; !ok {
		c.fail(w, r, nil, badRequest("partition %d: topic %q has partitions 0 to %d", p, topic, o.partitions-1))
		return
	}
	ls, end := o.start[part], o.end[part]
	if off < ls || off >= end {
		c.fail(w, r, nil, statusErr(http.StatusNotFound, fmt.Errorf("no record at offset %d: partition %d holds offsets %d to %d", off, p, ls, end-1)))
		return
	}
	var rec *kgo.Record
	cur := &msgsCursor{partition: part, from: off, to: end}
	res, err := c.msgsScan(ctx, r, topic, map[int32]*msgsCursor{part: cur}, false, msgsReadTime, func(_ *msgsCursor, got *kgo.Record) msgsVerdict {
		rec = got
		return msgsStop
	})
	switch {
	case err != nil:
		c.fail(w, r, nil, err)
		return
	case rec == nil && res.Err != nil:
		c.fail(w, r, nil, fmt.Errorf("reading the record: %w", res.Err))
		return
	case rec == nil && res.TimedOut:
		c.fail(w, r, nil, statusErr(http.StatusGatewayTimeout, fmt.Errorf("the record at offset %d was not read within %s", off, msgsReadTime)))
		return
	case rec == nil || rec.Offset != off:
		c.fail(w, r, nil, statusErr(http.StatusNotFound, fmt.Errorf("offset %d of partition %d holds no record (compacted away, or a transaction marker)", off, p)))
		return
	}
	m := c.msgsDecoder(r, mode).record(ctx, rec)
	for _, d := range []*msgsDecoded{&m.Key, &m.Value} {
		if !d.Hex && len(d.Text) > msgsViewBytes {
			d.Text, d.Cut = strings.ToValidUTF8(d.Text[:msgsViewBytes], ""), true
		}
	}
	c.msgsRender(w, r, http.StatusOK, "messages_record", &msgsRecordView{Topic: topic, Rec: m, Decode: mode,
		Tabs: msgsTabs(topic, "Messages"), Produced: r.URL.Query().Get("done") == "produced"})
}

// msgsProduceView is the produce form's data.
type msgsProduceView struct {
	Topic                                            string
	Partitions                                       int32
	Key, Value, Headers, Partition, Subject, Message string
	Registry                                         bool
	Error                                            string
	Tabs                                             []msgsTab
}

func (c *Console) serveMessagesProduceForm(w http.ResponseWriter, r *http.Request) {
	topic := r.PathValue("name")
	_, cancel, o := c.msgsOpen(w, r, topic)
	defer cancel()
	if o == nil {
		return
	}
	c.msgsRender(w, r, http.StatusOK, "messages_produce", &msgsProduceView{Topic: topic, Partitions: o.partitions,
		Registry: c.cfg.RegistryURL != "", Tabs: msgsTabs(topic, "Messages")})
}

// serveMessagesProduce produces one record (acks=all) and shows it; a
// bad field shows the form again with a 400.
func (c *Console) serveMessagesProduce(w http.ResponseWriter, r *http.Request) {
	topic := r.PathValue("name")
	v := &msgsProduceView{Topic: topic, Key: r.PostFormValue("key"), Value: r.PostFormValue("value"),
		Headers: r.PostFormValue("headers"), Partition: strings.TrimSpace(r.PostFormValue("partition")),
		Subject: strings.TrimSpace(r.PostFormValue("subject")), Message: strings.TrimSpace(r.PostFormValue("message")),
		Registry: c.cfg.RegistryURL != "", Tabs: msgsTabs(topic, "Messages")}
	ctx, cancel, o := c.msgsOpen(w, r, topic)
	defer cancel()
	if o == nil {
		return
	}
	v.Partitions = o.partitions
	rec, err := c.msgsBuildRecord(ctx, r, v, o)
	if err != nil {
		var se *statusError
		if errors.As(err, &se) && se.status == http.StatusBadRequest {
			v.Error = err.Error()
			c.msgsRender(w, r, http.StatusBadRequest, "messages_produce", v)
			return
		}
		c.fail(w, r, nil, err)
		return
	}
	cl := c.client(r)
	if rec.Partition >= 0 {
		// The session's client partitions by key; a chosen partition
		// needs a producer that takes the record's own.
		if cl, err = c.newClient(r, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks())); err != nil {
			c.fail(w, r, nil, err)
			return
		}
		defer cl.Close()
	}
	got, err := cl.ProduceSync(ctx, rec).First()
	if err != nil {
		c.fail(w, r, nil, fmt.Errorf("producing to %s: %w", topic, err))
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/topics/%s/messages/%d/%d?done=produced", url.PathEscape(topic), got.Partition, got.Offset), http.StatusSeeOther)
}

// msgsBuildRecord makes the record a produce form describes; Partition
// is -1 for the partitioner's choice.
func (c *Console) msgsBuildRecord(ctx context.Context, r *http.Request, v *msgsProduceView, o *msgsOffsets) (*kgo.Record, error) {
	rec := &kgo.Record{Topic: v.Topic, Partition: -1, Value: []byte(v.Value)}
	if v.Key != "" {
		rec.Key = []byte(v.Key)
	}
	if v.Partition != "" {
		p, err := strconv.ParseInt(v.Partition, 10, 32)
		if err != nil || p < 0 || int32(p) >= o.partitions {
			return nil, badRequest("partition %q: topic %q has partitions 0 to %d (leave it empty for the partitioner)", v.Partition, v.Topic, o.partitions-1)
		}
		rec.Partition = int32(p)
	}
	for i, line := range strings.Split(strings.ReplaceAll(v.Headers, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, badRequest("header line %d %q: want name=value", i+1, line)
		}
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: strings.TrimSpace(name), Value: []byte(val)})
	}
	if v.Subject != "" {
		reg := c.registry(r)
		if reg == nil {
			return nil, badRequest("subject %q: the console has no Schema Registry configured", v.Subject)
		}
		enc, err := serde.New(reg).ForSubject(ctx, v.Subject, -1, v.Message)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				return nil, statusErr(http.StatusBadGateway, fmt.Errorf("the Schema Registry: %w", err))
			}
			return nil, badRequest("subject %q: %v", v.Subject, err)
		}
		b, err := enc.EncodeJSON([]byte(v.Value))
		if err != nil {
			return nil, badRequest("the value does not fit subject %q's latest schema: %v", v.Subject, err)
		}
		rec.Value = b
	}
	return rec, nil
}
