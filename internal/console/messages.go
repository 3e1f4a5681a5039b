package console

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// routesMessages registers the message browser: browse and filter a
// topic's records, one record's page, produce, and download as JSON lines.
func (c *Console) routesMessages(mux *http.ServeMux) {
	mux.HandleFunc("GET /topics/{name}/messages", c.serveMessages)
	mux.HandleFunc("GET /topics/{name}/messages/download", c.serveMessagesDownload)
	mux.HandleFunc("GET /topics/{name}/messages/produce", c.serveMessagesProduceForm)
	mux.HandleFunc("POST /topics/{name}/messages/produce", c.serveMessagesProduce)
	mux.HandleFunc("GET /topics/{name}/messages/{partition}/{offset}", c.serveMessagesRecord)
}

// msgsQuery is a browse request: where to read, how to filter and decode.
type msgsQuery struct {
	topic     string
	partition int32 // -1: all
	from      string
	offset    int64
	at        time.Time
	older     map[int32]int64 // read backward from these (the pager)
	newer     map[int32]int64 // read forward from these (the pager)
	filter    *msgsFilter
	decode    string
	committed bool
	limit     int // records per page (download: the records at most)

	// Form echoes.
	Partition, From, Offset, TS, Key, Value, Header, Expr, Decode, Isolation string
}

// msgsParseQuery reads a browse or download query; a bad field is a 400.
func msgsParseQuery(r *http.Request, pageSize int) (*msgsQuery, error) {
	v := r.URL.Query()
	q := &msgsQuery{topic: r.PathValue("name"), partition: -1, limit: pageSize,
		Partition: v.Get("p"), From: v.Get("from"), Offset: v.Get("offset"), TS: v.Get("ts"),
		Key: v.Get("key"), Value: v.Get("value"), Header: v.Get("header"), Expr: v.Get("expr"),
		Decode: v.Get("decode"), Isolation: v.Get("isolation")}
	if q.Partition != "" && q.Partition != "all" {
		p, err := strconv.ParseInt(q.Partition, 10, 32)
		if err != nil || p < 0 {
			return nil, badRequest("partition %q: want a partition number or all", q.Partition)
		}
		q.partition = int32(p)
	}
	if q.From == "" {
		q.From = "newest"
	}
	q.from = q.From
	switch q.From {
	case "newest", "oldest":
	case "offset":
		o, err := strconv.ParseInt(strings.TrimSpace(q.Offset), 10, 64)
		if err != nil || o < 0 {
			return nil, badRequest("offset %q: want a number, 0 or more", q.Offset)
		}
		q.offset = o
	case "time":
		t, err := msgsParseTime(q.TS)
		if err != nil {
			return nil, err
		}
		q.at = t
	default:
		return nil, badRequest("start at %q: want newest, oldest, offset or time", q.From)
	}
	var err error
	if q.older, err = msgsParsePositions(v.Get("older")); err != nil {
		return nil, err
	}
	if q.newer, err = msgsParsePositions(v.Get("newer")); err != nil {
		return nil, err
	}
	if q.older != nil && q.newer != nil {
		return nil, badRequest("older and newer together: a page goes one way")
	}
	if q.Decode == "" {
		q.Decode = "auto"
	}
	switch q.Decode {
	case "auto", "text", "json", "hex":
	default:
		return nil, badRequest("decode %q: want auto, text, json or hex", q.Decode)
	}
	q.decode = q.Decode
	switch q.Isolation {
	case "", "read_uncommitted":
		q.Isolation = "read_uncommitted"
	case "read_committed":
		q.committed = true
	default:
		return nil, badRequest("isolation %q: want read_uncommitted or read_committed", q.Isolation)
	}
	if q.filter, err = msgsParseFilter(q.Key, q.Value, q.Header, q.Expr); err != nil {
		return nil, err
	}
	return q, nil
}

// msgsParseTime reads a datetime-local input's value (or RFC 3339) as UTC.
func msgsParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02T15:04:05.000", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, badRequest("time %q: want a UTC date and time such as 2024-05-01T13:45", s)
}

// msgsParsePositions reads a pager's positions, "partition:offset,...".
func msgsParsePositions(s string) (map[int32]int64, error) {
	if s == "" {
		return nil, nil
	}
	out := map[int32]int64{}
	for _, part := range strings.Split(s, ",") {
		ps, os, ok := strings.Cut(part, ":")
		p, err1 := strconv.ParseInt(ps, 10, 32)
		o, err2 := strconv.ParseInt(os, 10, 64)
		if !ok || err1 != nil || err2 != nil || p < 0 || o < 0 {
			return nil, badRequest("position %q: want partition:offset pairs separated by commas", part)
		}
		out[int32(p)] = o
	}
	return out, nil
}

func msgsFormatPositions(m map[int32]int64) string {
	ps := make([]int32, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d:%d", p, m[p])
	}
	return b.String()
}

