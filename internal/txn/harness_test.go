package txn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// harness drives a Coordinator for the scripts: one MemLog that outlives
// restarts, a manual clock, producer IDs from 1000 up, and a marker writer
// that records each call (or fails, when told to).
type harness struct {
	t     *testing.T
	clock *clock.Manual
	log   *MemLog
	c     *Coordinator

	mu          sync.Mutex
	nextPID     int64
	markers     []string
	failMarkers bool
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, clock: clock.NewManual(time.UnixMilli(1_000_000)), log: NewMemLog(), nextPID: 1000}
	h.c = h.newCoordinator()
	return h
}

func (h *harness) newCoordinator() *Coordinator {
	cfg := DefaultConfig()
	cfg.NumPartitions = 3
	c := New(cfg, Deps{
		Log: h.log,
		AllocateProducerID: func(context.Context) (int64, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.nextPID++
			return h.nextPID - 1, nil
		},
		WriteMarkers:   h.writeMarkers,
		GroupPartition: func(group string) int32 { return int32(len(group)) },
		TopicExists:    func(topic string, _ int32) bool { return topic != "missing" },
		Clock:          h.clock,
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	for p := range cfg.NumPartitions {
		if err := c.Load(context.Background(), p); err != nil {
			h.t.Fatal(err)
		}
	}
	c.recovering.Wait()
	return c
}

func (h *harness) writeMarkers(_ context.Context, pid int64, epoch int16, commit bool, coordinatorEpoch int32,
	tps []model.TopicPartition) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	kind := "ABORT"
	if commit {
		kind = "COMMIT"
	}
	var names []string
	for _, tp := range tps {
		names = append(names, tp.String())
	}
	if h.failMarkers {
		h.markers = append(h.markers, fmt.Sprintf("markers failed: %s pid=%d epoch=%d [%s]", kind, pid, epoch, strings.Join(names, " ")))
		return errors.New("partition unavailable")
	}
	h.markers = append(h.markers, fmt.Sprintf("markers: %s pid=%d epoch=%d [%s]", kind, pid, epoch, strings.Join(names, " ")))
	return nil
}

func (h *harness) close() { h.c.Stop() }

// run executes one script command and returns its output, followed by the
// markers written meanwhile. Commands:
//
//	init ID [timeout=MS] [pid=N epoch=N] [v=N]   InitProducerId (v defaults to 5)
//	add ID PID EPOCH TOPIC-P... [v=N]            AddPartitionsToTxn v0-3 (default 3)
//	add-broker ID PID EPOCH TOPIC-P... [verify]  AddPartitionsToTxn v5 from a leader
//	offsets ID PID EPOCH GROUP [v=N]             AddOffsetsToTxn
//	end ID PID EPOCH commit|abort [v=N]          EndTxn (default v4; v5 is KIP-890)
//	describe ID...                               DescribeTransactions
//	list [states=A,B] [pids=N,M] [duration=MS]   ListTransactions v1
//	advance DURATION                             moves the clock
//	sweep                                        AbortTimedOut
//	expire                                       RemoveExpired
//	restart                                      a new coordinator over the same log
//	fail-markers on|off                          marker writes fail or succeed
//	fail-log on|off                              appends to the log fail or succeed
func (h *harness) run(command string) []string {
	words := strings.Fields(command)
	kv, bare := argMap(words[1:])
	version := func(def int16) int16 {
		if v, ok := kv["v"]; ok {
			return int16(mustInt(h.t, v))
		}
		return def
	}
	var out []string
	switch words[0] {
	case "init":
		req := kmsg.NewPtrInitProducerIDRequest()
		req.Version = version(5)
		req.TransactionalID = new(bare[0])
		req.TransactionTimeoutMillis = 60000
		if v, ok := kv["timeout"]; ok {
			req.TransactionTimeoutMillis = int32(mustInt(h.t, v))
		}
		if v, ok := kv["pid"]; ok {
			req.ProducerID, req.ProducerEpoch = mustInt(h.t, v), int16(mustInt(h.t, kv["epoch"]))
		}
		r := h.c.InitProducerID(context.Background(), req)
		out = append(out, fmt.Sprintf("init %s: %s pid=%d epoch=%d", bare[0], errName(r.ErrorCode), r.ProducerID, r.ProducerEpoch))
	case "add", "add-broker":
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		id, pid, epoch := bare[0], mustInt(h.t, bare[1]), int16(mustInt(h.t, bare[2]))
		tps := h.parseTPs(bare[3:])
		if words[0] == "add" {
			req.Version = version(3)
			req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
			for _, tp := range tps {
				req.Topics = append(req.Topics, kmsg.AddPartitionsToTxnRequestTopic{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
			}
			r := h.c.AddPartitionsToTxn(req)
			line := "add:"
			for _, t := range r.Topics {
				for _, p := range t.Partitions {
					line += fmt.Sprintf(" %s-%d=%s", t.Topic, p.Partition, errName(p.ErrorCode))
				}
			}
			out = append(out, line)
			break
		}
		req.Version = 5
		tx := kmsg.AddPartitionsToTxnRequestTransaction{TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch}
		_, tx.VerifyOnly = kv["verify"]
		if !tx.VerifyOnly && len(tps) > 0 && tps[len(tps)-1].Topic == "verify" {
			tx.VerifyOnly, tps = true, tps[:len(tps)-1]
		}
		for _, tp := range tps {
			tx.Topics = append(tx.Topics, kmsg.AddPartitionsToTxnRequestTransactionTopic{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
		}
		req.Transactions = append(req.Transactions, tx)
		r := h.c.AddPartitionsToTxn(req)
		line := "add-broker:"
		for _, t := range r.Transactions[0].Topics {
			for _, p := range t.Partitions {
				line += fmt.Sprintf(" %s-%d=%s", t.Topic, p.Partition, errName(p.ErrorCode))
			}
		}
		out = append(out, line)
	case "offsets":
		req := kmsg.NewPtrAddOffsetsToTxnRequest()
		req.Version = version(3)
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = bare[0], mustInt(h.t, bare[1]), int16(mustInt(h.t, bare[2]))
		req.Group = bare[3]
		r := h.c.AddOffsetsToTxn(req)
		out = append(out, "offsets: "+errName(r.ErrorCode))
	case "end":
		req := kmsg.NewPtrEndTxnRequest()
		req.Version = version(4)
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = bare[0], mustInt(h.t, bare[1]), int16(mustInt(h.t, bare[2]))
		req.Commit = bare[3] == "commit"
		r := h.c.EndTxn(context.Background(), req)
		line := "end: " + errName(r.ErrorCode)
		if req.Version >= 5 {
			line += fmt.Sprintf(" pid=%d epoch=%d", r.ProducerID, r.ProducerEpoch)
		}
		out = append(out, line)
	case "describe":
		req := kmsg.NewPtrDescribeTransactionsRequest()
		req.TransactionalIDs = bare
		r := h.c.DescribeTransactions(req)
		for _, s := range r.TransactionStates {
			if s.ErrorCode != 0 {
				out = append(out, fmt.Sprintf("%s: %s", s.TransactionalID, errName(s.ErrorCode)))
				continue
			}
			var tps []string
			for _, t := range s.Topics {
				for _, p := range t.Partitions {
					tps = append(tps, fmt.Sprintf("%s-%d", t.Topic, p))
				}
			}
			start := "-"
			if s.StartTimestamp >= 0 {
				start = fmt.Sprint(s.StartTimestamp - 1_000_000)
			}
			out = append(out, fmt.Sprintf("%s: %s pid=%d epoch=%d timeout=%d start=%s [%s]", s.TransactionalID, s.State,
				s.ProducerID, s.ProducerEpoch, s.TimeoutMillis, start, strings.Join(tps, " ")))
		}
	case "list":
		req := kmsg.NewPtrListTransactionsRequest()
		req.Version = 1
		if v, ok := kv["states"]; ok {
			req.StateFilters = strings.Split(v, ",")
		}
		if v, ok := kv["pids"]; ok {
			for _, p := range strings.Split(v, ",") {
				req.ProducerIDFilters = append(req.ProducerIDFilters, mustInt(h.t, p))
			}
		}
		req.DurationFilterMillis = -1
		if v, ok := kv["duration"]; ok {
			req.DurationFilterMillis = mustInt(h.t, v)
		}
		r := h.c.ListTransactions(req)
		line := "list: " + errName(r.ErrorCode)
		if len(r.UnknownStateFilters) > 0 {
			line += " unknown=" + strings.Join(r.UnknownStateFilters, ",")
		}
		out = append(out, line)
		for _, s := range r.TransactionStates {
			out = append(out, fmt.Sprintf("  %s pid=%d %s", s.TransactionalID, s.ProducerID, s.TransactionState))
		}
	case "advance":
		d, err := time.ParseDuration(bare[0])
		if err != nil {
			h.t.Fatal(err)
		}
		h.clock.Advance(d)
		out = append(out, "ok")
	case "sweep":
		h.c.AbortTimedOut()
		out = append(out, "ok")
	case "expire":
		h.c.RemoveExpired()
		out = append(out, "ok")
	case "restart":
		h.c.Stop()
		h.c = h.newCoordinator()
		out = append(out, "ok")
	case "fail-markers":
		h.mu.Lock()
		h.failMarkers = bare[0] == "on"
		h.mu.Unlock()
		out = append(out, "ok")
	case "fail-log":
		var err error
		if bare[0] == "on" {
			err = errors.New("disk gone")
		}
		h.log.FailAppends(err)
		out = append(out, "ok")
	default:
		h.t.Fatalf("unknown command %q", command)
	}
	h.mu.Lock()
	out = append(out, h.markers...)
	h.markers = nil
	h.mu.Unlock()
	return out
}

func (h *harness) parseTPs(words []string) []model.TopicPartition {
	var out []model.TopicPartition
	for _, w := range words {
		if w == "verify" {
			out = append(out, model.TopicPartition{Topic: "verify"})
			continue
		}
		tp, err := model.ParseTopicPartition(w)
		if err != nil {
			h.t.Fatal(err)
		}
		out = append(out, tp)
	}
	return out
}
