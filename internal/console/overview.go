package console

import (
	"context"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	// overviewMaxUnhealthy is how many unhealthy partitions are listed
	// (the count covers them all).
	overviewMaxUnhealthy = 100
	// overviewMinISRTTL is how long the topics' min.insync.replicas are
	// cached.
	overviewMinISRTTL = 30 * time.Second
	// overviewPing is how often an idle event stream sends a comment.
	overviewPing = 15 * time.Second
)

// routesOverview registers the overview page and its event stream.
func (c *Console) routesOverview(mux *http.ServeMux) {
	h := newOverviewHub(c)
	mux.HandleFunc("GET /{$}", h.servePage)
	mux.HandleFunc("GET /events/overview", h.serveEvents)
}

// overviewHealth is the cluster as one look sees it: its brokers, their
// disks and the partitions' health.
type overviewHealth struct {
	At           time.Time
	Err          string // the look failed as a whole (shown by the event stream only)
	ClusterID    string
	Controller   int32
	QuorumLeader int32 // -1 when DescribeQuorum did not answer
	Brokers      []overviewBroker
	Topics       int
	Partitions   int
	UnderRepl    int
	Offline      int
	UnderMinISR  int
	Unhealthy    []overviewPartition // the first overviewMaxUnhealthy
	Notes        []string            // the parts that could not be read

	UnhealthyCount int // partitions with any problem

	topicNames  []string      // non-internal topics, for the end offsets
	leaderSizes map[any]int64 // overviewTP -> the leader replica's log size
}

type overviewBroker struct {
	ID           int32
	Addr         string
	Rack         string
	Fenced       bool
	Controller   bool
	QuorumLeader bool
	DiskKnown    bool
	DiskErr      string
	Bytes        int64
	Dirs         []overviewDir
	Lat          *overviewLatStat // the sampler's last interval, when there is one
}

type overviewDir struct {
	Path          string
	Bytes         int64
	Total, Usable int64 // -1 when the broker does not tell
	Err           string
}

type overviewPartition struct {
	Topic     string
	Partition int32
	Leader    int32
	Replicas  []int32
	ISR       []int32
	MinISR    int // 0 or less when unknown
	Problems  []string
}

