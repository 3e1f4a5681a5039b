package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// harness drives a Coordinator for the scripts: a manual clock, a MemLog,
// member IDs "<client or instance>-<n>", and clients that remember the
// member ID and generation their last answers gave them. JoinGroup and
// SyncGroup are started with startJoin/startSync, whose answers land in
// buffered channels by the time the turn returns, so after every command
// the harness can tell exactly which waiting requests were answered.
type harness struct {
	t      *testing.T
	clock  *clock.Manual
	log    *MemLog
	cfg    Config
	topics map[string]int32 // partition counts; nil: every topic exists
	// topicIDs are the IDs of the topics, made up as topics are created
	// (byte 0 counts the topics ever created, the name follows).
	topicIDs map[string][16]byte
	nextID   byte
	c        *Coordinator
	ids      int
	clients  map[string]*client
	// logged counts the batches of each partition already printed by log.
	logged map[int32]int
}

type client struct {
	name     string
	memberID string
	// generation is the classic generation, or the member epoch of a
	// consumer-protocol client.
	generation int32
	instanceID string
	// cgTopics and owned are a consumer-protocol client's subscription and
	// the partitions it owns: what the coordinator last assigned it.
	cgTopics []string
	owned    topicPartitions
	// joins and syncs are the client's requests not yet answered, oldest
	// first (a client may send another before the first is answered).
	joins []<-chan joinResult
	syncs []<-chan syncResult
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, clock: clock.NewManual(epoch)}
	h.cfg = DefaultConfig()
	h.cfg.OffsetsTopicNumPartitions = 1
	h.cfg.InitialRebalanceDelay = 0
	h.reset()
	return h
}

// reset starts over with a new log and a new coordinator.
func (h *harness) reset() {
	h.close()
	h.log = NewMemLog()
	h.logged = make(map[int32]int)
	h.clients = make(map[string]*client)
	h.start()
}

// start builds a coordinator over the current log and loads every
// partition, as a broker does at startup.
func (h *harness) start() {
	h.c = New(h.cfg, Deps{
		Log:    h.log,
		Clock:  h.clock,
		Logger: slog.New(slog.DiscardHandler),
		TopicExists: func(topic string, partition int32) bool {
			if h.topics == nil {
				return true
			}
			n, ok := h.topics[topic]
			return ok && partition >= 0 && partition < n
		},
		TopicPartitions: func(name string) ([16]byte, int32, bool) {
			n, ok := h.topics[name]
			return h.topicIDs[name], n, ok
		},
		TopicNames: func() []string { return sortedKeys(h.topics) },
		TopicName:  h.topicName,
		TopicID: func(name string) ([16]byte, bool) {
			id, ok := h.topicIDs[name]
			return id, ok
		},
	})
	h.c.newMemberID = func(prefix string) string {
		h.ids++
		return fmt.Sprintf("%s-%d", prefix, h.ids)
	}
	for p := range h.cfg.OffsetsTopicNumPartitions {
		if err := h.c.Load(context.Background(), p); err != nil {
			h.t.Fatalf("load partition %d: %v", p, err)
		}
	}
}

func (h *harness) close() {
	if h.c != nil {
		h.c.Stop()
	}
}

func (h *harness) client(name string) *client {
	c := h.clients[name]
	if c == nil {
		c = &client{name: name, generation: -1}
		h.clients[name] = c
	}
	return c
}

// args splits a command line into positional arguments and key=value
// options.
type args struct {
	pos  []string
	opts map[string]string
}

func parseArgs(fields []string) args {
	a := args{opts: map[string]string{}}
	for _, f := range fields {
		if k, v, ok := strings.Cut(f, "="); ok && options[k] {
			a.opts[k] = v
		} else {
			a.pos = append(a.pos, f)
		}
	}
	return a
}

// options are the option names of the commands; any other word, such as
// t-0=5, is a positional argument.
var options = map[string]bool{
	"initial-delay": true, "min-session": true, "max-session": true, "max-size": true, "retention": true,
	"metadata-max": true, "partitions": true, "topics": true, "group": true, "groups": true, "v": true,
	"member": true, "instance": true, "session": true, "rebalance": true, "type": true, "protocols": true,
	"gen": true, "assign": true, "states": true, "types": true, "meta": true,
	"epoch": true, "regex": true, "assignor": true, "owned": true, "rack": true, "as": true,
	"cg-session": true, "assignors": true, "pid": true, "pepoch": true, "stable": true,
}

