package console

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// groupsPageSize is how many groups, members or partitions one page of
// the groups section shows.
const groupsPageSize = 100

// groupsTypes are the group types ListGroups (v5, KIP-848) can filter by;
// groupsStates the states a filter offers.
var (
	groupsTypes  = []string{"classic", "consumer", "share", "streams"}
	groupsStates = []string{"Empty", "Stable", "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling", "NotReady", "Dead"}
)

// routesGroups registers the groups page: the list, a group's detail with
// its lag chart, offset resets and deletes.
func (c *Console) routesGroups(mux *http.ServeMux) {
	mux.HandleFunc("GET /groups", c.serveGroupsList)
	mux.HandleFunc("GET /groups/{id}", c.serveGroupsDetail)
	mux.HandleFunc("GET /groups/{id}/lag-chart", c.serveGroupsLagChart)
	mux.HandleFunc("GET /groups/{id}/reset", c.serveGroupsResetForm)
	mux.HandleFunc("POST /groups/{id}/reset", c.serveGroupsResetApply)
	mux.HandleFunc("POST /groups/{id}/delete", c.serveGroupsDelete)
	mux.HandleFunc("POST /groups/{id}/delete-offsets", c.serveGroupsDeleteOffsets)
}

// groupsRow is one group of the list.
type groupsRow struct {
	ID, Type, State, Protocol string
	Members                   int
	MembersKnown              bool
	Lag                       int64
	LagKnown                  bool
	Err                       string
}

type groupsListView struct {
	Query, Type, State string
	Types, States      []string
	Rows               []groupsRow
	Pager              sharedPager
	Done               string
	Warn               string
}

func (c *Console) serveGroupsList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := groupsListView{Query: strings.TrimSpace(q.Get("q")), Type: q.Get("type"), State: q.Get("state"),
		Types: groupsTypes, States: groupsStates, Done: q.Get("done")}
	if v.Type != "" && !slices.Contains(groupsTypes, v.Type) {
		c.fail(w, r, nil, badRequest("unknown group type %q: want one of %s", v.Type, strings.Join(groupsTypes, ", ")))
		return
	}
	if v.State != "" && !slices.Contains(groupsStates, v.State) {
		c.fail(w, r, nil, badRequest("unknown group state %q: want one of %s", v.State, strings.Join(groupsStates, ", ")))
		return
	}
	page, err := sharedPageParam(q.Get("page"))
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	adm := c.admin(r)
	var types, states []string
	if v.Type != "" {
		types = []string{v.Type}
	}
	if v.State != "" {
		states = []string{v.State}
	}
	listed, err := adm.ListGroupsByType(ctx, types, states...)
	if err != nil {
		// A broker that could not answer leaves its groups out; the others
		// are still worth showing, with a warning.
		var se *kadm.ShardErrors
		if !errors.As(err, &se) || len(listed) == 0 {
			c.groupsFail(w, r, err)
			return
		}
		v.Warn = "some brokers did not answer, so their groups are missing: " + err.Error()
	}
	all := listed.Sorted()
	// The filters are applied here too: a broker before ListGroups v5
	// (Kafka 3.8) ignores the type filter, before v4 the state filter.
	all = slices.DeleteFunc(all, func(g kadm.ListedGroup) bool {
		return !sharedMatches(g.Group, v.Query) ||
			v.Type != "" && cmp.Or(g.GroupType, "classic") != v.Type ||
			v.State != "" && g.State != v.State
	})
	v.Pager = sharedPaginate(len(all), groupsPageSize, page, func(p int) string {
		u := url.Values{}
		for k, s := range map[string]string{"q": v.Query, "type": v.Type, "state": v.State} {
			if s != "" {
				u.Set(k, s)
			}
		}
		u.Set("page", strconv.Itoa(p))
		return "/groups?" + u.Encode()
	})
	v.Rows = c.groupsSummarize(ctx, adm, all[v.Pager.From:v.Pager.To])
	c.render(w, r, "groups", v)
}

// groupsEachAnswer calls each with every group's answer in ds; a group
// the answer lacks gets the request's error (or "no answer") instead.
func groupsEachAnswer[M ~map[string]D, D any](gs []string, ds M, err error, missing func(string, error), each func(string, D)) {
	for _, g := range gs {
		if d, ok := ds[g]; ok {
			each(g, d)
		} else {
			missing(g, cmp.Or(err, errors.New("no answer")))
		}
	}
}

