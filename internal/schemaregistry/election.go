package schemaregistry

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/task"
)

// election picks the one instance of a store that writes, as Confluent's
// registry does with its group: every instance joins a Kafka group
// (Config.GroupID) with its URL in its join metadata; the group's leader
// names the primary in every member's assignment, keeping the current one
// while it is still a member so that a joining instance does not move
// writes. Nothing is consumed through the group: it is only the
// membership, with the coordinator's session timeouts deciding when a
// silent primary is gone.
//
// This rides franz-go's classic group protocol ("consumer" protocol type,
// protocol name samsa-schema-registry), not Confluent's "sr" type: Samsa
// and Confluent instances cannot share one group.
type election struct {
	url string
	log *slog.Logger
	cl  *kgo.Client

	changed task.Broadcast
	mu      sync.Mutex
	primary string // guarded by mu; "" while unknown
}

// electionSessionTimeout bounds how long writes stop after the primary
// dies without leaving the group (kill -9, a lost machine).
const electionSessionTimeout = 10 * time.Second

func newElection(url, group, topic string, opts []kgo.Opt, log *slog.Logger) (*election, error) {
	e := &election{url: url, log: log}
	cl, err := kgo.NewClient(append(append([]kgo.Opt{}, opts...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.Balancers(electionBalancer{e}),
		// Confluent's kafkagroup.session.timeout.ms and
		// kafkagroup.heartbeat.interval.ms defaults: a primary killed
		// without leaving the group is replaced once its session
		// expires, 10 s on, not after franz-go's 45 s default.
		kgo.SessionTimeout(electionSessionTimeout),
		kgo.HeartbeatInterval(3*time.Second),
		// A lost session may have a new primary elected without this
		// instance: stop writing until the next assignment says otherwise.
		kgo.OnPartitionsLost(func(context.Context, *kgo.Client, map[string][]int32) { e.set("") }),
		kgo.DisableAutoCommit(),
		// A member has nothing to finish before it rejoins, so a
		// rebalance need not wait long for one that died: with the
		// clients' 60s default, every JoinGroup parked on the
		// coordinator would wait out a crashed instance for a minute.
		kgo.RebalanceTimeout(10*time.Second),
	)...)
	if err != nil {
		return nil, fmt.Errorf("schemaregistry: election client: %w", err)
	}
	e.cl = cl
	return e, nil
}

// start joins the group: franz-go joins once it is asked for records,
// and nothing is ever assigned, so one poll that returns at once is all.
func (e *election) start(ctx context.Context) {
	pollCtx, cancel := context.WithCancel(ctx)
	cancel()
	e.cl.PollFetches(pollCtx)
}

// close leaves the group, waiting at most 5s for the coordinator (one
// that is down must not hold up a shutdown: the session then times out
// on its own), and closes the client.
func (e *election) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = e.cl.LeaveGroupContext(ctx) // a leave not answered ends with the session
	e.cl.Close()
}

func (e *election) set(primary string) {
	e.mu.Lock()
	changed := e.primary != primary
	e.primary = primary
	e.mu.Unlock()
	if changed {
		e.log.Info("schema registry primary", "primary", primary, "self", primary == e.url)
		e.changed.Notify()
	}
}

// current is the primary's URL, "" while unknown.
func (e *election) current() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.primary
}

// waitKnown waits until a primary is known.
func (e *election) waitKnown(ctx context.Context) error {
	for {
		ch := e.changed.Wait()
		if e.current() != "" {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("schemaregistry: no primary elected: %w", ctx.Err())
		}
	}
}

// electionBalancer is the group protocol: members' metadata and the
// assignments are small JSON objects.
type electionBalancer struct{ e *election }

type memberMetadata struct {
	URL string `json:"url"`
}

type primaryAssignment struct {
	Primary string `json:"primary"`
}

func (electionBalancer) ProtocolName() string { return "samsa-schema-registry" }
func (electionBalancer) IsCooperative() bool  { return false }

func (b electionBalancer) JoinGroupMetadata([]string, map[string][]int32, int32) []byte {
	raw, _ := json.Marshal(memberMetadata{URL: b.e.url}) // a struct of a string always marshals
	return raw
}

func (b electionBalancer) ParseSyncAssignment(raw []byte) (map[string][]int32, error) {
	var a primaryAssignment
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("schemaregistry: election assignment %q: %w", raw, err)
	}
	b.e.set(a.Primary)
	return nil, nil
}

// MemberBalancer runs on the group's leader: the current primary stays if
// it is still a member, else the member with the smallest URL takes over.
func (b electionBalancer) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	var urls []string
	for _, m := range members {
		var md memberMetadata
		if err := json.Unmarshal(m.ProtocolMetadata, &md); err != nil || md.URL == "" {
			continue // a member we cannot read is never primary
		}
		urls = append(urls, md.URL)
	}
	if len(urls) == 0 {
		return nil, nil, fmt.Errorf("schemaregistry: no group member has a URL")
	}
	sort.Strings(urls)
	primary := urls[0]
	if cur := b.e.current(); cur != "" {
		for _, u := range urls {
			if u == cur {
				primary = cur
			}
		}
	}
	return primaryPlan{members: members, primary: primary}, map[string]struct{}{}, nil
}

type primaryPlan struct {
	members []kmsg.JoinGroupResponseMember
	primary string
}

func (p primaryPlan) Balance(map[string]int32) kgo.IntoSyncAssignment { return p }

func (p primaryPlan) IntoSyncAssignment() []kmsg.SyncGroupRequestGroupAssignment {
	raw, _ := json.Marshal(primaryAssignment{Primary: p.primary})
	out := make([]kmsg.SyncGroupRequestGroupAssignment, 0, len(p.members))
	for _, m := range p.members {
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = m.MemberID, raw
		out = append(out, a)
	}
	return out
}