func (a args) str(k, def string) string {
	if v, ok := a.opts[k]; ok {
		return v
	}
	return def
}

func (a args) int(t *testing.T, k string, def int64) int64 {
	v, ok := a.opts[k]
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("option %s=%s: %v", k, v, err)
	}
	return n
}

func (a args) dur(t *testing.T, k string, def time.Duration) time.Duration {
	v, ok := a.opts[k]
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("option %s=%s: %v", k, v, err)
	}
	return d
}

// run runs one command and returns its output, followed by the answers to
// earlier JoinGroups and SyncGroups that the command brought about.
//
//	config [initial-delay=D] [min-session=D] [max-session=D] [max-size=N]
//	       [retention=D] [metadata-max=N] [partitions=N] [topics=t:N,...]
//	    start over: new log, new coordinator with these settings
//	join C [group=g] [v=9] [member=ID|-] [instance=I] [session=10s]
//	       [rebalance=30s] [type=consumer] [protocols=range,sticky:meta]
//	       [topics=a,b]
//	    JoinGroup from client C; protocol metadata is the client's name,
//	    or a ConsumerMemberMetadata of topics, or what name:meta says
//	sync C [gen=N] [member=ID] [v=5] [assign=C1:x,C2:y]
//	heartbeat C [gen=N] [member=ID]
//	leave C|@instance|=memberID[@instance]... [group=g] [v=5]
//	tick D          move the clock and apply the deadlines that passed
//	state [g]       the group's internal state
//	describe g...   DescribeGroups
//	list [states=a,b] [types=a,b]
//	commit C|- [group=g] [gen=N] [member=ID] [v=9] [meta=S] [retention=D] t-0=N...
//	fetch [groups=g,h] [v=8] [stable=1] [t-0...]
//	txn-commit C|- [group=g] [gen=N] [member=ID] [v=5] [pid=1] [pepoch=0] [meta=S] t-0=N...
//	    TxnOffsetCommit; before v3 no member or generation is sent
//	marker commit|abort [pid=1] [pepoch=0] [partitions=P]
//	    append a transaction marker to __consumer_offsets, then
//	    CompleteTransaction, as the broker does
//	complete commit|abort [pid=1] [partitions=P]
//	    CompleteTransaction alone (no marker in the log)
//	offset-delete [group=g] t-0...
//	delete-groups g...
//	expire          run the offset expiry sweep
//	stats           the coordinator's counts (Stats)
//	restart         new coordinator over the same log
//	log             the records appended since the last log command
//	fail-appends on|off|timeout
func (h *harness) run(line string, lineNo int) []string {
	fields := strings.Fields(line)
	a := parseArgs(fields[1:])
	var out []string
	switch fields[0] {
	case "config":
		out = h.config(a)
	case "join":
		out = h.join(a)
	case "sync":
		out = h.sync(a)
	case "heartbeat":
		out = h.heartbeat(a)
	case "hb":
		out = h.cgHeartbeat(a)
	case "cg-leave":
		out = h.cgLeave(a)
	case "cg-describe":
		out = h.cgDescribe(a)
	case "topics":
		h.setTopics(a.pos[0])
	case "leave":
		out = h.leave(a)
	case "tick":
		d, err := time.ParseDuration(a.pos[0])
		if err != nil {
			h.t.Fatalf("line %d: %v", lineNo, err)
		}
		h.clock.Advance(d)
		h.c.tick()
	case "state":
		out = h.state(a.pos)
	case "describe":
		out = h.describe(a)
	case "list":
		out = h.list(a)
	case "commit":
		out = h.commit(a)
	case "fetch":
		out = h.fetch(a)
	case "txn-commit":
		out = h.txnCommit(a)
	case "marker":
		out = h.marker(a, true)
	case "complete":
		out = h.marker(a, false)
	case "offset-delete":
		out = h.offsetDelete(a)
	case "delete-groups":
		resp := h.c.DeleteGroups(context.Background(), &kmsg.DeleteGroupsRequest{Version: 3, Groups: a.pos})
		for _, g := range resp.Groups {
			out = append(out, fmt.Sprintf("%s: %s", g.Group, errName(g.ErrorCode)))
		}
	case "expire":
		h.c.expireOffsets()
	case "stats":
		st := h.c.Stats()
		out = append(out, fmt.Sprintf("rebalances: classic=%d consumer=%d", st.ClassicRebalances, st.ConsumerRebalances),
			fmt.Sprintf("offsets: committed=%d expired=%d deleted=%d", st.OffsetCommits, st.OffsetExpirations, st.OffsetDeletions))
	case "restart":
		h.c.Stop()
		h.start()
		out = append(out, fmt.Sprintf("loaded %d groups", len(h.c.snapshot(nil))))
	case "log":
		out = h.dumpLog()
	case "fail-appends":
		switch a.pos[0] {
		case "on":
			h.log.FailAppends(errors.New("disk on fire"))
		case "timeout":
			h.log.FailAppends(kerr.RequestTimedOut)
		default:
			h.log.FailAppends(nil)
		}
	default:
		h.t.Fatalf("line %d: unknown command %q", lineNo, fields[0])
	}
	out = append(out, h.answered()...)
	if len(out) == 0 {
		out = []string{"ok"}
	}
	return out
}

