package broker

// The /metrics handler, and the wide metric families it writes itself.
//
// Most families go through client_golang's registry (metrics.go). The
// families with a series per topic, per partition or per group and
// partition do not: at 10,000 partitions, with a group's offset on each,
// they are some 60,000 series. The registry spends about 2 µs and eight
// allocations on each (a const metric built, hashed for its duplicate
// check, sorted, then encoded), which put a scrape of 10,000 partitions,
// without the groups, at 90 ms of CPU against issue 14's budget of 50.
// These families are written here straight into the text format, in one
// walk of the topics and one of the groups, with no allocation per
// series; see docs/METRICS.md ("Scrape cost") for the figures.
//
// The response is always Prometheus' text format 0.0.4, which every
// Prometheus and every agent that scrapes Prometheus accepts whatever
// they ask for first, gzipped (at the fastest level) when the scraper
// accepts gzip, as Prometheus does.

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/common/expfmt"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/group"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// metricsHandler serves /metrics.
func (b *Broker) metricsHandler() http.Handler {
	return http.HandlerFunc(b.serveMetrics)
}

var (
	scrapeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	gzipWriters   = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
		return w
	}}
)

func (b *Broker) serveMetrics(w http.ResponseWriter, r *http.Request) {
	buf := scrapeBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer scrapeBuffers.Put(buf)
	b.writeMetrics(r.Context(), buf)
	w.Header().Set("Content-Type", string(expfmt.FmtText))
	if !acceptsGzip(r.Header.Get("Accept-Encoding")) {
		w.Write(buf.Bytes())
		return
	}
	w.Header().Set("Content-Encoding", "gzip")
	gz := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(gz)
	gz.Reset(w)
	gz.Write(buf.Bytes())
	gz.Close()
}

// writeMetrics writes every metric family in the text format: the
// registry's, then the wide ones.
func (b *Broker) writeMetrics(ctx context.Context, buf *bytes.Buffer) {
	mfs, err := b.metrics.registry.Gather()
	if err != nil {
		// What was gathered is still served: a collector that fails
		// must not hide every other metric.
		b.log.Error("gathering metrics", "err", err)
	}
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(buf, mf); err != nil {
			b.log.Error("encoding metrics", "family", mf.GetName(), "err", err)
		}
	}
	w := wideWriters.Get().(*wideWriter)
	defer wideWriters.Put(w)
	w.reset()
	b.collectTopicFamilies(w)
	b.collectConsumerLag(ctx, w)
	w.writeTo(buf)
}

