package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The data set's names.
const (
	bigTopic    = "console-big"
	smallPrefix = "console-t"
	liveGroup   = "console-live"
	readersFmt  = "console-readers-%d"
	appFmt      = "console-app-%04d"
	// keys is how many distinct keys the big topic's records carry
	// ("user-<n>"): a key's records, about records/keys of them, sit in
	// one partition, as a keyed producer puts them.
	keys = 100_000
	// smallRecords are the records of each small topic.
	smallRecords = 20
)

// readerFractions are where the readers' groups committed in each
// partition of the big topic, as a fraction of its end offset: caught
// up, a little behind, half way, at the start.
var readerFractions = []float64{1, 0.9, 0.5, 0}

// dataSet is what was loaded and where a page finds something: it is
// kept as dataset.json in the data directory, so a later run measures
// the same data without loading it again.
type dataSet struct {
	Records           int64   `json:"records"`
	Partitions        int     `json:"partitions"`
	ValueBytes        int     `json:"value_bytes"`
	BatchBytes        int     `json:"batch_bytes"`
	Producers         int     `json:"producers"`
	SmallTopics       int     `json:"small_topics"`
	TopicPartitions   int     `json:"topic_partitions"`
	ClusterPartitions int     `json:"cluster_partitions"`
	ReaderGroups      int     `json:"reader_groups"`
	AppGroups         int     `json:"app_groups"`
	CreateSeconds     float64 `json:"create_seconds"`
	LoadSeconds       float64 `json:"load_seconds"`
	SmallLoadSeconds  float64 `json:"small_load_seconds"`
	GroupsSeconds     float64 `json:"groups_seconds"`
	BigTopicBytes     int64   `json:"big_topic_bytes"`
	// FirstTimestamp and LastTimestamp (ms) bound the big topic's record
	// timestamps: the records are spread evenly over a day before the
	// load, as a day of traffic.
	FirstTimestamp int64 `json:"first_timestamp"`
	LastTimestamp  int64 `json:"last_timestamp"`
	// Partition0End is partition 0's end offset.
	Partition0End int64 `json:"partition0_end"`
}

// bytesPerRecord is the big topic's size on disk per record (batch
// headers included): the broker's bytes sent divided by it estimate the
// records a fetch read.
func (d dataSet) bytesPerRecord() float64 {
	if d.Records == 0 {
		return 0
	}
	return float64(d.BigTopicBytes) / float64(d.Records)
}

func (d dataSet) smallTopic(i int) string { return fmt.Sprintf("%s%04d", smallPrefix, i) }

// value is record i's value: a JSON object of about n bytes, as an
// application's event.
func value(i int64, n int) []byte {
	v := fmt.Appendf(nil, `{"id":%d,"user":"user-%d","amount":%d.%02d,"note":"`, i, i%keys, i%997, i%100)
	for len(v) < n-2 {
		v = append(v, 'a'+byte(len(v)%26))
	}
	return append(v, `"}`...)
}

func key(i int64) []byte { return []byte("user-" + strconv.FormatInt(i%keys, 10)) }