func (h *harness) config(a args) []string {
	cfg := DefaultConfig()
	cfg.OffsetsTopicNumPartitions = int32(a.int(h.t, "partitions", 1))
	cfg.InitialRebalanceDelay = a.dur(h.t, "initial-delay", 0)
	cfg.MinSessionTimeout = a.dur(h.t, "min-session", cfg.MinSessionTimeout)
	cfg.MaxSessionTimeout = a.dur(h.t, "max-session", cfg.MaxSessionTimeout)
	cfg.MaxSize = int(a.int(h.t, "max-size", int64(cfg.MaxSize)))
	cfg.OffsetsRetention = a.dur(h.t, "retention", cfg.OffsetsRetention)
	cfg.OffsetMetadataMaxBytes = int(a.int(h.t, "metadata-max", int64(cfg.OffsetMetadataMaxBytes)))
	cfg.ConsumerMaxSize = int(a.int(h.t, "max-size", int64(cfg.ConsumerMaxSize)))
	cfg.ConsumerSessionTimeout = a.dur(h.t, "cg-session", cfg.ConsumerSessionTimeout)
	if as, ok := a.opts["assignors"]; ok {
		cfg.ConsumerAssignors = strings.Split(as, ",")
	}
	h.cfg = cfg
	h.topics, h.topicIDs, h.nextID = nil, nil, 0
	if ts, ok := a.opts["topics"]; ok {
		h.setTopics(ts)
	}
	h.reset()
	return nil
}

// setTopics makes the topics those of a t:N,u:M list: new ones get a new
// ID, the others keep theirs, and those not listed are deleted.
func (h *harness) setTopics(list string) {
	topics, ids := map[string]int32{}, map[string][16]byte{}
	for _, t := range strings.Split(list, ",") {
		if t == "" {
			continue
		}
		name, n, _ := strings.Cut(t, ":")
		count, err := strconv.Atoi(n)
		if err != nil {
			h.t.Fatalf("topics=%s: %v", list, err)
		}
		topics[name] = int32(count)
		id, ok := h.topicIDs[name]
		if !ok {
			h.nextID++
			id[0] = h.nextID
			copy(id[1:], name)
		}
		ids[name] = id
	}
	h.topics, h.topicIDs = topics, ids
}

func (h *harness) topicName(id [16]byte) (string, bool) {
	for name, tid := range h.topicIDs {
		if tid == id {
			return name, true
		}
	}
	return "", false
}

