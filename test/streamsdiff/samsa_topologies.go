package streamsdiff

import "testing"

// runSamsaTopologies starts the six topologies of java/Main.java written
// with Samsa's streams library against bootstrap: each its own App with
// application.id prefix+name (wordcount, windowed, session, stream-stream,
// stream-table, fk), output topics prefix+name (created by the harness),
// and Main.java's config (statestore.cache.max.bytes=0,
// commit.interval.ms=100, at_least_once, max.task.idle.ms=0, one thread;
// docs/streams/DIFFERENTIAL.md says why). It returns once every App runs
// and stops them when the test ends (t.Cleanup); an App that dies later
// calls reportFailure(prefix, err), which ends the harness's wait for its
// output at once. The harness finds the internal topics by Kafka Streams'
// names (<application.id>-...-repartition, <application.id>-...-topic) to
// know when an App has consumed everything. Main.java also sets Kafka
// Streams' internal outer-join emit interval to 0; the Go side must emit
// left and outer joins' unmatched results as soon as stream time closes
// their window.
func runSamsaTopologies(t *testing.T, bootstrap, prefix string) {
	t.Helper()
	_, _ = bootstrap, prefix
	t.Fatal("Samsa's topologies are written by the lead")
}
