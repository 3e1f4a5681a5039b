package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Bounds of one read. A page reads with a short-lived client from
// exact offsets up to end offsets known beforehand, so it never waits for
// records that are not there; these bound what a slow broker, a huge
// record or a filter that matches nothing can cost.
var (
	// msgsReadTime bounds one page's read (a filter's scan included).
	msgsReadTime = 2 * time.Second
	// msgsScanRecords bounds the records a filter scans per request.
	msgsScanRecords = 10_000
	// msgsKeepBytes bounds the bytes of the records a read keeps.
	msgsKeepBytes = 32 << 20
	// msgsFetchPartitionBytes is what one fetch asks of each partition: a
	// few batches, since a page needs a few records of each of many
	// partitions, and a read of many partitions would otherwise fetch
	// megabytes from each to use one record. A read of more partitions
	// than msgsFetchAllBytes allows at that size asks less of each, down
	// to msgsFetchPartitionMin, one batch of the producers' usual size
	// (Java's batch.size): a larger batch comes whole only to the first
	// partition of a response (KIP-74), so such a topic's partitions are
	// read one a fetch.
	msgsFetchPartitionBytes int32 = 64 << 10
	msgsFetchPartitionMin   int32 = 16 << 10
	msgsFetchAllBytes             = 1 << 20
	// msgsForwardRounds bounds the extra reads of a forward page (see
	// msgsReadPage).
	msgsForwardRounds = 8
)

// msgsFetched counts the records the reads' fetches returned (control
// records and those past a cursor's quota included): what a page cost,
// for tests.
var msgsFetched atomic.Int64

// msgsOffsets are a topic's partitions' log start and end offsets, listed
// once (one ListOffsets each) before a read.
type msgsOffsets struct {
	start, end map[int32]int64
	partitions int32
}

// msgsListOffsets lists topic's start and end offsets (the last stable
// offsets for read_committed). A missing topic is a 404.
func (c *Console) msgsListOffsets(ctx context.Context, r *http.Request, topic string, committed bool) (*msgsOffsets, error) {
	adm := c.admin(r)
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	var ends kadm.ListedOffsets
	if committed {
		ends, err = adm.ListCommittedOffsets(ctx, topic)
	} else {
		ends, err = adm.ListEndOffsets(ctx, topic)
	}
	if err != nil {
		return nil, err
	}
	o := &msgsOffsets{start: map[int32]int64{}, end: map[int32]int64{}}
	for _, set := range []struct {
		l  kadm.ListedOffsets
		to map[int32]int64
	}{{starts, o.start}, {ends, o.end}} {
		ps, ok := set.l[topic]
		if !ok || len(ps) == 0 {
			return nil, statusErr(http.StatusNotFound, fmt.Errorf("topic %q does not exist", topic))
		}
		for p, lo := range ps {
			if lo.Err != nil {
				if errors.Is(lo.Err, kerr.UnknownTopicOrPartition) {
					return nil, statusErr(http.StatusNotFound, fmt.Errorf("topic %q does not exist", topic))
				}
				return nil, fmt.Errorf("partition %d: %w", p, lo.Err)
			}
			set.to[p] = lo.Offset
		}
	}
	o.partitions = int32(len(o.end))
	return o, nil
}

// msgsCursor is one partition's part of a read: the offsets [from, to)
// to scan, at most limit records of them.
type msgsCursor struct {
	partition int32
	from, to  int64
	limit     int // records scanned at most; 0: no limit

	next    int64 // the offset after the last record seen
	scanned int
	done    bool
}

// msgsPartitionBytes is what a fetch asks of each of np partitions.
func msgsPartitionBytes(np int) int32 {
	return max(msgsFetchPartitionMin, min(msgsFetchPartitionBytes, int32(msgsFetchAllBytes/max(1, np))))
}

// msgsVerdict is what a visit tells the scan.
type msgsVerdict int

const (
	msgsMore          msgsVerdict = iota // go on
	msgsPartitionDone                    // this partition has enough
	msgsStop                             // the read has enough
)

