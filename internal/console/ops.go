package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The operations page: the partition reassignments in progress (with the
// adding replicas' progress), cancelling one, moving a partition,
// preferred-leader elections, and, on Samsa, the balancer's state read
// from the brokers' admin listeners.

// opsPageSize is how many reassignments one page shows.
const opsPageSize = 100

// opsLogDirsTimeout bounds the log-directory sizes behind the progress
// column: they are a nicety, and a broker that is down (the usual reason
// a move hangs) must not hold the page for the whole request timeout.
const opsLogDirsTimeout = 3 * time.Second

// routesOps registers the operations page and its actions.
func (c *Console) routesOps(mux *http.ServeMux) {
	mux.HandleFunc("GET /ops", c.serveOps)
	mux.HandleFunc("POST /ops/reassignments/cancel", c.serveOpsCancel)
	mux.HandleFunc("POST /ops/reassign", c.serveOpsReassign)
	mux.HandleFunc("POST /ops/elect", c.serveOpsElect)
}

// opsProgress is one adding replica's copy against its leader's log.
type opsProgress struct {
	Broker      int32
	Known       bool
	Bytes       int64
	LeaderBytes int64
	Percent     int
}

type opsReassignment struct {
	Topic                      string
	Partition                  int32
	Replicas, Adding, Removing []int32
	Leader                     int32 // -1 when unknown
	Progress                   []opsProgress
}

type opsView struct {
	Done          string
	Moves         []opsReassignment
	Pager         sharedPager
	ProgressNote  string // why some progress is unknown
	AdminURLs     bool
	Balancer      *opsBalancer // the active controller's, nil when none answered as active
	BalancerNodes []opsBalancerNode
}

// serveOps shows the reassignments (one ListPartitionReassignments for
// every partition; for the page's rows one Metadata and one
// DescribeLogDirs per broker involved) and the balancer.
func (c *Console) serveOps(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := opsView{Done: q.Get("done"), AdminURLs: len(c.cfg.AdminURLs) > 0}
	var wg sync.WaitGroup
	if v.AdminURLs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v.Balancer, v.BalancerNodes = c.opsBalancer(r)
		}()
	}
	err := c.opsReassignments(r, &v)
	wg.Wait()
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	c.render(w, r, "ops", v)
}

// opsReassignments fills the page's reassignments and their progress.
func (c *Console) opsReassignments(r *http.Request, v *opsView) error {
	ctx, cancel := c.ctx(r)
	defer cancel()
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = int32(c.cfg.RequestTimeout / time.Millisecond)
	req.Topics = nil // every partition
	resp, err := req.RequestWith(ctx, c.client(r))
	if err == nil {
		err = opsKafkaErr(resp.ErrorCode, resp.ErrorMessage)
	}
	if err != nil {
		return err
	}
	var all []opsReassignment
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			all = append(all, opsReassignment{Topic: t.Topic, Partition: p.Partition, Replicas: p.Replicas,
				Adding: p.AddingReplicas, Removing: p.RemovingReplicas, Leader: -1})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		return all[i].Topic < all[j].Topic || all[i].Topic == all[j].Topic && all[i].Partition < all[j].Partition
	})
	v.Pager = sharedRequestPage(r.URL, len(all), opsPageSize)
	v.Moves = all[v.Pager.From:v.Pager.To]
	if len(v.Moves) > 0 {
		v.ProgressNote = c.opsProgress(ctx, r, v.Moves)
	}
	return nil
}