// groupsSummarize describes the listed groups of one page and sums their
// lag: one describe per group type, one batched committed-offsets fetch
// (and one DescribeShareGroupOffsets for share groups), one ListOffsets
// round for every topic involved. Whatever fails shows as the row's
// error, not as the page's.
func (c *Console) groupsSummarize(ctx context.Context, adm *kadm.Client, listed []kadm.ListedGroup) []groupsRow {
	rows := make([]groupsRow, len(listed))
	byType := map[string][]string{}
	idx := map[string]int{}
	for i, g := range listed {
		typ := cmp.Or(g.GroupType, "classic")
		rows[i] = groupsRow{ID: g.Group, Type: typ, State: g.State, Protocol: g.ProtocolType}
		idx[g.Group] = i
		byType[typ] = append(byType[typ], g.Group)
	}
	setErr := func(g string, err error) {
		if err != nil && rows[idx[g]].Err == "" {
			rows[idx[g]].Err = groupsErrText(err)
		}
	}
	// described fills a group's row from its describe answer.
	described := func(g string, err error, members int, protocol string) {
		setErr(g, err)
		row := &rows[idx[g]]
		row.Members, row.MembersKnown = members, err == nil
		row.Protocol = protocol
	}
	if gs := byType["classic"]; len(gs) > 0 {
		ds, err := adm.DescribeGroups(ctx, gs...)
		groupsEachAnswer(gs, ds, err, setErr, func(g string, d kadm.DescribedGroup) {
			described(g, d.Err, len(d.Members), strings.Trim(d.ProtocolType+" / "+d.Protocol, " /"))
		})
	}
	if gs := byType["consumer"]; len(gs) > 0 {
		ds, err := adm.DescribeConsumerGroups(ctx, gs...)
		groupsEachAnswer(gs, ds, err, setErr, func(g string, d kadm.DescribedConsumerGroup) {
			described(g, d.Err, len(d.Members), d.AssignorName)
		})
	}
	if gs := byType["share"]; len(gs) > 0 {
		ds, err := adm.DescribeShareGroups(ctx, gs...)
		groupsEachAnswer(gs, ds, err, setErr, func(g string, d kadm.DescribedShareGroup) {
			described(g, d.Err, len(d.Members), d.Assignor)
		})
	}

	// Lag: committed offsets of the classic and consumer groups in one
	// batched fetch, share start offsets in one describe, then one round
	// of end offsets for the union of their topics.
	committed := adm.FetchManyOffsets(ctx, append(slices.Clone(byType["classic"]), byType["consumer"]...)...)
	var shares kadm.DescribedShareGroupsOffsets
	if gs := byType["share"]; len(gs) > 0 {
		var err error
		if shares, err = adm.DescribeShareGroupOffsets(ctx, gs...); err != nil && len(shares) == 0 {
			for _, g := range gs {
				setErr(g, err)
			}
		}
	}
	topicSet := map[string]bool{}
	for _, f := range committed {
		for t := range f.Fetched {
			topicSet[t] = true
		}
	}
	for _, s := range shares {
		for t := range s.Offsets {
			topicSet[t] = true
		}
	}
	var ends kadm.ListedOffsets
	if len(topicSet) > 0 {
		var err error
		ends, err = adm.ListEndOffsets(ctx, slices.Sorted(maps.Keys(topicSet))...)
		if err != nil && len(ends) == 0 {
			for i := range rows {
				if rows[i].Type != "streams" {
					setErr(rows[i].ID, fmt.Errorf("end offsets: %w", err))
				}
			}
			return rows
		}
	}
	for g, f := range committed {
		row := &rows[idx[g]]
		if f.Err != nil {
			if !errors.Is(f.Err, kerr.GroupIDNotFound) {
				setErr(g, f.Err)
			}
			continue
		}
		row.LagKnown = true
		f.Fetched.Each(func(o kadm.OffsetResponse) {
			if lag, ok := groupsLagOf(o.At, o.Err, ends, o.Topic, o.Partition); ok {
				row.Lag += lag
			}
		})
	}
	for g, s := range shares {
		row := &rows[idx[g]]
		if s.Err != nil {
			if !errors.Is(s.Err, kerr.GroupIDNotFound) {
				setErr(g, s.Err)
			}
			continue
		}
		row.LagKnown = true
		s.Offsets.Each(func(o kadm.ShareOffset) {
			row.Lag += groupsShareLag(o, ends)
		})
	}
	return rows
}