// msgsScanResult says how a scan ended when it did not finish.
type msgsScanResult struct {
	TimedOut bool
	Err      error // a fetch error (a broker down): what was read stands
}

// msgsScan reads the cursors' ranges with a short-lived client from their
// exact offsets, calling visit with each data record in offset order per
// partition (control records only advance the cursor), until every cursor
// is done, visit says stop, or budget runs out. It returns early, with
// what it has, on a fetch error.
func (c *Console) msgsScan(ctx context.Context, r *http.Request, topic string, cursors map[int32]*msgsCursor, committed bool, budget time.Duration, visit func(cur *msgsCursor, rec *kgo.Record) msgsVerdict) (msgsScanResult, error) {
	offsets := map[int32]kgo.Offset{}
	for p, cur := range cursors {
		// A cursor read before (a forward page's further round) goes on
		// where it stopped.
		cur.next = max(cur.next, cur.from)
		cur.done = cur.next >= cur.to || (cur.limit > 0 && cur.scanned >= cur.limit)
		if cur.done {
			continue
		}
		offsets[p] = kgo.NewOffset().At(cur.next)
	}
	if len(offsets) == 0 {
		return msgsScanResult{}, nil
	}
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl, err := c.newClient(r,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchIsolationLevel(iso),
		kgo.KeepControlRecords(), // a marker at the end still tells that the end is reached
		kgo.FetchMaxWait(200*time.Millisecond),
		kgo.FetchMaxBytes(16<<20),
		kgo.FetchMaxPartitionBytes(msgsPartitionBytes(len(offsets))),
		kgo.DisableFetchSessions(),
	)
	if err != nil {
		return msgsScanResult{}, err
	}
	defer cl.Close()
	rctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	open := len(offsets)
	finish := func(cur *msgsCursor) {
		if !cur.done {
			cur.done = true
			open--
		}
	}
	openParts := func() []int32 {
		var ps []int32
		for p, cur := range cursors {
			if !cur.done {
				ps = append(ps, p)
			}
		}
		return ps
	}
	var res msgsScanResult
	for open > 0 {
		fs := cl.PollFetches(rctx)
		if rctx.Err() != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			res.TimedOut = true
			return res, nil
		}
		// The client fetches again as soon as a poll takes its buffer:
		// every partition is paused while the records are visited, so the
		// next fetch asks only for those that still need records, not
		// again for all (which doubled what a read of many partitions
		// fetched).
		cl.PauseFetchPartitions(map[string][]int32{topic: openParts()})
		stop := false
		msgsFetched.Add(int64(fs.NumRecords()))
		fs.EachError(func(_ string, p int32, err error) {
			if res.Err == nil {
				res.Err = fmt.Errorf("partition %d: %w", p, err)
			}
		})
		fs.EachRecord(func(rec *kgo.Record) {
			cur := cursors[rec.Partition]
			if stop || cur == nil || cur.done || rec.Offset < cur.next {
				return
			}
			cur.next = rec.Offset + 1
			if rec.Offset >= cur.to {
				// A record past the end listed before the read: the page
				// stays on what was there.
				cur.next = cur.to
				finish(cur)
				return
			}
			if !rec.Attrs.IsControl() {
				cur.scanned++
				switch visit(cur, rec) {
				case msgsPartitionDone:
					finish(cur)
				case msgsStop:
					stop = true
				}
			}
			if cur.next >= cur.to || (cur.limit > 0 && cur.scanned >= cur.limit) {
				finish(cur)
			}
		})
		if stop {
			return res, nil
		}
		if res.Err != nil {
			return res, nil
		}
		if open > 0 {
			cl.ResumeFetchPartitions(map[string][]int32{topic: openParts()})
		}
	}
	return res, nil
}