func (h *harness) join(a args) []string {
	c := h.client(a.pos[0])
	if inst, ok := a.opts["instance"]; ok {
		c.instanceID = inst
	}
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = int16(a.int(h.t, "v", 9))
	req.Group = a.str("group", "g")
	req.MemberID = a.str("member", c.memberID)
	if req.MemberID == "-" {
		req.MemberID = ""
	}
	if c.instanceID != "" {
		req.InstanceID = new(c.instanceID)
	}
	req.SessionTimeoutMillis = int32(a.dur(h.t, "session", 10*time.Second).Milliseconds())
	req.RebalanceTimeoutMillis = int32(a.dur(h.t, "rebalance", 30*time.Second).Milliseconds())
	req.ProtocolType = a.str("type", "consumer")
	metadata := []byte(c.name)
	if ts, ok := a.opts["topics"]; ok {
		md := kmsg.NewConsumerMemberMetadata()
		md.Topics = strings.Split(ts, ",")
		metadata = md.AppendTo(nil)
	}
	for _, p := range strings.Split(a.str("protocols", "range"), ",") {
		if p == "" {
			continue
		}
		name, meta, ok := strings.Cut(p, ":")
		jp := kmsg.NewJoinGroupRequestProtocol()
		jp.Name, jp.Metadata = name, metadata
		if ok {
			jp.Metadata = []byte(meta)
		}
		req.Protocols = append(req.Protocols, jp)
	}
	w := h.c.startJoin(req, c.name, "/10.0.0."+strconv.Itoa(len(h.clients)))
	select {
	case r := <-w:
		return []string{h.formatJoin(c, r)}
	default:
		c.joins = append(c.joins, w)
		return []string{c.name + " join: waiting"}
	}
}

func (h *harness) sync(a args) []string {
	c := h.client(a.pos[0])
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = int16(a.int(h.t, "v", 5))
	req.Group = a.str("group", "g")
	req.MemberID = a.str("member", c.memberID)
	req.Generation = int32(a.int(h.t, "gen", int64(c.generation)))
	if c.instanceID != "" {
		req.InstanceID = new(c.instanceID)
	}
	if as, ok := a.opts["assign"]; ok {
		for _, item := range strings.Split(as, ",") {
			who, what, _ := strings.Cut(item, ":")
			id := who
			if other := h.clients[who]; other != nil {
				id = other.memberID
			}
			req.GroupAssignment = append(req.GroupAssignment,
				kmsg.SyncGroupRequestGroupAssignment{MemberID: id, MemberAssignment: []byte(what)})
		}
	}
	w := h.c.startSync(req)
	select {
	case r := <-w:
		return []string{formatSync(c, r)}
	default:
		c.syncs = append(c.syncs, w)
		return []string{c.name + " sync: waiting"}
	}
}

func (h *harness) heartbeat(a args) []string {
	c := h.client(a.pos[0])
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group = a.str("group", "g")
	req.MemberID = a.str("member", c.memberID)
	req.Generation = int32(a.int(h.t, "gen", int64(c.generation)))
	if c.instanceID != "" {
		req.InstanceID = new(c.instanceID)
	}
	resp := h.c.Heartbeat(context.Background(), req)
	return []string{fmt.Sprintf("%s heartbeat: %s", c.name, errName(resp.ErrorCode))}
}

func (h *harness) leave(a args) []string {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version = int16(a.int(h.t, "v", 5))
	req.Group = a.str("group", "g")
	for _, who := range a.pos {
		m := kmsg.NewLeaveGroupRequestMember()
		if raw, ok := strings.CutPrefix(who, "="); ok {
			id, inst, static := strings.Cut(raw, "@")
			m.MemberID = id
			if static {
				m.InstanceID = new(inst)
			}
		} else if inst, ok := strings.CutPrefix(who, "@"); ok {
			m.InstanceID = new(inst)
		} else {
			c := h.client(who)
			m.MemberID = c.memberID
			if c.instanceID != "" {
				m.InstanceID = new(c.instanceID)
			}
		}
		if req.Version < 3 {
			req.MemberID = m.MemberID
		}
		req.Members = append(req.Members, m)
	}
	resp := h.c.LeaveGroup(context.Background(), req)
	line := "leave: " + errName(resp.ErrorCode)
	for _, m := range resp.Members {
		line += fmt.Sprintf(" %s%s=%s", m.MemberID, instanceSuffix(m.InstanceID), errName(m.ErrorCode))
	}
	return []string{line}
}