// groupsLagOf is a partition's lag: its end offset less the committed
// one; not known without a commit or an end offset.
func groupsLagOf(committed int64, commitErr error, ends kadm.ListedOffsets, topic string, p int32) (int64, bool) {
	if commitErr != nil || committed < 0 {
		return 0, false
	}
	e, ok := ends.Lookup(topic, p)
	if !ok || e.Err != nil {
		return 0, false
	}
	return max(0, e.Offset-committed), true
}

// groupsShareLag is a share-partition's lag as the broker reports it
// (KIP-932 v1 of DescribeShareGroupOffsets), else its end offset less
// its start offset.
func groupsShareLag(o kadm.ShareOffset, ends kadm.ListedOffsets) int64 {
	if o.Err != nil || o.StartOffset < 0 {
		return 0
	}
	if o.Lag >= 0 {
		return o.Lag
	}
	lag, _ := groupsLagOf(o.StartOffset, nil, ends, o.Topic, o.Partition)
	return lag
}

// groupsErrText is an error for a table cell: a Kafka error by its name.
func groupsErrText(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message + ": " + ke.Description
	}
	return err.Error()
}

// groupsRetryable are the errors of a coordinator moving or loading: the
// page says so and offers to retry rather than a bare 502.
func groupsRetryable(err error) bool {
	return errors.Is(err, kerr.NotCoordinator) || errors.Is(err, kerr.CoordinatorNotAvailable) ||
		errors.Is(err, kerr.CoordinatorLoadInProgress) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, kerr.RebalanceInProgress)
}

type groupsErrorView struct {
	Status            int
	Message, Kafka    string
	Retry, Back, Name string
}

