package file

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"

	"github.com/samsa-io/samsa/connect"
)

// The runtime is not in these tests: small contexts stand in for it, with
// offsets stored as the runtime stores them (by the partition's JSON).

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type connectorCtx struct{}

func (connectorCtx) RequestTaskReconfiguration() {}
func (connectorCtx) RaiseError(error)            {}
func (connectorCtx) Logger() *slog.Logger        { return quiet }

type sourceCtx struct {
	mu      sync.Mutex
	props   map[string]string
	offsets map[string]map[string]any
}

func newSourceCtx(props map[string]string) *sourceCtx {
	return &sourceCtx{props: props, offsets: map[string]map[string]any{}}
}

// fataler is testing.TB or rapid's T.
type fataler interface{ Fatal(args ...any) }

func partitionKey(t fataler, p map[string]any) string {
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (c *sourceCtx) Offset(p map[string]any) (map[string]any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, _ := json.Marshal(p)
	return c.offsets[string(b)], nil
}

func (c *sourceCtx) Config() map[string]string { return c.props }
func (c *sourceCtx) Logger() *slog.Logger      { return quiet }

// commit stores the records' offsets, as the runtime does once they are in
// Kafka: the last one per partition wins.
func (c *sourceCtx) commit(t fataler, records []connect.SourceRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range records {
		c.offsets[partitionKey(t, r.SourcePartition)] = r.SourceOffset
	}
}

type sinkCtx struct{ props map[string]string }

func (c sinkCtx) Config() map[string]string                          { return c.props }
func (c sinkCtx) Assignment() []connect.TopicPartition               { return nil }
func (c sinkCtx) Offset(map[connect.TopicPartition]int64)            {}
func (c sinkCtx) Pause(...connect.TopicPartition)                    {}
func (c sinkCtx) Resume(...connect.TopicPartition)                   {}
func (c sinkCtx) RequestCommit()                                     {}
func (c sinkCtx) ErrantRecordReporter() connect.ErrantRecordReporter { return nil }
func (c sinkCtx) Logger() *slog.Logger                               { return quiet }

var bg = context.Background()
