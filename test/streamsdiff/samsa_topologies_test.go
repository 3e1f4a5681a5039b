package streamsdiff

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/task"
	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/serde"
)

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
	topos, err := samsaTopologies(prefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, app := range apps {
		a, err := streams.New(topos[app.name], samsaConfig(bootstrap, prefix+app.name, t.TempDir()))
		if err != nil {
			t.Fatalf("%s: %v", app.name, err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		err = a.Start(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%s: start: %v", app.name, err)
		}
		t.Cleanup(func() { a.Close() })
		watch(t, a, prefix, app.name)
	}
}

// watch reports an application that stops before the test ends.
func watch(t *testing.T, a *streams.App, prefix, name string) {
	g := task.NewGroup(context.Background())
	t.Cleanup(g.Stop)
	g.Go(func(ctx context.Context) {
		select {
		case <-a.Done():
			reportFailure(prefix, fmt.Errorf("%s stopped: %v", name, a.Err()))
		case <-ctx.Done():
		}
	})
}

// samsaConfig is Main.java's config(): see its comment and
// DIFFERENTIAL.md.
func samsaConfig(bootstrap, appID, stateDir string) streams.Config {
	zero, emitAlways := int64(0), time.Duration(0)
	return streams.Config{
		ApplicationID:         appID,
		BootstrapServers:      []string{bootstrap},
		StateDir:              stateDir,
		CacheMaxBytes:         &zero,
		CommitInterval:        100 * time.Millisecond,
		ProcessingGuarantee:   streams.AtLeastOnce,
		MaxTaskIdle:           0,
		NumStreamThreads:      1,
		ReplicationFactor:     1,
		AutoOffsetReset:       "earliest",
		OuterJoinEmitInterval: &emitAlways,
	}
}

// samsaTopologies builds the six topologies, by application name.
func samsaTopologies(prefix string) (map[string]*streams.Topology, error) {
	out := map[string]*streams.Topology{}
	for name, build := range map[string]func(*streams.Builder, string){
		"wordcount":     wordCount,
		"windowed":      windowed,
		"session":       session,
		"stream-stream": streamStream,
		"stream-table":  streamTable,
		"fk":            foreignKey,
	} {
		b := streams.NewBuilder()
		build(b, prefix)
		topo, err := b.Build()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = topo
	}
	return out, nil
}

var (
	sS = serde.String()
	sL = serde.Int64()
)

// javaNonWord is Java's \W: ASCII only, as java.util.regex without
// UNICODE_CHARACTER_CLASS (Go's \W is ASCII too).
var javaNonWord = regexp.MustCompile(`\W+`)

// windowKey is Main.windowKey: key@start/end.
func windowKey(wk streams.Windowed[string]) string {
	return fmt.Sprintf("%s@%d/%d", wk.Key, wk.Window.Start, wk.Window.End)
}

// windowKeyed is Main's map((wk, v) -> pair(windowKey(wk), v)): the value
// goes through as it is, a null (a merged session's tombstone) included.
func windowKeyed(t *streams.Table[streams.Windowed[string], int64]) *streams.Stream[string, int64] {
	return streams.MapNullable(t.ToStream(), func(wk streams.Windowed[string], v *int64) (string, *int64) {
		return windowKey(wk), v
	})
}

// wordCount is T1. Java's toLowerCase(Locale.ROOT) maps the same letters
// as strings.ToLower for this input.
func wordCount(b *streams.Builder, prefix string) {
	lines := streams.From(b, []string{"wc-in"}, streams.Consumed[string, string]{Key: sS, Value: sS})
	words := streams.FlatMapValues(lines, func(_ string, line string) []string {
		var ws []string
		for _, w := range javaNonWord.Split(strings.ToLower(line), -1) {
			if w != "" {
				ws = append(ws, w)
			}
		}
		return ws
	})
	streams.GroupBy(words, func(_, w string) string { return w }, streams.Grouped[string, string]{Key: sS, Value: sS}).
		Count(streams.Materialized[string, int64]{Key: sS, Value: sL}).
		ToStream().
		To(prefix+"wc-out", streams.Produced[string, int64]{Key: sS, Value: sL})
}

// windowed is T2. The reducer gets 0 for a null value (Java's gets null
// and keeps the sum): a null adds nothing either way.
func windowed(b *streams.Builder, prefix string) {
	in := streams.From(b, []string{"win-in"}, streams.Consumed[string, int64]{Key: sS, Value: sL})
	grouped := streams.Grouped[string, int64]{Key: sS, Value: sL}
	counted := streams.Materialized[string, int64]{Key: sS, Value: sL}
	tumbling := streams.WindowedReduce(in.GroupByKey(grouped).WindowedBy(streams.OfSizeAndGrace(10*time.Second, 5*time.Second)),
		func(sum, v int64) int64 { return sum + v }, counted)
	windowKeyed(tumbling.Suppress(streams.UntilWindowCloses(streams.Unbounded()))).
		To(prefix+"win-out", streams.Produced[string, int64]{Key: sS, Value: sL})
	hopping := streams.WindowedCount(in.GroupByKey(grouped).
		WindowedBy(streams.OfSizeAndGrace(10*time.Second, 5*time.Second).AdvanceBy(5*time.Second)), counted)
	windowKeyed(hopping).To(prefix+"hop-out", streams.Produced[string, int64]{Key: sS, Value: sL})
	sliding := streams.WindowedCount(in.GroupByKey(grouped).
		WindowedBySliding(streams.OfTimeDifferenceAndGrace(5*time.Second, 5*time.Second)), counted)
	windowKeyed(sliding).To(prefix+"slide-out", streams.Produced[string, int64]{Key: sS, Value: sL})
}

// session is T3.
func session(b *streams.Builder, prefix string) {
	in := streams.From(b, []string{"sess-in"}, streams.Consumed[string, int64]{Key: sS, Value: sL})
	counts := streams.SessionCount(in.GroupByKey(streams.Grouped[string, int64]{Key: sS, Value: sL}).
		WindowedBySession(streams.OfInactivityGapAndGrace(5*time.Second, 2*time.Second)),
		streams.Materialized[string, int64]{Key: sS, Value: sL})
	windowKeyed(counts).To(prefix+"sess-out", streams.Produced[string, int64]{Key: sS, Value: sL})
}

// orNull prints a missing join side as Java's string concatenation does.
func orNull(v *string) string {
	if v == nil {
		return "null"
	}
	return *v
}

// streamStream is T4.
func streamStream(b *streams.Builder, prefix string) {
	left := streams.From(b, []string{"ssj-left"}, streams.Consumed[string, string]{Key: sS, Value: sS})
	right := streams.From(b, []string{"ssj-right"}, streams.Consumed[string, string]{Key: sS, Value: sS})
	w := streams.JoinWindowsOfTimeDifferenceAndGrace(5*time.Second, 2*time.Second)
	joined := streams.StreamJoined[string, string, string]{Key: sS, Value: sS, OtherValue: sS}
	produced := streams.Produced[string, string]{Key: sS, Value: sS}
	streams.StreamStreamJoin(left, right, func(_ string, l, r string) string { return l + "+" + r }, w, joined).
		To(prefix+"ssj-inner", produced)
	streams.StreamStreamLeftJoin(left, right, func(_ string, l string, r *string) string { return l + "+" + orNull(r) }, w, joined).
		To(prefix+"ssj-left", produced)
	streams.StreamStreamOuterJoin(left, right, func(_ string, l, r *string) string { return orNull(l) + "+" + orNull(r) }, w, joined).
		To(prefix+"ssj-outer", produced)
}

// streamTable is T5.
func streamTable(b *streams.Builder, prefix string) {
	consumed := streams.Consumed[string, string]{Key: sS, Value: sS}
	stream := streams.From(b, []string{"stj-stream"}, consumed)
	table := streams.TableFrom(b, "stj-table", consumed)
	global := streams.GlobalTableFrom(b, "stj-global", consumed)
	joined := streams.Joined[string, string]{Key: sS, Value: sS}
	produced := streams.Produced[string, string]{Key: sS, Value: sS}
	streams.StreamTableJoin(stream, table, func(_ string, s, t string) string { return s + "+" + t }, joined).
		To(prefix+"stj-inner", produced)
	streams.StreamTableLeftJoin(stream, table, func(_ string, s string, t *string) string { return s + "+" + orNull(t) }, joined).
		To(prefix+"stj-left", produced)
	streams.StreamGlobalTableJoin(stream, global, func(_ string, v string) (string, bool) { return v, true },
		func(_ string, s, g string) string { return s + "+" + g }).
		To(prefix+"stj-global", produced)
}

// foreignKey is T6: orders (productId:qty) joined to products.
func foreignKey(b *streams.Builder, prefix string) {
	consumed := streams.Consumed[string, string]{Key: sS, Value: sS}
	orders := streams.TableFrom(b, "fk-orders", consumed)
	products := streams.TableFrom(b, "fk-products", consumed)
	productID := func(_ string, v string) (string, bool) { return strings.Split(v, ":")[0], true }
	materialized := streams.TableJoined[string, string]{Materialized: &streams.Materialized[string, string]{Key: sS, Value: sS}}
	produced := streams.Produced[string, string]{Key: sS, Value: sS}
	streams.ForeignKeyJoin(orders, products, productID, func(_ string, o, p string) string { return o + "/" + p }, materialized).
		ToStream().To(prefix+"fk-inner", produced)
	streams.ForeignKeyLeftJoin(orders, products, productID, func(_ string, o string, p *string) string { return o + "/" + orNull(p) }, materialized).
		ToStream().To(prefix+"fk-left", produced)
}
