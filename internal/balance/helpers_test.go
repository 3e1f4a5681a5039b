package balance

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/scripttest"
)

var testNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// parseState reads a cluster from script lines:
//
//	broker 1 rack=a [down[=45m]] [draining]
//	t-0 replicas=1,2,3 [isr=1,2] [min-isr=2] [bytes=1000]
//	topic t partitions=6 rf=2 brokers=1,2,3 [min-isr=1] [bytes=100]
//
// An ISR left out is the replicas on live brokers; a topic line places its
// partitions round robin over brokers.
func parseState(lines []string) (ClusterState, error) {
	st := ClusterState{Now: testNow}
	alive := map[model.NodeID]bool{}
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		a := scripttest.ParseArgs(f[1:])
		switch {
		case f[0] == "broker":
			id, err := strconv.Atoi(a.Pos[0])
			if err != nil {
				return st, err
			}
			b := Broker{ID: model.NodeID(id), Rack: a.Opts["rack"], Alive: true, Draining: slices.Contains(a.Pos, "draining")}
			if d, ok := a.Opts["down"]; ok || slices.Contains(a.Pos, "down") {
				b.Alive = false
				if ok {
					dur, err := time.ParseDuration(d)
					if err != nil {
						return st, err
					}
					b.DownSince = testNow.Add(-dur)
				}
			}
			alive[b.ID] = b.Alive
			st.Brokers = append(st.Brokers, b)
		case f[0] == "topic":
			n, _ := strconv.Atoi(a.Opts["partitions"])
			rf, _ := strconv.Atoi(a.Opts["rf"])
			over := ids(a.Opts["brokers"])
			for i := range n {
				var reps []model.NodeID
				for j := range rf {
					reps = append(reps, over[(i+j)%len(over)])
				}
				p, err := partition(model.TopicPartition{Topic: a.Pos[0], Partition: int32(i)}, reps, a, alive)
				if err != nil {
					return st, err
				}
				st.Partitions = append(st.Partitions, p)
			}
		default:
			tp, err := model.ParseTopicPartition(f[0])
			if err != nil {
				return st, err
			}
			p, err := partition(tp, ids(a.Opts["replicas"]), a, alive)
			if err != nil {
				return st, err
			}
			st.Partitions = append(st.Partitions, p)
		}
	}
	return st, nil
}

func partition(tp model.TopicPartition, reps []model.NodeID, a scripttest.Args, alive map[model.NodeID]bool) (Partition, error) {
	p := Partition{TopicPartition: tp, Replicas: reps, MinISR: 1}
	// offline=B[:D],...: broker B's replica is on a failed log directory,
	// since D ago (unknown without D).
	if v, ok := a.Opts["offline"]; ok {
		for _, o := range strings.Split(v, ",") {
			b, d, timed := strings.Cut(o, ":")
			id, err := strconv.Atoi(b)
			if err != nil {
				return p, err
			}
			or := OfflineReplica{Broker: model.NodeID(id)}
			if timed {
				dur, err := time.ParseDuration(d)
				if err != nil {
					return p, err
				}
				or.Since = testNow.Add(-dur)
			}
			p.Offline = append(p.Offline, or)
		}
	}
	if v, ok := a.Opts["isr"]; ok {
		p.ISR = ids(v)
	} else {
		for _, r := range reps {
			if alive[r] && !slices.ContainsFunc(p.Offline, func(o OfflineReplica) bool { return o.Broker == r }) {
				p.ISR = append(p.ISR, r)
			}
		}
	}
	if len(reps) > 0 {
		p.Leader = reps[0]
	}
	var err error
	if v, ok := a.Opts["min-isr"]; ok {
		p.MinISR, err = strconv.Atoi(v)
	}
	if v, ok := a.Opts["bytes"]; ok && err == nil {
		p.Bytes, err = strconv.ParseInt(v, 10, 64)
	}
	return p, err
}

func ids(s string) []model.NodeID {
	var out []model.NodeID
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, model.NodeID(n))
		}
	}
	return out
}

// parseOptions starts from DefaultOptions and applies a command's options.
func parseOptions(a scripttest.Args) (Options, error) {
	o := DefaultOptions()
	for k, v := range a.Opts {
		var err error
		switch k {
		case "max-moves":
			o.MaxMoves, err = strconv.Atoi(v)
		case "max-leader-moves":
			o.MaxLeaderMoves, err = strconv.Atoi(v)
		case "replica-spread":
			o.ReplicaSpread, err = strconv.Atoi(v)
		case "leader-spread":
			o.LeaderSpread, err = strconv.Atoi(v)
		case "bytes-spread":
			o.BytesSpread, err = strconv.ParseFloat(v, 64)
		case "down-timeout":
			o.DownTimeout, err = time.ParseDuration(v)
		case "count-added":
			o.CountAddedReplicas, err = strconv.ParseBool(v)
		case "in-progress":
			for _, s := range strings.Split(v, ",") {
				tp, perr := model.ParseTopicPartition(s)
				err = perr
				o.InProgress = append(o.InProgress, tp)
			}
		default:
			err = fmt.Errorf("unknown option %s", k)
		}
		if err != nil {
			return o, err
		}
	}
	return o, nil
}

// applyPlan is the state once a plan's moves are done: a reassignment's
// target replicas are all in sync (on live brokers) and the first one
// leads; a leader move reorders the replicas and the ISR stays.
func applyPlan(st ClusterState, plan Plan) ClusterState {
	alive := map[model.NodeID]bool{}
	for _, b := range st.Brokers {
		alive[b.ID] = b.Alive
	}
	moves := map[model.TopicPartition]Move{}
	for _, m := range plan.Moves {
		moves[m.TopicPartition] = m
	}
	out := st
	out.Partitions = make([]Partition, len(st.Partitions))
	for i, p := range st.Partitions {
		p.Replicas = slices.Clone(p.Replicas)
		p.ISR = slices.Clone(p.ISR)
		if m, ok := moves[p.TopicPartition]; ok {
			p.Replicas = slices.Clone(m.To)
			p.Leader = m.Leader
			// A replica that left a failed directory and came back is on
			// a healthy one.
			p.Offline = slices.DeleteFunc(slices.Clone(p.Offline), func(o OfflineReplica) bool {
				return !slices.Contains(m.From, o.Broker) || !slices.Contains(m.To, o.Broker)
			})
			if m.Kind == MoveReplicas {
				p.ISR = nil
				for _, r := range m.To {
					if alive[r] && !slices.ContainsFunc(p.Offline, func(o OfflineReplica) bool { return o.Broker == r }) {
						p.ISR = append(p.ISR, r)
					}
				}
			}
		}
		out.Partitions[i] = p
	}
	return out
}