// groupsFail answers err; a coordinator that moved or is loading gets a
// 503 page with a retry link, everything else the console's error page.
func (c *Console) groupsFail(w http.ResponseWriter, r *http.Request, err error) {
	if !groupsRetryable(err) {
		c.fail(w, r, nil, err)
		return
	}
	v := groupsErrorView{Status: http.StatusServiceUnavailable, Message: err.Error(), Retry: r.URL.RequestURI(), Back: "/groups"}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		v.Kafka = ke.Message
	}
	if r.Method != http.MethodGet {
		v.Retry = ""
		if id := r.PathValue("id"); id != "" {
			v.Back = "/groups/" + url.PathEscape(id)
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(v.Status)
	c.renderSection(discardHeader{w}, r, "groups_error", "groups", v)
}

// groupsInfo is one group described, whatever its type.
type groupsInfo struct {
	ID, Type, State, ProtocolType, Protocol string
	Coordinator                             string
	Members                                 []groupsMember
	// Assigned are the partitions the members hold, per topic.
	Assigned map[string][]int32
}

type groupsMember struct {
	ID, InstanceID, Client, Host, Assigned string
}

// errGroupsNotFound marks a group no describe knows.
var errGroupsNotFound = errors.New("no such group")

// groupsOpen describes the group id within the request's bounded
// context, as the user: a nil group when it has answered the error.
// The caller defers cancel either way.
func (c *Console) groupsOpen(w http.ResponseWriter, r *http.Request, id string) (context.Context, context.CancelFunc, *kadm.Client, *groupsInfo) {
	ctx, cancel := c.ctx(r)
	adm := c.admin(r)
	gi, err := c.groupsDescribe(ctx, adm, id)
	if err != nil {
		c.groupsFail(w, r, err)
		return ctx, cancel, adm, nil
	}
	return ctx, cancel, adm, gi
}

// groupsDescribe describes group id of any type: as a consumer group
// (KIP-848) first, then a share group (KIP-932), then a classic one, as
// Kafka's admin client does (each answers GROUP_ID_NOT_FOUND for a group
// of another type; a broker without the newer APIs answers none). A
// classic describe of an unknown group answers the Dead state with no
// members: that, with no other type claiming the group, is a 404.
func (c *Console) groupsDescribe(ctx context.Context, adm *kadm.Client, id string) (*groupsInfo, error) {
	coord := func(b kadm.BrokerDetail) string { return fmt.Sprintf("%d (%s:%d)", b.NodeID, b.Host, b.Port) }
	if ds, err := adm.DescribeConsumerGroups(ctx, id); err == nil || len(ds) > 0 {
		if d, ok := ds[id]; ok && !groupsNotThisType(d.Err) {
			if d.Err != nil {
				return nil, d.Err
			}
			gi := &groupsInfo{ID: id, Type: "consumer", State: d.State, ProtocolType: "consumer", Protocol: d.AssignorName,
				Coordinator: coord(d.Coordinator), Assigned: map[string][]int32{}}
			for _, m := range d.Members {
				gi.Members = append(gi.Members, groupsMember{ID: m.MemberID, InstanceID: derefOr(m.InstanceID), Client: m.ClientID,
					Host: m.ClientHost, Assigned: groupsAssignedText(m.Assignment, gi.Assigned)})
			}
			return gi, nil
		}
	} else if groupsRetryable(err) {
		return nil, err
	}
	if ds, err := adm.DescribeShareGroups(ctx, id); err == nil || len(ds) > 0 {
		if d, ok := ds[id]; ok && !groupsNotThisType(d.Err) {
			if d.Err != nil {
				return nil, d.Err
			}
			gi := &groupsInfo{ID: id, Type: "share", State: d.GroupState, ProtocolType: "share", Protocol: d.Assignor,
				Coordinator: coord(d.Coordinator), Assigned: map[string][]int32{}}
			for _, m := range d.Members {
				gi.Members = append(gi.Members, groupsMember{ID: m.MemberID, Client: m.ClientID, Host: m.ClientHost,
					Assigned: groupsAssignedText(m.Assignment, gi.Assigned)})
			}
			return gi, nil
		}
	} else if groupsRetryable(err) {
		return nil, err
	}
	ds, err := adm.DescribeGroups(ctx, id)
	d, ok := ds[id]
	if !ok {
		return nil, cmp.Or(err, errors.New("no answer from the group's coordinator"))
	}
	if d.Err != nil && !groupsNotThisType(d.Err) {
		return nil, d.Err
	}
	if d.Err != nil || d.State == "Dead" && len(d.Members) == 0 {
		return c.groupsDescribeListed(ctx, adm, id)
	}
	gi := &groupsInfo{ID: id, Type: "classic", State: d.State, ProtocolType: d.ProtocolType, Protocol: d.Protocol,
		Coordinator: coord(d.Coordinator), Assigned: map[string][]int32{}}
	for _, m := range d.Members {
		gm := groupsMember{ID: m.MemberID, InstanceID: derefOr(m.InstanceID), Client: m.ClientID, Host: m.ClientHost}
		if a, ok := m.Assigned.AsConsumer(); ok {
			ts := kadm.TopicsSet{}
			for _, t := range a.Topics {
				ts.Add(t.Topic, t.Partitions...)
			}
			gm.Assigned = groupsAssignedText(ts, gi.Assigned)
		}
		gi.Members = append(gi.Members, gm)
	}
	return gi, nil
}

// groupsDescribeListed finds a group no describe knows among the listed
// ones: a streams group (KIP-1071), which the console lists but does not
// describe, or else none.
func (c *Console) groupsDescribeListed(ctx context.Context, adm *kadm.Client, id string) (*groupsInfo, error) {
	listed, err := adm.ListGroupsByType(ctx, []string{"streams"})
	if err == nil {
		if g, ok := listed[id]; ok {
			return &groupsInfo{ID: id, Type: cmp.Or(g.GroupType, "streams"), State: g.State, ProtocolType: g.ProtocolType,
				Coordinator: strconv.Itoa(int(g.Coordinator)), Assigned: map[string][]int32{}}, nil
		}
	}
	return nil, statusErr(http.StatusNotFound, fmt.Errorf("group %q: %w (it may have been deleted)", id, errGroupsNotFound))
}

// groupsNotThisType: the describe of one type says the group is not of
// it (or the broker lacks the API).
func groupsNotThisType(err error) bool {
	return errors.Is(err, kerr.GroupIDNotFound) || errors.Is(err, kerr.UnsupportedVersion) || errors.Is(err, kerr.InvalidRequest)
}

func derefOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// groupsAssignedText renders a member's assignment ("t: 0-3, 7; u: 1")
// and adds it to all.
func groupsAssignedText(ts kadm.TopicsSet, all map[string][]int32) string {
	var parts []string
	for _, t := range ts.Sorted() {
		ps := slices.Sorted(slices.Values(t.Partitions))
		all[t.Topic] = append(all[t.Topic], ps...)
		parts = append(parts, t.Topic+": "+groupsRanges(ps))
	}
	return strings.Join(parts, "; ")
}

// groupsRanges compresses sorted partitions into ranges: 0-3, 7.
func groupsRanges(ps []int32) string {
	var b strings.Builder
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && ps[j+1] == ps[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", ps[i], ps[j])
		} else {
			fmt.Fprintf(&b, "%d", ps[i])
		}
		i = j + 1
	}
	return b.String()
}

