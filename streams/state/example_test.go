package state_test

import (
	"fmt"
	"log"

	"github.com/samsa-io/samsa/streams/state"
)

// A KTable's store as the runtime layers it: a timestamped store, logged to
// its changelog, cached. Two updates of one key within a commit interval
// reach the changelog and the downstream listener once.
func Example() {
	rc := &state.RecordContext{} // the task's current record
	logged := state.LogTimestampedKeyValueStore(state.NewInMemoryKeyValueStore("counts"), rc,
		func(key, value []byte, ts int64) { fmt.Printf("changelog %s=%s @%d\n", key, value, ts) })
	cache, err := state.NewCache(10 << 20)
	if err != nil {
		log.Fatal(err)
	}
	table, err := state.NewCachingKeyValueStore(logged, cache, "0_0-counts", rc,
		func(key, newValue, oldValue []byte, ts int64) {
			v, _, _ := state.SplitValueAndTimestamp(newValue)
			fmt.Printf("forward %s=%s @%d\n", key, v, ts)
		})
	if err != nil {
		log.Fatal(err)
	}
	for ts, count := range []string{"1", "2"} {
		rc.Timestamp = int64(100 + ts)
		if err := table.Put([]byte("word"), state.ValueWithTimestamp([]byte(count), rc.Timestamp)); err != nil {
			log.Fatal(err)
		}
	}
	// The runtime's commit: flush (changelog records into the producer),
	// flush the producer or commit the transaction, commit the stores,
	// then write the checkpoint.
	if err := table.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := table.Commit(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// changelog word=2 @101
	// forward word=2 @101
}
