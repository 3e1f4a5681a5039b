package history

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

// oneOfEach is a history with every event and most optional fields set.
func oneOfEach() []Event {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	return []Event{
		Produce{Client: "p1", Idempotent: true, ProducerID: ptr[int64](7), ProducerEpoch: ptr[int16](1),
			TransactionalID: "tx", Txn: 3, Topic: "t", Partition: 2, Key: "k", Value: "p1-0",
			Outcome: OutcomeAck, Offset: 0, Time: at},
		Produce{Client: "p1", Topic: "t", Partition: 2, Value: "p1-1", Outcome: OutcomeFail,
			Offset: -1, Error: "NOT_ENOUGH_REPLICAS", Retriable: true},
		Produce{Client: "p1", Topic: "t", Partition: 2, Value: "p1-2", Outcome: OutcomeUnknown, Offset: -1},
		Txn{Client: "p1", TransactionalID: "tx", Txn: 3, Outcome: TxnCommitted, Started: at, Time: at.Add(time.Second)},
		Consume{Consumer: "c1", Session: "1", Group: "g", Isolation: ReadCommitted, Topic: "t", Partition: 2,
			Offset: 0, Key: "k", Value: "p1-0", LeaderEpoch: ptr[int32](4), Time: at},
		Final{Isolation: ReadUncommitted, Topic: "t", Partition: 2, Offset: 0, Key: "k", Value: "p1-0"},
		FinalEnd{Isolation: ReadUncommitted, Topic: "t", Partition: 2, HighWatermark: 2, LogStartOffset: 0, Compacted: true},
	}
}

func readEvents(t *testing.T, data []byte) []Event {
	t.Helper()
	r := NewReader(bytes.NewReader(data), "h")
	var out []Event
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
}

// withoutAt clears the Reader's provenance so events compare with what was
// written.
func withoutAt(es []Event) []Event {
	out := make([]Event, len(es))
	for i, e := range es {
		switch e := e.(type) {
		case Produce:
			e.At = ""
			out[i] = e
		case Txn:
			e.At = ""
			out[i] = e
		case Consume:
			e.At = ""
			out[i] = e
		case Final:
			e.At = ""
			out[i] = e
		case FinalEnd:
			e.At = ""
			out[i] = e
		}
	}
	return out
}

func TestWriteReadRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, e := range oneOfEach() {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := readEvents(t, buf.Bytes())
	if d := cmp.Diff(oneOfEach(), withoutAt(got)); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	if p := got[1].(Produce); p.At != "h:2" {
		t.Errorf("second event At = %q, want h:2", p.At)
	}
	first, _, _ := strings.Cut(buf.String(), "\n")
	if !strings.HasPrefix(first, `{"type":"produce",`) {
		t.Errorf("first line %s: want the type first", first)
	}
}

// TestWriterBuffersBoundedAndFlushesOnClose: nothing reaches the
// destination until the buffer fills or Close; a full buffer is written
// out, so what is held stays under BufferSize.
func TestWriterBuffersBoundedAndFlushesOnClose(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	e := Produce{Client: "p", Topic: "t", Value: strings.Repeat("v", 100), Outcome: OutcomeUnknown}
	line, _ := encode(e)
	n := 0
	for buf.Len() == 0 {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
		n++
		if n*len(line) > 2*BufferSize {
			t.Fatalf("%d bytes written and none reached the destination", n*len(line))
		}
	}
	if held := n*len(line) - buf.Len(); held > BufferSize {
		t.Fatalf("held %d bytes, more than BufferSize %d", held, BufferSize)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := len(readEvents(t, buf.Bytes())); got != n {
		t.Fatalf("read %d events after Close, wrote %d", got, n)
	}
	if err := w.Write(e); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write after Close: %v, want ErrClosed", err)
	}
}

func TestWriterConcurrentLinesWholeAndOrdered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 500
	var wg sync.WaitGroup
	for c := range writers {
		wg.Go(func() {
			for i := range each {
				v := fmt.Sprintf("c%d-%d", c, i)
				if err := w.Write(Produce{Client: fmt.Sprint(c), Topic: "t", Value: v, Outcome: OutcomeAck, Offset: int64(i)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	h, err := ReadFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]int64{}
	for _, p := range h.Produces {
		if p.Offset != next[p.Client] {
			t.Fatalf("client %s: offset %d after %d: lines out of order", p.Client, p.Offset, next[p.Client]-1)
		}
		next[p.Client]++
	}
	if len(h.Produces) != writers*each {
		t.Fatalf("read %d events, wrote %d", len(h.Produces), writers*each)
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("disk full")
}

func TestWriterErrorSticks(t *testing.T) {
	fw := &failingWriter{}
	w := NewWriter(fw)
	e := Produce{Client: "p", Topic: "t", Value: strings.Repeat("v", BufferSize), Outcome: OutcomeUnknown}
	if err := w.Write(e); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("first write: %v, want disk full", err)
	}
	if err := w.Write(e); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("second write: %v, want the sticky error", err)
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Close: %v, want the sticky error", err)
	}
	if fw.n != 1 {
		t.Fatalf("destination written %d times after an error, want 1", fw.n)
	}
}

func TestWriterRefusesInvalidEvents(t *testing.T) {
	w := NewWriter(io.Discard)
	for _, e := range []Event{
		Produce{Client: "p", Topic: "t", Outcome: OutcomeAck},
		Produce{Client: "p", Topic: "t", Value: "v", Outcome: OutcomeAck, Offset: -1},
		Produce{Client: "p", Topic: "t", Value: "v", Outcome: "ok"},
		Txn{Client: "p", TransactionalID: "x", Outcome: "done"},
		Consume{Consumer: "c", Topic: "t", Value: "v", Isolation: "read_all"},
		FinalEnd{Isolation: ReadCommitted, Topic: "t", HighWatermark: 1, LogStartOffset: 2},
	} {
		if err := w.Write(e); err == nil {
			t.Errorf("%#v written, want refused", e)
		}
	}
}

func TestReaderErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"type":"produce","client":"p","topic":"t","value":"v","outcome":"ack"}`, `h:1: produce: no "partition"`},
		{`{"type":"produce","client":"p","topic":"t","partition":0,"value":"v","outcome":"ack"}`, "h:1: produce \"v\": acknowledged with no offset"},
		{"\n" + `{"type":"consume","consumer":"c","isolation":"read_committed","topic":"t","partition":0,"offset":1,"value":"v","colour":"red"}`, `h:2: consume: json: unknown field "colour"`},
		{`{"type":"produced"}`, `h:1: unknown event type "produced"`},
		{`{"client":"p"}`, `h:1: no "type" string`},
		{`{"type":"final","isolation":"read_committed","topic":"t","partition":0,"offset":-3,"value":"v"}`, "h:1: final: bad record"},
		{`not json`, "h:1: invalid character"},
	} {
		_, err := NewReader(strings.NewReader(c.in), "h").Next()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %s...", c.in, err, c.want)
		}
	}
}

// TestReaderNonAckOffsetIgnored: a failed or unknown produce has no offset,
// whatever the line says.
func TestReaderNonAckOffsetIgnored(t *testing.T) {
	in := `{"type":"produce","client":"p","topic":"t","partition":0,"value":"v","outcome":"unknown","offset":5}`
	e, err := NewReader(strings.NewReader(in), "h").Next()
	if err != nil {
		t.Fatal(err)
	}
	if p := e.(Produce); p.Offset != -1 {
		t.Fatalf("offset %d, want -1", p.Offset)
	}
}