// msgsPage is one page's records and the exact positions around them.
type msgsPage struct {
	Records []*msgsRecord
	// Older and Newer are per-partition offsets: the page before is the
	// records below Older, the page after the records from Newer on;
	// nil when there is nothing that way.
	Older, Newer map[int32]int64
	Scanned      int  // records scanned (a filter's count)
	Partial      bool // a partition's scan stopped at its bound before its end
	TimedOut     bool
	ReadErr      error
	KeptBytes    int
	BytesCut     bool
}

// msgsReadPage reads one page: forward from cursors' from (the oldest n
// matches across partitions, by timestamp) or backward (the newest n
// matches below cursors' to). Each partition's kept records are a run
// of its offsets, so the positions of the next pages are exact.
//
// A forward read without a filter first reads each partition's quota
// (cursors' limit, a few times its fair share of the page), then, as a
// k-way merge must, reads further only the partitions that stopped at
// their quota with their last record not after the page's last (they
// may hold records the page shows before it), or all that have more
// when the page is short, a few rounds at most.
func (c *Console) msgsReadPage(ctx context.Context, r *http.Request, q *msgsQuery, cursors map[int32]*msgsCursor, backward bool, n int, budget time.Duration) (*msgsPage, error) {
	matched := map[int32][]*msgsRecord{}
	pg := &msgsPage{}
	dec := c.msgsDecoder(r, q.decode)
	deadline := time.Now().Add(budget)
	visit := func(cur *msgsCursor, rec *kgo.Record) msgsVerdict {
		pg.Scanned++
		m := dec.record(ctx, rec)
		if ok, ferr := q.filter.match(m); ferr != nil {
			q.filter.noteErr(m, ferr)
			return msgsMore
		} else if !ok {
			return msgsMore
		}
		m.shrink()
		matched[cur.partition] = append(matched[cur.partition], m)
		pg.KeptBytes += len(rec.Key) + len(rec.Value)
		if pg.KeptBytes > msgsKeepBytes {
			pg.BytesCut = true
			return msgsStop
		}
		if !backward && len(matched[cur.partition]) >= n {
			return msgsPartitionDone // later ones of this partition cannot make the page
		}
		return msgsMore
	}
	res, err := c.msgsScan(ctx, r, q.topic, cursors, q.committed, budget, visit)
	for round := 0; err == nil && !backward && !q.filter.active() && round < msgsForwardRounds &&
		!res.TimedOut && res.Err == nil && !pg.BytesCut; round++ {
		more := msgsForwardMore(cursors, matched, n)
		left := time.Until(deadline)
		if len(more) == 0 {
			break
		}
		if left <= 0 {
			res.TimedOut = true
			break
		}
		share := msgsShare(n, len(more))
		for _, cur := range more {
			cur.limit = cur.scanned + share
		}
		res, err = c.msgsScan(ctx, r, q.topic, more, q.committed, left, visit)
	}
	if err != nil {
		return nil, err
	}
	pg.TimedOut, pg.ReadErr = res.TimedOut, res.Err
	count := map[int32]int{}
	for p, ms := range matched {
		count[p] = len(ms)
		if backward && len(ms) > n {
			matched[p] = ms[len(ms)-n:] // only the last n of a partition can make the page
		}
	}
	kept := msgsMerge(matched, n, backward)
	pg.Records = kept
	// Positions: a partition whose matches were all kept continues where
	// its scan stopped; one with matches left out continues at them.
	keptBy := map[int32][]*msgsRecord{}
	for _, m := range kept {
		keptBy[m.Partition] = append(keptBy[m.Partition], m)
	}
	pg.Older, pg.Newer = map[int32]int64{}, map[int32]int64{}
	for p, cur := range cursors {
		k := keptBy[p]
		sort.Slice(k, func(i, j int) bool { return k[i].Offset < k[j].Offset })
		dropped := count[p] > len(k)
		older, newer := cur.from, cur.next
		switch {
		case dropped && backward && len(k) > 0:
			older = k[0].Offset
		case dropped && backward:
			older = cur.next
		case dropped && len(k) > 0:
			newer = k[len(k)-1].Offset + 1
		case dropped:
			newer = cur.from
		}
		pg.Older[p], pg.Newer[p] = older, newer
		if cur.limit > 0 && cur.scanned >= cur.limit && cur.next < cur.to {
			pg.Partial = true
		}
	}
	return pg, nil
}

