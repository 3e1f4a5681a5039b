package broker

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/replication"
	"github.com/samsa-io/samsa/internal/storage"
)

// Several data directories per broker (JBOD, log.dirs with more than one
// path), the KRaft way of Kafka 3.7+ (KIP-858):
//
//   - every directory has meta.properties with its directory.id; the
//     broker registers the IDs of its online ones (BrokerRegistration
//     LogDirs);
//   - the metadata records each replica's directory (PartitionRecord
//     Directories): the broker places a new replica (storage.Manager: the
//     assigned directory when it is one of its online ones, else the one
//     with the fewest replicas) and tells the controller where it went
//     (AssignReplicasToDirs, key 73), as after a move between
//     directories (AlterReplicaLogDirs, 34_alter_replica_log_dirs.go);
//   - an I/O error takes a directory offline (storage): its replicas stop
//     (KAFKA_STORAGE_ERROR), the broker reports the directory in its
//     heartbeats (BrokerHeartbeat OfflineLogDirs), and the controller takes
//     those replicas out of their ISRs and elects leaders elsewhere in one
//     batch; Metadata lists them as offline replicas. With every log
//     directory offline, or the metadata log's, the broker stops, as
//     Kafka's halts.
//
// The single node registers itself through its own controller (LogDirs in
// controller.Config) and reports to it in process.

// checkLogDirs refuses a log.dirs that names a directory twice, as Kafka's
// config does.
func checkLogDirs(dirs []string) error {
	seen := map[string]bool{}
	for _, d := range dirs {
		c := filepath.Clean(d)
		if seen[c] {
			return fmt.Errorf("broker: log.dirs names %s twice: each log directory must be given once", d)
		}
		seen[c] = true
	}
	return nil
}

// dirID is a log directory's directory.id from its meta.properties.
func (b *Broker) dirID(path string) string {
	if b.storage == nil {
		return ""
	}
	p, _ := b.storage.Props(path)
	return p.DirectoryID
}

// dirPath is the log directory of a directory.id, "" when it is none of
// this broker's.
func (b *Broker) dirPath(id string) string {
	if id == "" {
		return ""
	}
	for _, d := range b.cfg.LogDirs {
		if b.dirID(d) == id {
			return d
		}
	}
	return ""
}

// onlineDirIDs are the directory IDs of the online log directories, as
// the broker registers them.
func (b *Broker) onlineDirIDs() []string {
	online, _ := b.logDirIDs()
	return online
}

// logDirIDs are the directory IDs of the online and the offline log
// directories.
func (b *Broker) logDirIDs() (online, offline []string) {
	for _, d := range b.logs.Dirs() {
		id := b.dirID(d.Path)
		if id == "" {
			continue
		}
		if d.Offline != nil {
			offline = append(offline, id)
		} else {
			online = append(online, id)
		}
	}
	return online, offline
}

// kafkaUUID and fromKafkaUUID convert a directory ID between the wire's
// 16 bytes and Kafka's base64 text; the zero UUID is Kafka's UNASSIGNED.
func kafkaUUID(id string) [16]byte {
	if id == "" {
		return [16]byte{}
	}
	u, err := metadata.ParseUUID(id)
	if err != nil {
		return [16]byte{}
	}
	return u
}

// dirIDsFromWire converts a request's directory IDs.
func dirIDsFromWire(ids [][16]byte) []string {
	var out []string
	for _, u := range ids {
		if id := fromKafkaUUID(u); id != "" {
			out = append(out, id)
		}
	}
	return out
}

func fromKafkaUUID(u [16]byte) string {
	if u == ([16]byte{}) {
		return ""
	}
	return metadata.FormatUUID(model.TopicID(u))
}

// replicaOffline decides, for a partition this broker replicates but has
// not opened, whether its replica must be taken for lost rather than
// created: the metadata puts it in one of this broker's directories that
// is offline, or (no directory assigned) in no directory known, while a
// directory is offline where it may be, and the partition is not new to
// this broker (Kafka refuses to create such a log for the same reason:
// an empty replica must not stand in for one on a failed disk). A replica
// assigned to a directory this broker no longer has (a replaced disk) is
// made anew, empty, and fetches from its leader.
func (b *Broker) replicaOffline(tp model.TopicPartition, assigned string, isNew bool) bool {
	if _, found := b.logs.DirOf(tp); found {
		return b.logs.Offline(tp)
	}
	if path := b.dirPath(assigned); path != "" {
		return slices.ContainsFunc(b.logs.Dirs(), func(d storage.DirState) bool { return d.Path == path && d.Offline != nil })
	}
	_, offline := b.logDirIDs()
	return assigned == "" && len(offline) > 0 && !isNew
}

