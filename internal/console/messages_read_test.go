package console

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMessagesReadBounded: forward pages over many partitions (oldest,
// the newer pager, a time, an offset in one partition) read only a few
// batches of each partition, not megabytes of each, and still merge by
// timestamp: a partition whose records are all older than the others'
// fills the page alone, read further than its first quota.
func TestMessagesReadBounded(t *testing.T) {
	const page, parts, perPart = 20, 10, 400
	tc := startConsole(t, Config{PageSize: page})
	msgsLongReads(t)
	if _, err := tc.Admin.CreateTopic(ctx(t), parts, 1, nil, "wide"); err != nil {
		t.Fatal(err)
	}
	// Batches of 10 records of 2 KiB per partition; record i of
	// partition p is at msgsBase + 10i+p seconds, partition 3's an hour
	// earlier (all before every other partition's).
	// Random values: compressed, repeated bytes would fit a whole
	// partition in one small fetch.
	rnd := rand.NewChaCha8([32]byte{1})
	for round := range perPart / 10 {
		var recs []*kgo.Record
		for i := round * 10; i < round*10+10; i++ {
			for p := range int32(parts) {
				ts := msgsBase.Add(time.Duration(10*i+int(p)) * time.Second)
				if p == 3 {
					ts = ts.Add(-time.Hour)
				}
				value := make([]byte, 2<<10)
				_, _ = rnd.Read(value)
				recs = append(recs, &kgo.Record{Topic: "wide", Partition: p, Value: value, Timestamp: ts})
			}
		}
		msgsProduce(t, tc, recs...)
	}
	const base = "/topics/wide/messages"
	// fetched is what a page's reads fetched; a read fetching 1 MiB of
	// every partition reads the whole topic (4,000 records).
	fetched := func(path string, want []string, bound int64) string {
		t.Helper()
		before := msgsFetched.Load()
		body := msgsWant(t, tc, path, want)
		if n := msgsFetched.Load() - before; n > bound {
			t.Errorf("%s: the read fetched %d records for a page of %d, want at most %d", path, n, len(want), bound)
		} else {
			t.Logf("%s: fetched %d records", path, n)
		}
		return body
	}
	run := func(p int32, from, n int) []string {
		var out []string
		for i := from; i < from+n; i++ {
			out = append(out, fmt.Sprintf("%d/%d", p, i))
		}
		return out
	}
	const bound = 5 * page * parts / 2 // 100 records a partition: a few batches
	body := fetched(base+"?from=oldest", run(3, 0, page), bound)
	fetched(msgsLink(t, body, "next"), run(3, page, page), bound)

	// From msgsBase+1000 s: records g = 10i+p from 1000 on, partition 3
	// having none.
	var want []string
	for g := 1000; len(want) < page; g++ {
		if g%10 != 3 {
			want = append(want, fmt.Sprintf("%d/%d", g%10, g/10))
		}
	}
	ts := msgsBase.Add(1000 * time.Second).Format("2006-01-02T15:04:05")
	fetched(base+"?from=time&ts="+ts, want, bound)

	fetched(base+"?p=5&from=offset&offset=100", run(5, 100, page), 100)
}
