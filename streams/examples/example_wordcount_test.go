package examples_test

import (
	"fmt"

	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/examples"
	"github.com/samsa-io/samsa/streams/serde"
)

// Each line updates the count of each of its words; the count's timestamp
// is the latest of the records counted.
func ExampleWordCount() {
	d := driver(examples.WordCount("lines", "word-counts"))
	defer d.Close()
	lines := streams.NewInputTopic(d, "lines", serde.String(), serde.String())
	pipe(lines,
		streams.Record[string, string]{Value: "Hello Kafka Streams", NullKey: true, Timestamp: 1000},
		streams.Record[string, string]{Value: "streams in Go", NullKey: true, Timestamp: 2000},
		streams.Record[string, string]{Value: "hello again", NullKey: true, Timestamp: 3000},
	)
	printTopic(d, "word-counts", serde.String(), serde.Int64())
	// Output:
	// word-counts: hello = 1 @1000
	// word-counts: kafka = 1 @1000
	// word-counts: streams = 1 @1000
	// word-counts: streams = 2 @2000
	// word-counts: in = 1 @2000
	// word-counts: go = 1 @2000
	// word-counts: hello = 2 @3000
	// word-counts: again = 1 @3000
}

// Describe prints the topology as Kafka Streams prints the same program:
// the grouping by word splits it in two subtopologies joined by a
// repartition topic.
func ExampleWordCount_describe() {
	topo, err := examples.WordCount("lines", "word-counts")
	if err != nil {
		panic(err)
	}
	desc, err := topo.Describe()
	if err != nil {
		panic(err)
	}
	fmt.Print(desc)
	// Output:
	// Topologies:
	//    Sub-topology: 0
	//     Source: KSTREAM-SOURCE-0000000000 (topics: [lines])
	//       --> KSTREAM-FLATMAPVALUES-0000000001
	//     Processor: KSTREAM-FLATMAPVALUES-0000000001 (stores: [])
	//       --> KSTREAM-KEY-SELECT-0000000002
	//       <-- KSTREAM-SOURCE-0000000000
	//     Processor: KSTREAM-KEY-SELECT-0000000002 (stores: [])
	//       --> counts-repartition-filter
	//       <-- KSTREAM-FLATMAPVALUES-0000000001
	//     Processor: counts-repartition-filter (stores: [])
	//       --> counts-repartition-sink
	//       <-- KSTREAM-KEY-SELECT-0000000002
	//     Sink: counts-repartition-sink (topic: counts-repartition)
	//       <-- counts-repartition-filter
	//
	//   Sub-topology: 1
	//     Source: counts-repartition-source (topics: [counts-repartition])
	//       --> KSTREAM-AGGREGATE-0000000003
	//     Processor: KSTREAM-AGGREGATE-0000000003 (stores: [counts])
	//       --> KTABLE-TOSTREAM-0000000007
	//       <-- counts-repartition-source
	//     Processor: KTABLE-TOSTREAM-0000000007 (stores: [])
	//       --> KSTREAM-SINK-0000000008
	//       <-- KSTREAM-AGGREGATE-0000000003
	//     Sink: KSTREAM-SINK-0000000008 (topic: word-counts)
	//       <-- KTABLE-TOSTREAM-0000000007
}
