package mirror

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// readTopic reads a topic of a cluster from its start to its last stable
// offsets as they were when it began (committed records only), calling fn
// for each record in partition order. A missing topic reads as empty.
//
// A consumer cannot see where control records (transaction markers) end,
// so a partition whose last records are markers is known to be read when
// two polls in a row bring nothing.
func (fl *flow) readTopic(ctx context.Context, cluster, topic string, fn func(*kgo.Record)) error {
	cl, err := fl.client(cluster,
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return fmt.Errorf("end offsets of %s on %s: %w", topic, cluster, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return fmt.Errorf("start offsets of %s on %s: %w", topic, cluster, err)
	}
	todo := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if errors.Is(o.Err, kerr.UnknownTopicOrPartition) {
			return
		}
		start := int64(0)
		if s, ok := starts.Lookup(o.Topic, o.Partition); ok && s.Err == nil {
			start = s.Offset
		}
		if o.Err == nil && o.Offset > start {
			todo[o.Partition] = o.Offset
		}
	})
	empty := 0
	for len(todo) > 0 && empty < 2 {
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ferr error
		fs.EachError(func(t string, p int32, e error) {
			if !errors.Is(e, context.DeadlineExceeded) && !errors.Is(e, context.Canceled) && ferr == nil {
				ferr = fmt.Errorf("read %s[%d] on %s: %w", t, p, cluster, e)
			}
		})
		if ferr != nil {
			return ferr
		}
		if fs.NumRecords() == 0 {
			empty++
			continue
		}
		empty = 0
		fs.EachRecord(func(r *kgo.Record) {
			if end, ok := todo[r.Partition]; ok {
				fn(r)
				if r.Offset+1 >= end {
					delete(todo, r.Partition)
				}
			}
		})
	}
	return nil
}