func instanceSuffix(id *string) string {
	if id == nil {
		return ""
	}
	return "@" + *id
}

// answered lists, by client, the waiting requests answered since the last
// look.
func (h *harness) answered() []string {
	var out []string
	for _, name := range sortedKeys(h.clients) {
		c := h.clients[name]
		c.joins = slices.DeleteFunc(c.joins, func(w <-chan joinResult) bool {
			select {
			case r := <-w:
				out = append(out, h.formatJoin(c, r))
				return true
			default:
				return false
			}
		})
		c.syncs = slices.DeleteFunc(c.syncs, func(w <-chan syncResult) bool {
			select {
			case r := <-w:
				out = append(out, formatSync(c, r))
				return true
			default:
				return false
			}
		})
	}
	return out
}

func formatSync(c *client, r syncResult) string {
	if r.code != 0 {
		return fmt.Sprintf("%s sync: %s", c.name, errName(r.code))
	}
	return fmt.Sprintf("%s sync: assignment=%q protocol=%s/%s", c.name, r.assignment, r.protocolType, r.protocolName)
}

func (h *harness) formatJoin(c *client, r joinResult) string {
	if r.code != 0 {
		if r.code == codeMemberIDRequired {
			c.memberID = r.memberID
		}
		return fmt.Sprintf("%s join: %s member=%s", c.name, errName(r.code), r.memberID)
	}
	c.memberID, c.generation = r.memberID, r.generation
	s := fmt.Sprintf("%s join: gen=%d member=%s leader=%s protocol=%s/%s",
		c.name, r.generation, r.memberID, r.leader, r.protocolType, r.protocolName)
	if r.skipAssignment {
		s += " skip-assignment"
	}
	if len(r.members) > 0 {
		var ms []string
		for _, m := range r.members {
			ms = append(ms, fmt.Sprintf("%s%s:%q", m.MemberID, instanceSuffix(m.InstanceID), m.ProtocolMetadata))
		}
		s += " members=[" + strings.Join(ms, " ") + "]"
	}
	return s
}

// state prints a group's internal state, which no API shows in full.
func (h *harness) state(pos []string) []string {
	id := "g"
	if len(pos) > 0 {
		id = pos[0]
	}
	g, code := h.c.lockGroup(id, false)
	if g == nil {
		return []string{fmt.Sprintf("%s: none (%s)", id, errName(code))}
	}
	defer g.mu.Unlock()
	if g.kind == protocolConsumer {
		return h.consumerState(g)
	}
	cg := &g.classic
	out := []string{fmt.Sprintf("%s: %s gen=%d type=%q protocol=%q leader=%q", id, cg.state, cg.generation,
		cg.protocolType, cg.protocolName, cg.leader)}
	for _, m := range cg.sortedMembers() {
		line := "  member " + m.id
		if m.static() {
			line += " instance=" + m.instanceID
		}
		if m.joinWaiter != nil {
			line += " awaiting-join"
		}
		if m.syncWaiter != nil {
			line += " awaiting-sync"
		}
		if _, ok := cg.pendingSync[m.id]; ok {
			line += " pending-sync"
		}
		if len(m.assignment) > 0 {
			line += fmt.Sprintf(" assignment=%q", m.assignment)
		}
		out = append(out, line)
	}
	for _, id := range sortedKeys(cg.pending) {
		out = append(out, "  pending "+id)
	}
	return append(out, offsetLines(g)...)
}

func offsetLines(g *group) []string {
	var out []string
	for _, tp := range sortedPartitions(g.offsets) {
		o := g.offsets[tp]
		out = append(out, fmt.Sprintf("  offset %s=%d epoch=%d metadata=%q", tp, o.offset, o.leaderEpoch, o.metadata))
	}
	for _, pid := range slices.Sorted(maps.Keys(g.pending)) {
		for _, tp := range sortedPartitions(g.pending[pid]) {
			po := g.pending[pid][tp]
			line := fmt.Sprintf("  pending pid=%d %s=%d epoch=%d metadata=%q", pid, tp, po.offset, po.leaderEpoch, po.metadata)
			if po.beaten {
				line += " beaten"
			}
			out = append(out, line)
		}
	}
	return out
}

