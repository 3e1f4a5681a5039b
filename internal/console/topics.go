package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicsPerPage is how many topics the list, and how many partitions a
// topic's table, shows at once: only these get offsets and sizes, so a
// page costs the same with 10,000 topics as with 10.
const topicsPerPage = 100

// routesTopics registers the topics page: the list, creation, a topic's
// overview and partitions, its configs, deletion, deleting records and
// adding partitions. The message browser (/topics/{name}/messages) is
// the messages page's.
func (c *Console) routesTopics(mux *http.ServeMux) {
	mux.HandleFunc("GET /topics", c.topicsList)
	mux.HandleFunc("GET /topics/new", c.topicsNewForm)
	mux.HandleFunc("POST /topics", c.topicsCreate)
	mux.HandleFunc("GET /topics/{name}", c.topicsOverview)
	mux.HandleFunc("GET /topics/{name}/partitions", c.topicsOverview)
	mux.HandleFunc("POST /topics/{name}/partitions", c.topicsAddPartitions)
	mux.HandleFunc("GET /topics/{name}/configs", c.topicsConfigs)
	mux.HandleFunc("POST /topics/{name}/configs", c.topicsAlterConfigs)
	mux.HandleFunc("GET /topics/{name}/delete", c.topicsDeleteForm)
	mux.HandleFunc("POST /topics/{name}/delete", c.topicsDelete)
	mux.HandleFunc("GET /topics/{name}/delete-records", c.topicsDeleteRecordsForm)
	mux.HandleFunc("POST /topics/{name}/delete-records", c.topicsDeleteRecords)
}

// topicsNotices are the notices a redirect after an action asks for
// (?done=...); a fixed set, so no text of the query is ever echoed.
var topicsNotices = map[string]string{
	"created":    "Topic created.",
	"deleted":    "Topic deleted.",
	"configs":    "Configs saved.",
	"unchanged":  "Nothing to save: no config was changed.",
	"records":    "Records deleted: the start offsets below are the partitions' new ones.",
	"partitions": "Partitions added.",
}

// topicsStatusWriter answers a rendered page with status (a form shown
// again with its error answers 400, not 200).
type topicsStatusWriter struct {
	http.ResponseWriter
	status  int
	written bool
}

func (w *topicsStatusWriter) WriteHeader(code int) {
	if !w.written {
		w.written = true
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *topicsStatusWriter) Write(b []byte) (int, error) {
	w.WriteHeader(w.status)
	return w.ResponseWriter.Write(b)
}

// topicsFormError is an error shown on a form, above the user's input.
type topicsFormError struct {
	Kafka   string // the Kafka error's name, when it is one
	Message string
}

// topicsErrStatus is the status a failed action's form answers with:
// the user's mistakes and the cluster's refusals of them 400, ACL
// denials 403, a missing topic 404, anything else 502.
func topicsErrStatus(err error) (int, topicsFormError) {
	fe := topicsFormError{Message: err.Error()}
	var se *statusError
	if errors.As(err, &se) {
		return se.status, fe
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return http.StatusBadGateway, fe
	}
	fe.Kafka = ke.Message
	switch {
	case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed):
		return http.StatusForbidden, fe
	case errors.Is(err, kerr.UnknownTopicOrPartition):
		return http.StatusNotFound, fe
	case ke.Retriable:
		return http.StatusBadGateway, fe
	}
	return http.StatusBadRequest, fe
}

// topicsKafkaErr joins a response's error with its message.
func topicsKafkaErr(err error, msg string) error {
	if err == nil {
		return nil
	}
	if msg != "" && msg != err.Error() {
		return fmt.Errorf("%w (%s)", err, msg)
	}
	return err
}

// topicsListRow is one topic of the list.
type topicsListRow struct {
	Name         string
	Internal     bool
	Partitions   int
	Replication  int
	Offline      int
	Size         int64
	SizeKnown    bool
	Records      int64
	RecordsKnown bool
}

type topicsListView struct {
	Query    string
	Internal bool
	Sort     string
	Rows     []topicsListRow
	Pager    sharedPager
	Notice   string
	Warnings []string
}