// collect looks at the cluster as user, with cl and adm: Metadata (the
// partitions), DescribeCluster (fenced brokers too, when the broker
// answers v2), DescribeQuorum (the KRaft leader, when answered), one
// DescribeLogDirs per broker (all at once) and the topics'
// min.insync.replicas (cached). Only Metadata failing fails it: any
// other part failing is a note and an "unknown" on the page.
func (h *overviewHub) collect(ctx context.Context, user string, cl *kgo.Client, adm *kadm.Client) (*overviewHealth, error) {
	// Asking for the authorized operations makes kadm send the request
	// rather than answer from the client's metadata cache (up to 5 s old:
	// a topic just created would be missing).
	md, err := adm.Metadata(kadm.WithAuthorizedOps(ctx))
	if err != nil {
		return nil, err
	}
	out := &overviewHealth{At: time.Now(), ClusterID: md.Cluster, Controller: md.Controller, QuorumLeader: -1}
	var wg sync.WaitGroup
	var cluster *kmsg.DescribeClusterResponse
	var clusterErr error
	var dirs []kgo.ResponseShard
	wg.Add(3)
	go func() {
		defer wg.Done()
		req := kmsg.NewPtrDescribeClusterRequest()
		req.EndpointType = 1
		// KIP-1073 (v2): the fenced brokers too; an older broker is sent
		// an older version, without the field, and lists live ones only.
		req.IncludeFencedBrokers = true
		cluster, clusterErr = req.RequestWith(ctx, cl)
		if clusterErr == nil {
			clusterErr = kerr.ErrorForCode(cluster.ErrorCode)
		}
	}()
	go func() {
		defer wg.Done()
		// A cluster without KRaft's DescribeQuorum (or a Kafka error
		// there) just hides the quorum leader: -1.
		out.QuorumLeader, _ = overviewQuorumLeader(ctx, cl)
	}()
	go func() {
		defer wg.Done()
		dirs = cl.RequestSharded(ctx, kmsg.NewPtrDescribeLogDirsRequest())
	}()
	minISR, minErr := h.minISRFor(ctx, user, cl, md.Topics.Names())
	wg.Wait()

	// Brokers: DescribeCluster's (with fenced ones), else Metadata's.
	if clusterErr == nil {
		if cluster.ClusterID != "" {
			out.ClusterID = cluster.ClusterID
		}
		out.Controller = cluster.ControllerID
		for _, b := range cluster.Brokers {
			out.Brokers = append(out.Brokers, overviewBroker{ID: b.NodeID, Addr: net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))),
				Rack: derefString(b.Rack), Fenced: b.IsFenced})
		}
	} else {
		for _, b := range md.Brokers {
			out.Brokers = append(out.Brokers, overviewBroker{ID: b.NodeID, Addr: net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))),
				Rack: derefString(b.Rack)})
		}
	}
	slices.SortFunc(out.Brokers, func(a, b overviewBroker) int { return int(a.ID) - int(b.ID) })
	byID := map[int32]*overviewBroker{}
	for i := range out.Brokers {
		b := &out.Brokers[i]
		b.Controller = b.ID == out.Controller
		b.QuorumLeader = b.ID == out.QuorumLeader
		b.DiskErr = "no answer"
		byID[b.ID] = b
	}

	// Leaders, to attribute each partition's size to its leader's copy.
	leaders := map[overviewTP]int32{}
	for _, td := range md.Topics {
		for _, p := range td.Partitions {
			leaders[overviewTP{td.Topic, p.Partition}] = p.Leader
		}
	}
	diskFailed := overviewDisks(out, byID, leaders, dirs)
	if diskFailed > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("Disk use is unknown for %d broker(s): DescribeLogDirs failed there.", diskFailed))
		out.leaderSizes = nil // a partial total would read as a drop
	}
	if minErr != nil {
		out.Notes = append(out.Notes, "Topics' min.insync.replicas are unknown (DescribeConfigs: "+minErr.Error()+"); under-min-ISR partitions are not counted.")
	}

	overviewPartitions(out, md.Topics, minISR)
	return out, nil
}

// overviewPartitions counts the topics and partitions and their
// problems, in topic then partition order: offline (no leader),
// under-replicated (ISR smaller than the replicas), under min ISR (ISR
// smaller than the topic's min.insync.replicas, when known), listing the
// first overviewMaxUnhealthy unhealthy ones.
func overviewPartitions(out *overviewHealth, topics kadm.TopicDetails, minISR map[string]int) {
	unknownMin := 0
	defer func() {
		if unknownMin > 0 {
			out.Notes = append(out.Notes, fmt.Sprintf("min.insync.replicas is unknown for %d topic(s) (DescribeConfigs refused them): their partitions are not counted as under min ISR.", unknownMin))
		}
	}()
	for _, td := range topics.Sorted() {
		if td.Err != nil {
			out.Notes = append(out.Notes, fmt.Sprintf("Topic %s: %v", td.Topic, td.Err))
			continue
		}
		out.Topics++
		if minISR[td.Topic] < 0 {
			unknownMin++
		}
		if !td.IsInternal {
			out.topicNames = append(out.topicNames, td.Topic)
		}
		for _, p := range td.Partitions.Sorted() {
			out.Partitions++
			op := overviewPartition{Topic: td.Topic, Partition: p.Partition, Leader: p.Leader, Replicas: p.Replicas, ISR: p.ISR, MinISR: minISR[td.Topic]}
			if p.Leader < 0 || (p.Err != nil && len(p.Replicas) == 0) {
				out.Offline++
				op.Problems = append(op.Problems, "offline")
			}
			if len(p.ISR) < len(p.Replicas) {
				out.UnderRepl++
				op.Problems = append(op.Problems, "under-replicated")
			}
			if op.MinISR > 0 && len(p.ISR) < op.MinISR {
				out.UnderMinISR++
				op.Problems = append(op.Problems, "under min ISR")
			}
			if len(op.Problems) > 0 {
				out.UnhealthyCount++
				if len(out.Unhealthy) < overviewMaxUnhealthy {
					out.Unhealthy = append(out.Unhealthy, op)
				}
			}
		}
	}
}

