package streams_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/serde"
)

// TestStreamTimePunctuationSchedule pins Kafka's PunctuationSchedule: due
// at 0, then one interval after the time that was due, or one interval
// after now when a jump passed that too.
func TestStreamTimePunctuationSchedule(t *testing.T) {
	var fired []string
	b := streams.NewBuilder()
	s := streams.From[string, string](b, []string{"in"})
	streams.Process(s, func() streams.Processor[string, string, string, string] {
		return &punctuator{fired: &fired}
	}, nil)
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := streams.NewTestDriver(topo, streams.TestDriverConfig{})
	if err != nil {
		t.Fatal(err)
	}
	in := streams.NewInputTopic(d, "in", serde.String(), serde.String())
	for _, ts := range []int64{1000, 10500, 20000, 20600, 45000, 51000} {
		if err := in.Pipe("k", "v", ts); err != nil {
			t.Fatal(err)
		}
	}
	// Due 0 (fires at 1000), 10000 (at 10500), 20000 (at 20000), 30000
	// (at 45000, a jump: next 55000), none at 51000.
	if got, want := strings.Join(fired, " "), "1000 10500 20000 45000"; got != want {
		t.Fatalf("punctuations at %s, want %s", got, want)
	}
}

type punctuator struct{ fired *[]string }

func (p *punctuator) Init(ctx streams.ProcessorContext[string, string]) error {
	ctx.Schedule(10*time.Second, streams.StreamTime, func(ts int64) { *p.fired = append(*p.fired, fmt.Sprint(ts)) })
	return nil
}
func (p *punctuator) Process(streams.Record[string, string]) error { return nil }
func (p *punctuator) Close() error                                 { return nil }