// topicsList is GET /topics: every topic's metadata (one Metadata
// request), filtered and sorted, then sizes (one DescribeLogDirs per
// broker) and offsets (one ListOffsets per leader, twice) for the
// page's topics only.
func (c *Console) topicsList(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := c.ctx(r)
	defer cancel()
	q := r.URL.Query()
	v := topicsListView{Query: strings.TrimSpace(q.Get("q")), Internal: q.Get("internal") == "1", Sort: q.Get("sort"), Notice: topicsNotices[q.Get("done")]}
	if v.Sort != "size" {
		v.Sort = "name"
	}
	page, err := sharedPageParam(r.URL.Query().Get("page"))
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	all, err := topicsMetadata(ctx, c.client(r))
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	var shown []kadm.TopicDetail
	for _, t := range all {
		if t.Err != nil || (t.IsInternal || strings.HasPrefix(t.Topic, "__")) && !v.Internal {
			continue
		}
		if !sharedMatches(t.Topic, v.Query) {
			continue
		}
		shown = append(shown, t)
	}
	sort.Slice(shown, func(i, j int) bool { return shown[i].Topic < shown[j].Topic })

	var f topicsFigures
	if v.Sort == "size" {
		// Sorting by size needs every matching topic's size: still one
		// DescribeLogDirs per broker, but over all of them.
		f.sizes, f.sizeErr = topicsLeaderSizes(ctx, c.admin(r), shown)
		sort.SliceStable(shown, func(i, j int) bool { return f.sizes[shown[i].Topic] > f.sizes[shown[j].Topic] })
	}
	v.Pager = sharedPaginate(len(shown), topicsPerPage, page, func(p int) string {
		u := url.Values{"page": {strconv.Itoa(p)}}
		if v.Query != "" {
			u.Set("q", v.Query)
		}
		if v.Internal {
			u.Set("internal", "1")
		}
		if v.Sort != "name" {
			u.Set("sort", v.Sort)
		}
		return "/topics?" + u.Encode()
	})
	pageTopics := shown[v.Pager.From:v.Pager.To]
	if len(pageTopics) > 0 {
		sizes, sizeErr := f.sizes, f.sizeErr
		f = c.topicsFigures(ctx, r, pageTopics, v.Sort != "size")
		if v.Sort == "size" {
			f.sizes, f.sizeErr = sizes, sizeErr
		}
	}
	v.Warnings = f.warnings()
	sizesOK := f.sizeErr == nil
	sizes, starts, ends := f.sizes, f.starts, f.ends
	for _, t := range pageTopics {
		row := topicsListRow{Name: t.Topic, Internal: t.IsInternal, Partitions: len(t.Partitions), Replication: t.Partitions.NumReplicas()}
		row.Size, row.SizeKnown = sizes[t.Topic], sizesOK
		row.RecordsKnown = true
		for _, p := range t.Partitions {
			if p.Leader < 0 {
				row.Offline++
			}
			s, e := starts[t.Topic][p.Partition], ends[t.Topic][p.Partition]
			if s.Err != nil || e.Err != nil || !s.Known || !e.Known {
				row.RecordsKnown = false
				continue
			}
			row.Records += e.Offset - s.Offset
		}
		v.Rows = append(v.Rows, row)
	}
	c.render(w, r, "topics", v)
}

// topicsLeaderSizes sums, per topic, the on-disk size of each
// partition's leader replica (the data's size, not its disk use across
// replicas), from one DescribeLogDirs per broker for these topics only.
// A partition without a leader counts nothing.
func topicsLeaderSizes(ctx context.Context, adm *kadm.Client, ts []kadm.TopicDetail) (map[string]int64, error) {
	set := kadm.TopicsSet{}
	for _, t := range ts {
		for _, p := range t.Partitions {
			set.Add(t.Topic, p.Partition)
		}
	}
	sizes := map[string]int64{}
	if len(set) == 0 {
		return sizes, nil
	}
	dirs, err := adm.DescribeAllLogDirs(ctx, set)
	leaders := map[string]map[int32]int32{}
	for _, t := range ts {
		m := map[int32]int32{}
		for _, p := range t.Partitions {
			m[p.Partition] = p.Leader
		}
		leaders[t.Topic] = m
	}
	for broker, bd := range dirs {
		for _, d := range bd {
			for topic, parts := range d.Topics {
				for p, dp := range parts {
					if !dp.IsFuture && leaders[topic][p] == broker {
						sizes[topic] += dp.Size
					}
				}
			}
		}
	}
	return sizes, err
}

