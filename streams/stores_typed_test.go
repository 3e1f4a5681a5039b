package streams_test

import (
	"testing"

	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/serde"
)

// dedupe forwards a key's first record only, remembering seen keys in a
// key-value store through the typed view.
type dedupe struct {
	ctx   streams.ProcessorContext[string, string]
	store *streams.KeyValueStoreView[string, int64]
}

func (d *dedupe) Init(ctx streams.ProcessorContext[string, string]) error {
	d.ctx = ctx
	s, err := streams.KeyValueStoreOf[string, int64](ctx, "seen")
	d.store = s
	return err
}

func (d *dedupe) Process(r streams.Record[string, string]) error {
	_, _, found, err := d.store.Get(r.Key)
	if err != nil || found {
		return err
	}
	if err := d.store.Put(r.Key, r.Timestamp, r.Timestamp); err != nil {
		return err
	}
	d.ctx.Forward(r)
	return nil
}

func (d *dedupe) Close() error { return nil }

func TestProcessorKeyValueStoreView(t *testing.T) {
	b := streams.NewBuilder()
	b.AddStore(streams.KeyValueStore("seen", serde.String(), serde.Int64(), streams.StoreOptions{}))
	s := streams.From[string, string](b, []string{"in"})
	streams.Process(s, func() streams.Processor[string, string, string, string] { return &dedupe{} }, []string{"seen"}).To("out")
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := streams.NewTestDriver(topo, streams.TestDriverConfig{})
	if err != nil {
		t.Fatal(err)
	}
	in := streams.NewInputTopic(d, "in", serde.String(), serde.String())
	out := streams.NewOutputTopic(d, "out", serde.String(), serde.String())
	for i, k := range []string{"a", "b", "a", "c", "b"} {
		if err := in.Pipe(k, "v", int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := out.ReadRecords()
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, r := range recs {
		got += r.Key
	}
	if got != "abc" {
		t.Fatalf("forwarded %q, want abc", got)
	}
	// A store the processor is not connected to is refused.
	if _, err := streams.KeyValueStoreOf[string, int64](fakeGetter{}, "nope"); err == nil {
		t.Fatal("an unknown store was given")
	}
}

type fakeGetter struct{}

func (fakeGetter) StateStore(name string) (any, error) { return nil, errNoStore }

var errNoStore = serdeErr("no store")

type serdeErr string

func (e serdeErr) Error() string { return string(e) }
