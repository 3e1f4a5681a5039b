package assign

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Tasks is the application's task set as the leader's runtime computes it
// from its topology and the cluster's metadata.
type Tasks struct {
	// Partitions lists every task with its source partitions (the task
	// set is its keys). A partition belongs to one task.
	Partitions map[TaskID][]TopicPartition
	// Stateful marks the tasks with state stores.
	Stateful map[TaskID]bool
}

// TaskSource is the runtime's side of the leader: before every
// assignment it answers the tasks for the members' subscribed topics
// (topic -> partition count, for the topics the leader's metadata has;
// a missing topic is absent). Kafka Streams' leader creates the
// repartition and changelog topics at this point, and so may this.
//
// An AssignmentError answer (ErrIncompleteSourceTopicMetadata for a
// missing or not co-partitioned source topic) goes to every member, which
// stops; any other error fails this round, and the members join again.
type TaskSource interface {
	Tasks(ctx context.Context, topics map[string]int32) (Tasks, error)
}

// Config configures one member's balancer (one per kgo client: the
// subscription is per member).
type Config struct {
	// ProcessID names the application instance; the threads of one
	// instance share it. Required.
	ProcessID string
	// Endpoint is the instance's host:port for interactive queries, or "".
	Endpoint string
	// PrevTasks answers, at each join, this member's tasks before the
	// rebalance and the process's offset sums (see Subscription). Nil
	// means none.
	PrevTasks func() (active, standby []TaskID, offsetSums map[TaskID]int64)
	// Source answers the tasks when this member leads. Required: any
	// member may become the leader.
	Source TaskSource
	// NumStandbyReplicas is Kafka Streams' num.standby.replicas.
	NumStandbyReplicas int
	// Context bounds the Source calls (their deadline is TaskTimeout
	// after the call); Background when nil.
	Context context.Context
	// TaskTimeout caps one Source call; 30s when zero.
	TaskTimeout time.Duration
	// OnAssignment, if set, receives every assignment this member gets,
	// before franz-go reports the partitions as assigned.
	OnAssignment func(MemberUserData)
	// Logger receives the leader's assignment failures; slog.Default when nil.
	Logger *slog.Logger
}

// Balancer is a kgo.GroupBalancer for the "samsa-stream" protocol. It is
// eager (not cooperative): every member gives up all its partitions
// before it joins, so the runtime closes or suspends all its tasks at
// once and a task never runs on two members, at the price of a pause in
// processing during each rebalance (docs/DESIGN-streams.md, "assign").
type Balancer struct {
	cfg Config

	mu   sync.Mutex
	last MemberUserData // guarded by mu
}

var _ kgo.GroupBalancer = (*Balancer)(nil)

// NewBalancer checks the configuration and returns the member's balancer;
// pass it to kgo.Balancers.
func NewBalancer(cfg Config) (*Balancer, error) {
	switch {
	case cfg.ProcessID == "":
		return nil, errors.New("assign: a process ID is required")
	case len(cfg.ProcessID) > 1<<15-1 || len(cfg.Endpoint) > 1<<15-1:
		return nil, errors.New("assign: process ID or endpoint longer than 32767 bytes")
	case cfg.Source == nil:
		return nil, errors.New("assign: a TaskSource is required: any member may lead")
	case cfg.NumStandbyReplicas < 0:
		return nil, fmt.Errorf("assign: num.standby.replicas %d is negative", cfg.NumStandbyReplicas)
	case cfg.TaskTimeout < 0:
		return nil, fmt.Errorf("assign: task timeout %v is negative", cfg.TaskTimeout)
	}
	if cfg.Context == nil {
		cfg.Context = context.Background()
	}
	if cfg.TaskTimeout == 0 {
		cfg.TaskTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Logger = cfg.Logger.With("component", "streams-assign")
	return &Balancer{cfg: cfg}, nil
}

func (*Balancer) ProtocolName() string { return ProtocolName }

// IsCooperative is false: see Balancer.
func (*Balancer) IsCooperative() bool { return false }

// JoinGroupMetadata is the consumer protocol's subscription (version 1,
// with the owned partitions) carrying this member's Subscription.
func (b *Balancer) JoinGroupMetadata(topics []string, current map[string][]int32, _ int32) []byte {
	sub := Subscription{ProcessID: b.cfg.ProcessID, Endpoint: b.cfg.Endpoint}
	if b.cfg.PrevTasks != nil {
		sub.PrevActive, sub.PrevStandby, sub.OffsetSums = b.cfg.PrevTasks()
	}
	userData, err := EncodeSubscription(sub)
	if err != nil { // NewBalancer checked the only strings that could fail
		panic(err)
	}
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Version = 1
	meta.Topics = topics
	meta.UserData = userData
	for _, topic := range sortedKeys(current) {
		owned := kmsg.NewConsumerMemberMetadataOwnedPartition()
		owned.Topic = topic
		owned.Partitions = current[topic]
		meta.OwnedPartitions = append(meta.OwnedPartitions, owned)
	}
	return meta.AppendTo(nil)
}

// ParseSyncAssignment answers the partitions of this member's active
// tasks and keeps its user data for LastAssignment and OnAssignment. A
// leader's error code comes with no partitions.
func (b *Balancer) ParseSyncAssignment(assignment []byte) (map[string][]int32, error) {
	var ca kmsg.ConsumerMemberAssignment
	if err := ca.ReadFrom(assignment); err != nil {
		return nil, fmt.Errorf("assign: decode consumer assignment: %w", err)
	}
	ud, err := DecodeAssignment(ca.UserData)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.last = ud
	b.mu.Unlock()
	if b.cfg.OnAssignment != nil {
		b.cfg.OnAssignment(ud)
	}
	partitions := make(map[string][]int32, len(ca.Topics))
	if ud.ErrorCode != ErrNone {
		return partitions, nil
	}
	for _, t := range ca.Topics {
		partitions[t.Topic] = t.Partitions
	}
	return partitions, nil
}

// LastAssignment is the user data of this member's latest assignment.
func (b *Balancer) LastAssignment() MemberUserData {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}

// MemberBalancer decodes the members' subscriptions (on the leader).
func (b *Balancer) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	cb, err := kgo.NewConsumerBalancer(leaderBalance{b}, members)
	if err != nil {
		return nil, nil, fmt.Errorf("assign: %w", err)
	}
	return cb, cb.MemberTopics(), nil
}