// opsProgress measures each adding replica's log against its leader's:
// the leaders from one Metadata of the page's topics, the sizes from one
// DescribeLogDirs per broker involved, asked at once. It answers why any
// is unknown ("" when all are known).
func (c *Console) opsProgress(ctx context.Context, r *http.Request, moves []opsReassignment) string {
	adm := c.admin(r)
	topics := map[string]bool{}
	for _, m := range moves {
		topics[m.Topic] = true
	}
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	var notes []string
	md, err := adm.Metadata(ctx, names...)
	if err != nil {
		return "the leaders are unknown: " + err.Error()
	}
	set := kadm.TopicsSet{}
	brokers := map[int32]kadm.TopicsSet{}
	addTo := func(b int32, t string, p int32) {
		s := brokers[b]
		if s == nil {
			s = kadm.TopicsSet{}
			brokers[b] = s
		}
		s.Add(t, p)
	}
	for i := range moves {
		m := &moves[i]
		if pd, ok := md.Topics[m.Topic].Partitions[m.Partition]; ok {
			m.Leader = pd.Leader
		}
		set.Add(m.Topic, m.Partition)
		if m.Leader >= 0 {
			addTo(m.Leader, m.Topic, m.Partition)
		}
		for _, b := range m.Adding {
			addTo(b, m.Topic, m.Partition)
		}
	}
	live := md.Brokers.NodeIDs()
	lctx, cancel := context.WithTimeout(ctx, opsLogDirsTimeout)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	sizes := map[int32]kadm.DescribedLogDirs{}
	failed := map[int32]error{}
	for b, s := range brokers {
		if !slices.Contains(live, b) {
			// Not in the metadata: fenced or gone. Asking it would only
			// wait out the timeout.
			failed[b] = errors.New("not among the live brokers (down or fenced)")
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := adm.DescribeBrokerLogDirs(lctx, b, s)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed[b] = err
				return
			}
			sizes[b] = d
		}()
	}
	wg.Wait()
	size := func(b int32, t string, p int32) (int64, bool) {
		for _, dir := range sizes[b] {
			if lp, ok := dir.Topics.Lookup(t, p); ok {
				return lp.Size, true
			}
		}
		return 0, false
	}
	for i := range moves {
		m := &moves[i]
		lb, lok := size(m.Leader, m.Topic, m.Partition)
		for _, b := range m.Adding {
			pr := opsProgress{Broker: b, LeaderBytes: lb}
			var ok bool
			pr.Bytes, ok = size(b, m.Topic, m.Partition)
			pr.Known = ok && lok
			if pr.Known {
				pr.Percent = 100
				if lb > 0 {
					pr.Percent = int(min(100, pr.Bytes*100/lb))
				}
			}
			m.Progress = append(m.Progress, pr)
		}
	}
	ids := make([]int32, 0, len(failed))
	for b := range failed {
		ids = append(ids, b)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, b := range ids {
		err := failed[b]
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s (is it down?)", opsLogDirsTimeout)
		}
		notes = append(notes, fmt.Sprintf("broker %d's log sizes: %v", b, err))
	}
	return strings.Join(notes, "; ")
}

// opsKafkaErr joins a Kafka error code with the broker's message.
func opsKafkaErr(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err != nil && msg != nil && *msg != "" {
		err = fmt.Errorf("%w: %s", err, *msg)
	}
	return err
}

// opsPartitionErr is one partition's error of an action: the mistakes a
// user makes (a partition that is not there or not moving, replicas that
// cannot host it) are 400s.
func opsPartitionErr(err error, msg string) error {
	if err == nil {
		return nil
	}
	if msg != "" {
		err = fmt.Errorf("%w: %s", err, msg)
	}
	switch {
	case errors.Is(err, kerr.NoReassignmentInProgress), errors.Is(err, kerr.InvalidReplicaAssignment),
		errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.InvalidRequest),
		errors.Is(err, kerr.InvalidReplicationFactor), errors.Is(err, kerr.PreferredLeaderNotAvailable):
		return statusErr(http.StatusBadRequest, err)
	}
	return err
}

// opsTopicPartition reads the topic and partition fields of a form.
func opsTopicPartition(r *http.Request) (string, int32, error) {
	topic := strings.TrimSpace(r.PostFormValue("topic"))
	if topic == "" {
		return "", 0, badRequest("the topic is empty")
	}
	s := strings.TrimSpace(r.PostFormValue("partition"))
	p, err := strconv.ParseInt(s, 10, 32)
	if err != nil || p < 0 {
		return "", 0, badRequest("partition %q is not a partition number (0 or more)", s)
	}
	return topic, int32(p), nil
}

// serveOpsCancel cancels one reassignment (AlterPartitionAssignments
// with no replicas), after a confirmation: the partition goes back to
// its replicas before the move.
func (c *Console) serveOpsCancel(w http.ResponseWriter, r *http.Request) {
	topic, p, err := opsTopicPartition(r)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		c.render(w, r, "ops_confirm", sharedConfirm{
			Question: fmt.Sprintf("Cancel the reassignment of %s-%d? The partition goes back to the replicas it had before; what the new replicas copied is dropped.", topic, p),
			Fields:   [][2]string{{"topic", topic}, {"partition", strconv.Itoa(int(p))}},
			Yes:      "Yes, cancel it", Back: "/ops", BackLabel: "Back"})
		return
	}
	var req kadm.AlterPartitionAssignmentsReq
	req.CancelAssign(topic, p)
	if err := c.opsAlter(r, req); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	http.Redirect(w, r, "/ops?done="+urlQueryEscape(fmt.Sprintf("Cancelled the reassignment of %s-%d", topic, p)), http.StatusSeeOther)
}

