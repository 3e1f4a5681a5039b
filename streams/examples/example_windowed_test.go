package examples_test

import (
	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/examples"
	"github.com/samsa-io/samsa/streams/serde"
)

// Tumbling windows of 10 s with 5 s of grace. Stream time is the largest
// timestamp seen; the window [0,10s) takes records until stream time
// reaches 15 s. The click at 8 s arrives after one at 12 s but within the
// grace, so it counts; the click at 3 s arrives when stream time is 15 s
// and is dropped (and counted in the dropped-records metric). The
// suppressed output holds each window's final count once, when its grace
// has passed: [0,10s) when stream time reaches 15 s, [10s,20s) at 25 s;
// bob's window [20s,30s) is still open at the end.
func ExampleClicksPerWindow() {
	d := driver(examples.ClicksPerWindow())
	defer d.Close()
	clicks := streams.NewInputTopic(d, "clicks", serde.String(), serde.String())
	pipe(clicks,
		rec("alice", "/home", 1000),
		rec("alice", "/cart", 12000),
		rec("alice", "/shoes", 8000), // out of order, within the grace
		rec("alice", "/pay", 15000),  // stream time 15 s closes [0,10s)
		rec("alice", "/home", 3000),  // late: dropped
		rec("bob", "/home", 25000),   // stream time 25 s closes [10s,20s)
	)
	size := examples.ClickWindowSize.Milliseconds()
	printTopic(d, "clicks-updates", timeWindowedSerde(size), serde.Int64())
	printTopic(d, "clicks-final", timeWindowedSerde(size), serde.Int64())
	// Output:
	// clicks-updates: alice[0,10000) = 1 @1000
	// clicks-updates: alice[10000,20000) = 1 @12000
	// clicks-updates: alice[0,10000) = 2 @8000
	// clicks-updates: alice[10000,20000) = 2 @15000
	// clicks-updates: bob[20000,30000) = 1 @25000
	// clicks-final: alice[0,10000) = 2 @8000
	// clicks-final: alice[10000,20000) = 2 @15000
}

// Hopping windows of 10 s advancing by 5 s: a click counts in each window
// that holds it, in the order of the windows' starts. Without grace a
// window closes when stream time reaches its end: at stream time 12 s,
// alice's click at 4 s is dropped ([0,10s) is closed), and bob's click at
// 9 s counts only in [5s,15s).
func ExampleClicksPerHoppingWindow() {
	d := driver(examples.ClicksPerHoppingWindow())
	defer d.Close()
	clicks := streams.NewInputTopic(d, "clicks", serde.String(), serde.String())
	pipe(clicks,
		rec("alice", "/home", 3000),
		rec("alice", "/cart", 7000),
		rec("alice", "/pay", 12000),
		rec("alice", "/home", 4000),
		rec("bob", "/home", 9000),
	)
	printTopic(d, "clicks-hopping", timeWindowedSerde(examples.HoppingWindowSize.Milliseconds()), serde.Int64())
	// Output:
	// clicks-hopping: alice[0,10000) = 1 @3000
	// clicks-hopping: alice[0,10000) = 2 @7000
	// clicks-hopping: alice[5000,15000) = 1 @7000
	// clicks-hopping: alice[5000,15000) = 2 @12000
	// clicks-hopping: alice[10000,20000) = 1 @12000
	// clicks-hopping: bob[5000,15000) = 1 @9000
}

// Sessions with a 5 s inactivity gap and 2 s of grace. alice's view at
// 3 s extends her session [0,0] to [0,3s]: the old session is deleted (a
// null value, stamped with its end) before the merged one is written.
// Her view at 16 s arrives after one at 20 s, but within the gap of it,
// so the two merge into [16s,20s]. The view at 1 s arrives when stream
// time is 20 s: its session would end before 20 - 5 - 2 = 13 s, so it is
// dropped.
func ExampleSessionsPerUser() {
	d := driver(examples.SessionsPerUser())
	defer d.Close()
	views := streams.NewInputTopic(d, "page-views", serde.String(), serde.String())
	pipe(views,
		rec("alice", "/home", 0),
		rec("alice", "/cart", 3000),
		rec("bob", "/home", 4000),
		rec("alice", "/home", 20000),
		rec("alice", "/news", 16000),
		rec("alice", "/late", 1000),
	)
	printTopic(d, "sessions", sessionWindowedSerde(), serde.Int64())
	// Output:
	// sessions: alice[0,0] = 1 @0
	// sessions: alice[0,0] = null @0
	// sessions: alice[0,3000] = 2 @3000
	// sessions: bob[4000,4000] = 1 @4000
	// sessions: alice[20000,20000] = 1 @20000
	// sessions: alice[20000,20000] = null @20000
	// sessions: alice[16000,20000] = 2 @20000
}
