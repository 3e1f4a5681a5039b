package examples

import (
	"time"

	"github.com/samsa-io/samsa/streams"
)

// ClickWindowSize is the size of ClicksPerWindow's windows; a reader of its
// output needs it to deserialize the windowed keys
// (serde.TimeWindowed(serde.String(), ClickWindowSize.Milliseconds())).
const ClickWindowSize = 10 * time.Second

// ClicksPerWindow counts the clicks (records of "clicks", keyed by user)
// per user in tumbling windows of 10 s that accept records up to 5 s late
// (the grace period). "clicks-updates" receives every update of a window's
// count; "clicks-final" receives one record per window, once the window
// has closed (stream time past its end plus the grace), thanks to
// Suppress(UntilWindowCloses).
func ClicksPerWindow() (*streams.Topology, error) {
	b := streams.NewBuilder()
	clicks := streams.From[string, string](b, []string{"clicks"}).GroupByKey()
	counts := streams.WindowedCount(clicks.WindowedBy(streams.OfSizeAndGrace(ClickWindowSize, 5*time.Second)))
	counts.ToStream().To("clicks-updates")
	counts.Suppress(streams.UntilWindowCloses(streams.Unbounded())).ToStream().To("clicks-final")
	return b.Build()
}

// HoppingWindowSize is the size of ClicksPerHoppingWindow's windows.
const HoppingWindowSize = 10 * time.Second

// ClicksPerHoppingWindow counts clicks per user in hopping windows of 10 s
// that start every 5 s, so each click counts in two windows (windows are
// aligned to the epoch: [0,10s), [5s,15s), ...). No grace: a window closes
// as soon as stream time reaches its end.
func ClicksPerHoppingWindow() (*streams.Topology, error) {
	b := streams.NewBuilder()
	clicks := streams.From[string, string](b, []string{"clicks"}).GroupByKey()
	windows := streams.OfSizeWithNoGrace(HoppingWindowSize).AdvanceBy(5 * time.Second)
	streams.WindowedCount(clicks.WindowedBy(windows)).ToStream().To("clicks-hopping")
	return b.Build()
}

// SessionsPerUser counts each user's page views per session: a session
// ends after 5 s without a view, and late views are accepted for 2 s
// more. A view that bridges two sessions merges them: the old sessions
// are deleted downstream (a record with a null value each) and the merged
// one is written. The output's keys are session-windowed
// (serde.SessionWindowed(serde.String())).
func SessionsPerUser() (*streams.Topology, error) {
	b := streams.NewBuilder()
	views := streams.From[string, string](b, []string{"page-views"}).GroupByKey()
	sessions := views.WindowedBySession(streams.OfInactivityGapAndGrace(5*time.Second, 2*time.Second))
	streams.SessionCount(sessions).ToStream().To("sessions")
	return b.Build()
}