// groupsLagRow is one partition of a group's lag table. Committed is the
// committed offset (a share group's start offset); -1 for none.
type groupsLagRow struct {
	Topic     string
	Partition int32
	Committed int64
	End       int64
	Lag       int64
	LagKnown  bool
	Assigned  bool
	Err       string
}

// groupsLag reads a group's offsets and the end offsets of their topics
// (and of the topics assigned), one request each, and answers a row per
// partition sorted by topic and partition, with the total lag.
func groupsLag(ctx context.Context, adm *kadm.Client, gi *groupsInfo) ([]groupsLagRow, int64, error) {
	type key struct {
		t string
		p int32
	}
	rows := map[key]*groupsLagRow{}
	row := func(t string, p int32) *groupsLagRow {
		k := key{t, p}
		if rows[k] == nil {
			rows[k] = &groupsLagRow{Topic: t, Partition: p, Committed: -1, End: -1}
		}
		return rows[k]
	}
	topics := map[string]bool{}
	for t, ps := range gi.Assigned {
		topics[t] = true
		for _, p := range ps {
			row(t, p).Assigned = true
		}
	}
	var shares kadm.ShareOffsets
	switch gi.Type {
	case "streams":
		return nil, 0, nil
	case "share":
		ds, err := adm.DescribeShareGroupOffsets(ctx, gi.ID)
		if err != nil {
			return nil, 0, err
		}
		d := ds[gi.ID]
		if d.Err != nil && !errors.Is(d.Err, kerr.GroupIDNotFound) {
			return nil, 0, d.Err
		}
		shares = d.Offsets
		shares.Each(func(o kadm.ShareOffset) {
			topics[o.Topic] = true
			r := row(o.Topic, o.Partition)
			r.Committed = o.StartOffset
			if o.Err != nil {
				r.Err = groupsErrText(o.Err)
			}
		})
	default:
		fetched, err := adm.FetchOffsets(ctx, gi.ID)
		if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			return nil, 0, err
		}
		fetched.Each(func(o kadm.OffsetResponse) {
			topics[o.Topic] = true
			r := row(o.Topic, o.Partition)
			r.Committed = o.At
			if o.Err != nil {
				r.Err = groupsErrText(o.Err)
			}
		})
	}
	var ends kadm.ListedOffsets
	if len(topics) > 0 {
		var err error
		if ends, err = adm.ListEndOffsets(ctx, slices.Sorted(maps.Keys(topics))...); err != nil && len(ends) == 0 {
			return nil, 0, fmt.Errorf("end offsets: %w", err)
		}
	}
	var total int64
	out := make([]groupsLagRow, 0, len(rows))
	for _, r := range rows {
		if e, ok := ends.Lookup(r.Topic, r.Partition); ok && e.Err == nil {
			r.End = e.Offset
		} else if ok && r.Err == "" {
			r.Err = groupsErrText(e.Err)
		}
		if so, ok := shares.Lookup(r.Topic, r.Partition); ok {
			if so.Err == nil && so.StartOffset >= 0 {
				r.Lag, r.LagKnown = groupsShareLag(so, ends), true
			}
		} else if r.Err == "" {
			r.Lag, r.LagKnown = groupsLagOf(r.Committed, nil, ends, r.Topic, r.Partition)
		}
		if r.LagKnown {
			total += r.Lag
		}
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b groupsLagRow) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out, total, nil
}

// groupsHistory keeps each group's total lag sampled while someone looks
// at it, a few minutes per group, per console and user: a user must not
// see samples of a group the cluster's ACLs hide from them.
type groupsHistory struct {
	mu      sync.Mutex
	samples map[groupsHistoryKey][]Point
}

type groupsHistoryKey struct {
	user, group string
}

const (
	groupsHistoryWindow = 10 * time.Minute
	groupsHistoryMax    = 240
	// groupsHistoryMinGap keeps a page and its chart fragment, asked at
	// once, from adding two samples.
	groupsHistoryMinGap = time.Second
)