// dirAssignments are the replicas whose directory the controller must
// learn (AssignReplicasToDirs), sent in the background with retries, as
// Kafka's AssignmentsManager does.
type dirAssignments struct {
	mu      sync.Mutex
	pending map[model.TopicPartition]pendingAssignment
	wake    chan struct{}
}

type pendingAssignment struct {
	topicID model.TopicID
	dir     string // directory ID
}

func newDirAssignments() *dirAssignments {
	return &dirAssignments{pending: map[model.TopicPartition]pendingAssignment{}, wake: make(chan struct{}, 1)}
}

// assign queues tp's replica as being in directory dir.
func (b *Broker) assignDir(tp model.TopicPartition, topicID model.TopicID, dir string) {
	if dir == "" {
		return
	}
	a := b.dirAssign
	a.mu.Lock()
	a.pending[tp] = pendingAssignment{topicID: topicID, dir: dir}
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// noteReplicaDir queues an assignment when the metadata places tp's
// replica elsewhere than where it is.
func (b *Broker) noteReplicaDir(tp model.TopicPartition, topicID model.TopicID, assigned string) {
	path, ok := b.logs.DirOf(tp)
	if !ok {
		return
	}
	if id := b.dirID(path); id != "" && id != assigned {
		b.assignDir(tp, topicID, id)
	}
}

// sendDirAssignments sends the queued assignments whenever some are
// queued, until ctx ends; a failed send is retried after a back-off.
func (b *Broker) sendDirAssignments(ctx context.Context) {
	a := b.dirAssign
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
		}
		for {
			a.mu.Lock()
			batch := make(map[model.TopicPartition]pendingAssignment, len(a.pending))
			for tp, p := range a.pending {
				batch[tp] = p
			}
			a.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			err := b.assignReplicasToDirs(ctx, batch)
			if err == nil {
				a.mu.Lock()
				for tp, p := range batch {
					if a.pending[tp] == p {
						delete(a.pending, tp)
					}
				}
				a.mu.Unlock()
				continue
			}
			b.log.Debug("assigning replicas to log directories failed; retrying", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(retryBackoff * 4):
			}
		}
	}
}

// assignReplicasToDirs sends one AssignReplicasToDirs to the active
// controller (in process on the single node). Partitions the controller
// refuses for good (an unknown or deleted topic, a replica moved away)
// count as done.
func (b *Broker) assignReplicasToDirs(ctx context.Context, batch map[model.TopicPartition]pendingAssignment) error {
	if !b.cfg.quorum.cluster() {
		var as []controller.DirAssignment
		for tp, p := range batch {
			as = append(as, controller.DirAssignment{TopicID: p.topicID, Partition: tp.Partition, Directory: p.dir})
		}
		node := model.NodeID(b.cfg.NodeID)
		br, ok := b.ctrl.Image().Broker(node)
		if !ok {
			return errors.New("broker: not registered")
		}
		_, refused := b.ctrl.AssignReplicasToDirs(ctx, node, br.Epoch, as)
		if refused != nil {
			return refused
		}
		return nil
	}
	req := kmsg.NewPtrAssignReplicasToDirsRequest()
	req.BrokerID, req.BrokerEpoch = b.cfg.NodeID, b.life.epoch.Load()
	byDir := map[string]map[model.TopicID][]int32{}
	for tp, p := range batch {
		if byDir[p.dir] == nil {
			byDir[p.dir] = map[model.TopicID][]int32{}
		}
		byDir[p.dir][p.topicID] = append(byDir[p.dir][p.topicID], tp.Partition)
	}
	for dir, topics := range byDir {
		rd := kmsg.NewAssignReplicasToDirsRequestDirectory()
		rd.ID = kafkaUUID(dir)
		for id, parts := range topics {
			rt := kmsg.NewAssignReplicasToDirsRequestDirectoryTopic()
			rt.TopicID = id
			for _, p := range parts {
				rp := kmsg.NewAssignReplicasToDirsRequestDirectoryTopicPartition()
				rp.Partition = p
				rt.Partitions = append(rt.Partitions, rp)
			}
			rd.Topics = append(rd.Topics, rt)
		}
		req.Directories = append(req.Directories, rd)
	}
	rctx, cancel := context.WithTimeout(ctx, controllerRequestTimeout)
	defer cancel()
	resp, err := b.toController(rctx, req, func(r kmsg.Response) bool {
		return r.(*kmsg.AssignReplicasToDirsResponse).ErrorCode == kerr.NotController.Code
	})
	if err != nil {
		return err
	}
	r := resp.(*kmsg.AssignReplicasToDirsResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return err
	}
	return nil
}

