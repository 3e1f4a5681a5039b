package broker

// DescribeLogDirs (key 35), versions 0-4.
//
// Every log directory of the broker (log.dirs, JBOD: logdirs.go), as
// Kafka's ReplicaManager.describeLogDirs: for each requested partition
// (all when Topics is null) whose replica is in the directory, its size
// and OffsetLag, 0 for a current replica that holds its high watermark
// (max(high watermark - log end, 0)), and for a future replica being
// moved there (AlterReplicaLogDirs, IsFuture) how far it lags the
// current one's log end; from v4 the file system's total and usable
// bytes. An offline directory is listed with KAFKA_STORAGE_ERROR and no
// partitions.
//
// Authorization (authz.go): DESCRIBE on the cluster, else no directories
// and, from v3, CLUSTER_AUTHORIZATION_FAILED as the response's error.

import (
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DescribeLogDirs, min: 0, max: 4, handle: typed(handleDescribeLogDirs)})
}

func handleDescribeLogDirs(b *Broker, c *conn, req *kmsg.DescribeLogDirsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	if !b.authorizeCluster(c, kmsg.ACLOperationDescribe) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	wanted := func(string, int32) bool { return true }
	if req.Topics != nil {
		set := map[string]map[int32]bool{}
		for _, t := range req.Topics {
			set[t.Topic] = map[int32]bool{}
			for _, p := range t.Partitions {
				set[t.Topic][p] = true
			}
		}
		wanted = func(topic string, p int32) bool { return set[topic][p] }
	}
	index := map[string]int{}
	for _, d := range b.logs.Dirs() {
		dir := kmsg.NewDescribeLogDirsResponseDir()
		dir.Dir = d.Path
		dir.TotalBytes, dir.UsableBytes = -1, -1
		if d.Offline != nil {
			dir.ErrorCode = kerr.KafkaStorageError.Code
		} else {
			dir.TotalBytes, dir.UsableBytes = diskSpace(d.Path)
		}
		index[d.Path] = len(resp.Dirs)
		resp.Dirs = append(resp.Dirs, dir)
	}
	add := func(path, topic string, dp kmsg.DescribeLogDirsResponseDirTopicPartition) {
		i, ok := index[path]
		if !ok || resp.Dirs[i].ErrorCode != 0 {
			return
		}
		dir := &resp.Dirs[i]
		if n := len(dir.Topics); n == 0 || dir.Topics[n-1].Topic != topic {
			dt := kmsg.NewDescribeLogDirsResponseDirTopic()
			dt.Topic = topic
			dir.Topics = append(dir.Topics, dt)
		}
		dt := &dir.Topics[len(dir.Topics)-1]
		dt.Partitions = append(dt.Partitions, dp)
	}
	for _, ts := range b.topics.all() {
		for i, p := range ts.partitions {
			if p == nil || p.Offline() || !wanted(ts.name, int32(i)) {
				continue
			}
			path, ok := b.logs.DirOf(p.TP)
			if !ok {
				continue
			}
			o := p.LogOffsets()
			dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			dp.Partition, dp.Size, dp.OffsetLag = int32(i), o.Size, max(p.HighWatermark()-o.LogEndOffset, 0)
			add(path, ts.name, dp)
			if fut, futDir, ok := b.logs.Future(p.TP); ok {
				fo := fut.Offsets()
				fp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
				fp.Partition, fp.Size, fp.IsFuture = int32(i), fo.Size, true
				fp.OffsetLag = max(p.LogEndOffset()-fo.LogEndOffset, 0)
				add(futDir, ts.name, fp)
			}
		}
	}
	return resp, nil
}

// diskSpace reports the file system's size and free bytes; -1 when unknown,
// as Kafka reports.
func diskSpace(dir string) (total, usable int64) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1, -1
	}
	return int64(st.Blocks) * st.Bsize, int64(st.Bavail) * st.Bsize
}