// leaderBalance is the leader's balance step, run by kgo's
// ConsumerBalancer over the decoded members.
type leaderBalance struct{ b *Balancer }

func (lb leaderBalance) Balance(cb *kgo.ConsumerBalancer, topics map[string]int32) kgo.IntoSyncAssignment {
	plan, err := lb.b.balance(cb, topics)
	if err != nil {
		cb.SetError(err)
		return nil
	}
	return plan
}

// syncPlan is the leader's answer: each member's consumer assignment.
type syncPlan []kmsg.SyncGroupRequestGroupAssignment

func (p syncPlan) IntoSyncAssignment() []kmsg.SyncGroupRequestGroupAssignment { return p }

// leaderMember is one member as the leader decoded it.
type leaderMember struct {
	id  string
	sub Subscription
}

func (b *Balancer) balance(cb *kgo.ConsumerBalancer, topics map[string]int32) (syncPlan, error) {
	members, code := decodeMembers(cb, b.cfg.Logger)
	if code != ErrNone {
		return errorPlan(members, code)
	}
	ctx, cancel := context.WithTimeout(b.cfg.Context, b.cfg.TaskTimeout)
	defer cancel()
	tasks, err := b.cfg.Source.Tasks(ctx, topics)
	if errors.As(err, &code) {
		b.cfg.Logger.Error("assignment failed: sending the error to every member", "err", err)
		return errorPlan(members, code)
	}
	if err != nil {
		return nil, fmt.Errorf("assign: tasks: %w", err)
	}
	in := buildInput(members, tasks, b.cfg.NumStandbyReplicas)
	out, err := Assign(in)
	if err != nil {
		b.cfg.Logger.Error("assignment failed: sending ASSIGNMENT_ERROR to every member", "err", err)
		return errorPlan(members, ErrAssignment)
	}
	return memberPlan(members, tasks, out)
}

// decodeMembers reads every member's subscription; one that this build
// cannot read fails the whole assignment with a code every member sees.
func decodeMembers(cb *kgo.ConsumerBalancer, log *slog.Logger) ([]leaderMember, AssignmentError) {
	var out []leaderMember
	code := ErrNone
	cb.EachMember(func(m *kmsg.JoinGroupResponseMember, meta *kmsg.ConsumerMemberMetadata) {
		sub, err := DecodeSubscription(meta.UserData)
		if err == nil && sub.ProcessID == "" {
			err = errors.New("empty process ID")
		}
		if err != nil {
			log.Error("cannot read a member's subscription", "member", m.MemberID, "err", err)
			if code == ErrNone || errors.Is(err, ErrUnknownVersion) {
				code = ErrAssignment
				if errors.Is(err, ErrUnknownVersion) {
					code = ErrVersionProbing
				}
			}
		}
		out = append(out, leaderMember{id: m.MemberID, sub: sub})
	})
	return out, code
}