// msgsPartitions are the partitions a query reads; a partition out of
// range is a 400.
func msgsPartitions(q *msgsQuery, o *msgsOffsets) ([]int32, error) {
	if q.partition >= 0 {
		if _, ok := o.end[q.partition]; !ok {
			return nil, badRequest("partition %d: topic %q has partitions 0 to %d", q.partition, q.topic, o.partitions-1)
		}
		return []int32{q.partition}, nil
	}
	ps := make([]int32, 0, len(o.end))
	for p := range o.end {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps, nil
}

func msgsClamp(o, lo, hi int64) int64 { return max(lo, min(o, hi)) }

// msgsCursors are where a query reads each partition and which way:
// forward from a start (oldest, an offset, a time, the newer pager) or
// backward below an end (newest, the older pager). perPartition is how
// many records each partition may give (a page's share, or a filter's
// share of its scan).
func (c *Console) msgsCursors(r *http.Request, q *msgsQuery, o *msgsOffsets, parts []int32, perPartition int) (map[int32]*msgsCursor, bool, error) {
	cursors := map[int32]*msgsCursor{}
	backward := q.older != nil || (q.newer == nil && q.from == "newest")
	var atTime map[int32]int64
	if q.newer == nil && q.older == nil && q.from == "time" {
		ctx, cancel := c.ctx(r)
		defer cancel()
		listed, err := c.admin(r).ListOffsetsAfterMilli(ctx, q.at.UnixMilli(), q.topic)
		if err != nil {
			return nil, false, err
		}
		atTime = map[int32]int64{}
		for p, lo := range listed[q.topic] {
			if lo.Err != nil {
				return nil, false, fmt.Errorf("offsets at %s, partition %d: %w", q.at.Format(time.RFC3339), p, lo.Err)
			}
			atTime[p] = lo.Offset
		}
	}
	for _, p := range parts {
		ls, end := o.start[p], o.end[p]
		cur := &msgsCursor{partition: p, to: end}
		switch {
		case backward:
			to := end
			if q.older != nil {
				pos, ok := q.older[p]
				if !ok {
					pos = ls
				}
				to = msgsClamp(pos, ls, end)
			}
			cur.to, cur.from = to, max(ls, to-int64(perPartition))
		case q.newer != nil:
			pos, ok := q.newer[p]
			if !ok {
				pos = end
			}
			cur.from, cur.limit = msgsClamp(pos, ls, end), perPartition
		case q.from == "oldest":
			cur.from, cur.limit = ls, perPartition
		case q.from == "offset":
			cur.from, cur.limit = msgsClamp(q.offset, ls, end), perPartition
		case q.from == "time":
			at, ok := atTime[p]
			if !ok || at < 0 {
				at = end // no record at or after the time
			}
			cur.from, cur.limit = msgsClamp(at, ls, end), perPartition
		}
		cursors[p] = cur
	}
	return cursors, backward, nil
}

// msgsShare is each partition's share of a page of n records over np
// partitions: all n for a few partitions (the page is then exactly the
// n records nearest by timestamp), four times a fair share for many, so
// a page over 1,000 partitions reads a few pages' worth, not 1,000.
func msgsShare(n, np int) int {
	if np <= 4 {
		return n
	}
	return min(n, max(1, (4*n+np-1)/np))
}

// msgsBrowseView is the browse page's data.
type msgsBrowseView struct {
	Topic      string
	Q          *msgsQuery
	Partitions []int32
	Page       *msgsPage
	Filtered   bool
	Older      string // the older page's URL, "" when none
	Newer      string
	Download   string
	Error      string
	Notices    []string
	ScanNote   string
	Registry   bool
	PageSize   int
	Tabs       []msgsTab
}

type msgsTab struct {
	Label, Href string
	Current     bool
}

func msgsTabs(topic, current string) []msgsTab {
	base := "/topics/" + url.PathEscape(topic)
	tabs := []msgsTab{{"Overview", base, false}, {"Partitions", base + "/partitions", false},
		{"Messages", base + "/messages", false}, {"Configs", base + "/configs", false}}
	for i := range tabs {
		tabs[i].Current = tabs[i].Label == current
	}
	return tabs
}

func (c *Console) serveMessages(w http.ResponseWriter, r *http.Request) {
	topic := r.PathValue("name")
	v := &msgsBrowseView{Topic: topic, Registry: c.cfg.RegistryURL != "", PageSize: c.cfg.PageSize, Tabs: msgsTabs(topic, "Messages")}
	q, err := msgsParseQuery(r, c.cfg.PageSize)
	if err != nil {
		// A bad field is shown on the form, with a 400.
		v.Q, v.Error = msgsEchoOnly(r), err.Error()
		c.msgsRender(w, r, http.StatusBadRequest, "messages", v)
		return
	}
	v.Q = q
	ctx, cancel := c.ctx(r)
	defer cancel()
	o, err := c.msgsListOffsets(ctx, r, topic, q.committed)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	for p := int32(0); p < o.partitions; p++ {
		v.Partitions = append(v.Partitions, p)
	}
	parts, err := msgsPartitions(q, o)
	if err != nil {
		v.Error = err.Error()
		c.msgsRender(w, r, http.StatusBadRequest, "messages", v)
		return
	}
	share := msgsShare(q.limit, len(parts))
	if q.filter.active() {
		share = max(1, msgsScanRecords/len(parts))
	}
	cursors, backward, err := c.msgsCursors(r, q, o, parts, share)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	deadline := time.Now().Add(msgsReadTime)
	pg, err := c.msgsReadPage(ctx, r, q, cursors, backward, q.limit, msgsReadTime)
	if err == nil && backward && !q.filter.active() {
		err = c.msgsFillBackward(ctx, r, q, o, pg, deadline)
	}
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	v.Page, v.Filtered = pg, q.filter.active()
	if msgsAnyBelow(pg.Older, o.start) {
		v.Older = msgsPagerURL(r, "older", pg.Older)
	}
	if msgsAnyAbove(pg.Newer, o.end) {
		v.Newer = msgsPagerURL(r, "newer", pg.Newer)
	}
	dl := r.URL.Query()
	v.Download = "/topics/" + url.PathEscape(topic) + "/messages/download?" + dl.Encode()
	if pg.TimedOut {
		v.Notices = append(v.Notices, fmt.Sprintf("The read stopped after %s before every partition was read; the page shows what was read, and the pager continues from there.", msgsReadTime))
	}
	if pg.ReadErr != nil {
		v.Notices = append(v.Notices, "The read stopped early: "+pg.ReadErr.Error()+". The page shows what was read before it.")
	}
	if pg.BytesCut {
		v.Notices = append(v.Notices, fmt.Sprintf("The records are large: the read stopped at %s kept.", humanBytes(int64(msgsKeepBytes))))
	}
	if q.filter.ExprErrors > 0 {
		v.Notices = append(v.Notices, fmt.Sprintf("The expression failed on %d records (counted as not matching); first: %s.", q.filter.ExprErrors, q.filter.FirstErr))
	}
	if v.Filtered {
		way := "from partition:offset " + msgsFormatPositions(pg.Older) + " up to " + msgsFormatPositions(pg.Newer)
		v.ScanNote = fmt.Sprintf("A filter scans at most %d records per page. This page scanned %d records (%s) and shows %d that matched; use Older or Newer to continue the scan.",
			msgsScanRecords, pg.Scanned, way, len(pg.Records))
	}
	c.msgsRender(w, r, http.StatusOK, "messages", v)
}

// msgsEchoOnly keeps a bad query's fields to show them again on the form.
func msgsEchoOnly(r *http.Request) *msgsQuery {
	v := r.URL.Query()
	return &msgsQuery{topic: r.PathValue("name"), Partition: v.Get("p"), From: v.Get("from"), Offset: v.Get("offset"), TS: v.Get("ts"),
		Key: v.Get("key"), Value: v.Get("value"), Header: v.Get("header"), Expr: v.Get("expr"), Decode: v.Get("decode"), Isolation: v.Get("isolation")}
}

func msgsAnyBelow(pos, start map[int32]int64) bool {
	for p, o := range pos {
		if o > start[p] {
			return true
		}
	}
	return false
}

func msgsAnyAbove(pos, end map[int32]int64) bool {
	for p, o := range pos {
		if o < end[p] {
			return true
		}
	}
	return false
}

// msgsPagerURL is the request's URL with a pager's positions instead of
// its own.
func msgsPagerURL(r *http.Request, way string, pos map[int32]int64) string {
	v := r.URL.Query()
	v.Del("older")
	v.Del("newer")
	v.Set(way, msgsFormatPositions(pos))
	return r.URL.Path + "?" + v.Encode()
}

// msgsRender renders a page with a status other than 200 when needed.
func (c *Console) msgsRender(w http.ResponseWriter, r *http.Request, status int, page string, data any) {
	if status != http.StatusOK {
		w = &msgsStatusWriter{ResponseWriter: w, status: status}
	}
	c.renderSection(w, r, page, "topics", data)
}

// msgsStatusWriter answers with status when the page is written.
type msgsStatusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *msgsStatusWriter) WriteHeader(code int) {
	if s.wrote {
		return
	}
	s.wrote = true
	if code == http.StatusOK {
		code = s.status
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *msgsStatusWriter) Write(b []byte) (int, error) {
	if !s.wrote {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

func init() {
	registerFuncs(map[string]any{
		"msgsDecodeModes": func() []string { return []string{"auto", "text", "json", "hex"} },
		"msgsInt64":       func(n int) int64 { return int64(n) },
		"msgsLast":        func(n int32) int32 { return n - 1 },
	})
}