// opsAlter runs one AlterPartitionAssignments and answers its error.
func (c *Console) opsAlter(r *http.Request, req kadm.AlterPartitionAssignmentsReq) error {
	ctx, cancel := c.ctx(r)
	defer cancel()
	res, err := c.admin(r).AlterPartitionAssignments(ctx, req)
	if err != nil {
		return err
	}
	for _, pr := range res.Sorted() {
		if err := opsPartitionErr(pr.Err, pr.ErrMessage); err != nil {
			return err
		}
	}
	return nil
}

// serveOpsReassign moves one partition to the replicas listed (the
// first is the preferred leader).
func (c *Console) serveOpsReassign(w http.ResponseWriter, r *http.Request) {
	topic, p, err := opsTopicPartition(r)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	list := strings.TrimSpace(r.PostFormValue("replicas"))
	var replicas []int32
	seen := map[int32]bool{}
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		id, err := strconv.ParseInt(f, 10, 32)
		if err != nil || id < 0 {
			c.fail(w, r, nil, badRequest("replica %q is not a broker ID", f))
			return
		}
		if seen[int32(id)] {
			c.fail(w, r, nil, badRequest("broker %d is listed twice", id))
			return
		}
		seen[int32(id)] = true
		replicas = append(replicas, int32(id))
	}
	if len(replicas) == 0 {
		c.fail(w, r, nil, badRequest("list the broker IDs to hold %s-%d, the preferred leader first (1,2,3)", topic, p))
		return
	}
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign(topic, p, replicas)
	if err := c.opsAlter(r, req); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	http.Redirect(w, r, "/ops?done="+urlQueryEscape(fmt.Sprintf("Reassigning %s-%d to %v", topic, p, replicas)), http.StatusSeeOther)
}

// serveOpsElect runs preferred-leader elections: of one partition, of a
// topic's partitions, or (no topic) of every partition.
func (c *Console) serveOpsElect(w http.ResponseWriter, r *http.Request) {
	topic := strings.TrimSpace(r.PostFormValue("topic"))
	ps := strings.TrimSpace(r.PostFormValue("partition"))
	set := kadm.TopicsSet{}
	what := "every partition"
	switch {
	case topic == "" && ps != "":
		c.fail(w, r, nil, badRequest("a partition needs its topic"))
		return
	case ps != "":
		t, p, err := opsTopicPartition(r)
		if err != nil {
			c.fail(w, r, nil, err)
			return
		}
		set.Add(t, p)
		what = fmt.Sprintf("%s-%d", t, p)
	case topic != "":
		ctx, cancel := c.ctx(r)
		md, err := c.admin(r).Metadata(ctx, topic)
		cancel()
		if err == nil {
			err = md.Topics[topic].Err
		}
		if err != nil {
			c.fail(w, r, nil, opsPartitionErr(err, ""))
			return
		}
		for p := range md.Topics[topic].Partitions {
			set.Add(topic, p)
		}
		what = "the partitions of " + topic
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	res, err := c.admin(r).ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	elected, already := 0, 0
	var failed []string
	var one error
	for _, tps := range res {
		for _, pr := range tps {
			switch {
			case pr.Err == nil:
				elected++
			case errors.Is(pr.Err, kerr.ElectionNotNeeded):
				already++
			default:
				one = opsPartitionErr(pr.Err, pr.ErrMessage)
				failed = append(failed, fmt.Sprintf("%s-%d: %v", pr.Topic, pr.Partition, one))
			}
		}
	}
	if len(failed) == 1 && elected+already == 0 {
		c.fail(w, r, nil, one) // the one partition asked for: its error is the answer
		return
	}
	sort.Strings(failed)
	done := fmt.Sprintf("Preferred-leader election of %s: %d elected, %d already led by their preferred replica", what, elected, already)
	if len(failed) > 0 {
		done += fmt.Sprintf(", %d failed (%s)", len(failed), strings.Join(failed[:min(5, len(failed))], "; "))
	}
	http.Redirect(w, r, "/ops?done="+urlQueryEscape(done), http.StatusSeeOther)
}