// buildInput groups the members into clients by process ID. A process's
// offset sums are the freshest any of its members reported.
func buildInput(members []leaderMember, tasks Tasks, standbys int) Input {
	in := Input{Stateful: tasks.Stateful, NumStandbyReplicas: standbys}
	for t := range tasks.Partitions {
		in.Tasks = append(in.Tasks, t)
	}
	byProcess := map[string]*Client{}
	var order []string
	for _, m := range members {
		c, ok := byProcess[m.sub.ProcessID]
		if !ok {
			c = &Client{ProcessID: m.sub.ProcessID, OffsetSums: map[TaskID]int64{}}
			byProcess[m.sub.ProcessID] = c
			order = append(order, m.sub.ProcessID)
		}
		c.Members = append(c.Members, Member{ID: m.id, PrevActive: m.sub.PrevActive, PrevStandby: m.sub.PrevStandby})
		for t, sum := range m.sub.OffsetSums {
			if old, seen := c.OffsetSums[t]; !seen || fresher(sum, old) {
				c.OffsetSums[t] = sum
			}
		}
	}
	for _, p := range order {
		in.Clients = append(in.Clients, *byProcess[p])
	}
	return in
}

func fresher(a, b int64) bool {
	return a == LatestOffset || b != LatestOffset && a > b
}

// memberPlan turns the assignment into each member's partitions and user
// data, with every endpoint's partitions for interactive queries.
func memberPlan(members []leaderMember, tasks Tasks, out Assignment) (syncPlan, error) {
	endpoints := processEndpoints(members)
	activeHosts, standbyHosts := map[string][]TopicPartition{}, map[string][]TopicPartition{}
	byMember := map[string]MemberAssignment{}
	for _, c := range out.Clients {
		if e := endpoints[c.ProcessID]; e != "" {
			activeHosts[e] = partitionsOf(tasks, c.Active)
			standbyHosts[e] = partitionsOf(tasks, c.Standby)
		}
		for _, m := range c.Members {
			byMember[m.ID] = m
		}
	}
	var plan syncPlan
	for _, m := range members {
		ma := byMember[m.id]
		ud := MemberUserData{LatestSupportedVersion: UserDataVersion, Active: ma.Active, Standby: ma.Standby,
			ActiveHosts: activeHosts, StandbyHosts: standbyHosts}
		a, err := consumerAssignment(partitionsOf(tasks, ma.Active), ud)
		if err != nil {
			return nil, err
		}
		plan = append(plan, kmsg.SyncGroupRequestGroupAssignment{MemberID: m.id, MemberAssignment: a})
	}
	return plan, nil
}

// processEndpoints answers each process's endpoint: the first non-empty
// one of its members in member ID order.
func processEndpoints(members []leaderMember) map[string]string {
	sorted := slices.Clone(members)
	slices.SortFunc(sorted, func(a, b leaderMember) int { return cmp.Compare(a.id, b.id) })
	out := map[string]string{}
	for _, m := range sorted {
		if out[m.sub.ProcessID] == "" {
			out[m.sub.ProcessID] = m.sub.Endpoint
		}
	}
	return out
}

func errorPlan(members []leaderMember, code AssignmentError) (syncPlan, error) {
	var plan syncPlan
	for _, m := range members {
		a, err := consumerAssignment(nil, MemberUserData{LatestSupportedVersion: UserDataVersion, ErrorCode: code})
		if err != nil {
			return nil, err
		}
		plan = append(plan, kmsg.SyncGroupRequestGroupAssignment{MemberID: m.id, MemberAssignment: a})
	}
	return plan, nil
}

func partitionsOf(tasks Tasks, ts []TaskID) []TopicPartition {
	var out []TopicPartition
	for _, t := range ts {
		out = append(out, tasks.Partitions[t]...)
	}
	slices.SortFunc(out, TopicPartition.compare)
	return out
}

func consumerAssignment(tps []TopicPartition, ud MemberUserData) ([]byte, error) {
	userData, err := EncodeAssignment(ud)
	if err != nil {
		return nil, err
	}
	ca := kmsg.NewConsumerMemberAssignment()
	ca.UserData = userData
	for _, tp := range tps { // sorted by topic
		if n := len(ca.Topics); n == 0 || ca.Topics[n-1].Topic != tp.Topic {
			ca.Topics = append(ca.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: tp.Topic})
		}
		last := &ca.Topics[len(ca.Topics)-1]
		last.Partitions = append(last.Partitions, tp.Partition)
	}
	return ca.AppendTo(nil), nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
