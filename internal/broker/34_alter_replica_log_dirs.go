package broker

// AlterReplicaLogDirs (key 34), versions 0-2 (v1 is v0; v2 is flexible).
//
// Moves this broker's replicas between its log directories (JBOD,
// logdirs.go) while they serve, as Kafka's ReplicaManager.alterReplicaLogDirs
// and ReplicaAlterLogDirsThread do: a future replica is made in the
// target directory and filled from the current one in the background (a
// mover per partition, below) while the current replica keeps serving
// produce and fetch; once level, under the partition's role lock, the last
// batches are copied and the future replica becomes current
// (storage.Manager.PromoteFuture: the old directory renamed -delete first,
// the commit point, then the future one renamed into place), the old one
// is deleted, and the controller learns the new directory
// (AssignReplicasToDirs). A crash before the commit leaves the current
// replica whole and the future one is resumed at the next start; after it,
// the complete future replica is promoted at the next start.
//
// Per partition, as Kafka answers: LOG_DIR_NOT_FOUND for a path that is
// not one of log.dirs; KAFKA_STORAGE_ERROR for an offline target
// directory or an offline replica; REPLICA_NOT_AVAILABLE when this broker
// has no replica of the partition (the directory is remembered, and a
// replica created later goes there, as Kafka's preferredLogDirs);
// INVALID_TOPIC_EXCEPTION for a topic name too long for the future
// directory's name. A replica already in the target directory answers
// NONE and any move of it elsewhere is cancelled. A new target replaces a
// move in progress.
//
// The copy is paced by replica.alter.log.dirs.io.max.bytes.per.second
// (dynamic, cluster-wide), read before each chunk. Progress shows in
// DescribeLogDirs (the future replica's OffsetLag).
//
// Authorization (authz.go): ALTER on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED for every partition.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/replication"
	"github.com/samsa-io/samsa/internal/storage"
)

func init() {
	registerAPI(apiEntry{key: kmsg.AlterReplicaLogDirs, min: 0, max: 2, handle: typed(handleAlterReplicaLogDirs)})
}

// maxFutureDirName is the longest directory name a future replica may
// have (Kafka: 255, the usual file-name limit).
const maxFutureDirName = 255

func handleAlterReplicaLogDirs(b *Broker, c *conn, req *kmsg.AlterReplicaLogDirsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	allowed := b.authorizeCluster(c, kmsg.ACLOperationAlter)
	byTopic := map[string]int{}
	for _, d := range req.Dirs {
		for _, t := range d.Topics {
			i, ok := byTopic[t.Topic]
			if !ok {
				i = len(resp.Topics)
				byTopic[t.Topic] = i
				rt := kmsg.NewAlterReplicaLogDirsResponseTopic()
				rt.Topic = t.Topic
				resp.Topics = append(resp.Topics, rt)
			}
			for _, p := range t.Partitions {
				rp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
				rp.Partition = p
				if !allowed {
					rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				} else {
					rp.ErrorCode = b.alterReplicaLogDir(model.TopicPartition{Topic: t.Topic, Partition: p}, d.Dir)
				}
				resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
			}
		}
	}
	return resp, nil
}

// alterReplicaLogDir starts (or cancels, or redirects) the move of tp's
// replica to dir and answers with its error code.
func (b *Broker) alterReplicaLogDir(tp model.TopicPartition, dir string) int16 {
	if len(tp.String())+len(".00000000000000000000000000000000-future") > maxFutureDirName {
		return kerr.InvalidTopicException.Code
	}
	b.metaMu.Lock() // no install or removal of the partition meanwhile
	defer b.metaMu.Unlock()
	known, offline := b.logDirState(dir)
	switch {
	case !known:
		return kerr.LogDirNotFound.Code
	case offline != nil:
		return kerr.KafkaStorageError.Code
	}
	p, ok := b.hostedReplica(tp)
	if !ok {
		if err := b.logs.Prefer(tp, dir); err != nil {
			return kerr.LogDirNotFound.Code
		}
		return kerr.ReplicaNotAvailable.Code
	}
	if p.Offline() {
		return kerr.KafkaStorageError.Code
	}
	if _, offline := b.logDirIDs(); len(offline) > 0 {
		// As Kafka: no future replica while a directory is offline,
		// which could hold another copy of the partition.
		return kerr.KafkaStorageError.Code
	}
	if _, cur, ok := b.movers.target(tp); ok && cur == dir {
		return 0 // the same move, in progress
	}
	b.movers.stop(tp)
	fut, moving, err := b.logs.CreateFuture(tp, dir)
	switch {
	case errors.Is(err, storage.ErrLogDirNotFound):
		return kerr.LogDirNotFound.Code
	case errors.Is(err, storage.ErrNoReplica):
		return kerr.ReplicaNotAvailable.Code
	case err != nil:
		b.log.Warn("alter replica log dir failed", "partition", tp.String(), "dir", dir, "err", err)
		return kerr.KafkaStorageError.Code
	}
	if moving {
		b.startMover(p, fut, dir)
	}
	return 0
}

// logDirState reports whether dir is one of this broker's log
// directories, and why it is offline (nil while online).
func (b *Broker) logDirState(dir string) (known bool, offline error) {
	for _, d := range b.logs.Dirs() {
		if d.Path == dir {
			return true, d.Offline
		}
	}
	return false, nil
}