// msgsForwardMore are the cursors a forward page must read further: of
// those that stopped at their quota before their end, all when the page
// is short, otherwise those whose last record is not after the page's
// last (the merge, which takes the earlier timestamp and on a tie the
// lower partition, could show their next records before it).
func msgsForwardMore(cursors map[int32]*msgsCursor, matched map[int32][]*msgsRecord, n int) map[int32]*msgsCursor {
	kept := msgsMerge(matched, n, false)
	more := map[int32]*msgsCursor{}
	for p, cur := range cursors {
		if cur.limit == 0 || cur.scanned < cur.limit || cur.next >= cur.to {
			continue // at its end, or stopped with enough of its own
		}
		if ms := matched[p]; len(kept) >= n && len(ms) > 0 {
			last, mine := kept[len(kept)-1], ms[len(ms)-1]
			if mine.Timestamp.After(last.Timestamp) || (mine.Timestamp.Equal(last.Timestamp) && p >= last.Partition) {
				continue
			}
		}
		more[p] = cur
	}
	return more
}

// msgsFillBackward extends a backward page that came out short (its
// windows held transaction markers, aborted records, compacted gaps, or
// most partitions were empty) with reads further back, a few rounds at
// most, sharing what is missing among the partitions that have more.
func (c *Console) msgsFillBackward(ctx context.Context, r *http.Request, q *msgsQuery, o *msgsOffsets, pg *msgsPage, deadline time.Time) error {
	for round := 0; round < 4 && len(pg.Records) < q.limit && !pg.TimedOut && pg.ReadErr == nil && !pg.BytesCut; round++ {
		var active []int32
		for p, older := range pg.Older {
			if older > o.start[p] {
				active = append(active, p)
			}
		}
		left := time.Until(deadline)
		if len(active) == 0 || left <= 0 {
			return nil
		}
		need := q.limit - len(pg.Records)
		share := msgsShare(need, len(active))
		cursors := map[int32]*msgsCursor{}
		for _, p := range active {
			to := pg.Older[p]
			cursors[p] = &msgsCursor{partition: p, from: max(o.start[p], to-int64(share)), to: to}
		}
		more, err := c.msgsReadPage(ctx, r, q, cursors, true, need, left)
		if err != nil {
			return err
		}
		pg.Records = append(more.Records, pg.Records...)
		for p, older := range more.Older {
			pg.Older[p] = older
		}
		pg.Scanned += more.Scanned
		pg.TimedOut, pg.ReadErr, pg.BytesCut = more.TimedOut, more.ReadErr, more.BytesCut
	}
	return nil
}

// msgsMerge picks n records across partitions, each partition's list in
// offset order: forward the earliest by timestamp, taking from the
// partitions' heads; backward the latest, taking from their tails. The
// result is in the order to show, oldest first.
func msgsMerge(by map[int32][]*msgsRecord, n int, backward bool) []*msgsRecord {
	parts := make([]int32, 0, len(by))
	for p := range by {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	lo, hi := map[int32]int{}, map[int32]int{}
	for _, p := range parts {
		hi[p] = len(by[p])
	}
	var out []*msgsRecord
	for len(out) < n {
		best := int32(-1)
		var bestRec *msgsRecord
		for _, p := range parts {
			if lo[p] >= hi[p] {
				continue
			}
			var m *msgsRecord
			if backward {
				m = by[p][hi[p]-1]
			} else {
				m = by[p][lo[p]]
			}
			if bestRec == nil || (!backward && m.Timestamp.Before(bestRec.Timestamp)) || (backward && m.Timestamp.After(bestRec.Timestamp)) {
				best, bestRec = p, m
			}
		}
		if bestRec == nil {
			break
		}
		if backward {
			hi[best]--
		} else {
			lo[best]++
		}
		out = append(out, bestRec)
	}
	if backward {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}