// overviewDisks fills the brokers' disk use from DescribeLogDirs' answers
// (one shard per broker): the bytes per log dir and in all, the volume's
// size and free bytes when the broker tells (v4+), and each partition's
// size on its leader. A broker whose shard failed keeps DiskKnown false
// and the error. It answers how many failed.
func overviewDisks(out *overviewHealth, byID map[int32]*overviewBroker, leaders map[overviewTP]int32, dirs []kgo.ResponseShard) int {
	out.leaderSizes = map[any]int64{}
	diskFailed := 0
	for _, sh := range dirs {
		b := byID[sh.Meta.NodeID]
		if b == nil {
			continue
		}
		if sh.Err == nil {
			sh.Err = kerr.ErrorForCode(sh.Resp.(*kmsg.DescribeLogDirsResponse).ErrorCode)
		}
		if sh.Err != nil {
			b.DiskErr = sh.Err.Error()
			diskFailed++
			continue
		}
		resp := sh.Resp.(*kmsg.DescribeLogDirsResponse)
		b.DiskKnown, b.DiskErr = true, ""
		for _, d := range resp.Dirs {
			od := overviewDir{Path: d.Dir, Total: -1, Usable: -1}
			if resp.Version >= 4 && d.TotalBytes > 0 {
				od.Total, od.Usable = d.TotalBytes, d.UsableBytes
			}
			if err := kerr.ErrorForCode(d.ErrorCode); err != nil {
				od.Err = err.Error()
			}
			for _, t := range d.Topics {
				for _, p := range t.Partitions {
					od.Bytes += p.Size
					tp := overviewTP{t.Topic, p.Partition}
					if !p.IsFuture && leaders[tp] == b.ID {
						out.leaderSizes[tp] = p.Size
					}
				}
			}
			b.Bytes += od.Bytes
			b.Dirs = append(b.Dirs, od)
		}
	}
	return diskFailed
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// overviewQuorumLeader is the KRaft quorum's leader (DescribeQuorum on
// __cluster_metadata); an error when the cluster does not answer it.
func overviewQuorumLeader(ctx context.Context, cl *kgo.Client) (int32, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = "__cluster_metadata"
	p := kmsg.NewDescribeQuorumRequestTopicPartition()
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return -1, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return -1, err
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				return -1, err
			}
			return rp.LeaderID, nil
		}
	}
	return -1, fmt.Errorf("DescribeQuorum answered no partition")
}

// overviewMinISR caches one user's topics' min.insync.replicas.
type overviewMinISR struct {
	mu sync.Mutex
	at time.Time
	by map[string]int
}

