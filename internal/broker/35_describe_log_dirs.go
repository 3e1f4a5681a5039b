package broker

// DescribeLogDirs (key 35), versions 0-4.
//
// One log directory (log.dirs has one entry per broker here) with the size
// of each requested partition's log (all partitions when Topics is null)
// and, from v4, the file system's total and usable bytes. OffsetLag is 0
// and IsFuture false: there are no replica moves between directories.
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
	dir := kmsg.NewDescribeLogDirsResponseDir()
	dir.Dir = b.cfg.LogDir
	dir.TotalBytes, dir.UsableBytes = diskSpace(b.cfg.LogDir)
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
	for _, ts := range b.topics.all() {
		dt := kmsg.NewDescribeLogDirsResponseDirTopic()
		dt.Topic = ts.name
		for i, p := range ts.partitions {
			if p == nil || !wanted(ts.name, int32(i)) {
				continue
			}
			dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			dp.Partition, dp.Size = int32(i), p.Size()
			dt.Partitions = append(dt.Partitions, dp)
		}
		if len(dt.Partitions) > 0 {
			dir.Topics = append(dir.Topics, dt)
		}
	}
	resp.Dirs = append(resp.Dirs, dir)
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