// loadData makes the data set on b unless dataset.json in dir says it is
// there (checked against the big topic's end offsets).
func loadData(ctx context.Context, o options, b *cluster, path string) (dataSet, bool, error) {
	if d, err := readDataSet(path); err == nil {
		ends, err := b.admin.ListEndOffsets(ctx, bigTopic)
		if err == nil && ends.Error() == nil {
			var sum int64
			ends.Each(func(lo kadm.ListedOffset) { sum += lo.Offset })
			if sum == d.Records && d.Records == int64(o.records) && d.Partitions == o.partitions &&
				d.ClusterPartitions == o.clusterPartitions {
				return d, true, nil
			}
			return dataSet{}, false, fmt.Errorf("%s describes another data set (or the topic holds %d records): use another -data", path, sum)
		}
	}
	d := dataSet{Records: int64(o.records), Partitions: o.partitions, ValueBytes: o.valueBytes,
		BatchBytes: o.batchBytes, Producers: o.producers, TopicPartitions: o.topicPartitions,
		ClusterPartitions: o.clusterPartitions, ReaderGroups: o.readerGroups, AppGroups: o.appGroups}
	d.SmallTopics = (o.clusterPartitions - o.partitions) / o.topicPartitions

	start := time.Now()
	if err := createTopics(ctx, b.admin, d); err != nil {
		return d, false, err
	}
	d.CreateSeconds = time.Since(start).Seconds()
	logf("created %d topics (%d partitions) in %.1fs", d.SmallTopics+1, d.Partitions+d.SmallTopics*d.TopicPartitions, d.CreateSeconds)

	d.LastTimestamp = time.Now().UnixMilli()
	d.FirstTimestamp = d.LastTimestamp - 24*time.Hour.Milliseconds()
	start = time.Now()
	if err := produceBig(ctx, b.addrs, d); err != nil {
		return d, false, err
	}
	d.LoadSeconds = time.Since(start).Seconds()
	logf("produced %d records to %s in %.1fs (%.0f records/s)", d.Records, bigTopic, d.LoadSeconds, float64(d.Records)/d.LoadSeconds)

	start = time.Now()
	if err := produceSmall(ctx, b.addrs, d); err != nil {
		return d, false, err
	}
	d.SmallLoadSeconds = time.Since(start).Seconds()

	start = time.Now()
	if err := commitGroups(ctx, b.admin, d); err != nil {
		return d, false, err
	}
	d.GroupsSeconds = time.Since(start).Seconds()

	ends, err := b.admin.ListEndOffsets(ctx, bigTopic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return d, false, fmt.Errorf("end offsets of %s: %w", bigTopic, err)
	}
	var sum int64
	ends.Each(func(lo kadm.ListedOffset) { sum += lo.Offset })
	if sum != d.Records {
		return d, false, fmt.Errorf("%s holds %d records, %d were produced", bigTopic, sum, d.Records)
	}
	if lo, ok := ends.Lookup(bigTopic, 0); ok {
		d.Partition0End = lo.Offset
	}
	dirs, err := b.admin.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		return d, false, fmt.Errorf("log dirs: %w", err)
	}
	dirs.Each(func(dd kadm.DescribedLogDir) {
		dd.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			if p.Topic == bigTopic {
				d.BigTopicBytes += p.Size
			}
		})
	})
	return d, false, writeJSON(path, d)
}

func readDataSet(path string) (dataSet, error) {
	var d dataSet
	data, err := os.ReadFile(path)
	if err != nil {
		return d, err
	}
	return d, json.Unmarshal(data, &d)
}

// createTopics creates the big topic and the small ones, 100 to a
// CreateTopics request.
func createTopics(ctx context.Context, adm *kadm.Client, d dataSet) error {
	check := func(rs kadm.CreateTopicResponses, err error) error {
		if err != nil {
			return err
		}
		for _, r := range rs.Sorted() {
			if r.Err != nil {
				return fmt.Errorf("create %s: %w", r.Topic, r.Err)
			}
		}
		return nil
	}
	if err := check(adm.CreateTopics(ctx, int32(d.Partitions), 1, nil, bigTopic)); err != nil {
		return err
	}
	for i := 0; i < d.SmallTopics; i += 100 {
		var names []string
		for j := i; j < min(i+100, d.SmallTopics); j++ {
			names = append(names, d.smallTopic(j))
		}
		if err := check(adm.CreateTopics(ctx, int32(d.TopicPartitions), 1, nil, names...)); err != nil {
			return err
		}
	}
	return nil
}

// produceBig writes the big topic's records with d.Producers clients,
// each a share of the records, batches of up to d.BatchBytes.
func produceBig(ctx context.Context, addrs []string, d dataSet) error {
	var (
		wg     sync.WaitGroup
		failed atomic.Pointer[error]
		done   atomic.Int64
	)
	span := d.LastTimestamp - d.FirstTimestamp
	per := d.Records / int64(d.Producers)
	progress := time.NewTicker(10 * time.Second)
	defer progress.Stop()
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-progress.C:
				logf("  %d of %d records produced", done.Load(), d.Records)
			case <-stop:
				return
			}
		}
	}()
	defer close(stop)
	for p := range d.Producers {
		from, to := int64(p)*per, int64(p+1)*per
		if p == d.Producers-1 {
			to = d.Records
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic(bigTopic),
			kgo.ProducerBatchMaxBytes(int32(d.BatchBytes)), kgo.ProducerLinger(50*time.Millisecond),
			kgo.ProducerBatchCompression(kgo.NoCompression()),
			kgo.MaxBufferedBytes(64<<20), kgo.MaxBufferedRecords(1<<20))
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			cb := func(_ *kgo.Record, err error) {
				if err != nil {
					failed.CompareAndSwap(nil, &err)
				}
				done.Add(1)
			}
			for i := from; i < to && failed.Load() == nil; i++ {
				ts := d.FirstTimestamp + span*i/d.Records
				cl.Produce(ctx, &kgo.Record{Key: key(i), Value: value(i, d.ValueBytes), Timestamp: time.UnixMilli(ts),
					Headers: []kgo.RecordHeader{{Key: "source", Value: []byte("bench-console")}}}, cb)
			}
			if err := cl.Flush(ctx); err != nil {
				failed.CompareAndSwap(nil, &err)
			}
		}()
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		return fmt.Errorf("produce: %w", *err)
	}
	return nil
}