func (h *harness) describe(a args) []string {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Version = int16(a.int(h.t, "v", 6))
	req.Groups = a.pos
	var out []string
	for _, g := range h.c.DescribeGroups(context.Background(), req).Groups {
		out = append(out, fmt.Sprintf("%s: %s state=%s type=%q protocol=%q", g.Group, errName(g.ErrorCode), g.State,
			g.ProtocolType, g.Protocol))
		for _, m := range g.Members {
			out = append(out, fmt.Sprintf("  %s%s client=%s host=%s metadata=%q assignment=%q", m.MemberID,
				instanceSuffix(m.InstanceID), m.ClientID, m.ClientHost, m.ProtocolMetadata, m.MemberAssignment))
		}
	}
	return out
}

func (h *harness) list(a args) []string {
	req := kmsg.NewPtrListGroupsRequest()
	req.Version = 5
	if s, ok := a.opts["states"]; ok {
		req.StatesFilter = strings.Split(s, ",")
	}
	if s, ok := a.opts["types"]; ok {
		req.TypesFilter = strings.Split(s, ",")
	}
	resp := h.c.ListGroups(context.Background(), req)
	out := []string{"list: " + errName(resp.ErrorCode)}
	for _, g := range resp.Groups {
		out = append(out, fmt.Sprintf("  %s state=%s type=%q group-type=%s", g.Group, g.GroupState, g.ProtocolType, g.GroupType))
	}
	return out
}

// partitionArgs parses t-0=5 style arguments (value optional).
func (h *harness) partitionArgs(pos []string) ([]model.TopicPartition, []string) {
	var tps []model.TopicPartition
	var vals []string
	for _, p := range pos {
		k, v, _ := strings.Cut(p, "=")
		tp, err := model.ParseTopicPartition(k)
		if err != nil {
			h.t.Fatal(err)
		}
		tps = append(tps, tp)
		vals = append(vals, v)
	}
	return tps, vals
}

func (h *harness) commit(a args) []string {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = int16(a.int(h.t, "v", 9))
	req.Group = a.str("group", "g")
	if who := a.pos[0]; who != "-" {
		c := h.client(who)
		req.MemberID, req.Generation = c.memberID, c.generation
		if c.instanceID != "" {
			req.InstanceID = new(c.instanceID)
		}
	}
	req.MemberID = a.str("member", req.MemberID)
	req.Generation = int32(a.int(h.t, "gen", int64(req.Generation)))
	if d, ok := a.opts["retention"]; ok {
		r, _ := time.ParseDuration(d)
		req.RetentionTimeMillis = r.Milliseconds()
	}
	tps, vals := h.partitionArgs(a.pos[1:])
	for i, tp := range tps {
		off, err := strconv.ParseInt(vals[i], 10, 64)
		if err != nil {
			h.t.Fatal(err)
		}
		p := kmsg.NewOffsetCommitRequestTopicPartition()
		p.Partition, p.Offset, p.LeaderEpoch = tp.Partition, off, 7
		if m, ok := a.opts["meta"]; ok {
			p.Metadata = new(m)
		}
		t := kmsg.NewOffsetCommitRequestTopic()
		t.Topic = tp.Topic
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
	}
	resp := h.c.OffsetCommit(context.Background(), req)
	line := "commit:"
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			line += fmt.Sprintf(" %s-%d=%s", t.Topic, p.Partition, errName(p.ErrorCode))
		}
	}
	return []string{line}
}