// movers are the moves of replicas between log directories in progress,
// one goroutine each.
type movers struct {
	mu    sync.Mutex
	moves map[model.TopicPartition]*move
	// throttle paces every move's copying together
	// (replica.alter.log.dirs.io.max.bytes.per.second).
	throttle struct {
		rate float64
		t    *storage.Throttle
	}
}

type move struct {
	src, dst string
	cancel   context.CancelFunc
	done     chan struct{}
}

func newMovers() *movers { return &movers{moves: map[model.TopicPartition]*move{}} }

// target is the move of tp in progress: its source and target directory.
func (ms *movers) target(tp model.TopicPartition) (src, dst string, ok bool) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	m, ok := ms.moves[tp]
	if !ok {
		return "", "", false
	}
	return m.src, m.dst, true
}

// stop cancels tp's move and waits for its goroutine to end; the future
// replica stays (CreateFuture or DropFuture decide).
func (ms *movers) stop(tp model.TopicPartition) {
	ms.mu.Lock()
	m, ok := ms.moves[tp]
	delete(ms.moves, tp)
	ms.mu.Unlock()
	if ok {
		m.cancel()
		<-m.done
	}
}

// stopIn cancels the moves from or to a directory (it went offline).
func (ms *movers) stopIn(dir string) {
	ms.mu.Lock()
	var tps []model.TopicPartition
	for tp, m := range ms.moves {
		if m.src == dir || m.dst == dir {
			tps = append(tps, tp)
		}
	}
	ms.mu.Unlock()
	for _, tp := range tps {
		ms.stop(tp)
	}
}

// pace waits as replica.alter.log.dirs.io.max.bytes.per.second asks for n
// bytes copied (read and written), and returns how much the next step may
// copy: a chunk the rate allows in a tenth of a second, so that the copy
// is smooth rather than a burst and a long pause, and at most moveChunk.
func (b *Broker) pace(n int64) int32 {
	rate := float64(b.brokerConfig(b.meta.Load()).Long("replica.alter.log.dirs.io.max.bytes.per.second"))
	ms := b.movers
	ms.mu.Lock()
	if ms.throttle.rate != rate {
		ms.throttle.rate, ms.throttle.t = rate, storage.NewThrottle(rate, b.cfg.Clock)
	}
	t := ms.throttle.t
	ms.mu.Unlock()
	t.Wait(2 * n)
	if t == nil {
		return moveChunk
	}
	return int32(min(max(rate/2/10, 4096), moveChunk))
}

// moveChunk is how much a mover copies per step.
const moveChunk = 1 << 20

// startMover runs the move of p's replica into fut, in dir, until it is
// promoted, cancelled, or fails (the future replica is then dropped and
// the current one serves on).
func (b *Broker) startMover(p *replication.Partition, fut *storage.Log, dir string) {
	src, _ := b.logs.DirOf(p.TP)
	ctx, cancel := context.WithCancel(b.tasks.Context())
	m := &move{src: src, dst: dir, cancel: cancel, done: make(chan struct{})}
	b.movers.mu.Lock()
	b.movers.moves[p.TP] = m
	b.movers.mu.Unlock()
	b.log.Info("moving a replica between log directories", "partition", p.TP.String(), "from", src, "to", dir)
	b.tasks.Go(func(context.Context) {
		defer close(m.done)
		err := b.runMove(ctx, p, fut, dir)
		b.movers.mu.Lock()
		if b.movers.moves[p.TP] == m {
			delete(b.movers.moves, p.TP)
		}
		b.movers.mu.Unlock()
		switch {
		case err == nil:
		case ctx.Err() != nil:
		default:
			b.log.Warn("moving a replica between log directories failed; the current replica serves on", "partition", p.TP.String(),
				"to", dir, "err", err)
			if !p.Offline() {
				_ = b.logs.DropFuture(p.TP)
			}
		}
	})
}

// runMove copies until the future replica is level, then swaps.
func (b *Broker) runMove(ctx context.Context, p *replication.Partition, fut *storage.Log, dir string) error {
	chunk := b.pace(0)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		before := fut.Offsets().Size
		lag, err := p.CopyToFuture(fut, chunk)
		if err != nil {
			return err
		}
		chunk = b.pace(fut.Offsets().Size - before)
		if lag > 0 {
			continue
		}
		// Level: swap under the role lock, copying what was appended
		// since.
		err = p.SwapLog(func(cur *storage.Log) (*storage.Log, error) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return b.logs.PromoteFuture(p.TP, cur)
		})
		if err != nil {
			if errors.Is(err, storage.ErrLogDirOffline) || p.Offline() {
				return err
			}
			if _, _, still := b.logs.Future(p.TP); !still {
				return fmt.Errorf("the swap failed after its commit: %w", err)
			}
			// Not committed (the logs differed at the last moment):
			// copy on and try again.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		if ts, ok := b.topics.byTopicName(p.TP.Topic); ok {
			b.assignDir(p.TP, ts.id, b.dirID(dir))
		}
		return nil
	}
}

// resumeMove restarts a move a restart interrupted: the future replica
// found beside p's log.
func (b *Broker) resumeMove(p *replication.Partition) {
	fut, dir, ok := b.logs.Future(p.TP)
	if !ok || p.Offline() {
		return
	}
	if _, _, moving := b.movers.target(p.TP); moving {
		return
	}
	b.startMover(p, fut, dir)
}