// produceSmall writes smallRecords records to each small topic.
func produceSmall(ctx context.Context, addrs []string, d dataSet) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ProducerLinger(20*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	var failed atomic.Pointer[error]
	for t := range d.SmallTopics {
		for i := range int64(smallRecords) {
			cl.Produce(ctx, &kgo.Record{Topic: d.smallTopic(t), Key: key(i), Value: value(i, d.ValueBytes)},
				func(_ *kgo.Record, err error) {
					if err != nil {
						failed.CompareAndSwap(nil, &err)
					}
				})
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	if err := failed.Load(); err != nil {
		return fmt.Errorf("produce to the small topics: %w", *err)
	}
	return nil
}

// commitGroups commits the readers' groups' offsets in every partition
// of the big topic (readerFractions of each end), the live group's at
// the ends, and each app group's at the end of one small topic.
func commitGroups(ctx context.Context, adm *kadm.Client, d dataSet) error {
	ends, err := adm.ListEndOffsets(ctx, bigTopic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return err
	}
	commit := func(group string, frac float64, ends kadm.ListedOffsets) error {
		os := kadm.Offsets{}
		ends.Each(func(lo kadm.ListedOffset) {
			os.Add(kadm.Offset{Topic: lo.Topic, Partition: lo.Partition, At: int64(float64(lo.Offset) * frac), LeaderEpoch: -1})
		})
		rs, err := adm.CommitOffsets(ctx, group, os)
		if err == nil {
			err = rs.Error()
		}
		if err != nil {
			return fmt.Errorf("commit %s: %w", group, err)
		}
		return nil
	}
	for g := range d.ReaderGroups {
		if err := commit(fmt.Sprintf(readersFmt, g+1), readerFractions[g%len(readerFractions)], ends); err != nil {
			return err
		}
	}
	if err := commit(liveGroup, 1, ends); err != nil {
		return err
	}
	for g := range d.AppGroups {
		t := d.smallTopic(g % max(1, d.SmallTopics))
		small, err := adm.ListEndOffsets(ctx, t)
		if err == nil {
			err = small.Error()
		}
		if err != nil {
			return err
		}
		if err := commit(fmt.Sprintf(appFmt, g), 1, small); err != nil {
			return err
		}
	}
	return nil
}

// liveMember joins the live group as one consumer of the big topic (its
// offsets are at the ends: it reads nothing) and stays, its fetching
// paused, until stop is called, so the group's page has a member with
// every partition.
func liveMember(ctx context.Context, addrs []string) (func(), error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumerGroup(liveGroup), kgo.ConsumeTopics(bigTopic),
		kgo.ClientID("console-live-member"))
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for cctx.Err() == nil {
			cl.PollFetches(cctx)
		}
	}()
	stop := func() {
		cancel()
		<-done
		cl.Close()
	}
	// Wait (a little) for the join, so the group's page shows the member.
	deadline := time.After(30 * time.Second)
	adm := kadm.NewClient(cl)
	for {
		gs, err := adm.DescribeGroups(ctx, liveGroup)
		if err == nil {
			if g, ok := gs[liveGroup]; ok && g.State == "Stable" && len(g.Members) > 0 {
				// It stays a member (heartbeats go on) but fetches no
				// more: its long polls would be counted in the pages'
				// Fetch requests.
				cl.PauseFetchTopics(bigTopic)
				return stop, nil
			}
		}
		select {
		case <-deadline:
			stop()
			return nil, errors.New("the live group's member did not join within 30s")
		case <-time.After(500 * time.Millisecond):
		}
	}
}