// add records a sample and answers the series: samples older than the
// window are dropped, of every group (so a group no one watches goes).
func (h *groupsHistory) add(user, group string, at time.Time, lag int64) []Point {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.samples == nil {
		h.samples = map[groupsHistoryKey][]Point{}
	}
	for k, ps := range h.samples {
		i := 0
		for i < len(ps) && at.Sub(ps[i].At) > groupsHistoryWindow {
			i++
		}
		if i == len(ps) {
			delete(h.samples, k)
		} else if i > 0 {
			h.samples[k] = slices.Clone(ps[i:])
		}
	}
	k := groupsHistoryKey{user, group}
	ps := h.samples[k]
	if n := len(ps); n == 0 || at.Sub(ps[n-1].At) >= groupsHistoryMinGap {
		ps = append(ps, Point{At: at, Value: float64(lag)})
	}
	if len(ps) > groupsHistoryMax {
		ps = slices.Clone(ps[len(ps)-groupsHistoryMax:])
	}
	h.samples[k] = ps
	return slices.Clone(ps)
}

func (h *groupsHistory) forget(group string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k := range h.samples {
		if k.group == group {
			delete(h.samples, k)
		}
	}
}

type groupsDetailView struct {
	G          *groupsInfo
	Rows       []groupsLagRow
	TotalLag   int64
	Partitions int
	Members    []groupsMember
	MoreMember int
	Chart      groupsChartView
	Pager      sharedPager
	Topics     []string
	Done       string
	Share      bool
	Active     bool
}

type groupsChartView struct {
	ID  string
	SVG any
}

func (c *Console) serveGroupsDetail(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	page, err := sharedPageParam(r.URL.Query().Get("page"))
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	ctx, cancel, adm, gi := c.groupsOpen(w, r, id)
	defer cancel()
	if gi == nil {
		return
	}
	rows, total, err := groupsLag(ctx, adm, gi)
	if err != nil {
		c.groupsFail(w, r, err)
		return
	}
	v := groupsDetailView{G: gi, TotalLag: total, Partitions: len(rows), Done: r.URL.Query().Get("done"),
		Share: gi.Type == "share", Active: len(gi.Members) > 0}
	topics := map[string]bool{}
	for _, row := range rows {
		if row.Committed >= 0 {
			topics[row.Topic] = true
		}
	}
	v.Topics = slices.Sorted(maps.Keys(topics))
	v.Members = gi.Members
	if len(v.Members) > groupsPageSize {
		v.MoreMember = len(v.Members) - groupsPageSize
		v.Members = v.Members[:groupsPageSize]
	}
	base := "/groups/" + url.PathEscape(id) + "?page="
	v.Pager = sharedPaginate(len(rows), groupsPageSize, page, func(p int) string { return base + strconv.Itoa(p) })
	v.Pager.Summary = fmt.Sprintf("Page %d of %d (%d partitions)", v.Pager.Page, v.Pager.Pages, v.Partitions)
	v.Rows = rows[v.Pager.From:v.Pager.To]
	if gi.Type != "streams" {
		v.Chart = c.groupsChart(r, id, total)
	}
	c.render(w, r, "groups_detail", v)
}

// groupsChart samples the group's total lag and draws its history.
func (c *Console) groupsChart(r *http.Request, id string, total int64) groupsChartView {
	pts := c.groupLags.add(sess(r).user, id, time.Now(), total)
	return groupsChartView{ID: id, SVG: chartSVG("Total lag of "+id, "records", []Series{{Name: "total lag", Points: pts}})}
}

// serveGroupsLagChart is the chart alone, for the page's htmx refresh;
// each request is one sample.
func (c *Console) serveGroupsLagChart(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ctx, cancel, adm, gi := c.groupsOpen(w, r, id)
	defer cancel()
	if gi == nil {
		return
	}
	_, total, err := groupsLag(ctx, adm, gi)
	if err != nil {
		c.groupsFail(w, r, err)
		return
	}
	c.fragment(w, r, "groups_detail", "groups-lag-chart", groupsDetailView{G: gi, Chart: c.groupsChart(r, id, total)})
}

func init() {
	registerFuncs(template.FuncMap{
		"groupsPath":   url.PathEscape,
		"groupsWindow": func() string { return groupsHistoryWindow.String() },
		// groupsStateClass picks a state's badge; the badge also says the
		// state in words.
		"groupsStateClass": func(state string) string {
			switch state {
			case "Stable":
				return "ok"
			case "Dead", "Unknown":
				return "bad"
			}
			return "warn"
		},
	})
}