func (h *harness) fetch(a args) []string {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = int16(a.int(h.t, "v", 8))
	req.RequireStable = a.str("stable", "") == "1"
	groups := strings.Split(a.str("groups", "g"), ",")
	tps, _ := h.partitionArgs(a.pos)
	var reqTopics []kmsg.OffsetFetchRequestTopic
	if len(tps) > 0 {
		reqTopics = []kmsg.OffsetFetchRequestTopic{}
	}
	for _, tp := range tps {
		i := slices.IndexFunc(reqTopics, func(t kmsg.OffsetFetchRequestTopic) bool { return t.Topic == tp.Topic })
		if i < 0 {
			reqTopics = append(reqTopics, kmsg.OffsetFetchRequestTopic{Topic: tp.Topic})
			i = len(reqTopics) - 1
		}
		reqTopics[i].Partitions = append(reqTopics[i].Partitions, tp.Partition)
	}
	var out []string
	if req.Version < 8 {
		req.Group, req.Topics = groups[0], reqTopics
		resp := h.c.OffsetFetch(context.Background(), req)
		line := fmt.Sprintf("fetch %s: %s", groups[0], errName(resp.ErrorCode))
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				line += formatFetched(t.Topic, p.Partition, p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode)
			}
		}
		return []string{line}
	}
	for _, g := range groups {
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = g
		if who, ok := a.opts["as"]; ok {
			c := h.client(who)
			rg.MemberID, rg.MemberEpoch = new(c.memberID), c.generation
		}
		rg.MemberEpoch = int32(a.int(h.t, "epoch", int64(rg.MemberEpoch)))
		if reqTopics != nil {
			rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{}
			for _, t := range reqTopics {
				rg.Topics = append(rg.Topics, kmsg.OffsetFetchRequestGroupTopic{Topic: t.Topic, Partitions: t.Partitions})
			}
		}
		req.Groups = append(req.Groups, rg)
	}
	for _, g := range h.c.OffsetFetch(context.Background(), req).Groups {
		line := fmt.Sprintf("fetch %s: %s", g.Group, errName(g.ErrorCode))
		for _, t := range g.Topics {
			for _, p := range t.Partitions {
				line += formatFetched(t.Topic, p.Partition, p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode)
			}
		}
		out = append(out, line)
	}
	return out
}

func formatFetched(topic string, partition int32, offset int64, epoch int32, metadata *string, code int16) string {
	s := fmt.Sprintf(" %s-%d=%d", topic, partition, offset)
	if epoch >= 0 {
		s += fmt.Sprintf("@%d", epoch)
	}
	if metadata != nil && *metadata != "" {
		s += fmt.Sprintf("(%s)", *metadata)
	}
	if code != 0 {
		s += "!" + errName(code)
	}
	return s
}

func (h *harness) offsetDelete(a args) []string {
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = a.str("group", "g")
	tps, _ := h.partitionArgs(a.pos)
	for _, tp := range tps {
		req.Topics = append(req.Topics, kmsg.OffsetDeleteRequestTopic{Topic: tp.Topic,
			Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: tp.Partition}}})
	}
	resp := h.c.OffsetDelete(context.Background(), req)
	line := "offset-delete: " + errName(resp.ErrorCode)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			line += fmt.Sprintf(" %s-%d=%s", t.Topic, p.Partition, errName(p.ErrorCode))
		}
	}
	return []string{line}
}

// dumpLog decodes the batches appended since the last dump.
func (h *harness) dumpLog() []string {
	var out []string
	for p := range h.cfg.OffsetsTopicNumPartitions {
		batches := h.log.Batches(p)
		for _, b := range batches[h.logged[p]:] {
			hdr, err := record.ParseHeader(b)
			if err != nil {
				h.t.Fatal(err)
			}
			line := fmt.Sprintf("batch partition=%d offset=%d records=%d", p, hdr.BaseOffset, hdr.NumRecords)
			if hdr.IsTransactional() {
				line += fmt.Sprintf(" txn pid=%d pepoch=%d seq=%d", hdr.ProducerID, hdr.ProducerEpoch, hdr.BaseSequence)
			}
			out = append(out, line)
			err = record.Iterate(b, 1<<20, func(r *record.Record) bool {
				if hdr.IsControl() {
					commit, _, err := record.ParseEndTxnMarker(r.Key, r.Value)
					out = append(out, fmt.Sprintf("  marker commit=%t err=%v", commit, err))
					return true
				}
				out = append(out, "  "+describeRecord(r.Key, r.Value))
				return true
			})
			if err != nil {
				h.t.Fatal(err)
			}
		}
		h.logged[p] = len(batches)
	}
	if len(out) == 0 {
		out = []string{"no new records"}
	}
	return out
}

