package broker

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// lockedBuffer is a log sink safe for the broker's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestHandlerPanicClosesOnlyItsConnection injects a handler that panics and
// checks that only the connection that sent the request is closed: a client
// with open connections keeps producing and consuming, a connection opened
// before the panic is still answered, new connections are accepted, and the
// panic is counted and logged with its stack once.
func TestHandlerPanicClosesOnlyItsConnection(t *testing.T) {
	orig := apiTable[kmsg.ListGroups]
	t.Cleanup(func() { apiTable[kmsg.ListGroups] = orig })
	panicking := orig
	panicking.handle = func(*Broker, *conn, requestHeader, kmsg.Request) (*frame, error) {
		var m map[string]int
		m["boom"]++ // a nil-map write: a real runtime panic
		return nil, nil
	}
	apiTable[kmsg.ListGroups] = panicking

	logs := &lockedBuffer{}
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.DefaultProduceTopic("panic"),
		kgo.AllowAutoTopicCreation(), kgo.ConsumeTopics("panic"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produceOne := func(v string) {
		t.Helper()
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", v, err)
		}
	}
	produceOne("before")
	bystander := dialRaw(t, b)
	bystander.roundTrip(&kmsg.ApiVersionsRequest{Version: 3}, 1)

	for i := range 2 {
		victim := dialRaw(t, b)
		victim.sendFrame(encodeRequest(&kmsg.ListGroupsRequest{Version: 4}, 7))
		victim.expectClosed()
		if got := b.HandlerPanics(kmsg.ListGroups); got != int64(i+1) {
			t.Fatalf("HandlerPanics(ListGroups) = %d after %d panics", got, i+1)
		}
	}

	bystander.roundTrip(&kmsg.ApiVersionsRequest{Version: 3}, 2)
	dialRaw(t, b).roundTrip(&kmsg.MetadataRequest{Version: 12}, 3)
	produceOne("after")
	var got []string
	for len(got) < 2 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if strings.Join(got, ",") != "before,after" {
		t.Fatalf("consumed %v", got)
	}
	out := logs.String()
	if n := strings.Count(out, `msg="request handler panicked`); n != 2 {
		t.Fatalf("%d panic log lines, want 2:\n%s", n, out)
	}
	if n := strings.Count(out, "runtime/debug.Stack"); n != 1 {
		t.Fatalf("the stack was logged %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(out, "api=ListGroups") || !strings.Contains(out, "client_id=test") {
		t.Fatalf("the log does not name the API and client:\n%s", out)
	}
}
