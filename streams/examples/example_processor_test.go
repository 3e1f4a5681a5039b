package examples_test

import (
	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/examples"
	"github.com/samsa-io/samsa/streams/serde"
)

// A stream-time punctuation fires with the first record, then each time
// stream time reaches the next multiple of the interval (10 s, 20 s ...);
// after a jump over several intervals it fires once. The records' arrival
// times play no part: the view at 9.999 s is summed at 10 s.
func ExampleViewSummaries() {
	d := driver(examples.ViewSummaries())
	defer d.Close()
	views := streams.NewInputTopic(d, "views", serde.String(), serde.String())
	pipe(views,
		rec("/home", "alice", 0), // first record: punctuation at 0
		rec("/cart", "alice", 4000),
		rec("/home", "bob", 9999),
		rec("/home", "carol", 10000), // stream time 10 s: punctuation
		rec("/cart", "bob", 13000),
		rec("/pay", "bob", 20000),   // 20 s
		rec("/home", "dave", 45000), // a jump: one punctuation, the next at 55 s
	)
	printTopic(d, "view-summaries", serde.String(), serde.Int64())
	// Output:
	// view-summaries: /home = 1 @0
	// view-summaries: /cart = 1 @10000
	// view-summaries: /home = 2 @10000
	// view-summaries: /cart = 1 @20000
	// view-summaries: /pay = 1 @20000
	// view-summaries: /home = 1 @45000
}