// describeRecord renders a __consumer_offsets record for the scripts.
func describeRecord(key, value []byte) string {
	version, _ := keyVersion(key)
	switch version {
	case 0, 1:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(key); err != nil {
			return "bad offset key: " + err.Error()
		}
		s := fmt.Sprintf("offset %s %s-%d", k.Group, k.Topic, k.Partition)
		if value == nil {
			return s + " tombstone"
		}
		var v kmsg.OffsetCommitValue
		if err := v.ReadFrom(value); err != nil {
			return s + " bad value: " + err.Error()
		}
		s += fmt.Sprintf(" v%d offset=%d epoch=%d metadata=%q", v.Version, v.Offset, v.LeaderEpoch, v.Metadata)
		if v.Version == 1 {
			s += fmt.Sprintf(" expires=+%s", time.Duration(v.ExpireTimestamp-v.CommitTimestamp)*time.Millisecond)
		}
		return s
	case 2:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(key); err != nil {
			return "bad group key: " + err.Error()
		}
		s := "group " + k.Group
		if value == nil {
			return s + " tombstone"
		}
		var v kmsg.GroupMetadataValue
		if err := v.ReadFrom(value); err != nil {
			return s + " bad value: " + err.Error()
		}
		s += fmt.Sprintf(" v%d type=%q gen=%d protocol=%s leader=%s members=[", v.Version, v.ProtocolType,
			v.Generation, deref(v.Protocol), deref(v.Leader))
		for i, m := range v.Members {
			if i > 0 {
				s += " "
			}
			s += fmt.Sprintf("%s%s:%q", m.MemberID, instanceSuffix(m.InstanceID), m.Assignment)
		}
		return s + "]"
	}
	if version >= consumerGroupMetadataKeyType && version <= consumerGroupCurrentMemberKeyType {
		return describeConsumerRecord(version, key, value)
	}
	return fmt.Sprintf("key version %d", version)
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

func (h *harness) txnCommit(a args) []string {
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version = int16(a.int(h.t, "v", 5))
	req.Group = a.str("group", "g")
	req.TransactionalID = "txn"
	req.ProducerID = a.int(h.t, "pid", 1)
	req.ProducerEpoch = int16(a.int(h.t, "pepoch", 0))
	if who := a.pos[0]; who != "-" {
		c := h.client(who)
		req.MemberID, req.Generation = c.memberID, c.generation
		if c.instanceID != "" {
			req.InstanceID = new(c.instanceID)
		}
	}
	req.MemberID = a.str("member", req.MemberID)
	req.Generation = int32(a.int(h.t, "gen", int64(req.Generation)))
	tps, vals := h.partitionArgs(a.pos[1:])
	for i, tp := range tps {
		off, err := strconv.ParseInt(vals[i], 10, 64)
		if err != nil {
			h.t.Fatal(err)
		}
		p := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		p.Partition, p.Offset, p.LeaderEpoch = tp.Partition, off, 7
		if m, ok := a.opts["meta"]; ok {
			p.Metadata = new(m)
		}
		t := kmsg.NewTxnOffsetCommitRequestTopic()
		t.Topic = tp.Topic
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
	}
	resp := h.c.TxnOffsetCommit(context.Background(), req)
	line := "txn-commit:"
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			line += fmt.Sprintf(" %s-%d=%s", t.Topic, p.Partition, errName(p.ErrorCode))
		}
	}
	return []string{line}
}

// marker completes a transaction as the broker does: with write, first
// appends the COMMIT or ABORT marker to the partition.
func (h *harness) marker(a args, write bool) []string {
	commit := a.pos[0] == "commit"
	pid, pepoch := a.int(h.t, "pid", 1), int16(a.int(h.t, "pepoch", 0))
	partition := int32(a.int(h.t, "partitions", 0))
	if write {
		rec := record.EndTxnMarker(commit, 0)
		b := record.Batch{Control: true, Transactional: true, ProducerID: pid, ProducerEpoch: pepoch,
			BaseSequence: record.NoSequence, Records: []record.Record{rec}}
		raw, err := b.AppendTo(nil)
		if err != nil {
			h.t.Fatal(err)
		}
		if err := h.log.Append(context.Background(), partition, raw); err != nil {
			h.t.Fatal(err)
		}
	}
	h.c.CompleteTransaction(partition, pid, pepoch, commit)
	return nil
}