// topicsOffset is one partition's listed offset.
type topicsOffset struct {
	Offset int64
	Known  bool
	Err    error
}

// topicsListOffsets lists the offsets at `at` (-2 start, -1 end) of
// the partitions of topics that have a leader: one ListOffsets to each
// leader broker, at once, routed by the metadata the page just read (not
// kgo's sharding, which would look the leaders up again and retry a
// partition whose leader it does not know until the deadline). A
// broker that does not answer leaves its partitions unknown; the error
// says which.
func topicsListOffsets(ctx context.Context, cl *kgo.Client, topics []kadm.TopicDetail, at int64) (map[string]map[int32]topicsOffset, error) {
	byLeader := map[int32]*kmsg.ListOffsetsRequest{}
	for _, t := range topics {
		for _, p := range t.Partitions {
			if p.Leader < 0 {
				continue
			}
			req := byLeader[p.Leader]
			if req == nil {
				req = kmsg.NewPtrListOffsetsRequest()
				byLeader[p.Leader] = req
			}
			if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != t.Topic {
				rt := kmsg.NewListOffsetsRequestTopic()
				rt.Topic = t.Topic
				req.Topics = append(req.Topics, rt)
			}
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p.Partition, at, -1
			rt := &req.Topics[len(req.Topics)-1]
			rt.Partitions = append(rt.Partitions, rp)
		}
	}
	out := map[string]map[int32]topicsOffset{}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for leader, req := range byLeader {
		wg.Go(func() {
			kr, err := cl.Broker(int(leader)).Request(ctx, req)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("broker %d: %w", leader, err))
				return
			}
			for _, t := range kr.(*kmsg.ListOffsetsResponse).Topics {
				m := out[t.Topic]
				if m == nil {
					m = map[int32]topicsOffset{}
					out[t.Topic] = m
				}
				for _, p := range t.Partitions {
					if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
						m[p.Partition] = topicsOffset{Err: err}
						continue
					}
					m[p.Partition] = topicsOffset{Offset: p.Offset, Known: true}
				}
			}
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// topicsFiguresTimeout bounds the requests for sizes and offsets: a
// broker that died but is not yet fenced keeps its partitions' leaders
// in the metadata, and kgo retries it; the page then shows those
// figures as unknown after a few seconds instead of waiting for the
// whole request timeout.
const topicsFiguresTimeout = 4 * time.Second

// topicsFigures are topics' sizes and start and end offsets.
type topicsFigures struct {
	sizes            map[string]int64
	starts, ends     map[string]map[int32]topicsOffset
	sizeErr, offsErr error
}

func (f topicsFigures) warnings() []string {
	var w []string
	if f.sizeErr != nil {
		w = append(w, "Sizes are partial: "+f.sizeErr.Error())
	}
	if f.offsErr != nil {
		w = append(w, "Offsets are partial: "+f.offsErr.Error())
	}
	return w
}

// topicsFigures asks, at once, for the topics' sizes (when withSizes)
// and their start and end offsets (the high watermarks).
func (c *Console) topicsFigures(ctx context.Context, r *http.Request, ts []kadm.TopicDetail, withSizes bool) topicsFigures {
	ctx, cancel := context.WithTimeout(ctx, min(topicsFiguresTimeout, c.cfg.RequestTimeout))
	defer cancel()
	var f topicsFigures
	var startErr, endErr error
	var wg sync.WaitGroup
	if withSizes {
		wg.Go(func() { f.sizes, f.sizeErr = topicsLeaderSizes(ctx, c.admin(r), ts) })
	}
	wg.Go(func() { f.starts, startErr = topicsListOffsets(ctx, c.client(r), ts, -2) })
	wg.Go(func() { f.ends, endErr = topicsListOffsets(ctx, c.client(r), ts, -1) })
	wg.Wait()
	f.offsErr = errors.Join(startErr, endErr)
	return f
}

// topicsDescribe is one topic's metadata; a missing topic is a 404
// naming it, an ACL denial a 403 with Kafka's error.
func (c *Console) topicsDescribe(ctx context.Context, r *http.Request, name string) (kadm.TopicDetail, error) {
	md, err := topicsMetadata(ctx, c.client(r), name)
	if err != nil {
		return kadm.TopicDetail{}, err
	}
	t, ok := md[name]
	if !ok {
		return t, fmt.Errorf("topic %q: %w", name, kerr.UnknownTopicOrPartition)
	}
	if t.Err != nil {
		if errors.Is(t.Err, kerr.UnknownTopicOrPartition) {
			return t, statusErr(http.StatusNotFound, fmt.Errorf("topic %q does not exist (deleted, or never created)", name))
		}
		return t, fmt.Errorf("topic %q: %w", name, t.Err)
	}
	return t, nil
}

// topicsMetadata is one Metadata request for topics (all when none),
// sent to the cluster each time: kadm's Metadata answers from a cache
// up to 5 s old, which would show a topic just deleted, or not yet the
// partitions just added.
func topicsMetadata(ctx context.Context, cl *kgo.Client, topics ...string) (kadm.TopicDetails, error) {
	req := kmsg.NewPtrMetadataRequest()
	if len(topics) > 0 {
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	out := make(kadm.TopicDetails, len(resp.Topics))
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		d := kadm.TopicDetail{Topic: *t.Topic, ID: t.TopicID, IsInternal: t.IsInternal, Err: kerr.ErrorForCode(t.ErrorCode),
			Partitions: make(kadm.PartitionDetails, len(t.Partitions))}
		for _, p := range t.Partitions {
			d.Partitions[p.Partition] = kadm.PartitionDetail{Topic: *t.Topic, Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
				Replicas: p.Replicas, ISR: p.ISR, OfflineReplicas: p.OfflineReplicas, Err: kerr.ErrorForCode(p.ErrorCode)}
		}
		out[*t.Topic] = d
	}
	return out, nil
}

// topicsTab is one entry of a topic's tabs row.
type topicsTab struct {
	Label, Href string
	Current     bool
}

func topicsTabs(name, current string) []topicsTab {
	base := "/topics/" + url.PathEscape(name)
	tabs := []topicsTab{
		{"Overview", base, false},
		{"Partitions", base + "/partitions", false},
		{"Messages", base + "/messages", false},
		{"Configs", base + "/configs", false},
	}
	for i := range tabs {
		tabs[i].Current = tabs[i].Label == current
	}
	return tabs
}

// topicsPartRow is one partition of a topic's table.
type topicsPartRow struct {
	Partition                  int32
	Leader                     int32 // -1: none (offline)
	Replicas, ISR, Offline     []int32
	Start, End                 int64
	OffsetsKnown, UnderReplica bool
	Err                        string
}

type topicsOverviewView struct {
	Name, ID      string
	Path          string // the topic's escaped URL path
	Tabs          []topicsTab
	Partitions    bool // the Partitions tab: the table alone
	Internal      bool
	Count         int
	Replication   int
	Offline       int
	UnderRepl     int
	Size          int64
	SizeKnown     bool
	Records       int64
	RecordsKnown  bool
	Rows          []topicsPartRow
	Pager         sharedPager
	Notice        string
	Warnings      []string
	AddError      *topicsFormError
	AddPartitions string
}

// topicsOverview is GET /topics/{name} (cards and the partitions table)
// and GET /topics/{name}/partitions (the table alone): one Metadata,
// one ListOffsets per leader twice (for the whole topic, so the cards
// can sum records) and one DescribeLogDirs per broker.
func (c *Console) topicsOverview(w http.ResponseWriter, r *http.Request) {
	c.topicsOverviewWith(w, r, http.StatusOK, nil, "")
}

func (c *Console) topicsOverviewWith(w http.ResponseWriter, r *http.Request, status int, addErr *topicsFormError, addValue string) {
	ctx, cancel := c.ctx(r)
	defer cancel()
	name := r.PathValue("name")
	page, err := sharedPageParam(r.URL.Query().Get("page"))
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	t, err := c.topicsDescribe(ctx, r, name)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	partsTab := strings.HasSuffix(r.URL.Path, "/partitions") && r.Method == http.MethodGet
	tab := "Overview"
	if partsTab {
		tab = "Partitions"
	}
	v := topicsOverviewView{Name: name, Path: "/topics/" + url.PathEscape(name), Tabs: topicsTabs(name, tab), Partitions: partsTab,
		Internal: t.IsInternal, Count: len(t.Partitions), Replication: t.Partitions.NumReplicas(),
		Notice: topicsNotices[r.URL.Query().Get("done")], AddError: addErr, AddPartitions: addValue}
	if t.ID != (kadm.TopicID{}) {
		v.ID = t.ID.String()
	}
	f := c.topicsFigures(ctx, r, []kadm.TopicDetail{t}, true)
	v.Warnings = f.warnings()
	v.Size, v.SizeKnown = f.sizes[name], f.sizeErr == nil
	starts, ends := f.starts, f.ends
	parts := t.Partitions.Sorted()
	v.RecordsKnown = true
	for _, p := range parts {
		if p.Leader < 0 {
			v.Offline++
		}
		if len(p.ISR) < len(p.Replicas) {
			v.UnderRepl++
		}
		s, e := starts[name][p.Partition], ends[name][p.Partition]
		if s.Known && e.Known {
			v.Records += e.Offset - s.Offset
		} else {
			v.RecordsKnown = false
		}
	}
	base := v.Path
	if partsTab {
		base += "/partitions"
	}
	v.Pager = sharedPaginate(len(parts), topicsPerPage, page, func(p int) string { return base + "?page=" + strconv.Itoa(p) })
	v.Pager.Summary = fmt.Sprintf("Partitions %d–%d of %d (page %d of %d)", v.Pager.From, v.Pager.To, v.Pager.Total, v.Pager.Page, v.Pager.Pages)
	for _, p := range parts[v.Pager.From:v.Pager.To] {
		row := topicsPartRow{Partition: p.Partition, Leader: p.Leader, Replicas: p.Replicas, ISR: p.ISR, Offline: p.OfflineReplicas,
			UnderReplica: len(p.ISR) < len(p.Replicas)}
		s, e := starts[name][p.Partition], ends[name][p.Partition]
		row.Start, row.End, row.OffsetsKnown = s.Offset, e.Offset, s.Known && e.Known
		switch {
		case p.Err != nil:
			row.Err = p.Err.Error()
		case s.Err != nil:
			row.Err = s.Err.Error()
		case e.Err != nil:
			row.Err = e.Err.Error()
		}
		v.Rows = append(v.Rows, row)
	}
	c.renderSection(&topicsStatusWriter{ResponseWriter: w, status: status}, r, "topics_topic", "topics", v)
}

// topicsAddPartitions is POST /topics/{name}/partitions: CreatePartitions
// up to the total asked for.
func (c *Console) topicsAddPartitions(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := c.ctx(r)
	defer cancel()
	name := r.PathValue("name")
	in := strings.TrimSpace(r.PostFormValue("count"))
	fail := func(err error) {
		st, fe := topicsErrStatus(err)
		if st == http.StatusNotFound || st == http.StatusForbidden {
			c.fail(w, r, nil, err)
			return
		}
		c.topicsOverviewWith(w, r, st, &fe, in)
	}
	n, err := strconv.Atoi(in)
	if err != nil || n < 1 {
		fail(badRequest("the new partition count %q is not a whole number of at least 1", in))
		return
	}
	resp, err := c.admin(r).UpdatePartitions(ctx, n, name)
	if err == nil {
		var one kadm.CreatePartitionsResponse
		one, err = resp.On(name, nil)
		if err == nil {
			err = topicsKafkaErr(one.Err, one.ErrMessage)
		}
	}
	if err != nil {
		fail(err)
		return
	}
	// Sharded requests (ListOffsets) map partitions to leaders from a
	// cache; drop it so the new partitions are listed at once.
	c.client(r).PurgeTopicsFromClient(name)
	http.Redirect(w, r, "/topics/"+url.PathEscape(name)+"?done=partitions", http.StatusSeeOther)
}
