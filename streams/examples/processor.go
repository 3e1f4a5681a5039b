package examples

import (
	"sort"
	"time"

	"github.com/samsa-io/samsa/streams"
)

// ViewSummaryInterval is how much stream time ViewSummaries summarizes at
// a time.
const ViewSummaryInterval = 10 * time.Second

// ViewSummaries counts page views per page with the Processor API and, on
// a stream-time punctuation every 10 s, forwards each page's count since
// the last punctuation (stamped with the punctuation's time) and starts
// over. Stream time only moves with the records' timestamps, so the
// summaries are the same however fast the records arrive.
//
// The counts live in the processor, not in a state store: the Processor
// API has no typed accessor for stores yet (see docs/STREAMS.md), so they
// are lost when the task moves or restarts.
func ViewSummaries() (*streams.Topology, error) {
	b := streams.NewBuilder()
	views := streams.From[string, string](b, []string{"views"})
	summaries := streams.Process(views, func() streams.Processor[string, string, string, int64] {
		return &viewCounter{}
	}, nil)
	summaries.To("view-summaries")
	return b.Build()
}

// viewCounter is one task's processor: Init schedules the punctuation,
// Process counts.
type viewCounter struct {
	ctx    streams.ProcessorContext[string, int64]
	counts map[string]int64
}

func (p *viewCounter) Init(ctx streams.ProcessorContext[string, int64]) error {
	p.ctx, p.counts = ctx, map[string]int64{}
	ctx.Schedule(ViewSummaryInterval, streams.StreamTime, p.emit)
	return nil
}

func (p *viewCounter) Process(r streams.Record[string, string]) error {
	if !r.NullKey {
		p.counts[r.Key]++
	}
	return nil
}

// emit forwards the counts in page order (a map's order is random).
func (p *viewCounter) emit(timestamp int64) {
	pages := make([]string, 0, len(p.counts))
	for page := range p.counts {
		pages = append(pages, page)
	}
	sort.Strings(pages)
	for _, page := range pages {
		p.ctx.Forward(streams.Record[string, int64]{Key: page, Value: p.counts[page], Timestamp: timestamp})
	}
	clear(p.counts)
}

func (p *viewCounter) Close() error { return nil }
