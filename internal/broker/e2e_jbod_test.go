package broker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/vfs"
)

// jbodBroker starts a single node on two log directories.
func jbodBroker(t *testing.T, dirs []string, raw map[string]string) *Broker {
	t.Helper()
	v, err := config.Parse(config.Broker, raw)
	if err != nil {
		t.Fatal(err)
	}
	return startBrokerWith(t, Config{LogDirs: dirs, Values: v})
}

// replicaDirs is where DescribeLogDirs says each partition of topic is:
// its current replica's directory, and its future one's ("" for none).
func replicaDirs(t *testing.T, ctx context.Context, adm *kadm.Client, topic string) (cur, fut map[int32]string, lag map[int32]int64) {
	t.Helper()
	all, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	cur, fut, lag = map[int32]string{}, map[int32]string{}, map[int32]int64{}
	for _, dirs := range all {
		for path, d := range dirs {
			for p, dp := range d.Topics[topic] {
				if dp.IsFuture {
					fut[p], lag[p] = path, dp.OffsetLag
				} else {
					cur[p] = path
				}
			}
		}
	}
	return cur, fut, lag
}

func alterReplicaLogDir(t *testing.T, ctx context.Context, cl *kgo.Client, dir, topic string, p int32) int16 {
	t.Helper()
	req := kmsg.NewPtrAlterReplicaLogDirsRequest()
	d := kmsg.NewAlterReplicaLogDirsRequestDir()
	d.Dir = dir
	dt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
	dt.Topic, dt.Partitions = topic, []int32{p}
	d.Topics = append(d.Topics, dt)
	req.Dirs = append(req.Dirs, d)
	// To the broker itself: the client would route the request by the
	// partition's leader, and answer for a topic it does not know.
	r, err := cl.Broker(1).Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return r.(*kmsg.AlterReplicaLogDirsResponse).Topics[0].Partitions[0].ErrorCode
}

// A replica moves to the other log directory while a producer writes to
// it with acks=all: the move is seen in progress (a future replica with
// a lag, in DescribeLogDirs), completes, and every acknowledged record is
// read back, in order, from the new directory, also after a restart.
func TestJBODMovesAReplicaUnderLoad(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
	raw := map[string]string{"replica.alter.log.dirs.io.max.bytes.per.second": "1000000"}
	b := jbodBroker(t, dirs, raw)
	seg := "1048576"
	createTopicWith(t, b, "moving", 2, map[string]*string{"segment.bytes": &seg})
	ctx, cancel := context.WithTimeout(context.Background(), 2*e2eTimeout)
	defer cancel()
	cl := newFranz(t, b.Addr())
	adm := kadm.NewClient(cl)
	cur, _, _ := replicaDirs(t, ctx, adm, "moving")
	if cur[0] == cur[1] || cur[0] == "" || cur[1] == "" {
		t.Fatalf("two partitions placed in %q and %q, want one per directory", cur[0], cur[1])
	}
	from := cur[0]
	to := dirs[0]
	if from == to {
		to = dirs[1]
	}

	// The producer: acks=all, idempotent, records numbered in order.
	prod := newFranz(t, b.Addr(), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("moving"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(time.Millisecond))
	var mu sync.Mutex
	acked := 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var produceErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		value := strings.Repeat("x", 100)
		for i := 0; ; i += 50 {
			select {
			case <-stop:
				return
			default:
			}
			var recs []*kgo.Record
			for j := range 50 {
				recs = append(recs, &kgo.Record{Partition: 0, Value: fmt.Appendf(nil, "%08d %s", i+j, value)})
			}
			if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				mu.Lock()
				produceErr = fmt.Errorf("record %d: %w", i, err)
				mu.Unlock()
				return
			}
			mu.Lock()
			acked = i + 50
			mu.Unlock()
			// At most about 250 kB/s: a move copies at the throttle's
			// 500 kB/s (reads and writes counted), so it catches up.
			time.Sleep(20 * time.Millisecond)
		}
	}()
	ackedNow := func() int {
		mu.Lock()
		defer mu.Unlock()
		if produceErr != nil {
			t.Fatal(produceErr)
		}
		return acked
	}
	for ackedNow() < 12000 { // about 1.4 MB before the move starts: some 3 s of copying to watch
		if ctx.Err() != nil {
			t.Fatal("the producer stalled")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if code := alterReplicaLogDir(t, ctx, cl, to, "moving", 0); code != 0 {
		t.Fatalf("alter replica log dir: %v", kerr.ErrorForCode(code))
	}
	sawFuture := false
	for {
		cur, fut, lag := replicaDirs(t, ctx, adm, "moving")
		if fut[0] != "" {
			if fut[0] != to {
				t.Fatalf("future replica in %s, want %s", fut[0], to)
			}
			sawFuture = sawFuture || lag[0] > 0
		}
		if cur[0] == to && fut[0] == "" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the move did not finish: current %q, future %q", cur[0], fut[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !sawFuture {
		t.Error("DescribeLogDirs never showed the future replica lagging")
	}
	moved := ackedNow()
	for ackedNow() < moved+1000 { // the moved replica takes writes
		if ctx.Err() != nil {
			t.Fatal("the producer stalled after the move")
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	total := ackedNow()
	if _, err := os.Stat(filepath.Join(from, "moving-0")); !os.IsNotExist(err) {
		t.Fatalf("old replica left in %s: %v", from, err)
	}
	checkMovedRecords(t, ctx, b.Addr(), total)

	// After a restart the replica opens from its new directory.
	b.Close()
	b = jbodBroker(t, dirs, raw)
	adm = kadm.NewClient(newFranz(t, b.Addr()))
	if cur, _, _ := replicaDirs(t, ctx, adm, "moving"); cur[0] != to {
		t.Fatalf("after a restart the replica is in %q, want %q", cur[0], to)
	}
	checkMovedRecords(t, ctx, b.Addr(), total)
}

// checkMovedRecords reads partition 0 of "moving" and checks that it
// holds records 0..n-1 (and possibly more unacknowledged ones), in order,
// none twice.
func checkMovedRecords(t *testing.T, ctx context.Context, addr string, n int) {
	t.Helper()
	cons := newFranz(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"moving": {0: kgo.NewOffset().AtStart()}}))
	next := 0
	for next < n {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d acknowledged records", next, n)
		}
		for _, e := range fs.Errors() {
			t.Fatalf("fetch: %v", e.Err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var i int
			fmt.Sscanf(string(r.Value), "%d", &i)
			if i != next {
				t.Fatalf("record at offset %d is %d, want %d", r.Offset, i, next)
			}
			next++
		})
	}
}