// minISRFor is the min.insync.replicas of topics (those the user may
// describe), from the cache when it is fresh and knows them all, else
// from one DescribeConfigs for all topics, asking for that config only.
func (h *overviewHub) minISRFor(ctx context.Context, user string, cl *kgo.Client, topics []string) (map[string]int, error) {
	h.mu.Lock()
	e := h.minISR[user]
	if e == nil {
		// Users come and go: forget the caches gone stale meanwhile.
		for u, old := range h.minISR {
			if old.mu.TryLock() {
				if time.Since(old.at) > overviewMinISRTTL {
					delete(h.minISR, u)
				}
				old.mu.Unlock()
			}
		}
		e = &overviewMinISR{}
		h.minISR[user] = e
	}
	h.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	fresh := time.Since(e.at) < overviewMinISRTTL
	for _, t := range topics {
		if _, ok := e.by[t]; !ok {
			fresh = false
			break
		}
	}
	if fresh {
		return e.by, nil
	}
	by := map[string]int{}
	if len(topics) > 0 {
		req := kmsg.NewPtrDescribeConfigsRequest()
		for _, t := range topics {
			r := kmsg.NewDescribeConfigsRequestResource()
			r.ResourceType = kmsg.ConfigResourceTypeTopic
			r.ResourceName = t
			r.ConfigNames = []string{"min.insync.replicas"}
			req.Resources = append(req.Resources, r)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return nil, err
		}
		for _, r := range resp.Resources {
			// A topic whose configs the user may not see has an unknown
			// min ISR (-1): its partitions are not counted as under it.
			by[r.ResourceName] = -1
			if r.ErrorCode != 0 {
				continue
			}
			for _, cfg := range r.Configs {
				if cfg.Name == "min.insync.replicas" && cfg.Value != nil {
					n, _ := strconv.Atoi(*cfg.Value)
					by[r.ResourceName] = n
				}
			}
		}
	}
	e.at, e.by = time.Now(), by
	return by, nil
}

// overviewView is the page's data.
type overviewView struct {
	Health   *overviewHealth
	Charts   []overviewChart
	Interval time.Duration
	Admin    bool
}

type overviewChart struct {
	ID, Title, Note string
	SVG             template.HTML
}

// view is the page's data from a look and the sampler's points.
func (h *overviewHub) view(hl *overviewHealth, points []overviewPoint) overviewView {
	if hl != nil && len(points) > 0 {
		// hl may be the sampler's, shared by every stream: fill a copy.
		cp := *hl
		cp.Brokers = slices.Clone(hl.Brokers)
		hl = &cp
		last := points[len(points)-1]
		for i := range hl.Brokers {
			if st, ok := last.LatBy[hl.Brokers[i].ID]; ok {
				st := st
				hl.Brokers[i].Lat = &st
			}
		}
	}
	admin := len(h.c.cfg.AdminURLs) > 0
	return overviewView{Health: hl, Charts: overviewCharts(points, admin), Interval: h.c.cfg.SampleInterval, Admin: admin}
}

// overviewCharts draws the sampled series.
func overviewCharts(points []overviewPoint, admin bool) []overviewChart {
	var recIn, recOut, bytesIn, p50, pmax, bIn, bOut, prod, fetch []Point
	for _, p := range points {
		// A series gets a point only where the sample measured it.
		add := func(s *[]Point, measured bool, v float64) {
			if measured {
				*s = append(*s, Point{p.At, v})
			}
		}
		add(&recIn, p.HasRecIn, p.RecIn)
		add(&recOut, p.HasRecOut, p.RecOut)
		add(&bytesIn, p.HasBy, p.BytesIn)
		add(&p50, p.Lat.N > 0, p.Lat.P50)
		add(&pmax, p.Lat.N > 0, p.Lat.Max)
		add(&bIn, p.HasBrokerIn, p.BrokerIn)
		add(&bOut, p.HasBrokerOut, p.BrokerOut)
		add(&prod, p.HasProduce, p.ProduceMs)
		add(&fetch, p.HasFetch, p.FetchMs)
	}
	charts := []overviewChart{
		{ID: "records", Title: "Records per second",
			Note: "In: growth of all topics' end offsets. Out: growth of all consumer groups' committed offsets.",
			SVG:  chartSVG("Records per second", "rec/s", []Series{{"in (produced)", recIn}, {"out (committed by groups)", recOut}})},
		{ID: "bytes", Title: "Bytes in per second",
			Note: "Growth of the partitions' leader log sizes (DescribeLogDirs); 0 while retention deletes more than arrives.",
			SVG:  chartSVG("Bytes in per second", "B/s", []Series{{"bytes in", bytesIn}})},
		{ID: "latency", Title: "Console request latency",
			Note: "Round trips of the console's own sampling requests to the brokers, per interval: not the brokers' produce or fetch latency.",
			SVG:  chartSVG("Console request latency", "ms", []Series{{"p50", p50}, {"max", pmax}})},
	}
	if admin {
		charts = append(charts,
			overviewChart{ID: "broker-bytes", Title: "Broker bytes per second",
				Note: "The brokers' own counts (samsa_topic_bytes_in_total, samsa_topic_bytes_out_total from the admin listeners' /metrics): record bytes produced, and sent to consumers.",
				SVG:  chartSVG("Broker bytes per second", "B/s", []Series{{"in (produced)", bIn}, {"out (to consumers)", bOut}})},
			overviewChart{ID: "broker-latency", Title: "Broker request time",
				Note: "Mean time per Produce and Fetch request in each interval, as the brokers measure it (samsa_request_duration_seconds); Fetch includes consumers' long-poll waits.",
				SVG:  chartSVG("Broker request time", "ms", []Series{{"Produce", prod}, {"Fetch", fetch}})})
	}
	return charts
}