// acceptsGzip reports whether an Accept-Encoding header takes gzip.
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		if strings.TrimSpace(coding) != "gzip" {
			continue
		}
		q := strings.ReplaceAll(params, " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// textFamily is one metric family in Prometheus' text format, its
// samples appended as the walk finds them and its header written only if
// it has one.
type textFamily struct {
	name, header string
	buf          []byte
	labels       int // labels of the sample being written
}

func newTextFamily(name, typ, help string) *textFamily {
	return &textFamily{name: name, header: "# HELP " + name + " " + help + "\n# TYPE " + name + " " + typ + "\n"}
}

// begin starts a sample; label adds its labels, then value ends it.
func (f *textFamily) begin() *textFamily {
	f.buf = append(f.buf, f.name...)
	f.labels = 0
	return f
}

func (f *textFamily) label(name, value string) *textFamily {
	f.labelName(name)
	f.buf = appendLabelValue(f.buf, value)
	f.buf = append(f.buf, '"')
	return f
}

func (f *textFamily) labelInt(name string, value int64) *textFamily {
	f.labelName(name)
	f.buf = strconv.AppendInt(f.buf, value, 10)
	f.buf = append(f.buf, '"')
	return f
}

// labelName opens a label: its separator, name and opening quote.
func (f *textFamily) labelName(name string) {
	if f.labels == 0 {
		f.buf = append(f.buf, '{')
	} else {
		f.buf = append(f.buf, ',')
	}
	f.labels++
	f.buf = append(f.buf, name...)
	f.buf = append(f.buf, '=', '"')
}

func (f *textFamily) value(v int64) {
	if f.labels > 0 {
		f.buf = append(f.buf, '}')
	}
	f.buf = append(f.buf, ' ')
	f.buf = strconv.AppendInt(f.buf, v, 10)
	f.buf = append(f.buf, '\n')
}

// appendLabelValue appends s escaped as the text format wants a label
// value: backslash, double quote and line feed escaped, and any byte that
// is not UTF-8 replaced (a group ID is any bytes a client sent, and one
// invalid label makes Prometheus refuse the whole scrape).
func appendLabelValue(buf []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\\' || c == '"' || c == '\n' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return append(buf, s...)
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			buf = utf8.AppendRune(buf, utf8.RuneError)
		case r == '\\':
			buf = append(buf, '\\', '\\')
		case r == '"':
			buf = append(buf, '\\', '"')
		case r == '\n':
			buf = append(buf, '\\', 'n')
		default:
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return buf
}

// wideWriter holds the wide families of one scrape, reused from scrape to
// scrape (wideWriters) so that their buffers are grown once.
type wideWriter struct {
	messagesIn, bytesIn, bytesOut          *textFamily
	produceRequests, failedProduce         *textFamily
	fetchRequests, failedFetch             *textFamily
	logSize, logSegments                   *textFamily
	logStartOffset, logEndOffset           *textFamily
	partitions, leaders                    *textFamily
	underReplicated, underMinISR, atMinISR *textFamily
	reassigning                            *textFamily
	lag, committed                         *textFamily
	all                                    []*textFamily
	// offsets, ends and followerEnds are collectConsumerLag's, kept
	// for their capacity.
	offsets            []group.CommittedOffset
	ends, followerEnds map[model.TopicPartition]int64
}

var wideWriters = sync.Pool{New: func() any { return newWideWriter() }}

func newWideWriter() *wideWriter {
	w := &wideWriter{ends: map[model.TopicPartition]int64{}, followerEnds: map[model.TopicPartition]int64{}}
	family := func(name, typ, help string) *textFamily {
		f := newTextFamily(name, typ, help)
		w.all = append(w.all, f)
		return f
	}
	w.messagesIn = family("samsa_topic_messages_in_total", "counter", "Records appended by producers, per topic.")
	w.bytesIn = family("samsa_topic_bytes_in_total", "counter", "Record bytes appended by producers, per topic.")
	w.bytesOut = family("samsa_topic_bytes_out_total", "counter",
		"Record bytes sent to consumers, per topic (followers' fetches are samsa_replication_bytes_out_total).")
	w.produceRequests = family("samsa_topic_produce_requests_total", "counter", "Partitions of Produce requests, per topic.")
	w.failedProduce = family("samsa_topic_failed_produce_requests_total", "counter",
		"Partitions of Produce requests that failed for a reason other than a routine client error, per topic.")
	w.fetchRequests = family("samsa_topic_fetch_requests_total", "counter", "Partitions of consumers' Fetch requests, per topic.")
	w.failedFetch = family("samsa_topic_failed_fetch_requests_total", "counter",
		"Partitions of consumers' Fetch requests that failed for a reason other than a routine client error, per topic.")
	w.logSize = family("samsa_log_size_bytes", "gauge", "Bytes of the partition's log segments on disk.")
	w.logSegments = family("samsa_log_segments", "gauge", "Segments of the partition's log.")
	w.logStartOffset = family("samsa_log_start_offset", "gauge", "The partition's log start offset.")
	w.logEndOffset = family("samsa_log_end_offset", "gauge", "The partition's log end offset.")
	w.partitions = family("samsa_partitions", "gauge", "Partitions this broker hosts a replica of.")
	w.leaders = family("samsa_leader_partitions", "gauge", "Partitions this broker leads.")
	w.underReplicated = family("samsa_under_replicated_partitions", "gauge",
		"Partitions this broker leads whose ISR is smaller than their replica set.")
	w.reassigning = family("samsa_reassigning_partitions", "gauge",
		"Partitions this broker leads that are being reassigned (KIP-455).")
	w.underMinISR = family("samsa_under_min_isr_partitions", "gauge",
		"Partitions this broker leads whose ISR is smaller than min.insync.replicas.")
	w.atMinISR = family("samsa_at_min_isr_partitions", "gauge",
		"Partitions this broker leads whose ISR is exactly min.insync.replicas.")
	w.lag = family("samsa_consumer_group_lag", "gauge",
		"Records between a group's committed offset and the partition's high watermark, per group this broker coordinates and partition.")
	w.committed = family("samsa_consumer_group_committed_offset", "gauge",
		"A group's committed offset, per group this broker coordinates and partition.")
	return w
}

func (w *wideWriter) reset() {
	for _, f := range w.all {
		f.buf = f.buf[:0]
	}
	w.offsets = w.offsets[:0]
	clear(w.ends)
	clear(w.followerEnds)
}

// writeTo appends every family that has samples.
func (w *wideWriter) writeTo(buf *bytes.Buffer) {
	for _, f := range w.all {
		if len(f.buf) > 0 {
			buf.WriteString(f.header)
			buf.Write(f.buf)
		}
	}
}

// collectTopicFamilies writes each topic's counters, each hosted
// partition's log, and the broker's partition counts, the leader's view of
// the ISR taken from the metadata the broker applied.
func (b *Broker) collectTopicFamilies(w *wideWriter) {
	img := b.meta.Load()
	self := model.NodeID(b.cfg.NodeID)
	var partitions, leaders, underReplicated, underMinISR, atMinISR, reassigning int64
	for _, ts := range b.topics.all() {
		hosted := false
		for _, p := range ts.partitions {
			if p != nil {
				hosted = true
				break
			}
		}
		if !hosted {
			// Every broker knows every topic; one it hosts no replica
			// of would only add series of zeros.
			continue
		}
		m := ts.metrics
		w.messagesIn.begin().label("topic", ts.name).value(int64(m.messagesIn.Load()))
		w.bytesIn.begin().label("topic", ts.name).value(int64(m.bytesIn.Load()))
		w.bytesOut.begin().label("topic", ts.name).value(int64(m.bytesOut.Load()))
		w.produceRequests.begin().label("topic", ts.name).value(int64(m.produceRequests.Load()))
		w.failedProduce.begin().label("topic", ts.name).value(int64(m.failedProduceRequests.Load()))
		w.fetchRequests.begin().label("topic", ts.name).value(int64(m.fetchRequests.Load()))
		w.failedFetch.begin().label("topic", ts.name).value(int64(m.failedFetchRequests.Load()))
		var ti *metadata.TopicImage
		if img != nil {
			ti, _ = img.TopicByID(ts.id)
		}
		minISR := int(ts.config.Int("min.insync.replicas"))
		for i, p := range ts.partitions {
			if p == nil {
				continue
			}
			partitions++
			o := p.LogOffsets()
			w.logSize.begin().label("topic", ts.name).labelInt("partition", int64(i)).value(o.Size)
			w.logSegments.begin().label("topic", ts.name).labelInt("partition", int64(i)).value(int64(o.Segments))
			w.logStartOffset.begin().label("topic", ts.name).labelInt("partition", int64(i)).value(o.LogStartOffset)
			w.logEndOffset.begin().label("topic", ts.name).labelInt("partition", int64(i)).value(o.LogEndOffset)
			if ti == nil || i >= len(ti.Partitions) || ti.Partitions[i].Leader != self {
				continue
			}
			pi := ti.Partitions[i]
			leaders++
			isr := len(pi.ISR)
			// During a reassignment the replication factor is the
			// original one, as Kafka's OngoingReassignmentState counts
			// it: adding replicas still catching up are not missing.
			if isr < len(pi.Replicas)-len(pi.AddingReplicas) {
				underReplicated++
			}
			if pi.Reassigning() {
				reassigning++
			}
			switch {
			case isr < minISR:
				underMinISR++
			case isr == minISR:
				atMinISR++
			}
		}
	}
	w.partitions.begin().value(partitions)
	w.leaders.begin().value(leaders)
	w.underReplicated.begin().value(underReplicated)
	w.reassigning.begin().value(reassigning)
	w.underMinISR.begin().value(underMinISR)
	w.atMinISR.begin().value(atMinISR)
}

// lagRequestTimeout bounds the ListOffsets a scrape sends to the leaders
// of partitions this broker does not lead.
const lagRequestTimeout = 3 * time.Second

// collectConsumerLag writes the lag of every committed offset of the
// groups this broker coordinates: the partition's high watermark (what a
// read_uncommitted consumer can read, as kafka-consumer-groups.sh counts
// lag) less the committed offset, never below zero. The high watermark is
// read here when this broker leads the partition; otherwise it is asked
// of the leader with one ListOffsets per leader, and when the leader
// cannot be asked, a replica here gives its own, slightly older one. A
// partition with no leader and no replica here, or a topic deleted since
// the commit, has no lag series: a lag that cannot be known is not shown
// as zero.
func (b *Broker) collectConsumerLag(ctx context.Context, w *wideWriter) {
	select {
	case <-b.started:
	default:
		return // b.groups is set before started closes
	}
	if b.groups == nil {
		return
	}
	w.offsets = b.groups.CommittedOffsets(w.offsets)
	if len(w.offsets) == 0 {
		return
	}
	ends := w.ends
	b.highWatermarks(ctx, w.offsets, ends, w.followerEnds)
	for _, o := range w.offsets {
		w.committed.begin().label("group", o.Group).label("topic", o.Topic).labelInt("partition", int64(o.Partition)).value(o.Offset)
		hw, ok := ends[o.TopicPartition]
		if !ok {
			continue
		}
		w.lag.begin().label("group", o.Group).label("topic", o.Topic).labelInt("partition", int64(o.Partition)).value(max(hw-o.Offset, 0))
	}
}

// highWatermarks puts in ends the high watermark of each partition
// offsets name, leaving out those it cannot learn; local is its scratch
// space, empty, for the followers' own high watermarks (the fallback).
func (b *Broker) highWatermarks(ctx context.Context, offsets []group.CommittedOffset, ends, local map[model.TopicPartition]int64) {
	img := b.meta.Load()
	var remote map[model.NodeID]*kmsg.ListOffsetsRequest
	for _, o := range offsets {
		tp := o.TopicPartition
		if _, done := ends[tp]; done {
			continue
		}
		if _, asked := local[tp]; asked {
			continue
		}
		if ts, ok := b.topics.byTopicName(tp.Topic); ok && int(tp.Partition) < len(ts.partitions) && tp.Partition >= 0 {
			if p := ts.partitions[tp.Partition]; p != nil {
				if p.IsLeader() {
					ends[tp] = p.HighWatermark()
					continue
				}
				local[tp] = p.HighWatermark()
			}
		}
		if img == nil {
			continue
		}
		ti, ok := img.Topic(tp.Topic)
		if !ok || int(tp.Partition) >= len(ti.Partitions) || tp.Partition < 0 {
			continue
		}
		leader := ti.Partitions[tp.Partition].Leader
		if leader == metadata.NoLeader || leader == model.NodeID(b.cfg.NodeID) {
			continue
		}
		if _, ok := local[tp]; !ok {
			local[tp] = -1 // asked of the leader, nothing to fall back on
		}
		if remote == nil {
			remote = map[model.NodeID]*kmsg.ListOffsetsRequest{}
		}
		req := remote[leader]
		if req == nil {
			req = kmsg.NewPtrListOffsetsRequest()
			req.ReplicaID = -1
			remote[leader] = req
		}
		addListOffsetsPartition(req, tp)
	}
	if len(remote) > 0 {
		ctx, cancel := context.WithTimeout(ctx, lagRequestTimeout)
		defer cancel()
		for leader, req := range remote {
			b.askHighWatermarks(ctx, leader, req, ends)
		}
	}
	for tp, hw := range local {
		if _, ok := ends[tp]; !ok && hw >= 0 {
			ends[tp] = hw
		}
	}
}

func addListOffsetsPartition(req *kmsg.ListOffsetsRequest, tp model.TopicPartition) {
	p := kmsg.NewListOffsetsRequestTopicPartition()
	p.Partition = tp.Partition
	p.Timestamp = -1 // latest: the high watermark, for read_uncommitted
	p.CurrentLeaderEpoch = -1
	for i := range req.Topics {
		if req.Topics[i].Topic == tp.Topic {
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
			return
		}
	}
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = tp.Topic
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
}

// askHighWatermarks sends one ListOffsets to a leader and records the
// offsets it answers; a leader that cannot be reached or has moved leaves
// its partitions to the fallback.
func (b *Broker) askHighWatermarks(ctx context.Context, leader model.NodeID, req *kmsg.ListOffsetsRequest, ends map[model.TopicPartition]int64) {
	addr := b.leaderAddr(leader)
	if addr == "" {
		return
	}
	raw, err := b.peers.request(ctx, addr, req)
	if err != nil {
		b.log.Debug("consumer lag: asking a leader for its high watermarks", "leader", leader, "err", err)
		return
	}
	for _, t := range raw.(*kmsg.ListOffsetsResponse).Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 && p.Offset >= 0 {
				ends[model.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.Offset
			}
		}
	}
}
