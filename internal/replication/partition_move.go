package replication

import (
	"fmt"

	"github.com/samsa-io/samsa/internal/storage"
)

// A replica's life across the broker's data directories (JBOD): a move
// to another directory while it serves (AlterReplicaLogDirs), and the
// failure of its directory.

// log is the replica's current log.
func (p *Partition) log() *storage.Log { return p.logPtr.Load() }

// Log is the replica's current log, for reports (DescribeLogDirs); the
// broker never writes through it.
func (p *Partition) Log() *storage.Log { return p.log() }

// CopyToFuture is one step of a move between data directories: it copies
// up to maxBytes of the replica's log into fut, the future replica
// (storage.CatchUpFuture), and returns how far fut still lags. It holds
// the role lock shared, so the replica serves (and appends) throughout,
// and no truncation of its log runs during the copy.
func (p *Partition) CopyToFuture(fut *storage.Log, maxBytes int32) (int64, error) {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	if err := p.checkOnline(); err != nil {
		return 0, err
	}
	return storage.CatchUpFuture(p.log(), fut, maxBytes)
}

// SwapLog ends a move: with every writer of the log held off (the role
// lock held exclusively), promote makes the future replica current
// (storage.Manager.PromoteFuture: the last batches copied, the files
// swapped) and returns its log, which the replica uses from then on. The
// offsets, epochs and high watermark are the same on both sides, so
// leadership, followers and waiters carry on. A promote that fails leaves
// the replica on its old log, which it returns (closed, when the failure
// came after the swap began: the directory that failed is offline then).
func (p *Partition) SwapLog(promote func(cur *storage.Log) (*storage.Log, error)) error {
	p.roleMu.Lock()
	defer p.roleMu.Unlock()
	if err := p.checkOnline(); err != nil {
		return err
	}
	l, err := promote(p.log())
	if err != nil {
		return err
	}
	p.logPtr.Store(l)
	return nil
}

// SetOffline takes the replica out of service for good: its data
// directory failed. It leads no more (its acks=all waiters are answered at
// once, as Stop does), ignores every later state the metadata gives it,
// and answers appends, reads and follower operations with
// storage.ErrLogDirOffline (KAFKA_STORAGE_ERROR), as Kafka's broker
// answers for a partition it marked offline, until the broker restarts.
func (p *Partition) SetOffline() {
	p.roleMu.Lock()
	defer p.roleMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.offline = true
	p.mu.leaderState, p.mu.leaderHW, p.mu.leader = nil, -1, NoLeader
	p.notifyLocked()
}

// Offline reports whether SetOffline took the replica out of service.
func (p *Partition) Offline() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.offline
}

func (p *Partition) checkOnline() error {
	if p.Offline() {
		return p.offlineError()
	}
	return nil
}

func (p *Partition) offlineError() error {
	return fmt.Errorf("%w: the replica of %s is in a failed log directory", storage.ErrLogDirOffline, p.TP)
}