// servePage renders the overview: a fresh look at the cluster, and the
// charts as sampled so far (starting the user's sampler).
func (h *overviewHub) servePage(w http.ResponseWriter, r *http.Request) {
	s := sess(r)
	sm := h.sampler(s)
	ctx, cancel := h.c.ctx(r)
	defer cancel()
	hl, err := h.collect(ctx, s.user, s.cl, s.adm)
	if err != nil {
		h.c.fail(w, r, s, err)
		return
	}
	var points []overviewPoint
	if sm != nil {
		points, _ = sm.snapshot()
	}
	h.c.render(w, r, "overview", h.view(hl, points))
}

// serveEvents streams the charts, the health cards and the brokers as
// HTML fragments (server-sent events "charts", "health", "brokers") after
// each sample, until the client goes or the console closes.
func (h *overviewHub) serveEvents(w http.ResponseWriter, r *http.Request) {
	s := sess(r)
	sm := h.sampler(s)
	if sm == nil {
		h.c.fail(w, r, s, statusErr(http.StatusServiceUnavailable, fmt.Errorf("the console is closing")))
		return
	}
	rc := http.NewResponseController(w)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	updates, unsub := sm.subscribe()
	defer func() { unsub() }()
	send := func() error {
		points, hl := sm.snapshot()
		v := h.view(hl, points)
		var b strings.Builder
		for _, ev := range []struct{ name, tmpl string }{{"charts", "overview-charts"}, {"health", "overview-health"}, {"brokers", "overview-brokers"}} {
			if hl == nil && ev.name != "charts" {
				continue
			}
			html, err := h.c.fragmentString(r, "overview", ev.tmpl, v)
			if err != nil {
				return err
			}
			b.WriteString("event: " + ev.name + "\n")
			for _, line := range strings.Split(html, "\n") {
				b.WriteString("data: " + strings.TrimRight(line, "\r") + "\n")
			}
			b.WriteString("\n")
		}
		if _, err := w.Write([]byte(b.String())); err != nil {
			return err
		}
		return rc.Flush()
	}
	if pts, _ := sm.snapshot(); len(pts) > 0 {
		if send() != nil {
			return
		}
	}
	ping := time.NewTicker(overviewPing)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.c.closed:
			return
		case <-updates:
			sm.watch()
			if send() != nil {
				return
			}
		case <-ping.C:
			// Keep the sampler alive; if it stopped (its client failed),
			// follow the one that replaced it.
			if cur := h.sampler(s); cur != nil && cur != sm {
				unsub()
				sm = cur
				updates, unsub = sm.subscribe()
			}
			if _, err := w.Write([]byte(": ping\n\n")); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		}
	}
}