// watchLogDirs acts on each log directory that goes offline, until ctx
// ends (handleOfflineDirs).
func (b *Broker) watchLogDirs(ctx context.Context) {
	handled := map[string]bool{}
	for {
		ch := b.logs.OfflineChanged()
		b.handleOfflineDirs(ctx, handled)
		select {
		case <-ctx.Done():
			return
		case <-ch:
		}
	}
}

// handleOfflineDirs stops the replicas of every log directory newly
// offline, as Kafka's ReplicaManager.handleLogDirFailure: their fetchers
// and moves stop, each replica answers KAFKA_STORAGE_ERROR from now on
// (replication.Partition.SetOffline), and the controller learns of the
// directory from the next heartbeat, sent at once. With every log
// directory offline, or the one holding the metadata log, the broker
// stops (fail), as Kafka halts.
func (b *Broker) handleOfflineDirs(ctx context.Context, handled map[string]bool) {
	dirs := b.logs.Dirs()
	online := 0
	for _, d := range dirs {
		if d.Offline == nil {
			online++
			continue
		}
		if handled[d.Path] {
			continue
		}
		handled[d.Path] = true
		b.movers.stopIn(d.Path)
		lost := b.logs.CloseDir(d.Path)
		for _, tp := range lost {
			b.fetchers.stop(tp)
			if ts, ok := b.topics.byTopicName(tp.Topic); ok {
				if p, code := ts.partition(tp.Partition); code == 0 {
					p.SetOffline()
				}
			}
		}
		b.log.Error("log directory offline: its replicas stopped; the other directories serve on", "dir", d.Path,
			"replicas", len(lost), "err", d.Offline)
		if filepath.Clean(d.Path) == filepath.Clean(b.metadataLogDir()) {
			b.fail(fmt.Errorf("broker: the metadata log directory %s failed: %w", d.Path, d.Offline))
			return
		}
	}
	if online == 0 {
		b.fail(errors.New("broker: every log directory is offline"))
		return
	}
	b.reportOfflineDirs(ctx)
}

// reportOfflineDirs tells the controller which log directories are
// offline: the next heartbeat, at once, carries them (heartbeatLoop);
// the single node tells its own controller.
func (b *Broker) reportOfflineDirs(ctx context.Context) {
	_, offline := b.logDirIDs()
	if len(offline) == 0 {
		return
	}
	if b.cfg.quorum.cluster() {
		select {
		case b.life.wake <- struct{}{}:
		default:
		}
		return
	}
	node := model.NodeID(b.cfg.NodeID)
	br, ok := b.ctrl.Image().Broker(node)
	if !ok {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, controllerRequestTimeout)
	defer cancel()
	if res := b.ctrl.BrokerHeartbeat(rctx, controller.Heartbeat{NodeID: node, Epoch: br.Epoch, AppliedOffset: b.ctrl.Image().Offset(),
		OfflineLogDirs: offline}); res.Err != nil {
		b.log.Warn("reporting offline log directories failed", "err", res.Err)
	}
}

// offlineReplicas are the replicas of p the metadata has on offline log
// directories or on brokers that are not live (Metadata's
// OfflineReplicas, as Kafka's KRaftMetadataCache reports them).
func offlineReplicas(img *metadata.Image, p metadata.PartitionImage) []int32 {
	out := []int32{}
	for _, r := range p.Replicas {
		if b, ok := img.Broker(r); !ok || b.Fenced || !img.ReplicaOnline(p, r) {
			out = append(out, int32(r))
		}
	}
	return out
}

// hostedReplica is this broker's replica of tp, if it has one.
func (b *Broker) hostedReplica(tp model.TopicPartition) (*replication.Partition, bool) {
	ts, ok := b.topics.byTopicName(tp.Topic)
	if !ok {
		return nil, false
	}
	p, code := ts.partition(tp.Partition)
	return p, code == 0
}