// AlterReplicaLogDirs errors, as Kafka answers them: a path that is not a
// log dir, a partition this broker has none of (remembered: the replica
// created later goes to that directory), a move to where the replica is.
func TestJBODAlterReplicaLogDirsErrors(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
	b := jbodBroker(t, dirs, nil)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	cl := newFranz(t, b.Addr())
	adm := kadm.NewClient(cl)
	createTopic(t, b, "here", 1)
	cur, _, _ := replicaDirs(t, ctx, adm, "here")
	if code := alterReplicaLogDir(t, ctx, cl, filepath.Join(root, "c"), "here", 0); code != kerr.LogDirNotFound.Code {
		t.Errorf("unknown dir: %v", kerr.ErrorForCode(code))
	}
	if code := alterReplicaLogDir(t, ctx, cl, cur[0], "here", 0); code != 0 {
		t.Errorf("move to where it is: %v", kerr.ErrorForCode(code))
	}
	// The first topic went to the first directory; ask for the later one
	// to go there too, before it exists.
	if code := alterReplicaLogDir(t, ctx, cl, cur[0], "later", 0); code != kerr.ReplicaNotAvailable.Code {
		t.Errorf("no replica: %v", kerr.ErrorForCode(code))
	}
	createTopic(t, b, "later", 1)
	if got, _, _ := replicaDirs(t, ctx, adm, "later"); got[0] != cur[0] {
		t.Errorf("the replica asked for %s was created in %s", cur[0], got[0])
	}
}

// On a single node, a log directory that fails takes its replicas
// offline (KAFKA_STORAGE_ERROR, then no leader: offline in Metadata, the directory
// KAFKA_STORAGE_ERROR in DescribeLogDirs) while the other directory
// serves on; when the last one fails too, the broker stops (Failed).
func TestJBODSingleNodeFailedLogDir(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "meta")}
	var mu sync.Mutex
	var failing []string
	faulty := vfs.NewFaulty(vfs.OS, func(op vfs.Op, name string) error {
		mu.Lock()
		defer mu.Unlock()
		for _, d := range failing {
			if name == d || strings.HasPrefix(name, d+"/") {
				return fmt.Errorf("%w: %s: %w", vfs.ErrInjected, name, syscall.EIO)
			}
		}
		return nil
	})
	v, err := config.Parse(config.Broker, map[string]string{"metadata.log.dir": dirs[2]})
	if err != nil {
		t.Fatal(err)
	}
	b := startBrokerWith(t, Config{LogDirs: dirs[:2], Values: v, FS: faulty})
	createTopic(t, b, "halves", 2)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	cl := newFranz(t, b.Addr(), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("halves"),
		kgo.RecordRetries(2), kgo.MetadataMinAge(50*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	adm := kadm.NewClient(cl)
	cur, _, _ := replicaDirs(t, ctx, adm, "halves")
	bad := int32(0)
	if cur[0] != dirs[1] {
		bad = 1
	}
	good := 1 - bad
	for _, p := range []int32{0, 1} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte("before")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	failing = []string{dirs[1]}
	mu.Unlock()
	changed := b.logs.OfflineChanged()
	err = cl.ProduceSync(ctx, &kgo.Record{Partition: bad, Value: []byte("after")}).FirstErr()
	// KAFKA_STORAGE_ERROR, and on the client's retries no leader: the
	// partition's only replica is offline.
	if !errors.Is(err, kerr.KafkaStorageError) && !errors.Is(err, kerr.LeaderNotAvailable) {
		t.Fatalf("produce to the failed directory's replica: %v", err)
	}
	<-changed
	if err := cl.ProduceSync(ctx, &kgo.Record{Partition: good, Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatalf("produce to the healthy directory's replica: %v", err)
	}
	await(t, b, "the failed replica offline in the metadata", func() bool {
		img := b.ctrl.Image()
		p, _ := img.Partition(model.TopicPartition{Topic: "halves", Partition: bad})
		return !img.ReplicaOnline(p, 1)
	})
	md, err := adm.Metadata(ctx, "halves")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range md.Topics["halves"].Partitions {
		if got := len(p.OfflineReplicas) == 1; got != (p.Partition == bad) {
			t.Errorf("partition %d: offline replicas %v", p.Partition, p.OfflineReplicas)
		}
	}
	all, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := all[1][dirs[1]]; d.Err != kerr.KafkaStorageError {
		t.Errorf("the failed directory in DescribeLogDirs: %v", d.Err)
	}
	if b.Failure() != nil {
		t.Fatalf("stopped with a directory left: %v", b.Failure())
	}
	mu.Lock()
	failing = dirs[:2]
	mu.Unlock()
	cl.Produce(ctx, &kgo.Record{Partition: good, Value: []byte("last")}, nil)
	select {
	case <-b.Failed():
	case <-ctx.Done():
		t.Fatal("the broker did not stop with every log directory offline")
	}
}
