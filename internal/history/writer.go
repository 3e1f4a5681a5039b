package history

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// BufferSize bounds what a Writer holds before it writes through: a full
// buffer is written out by the event that fills it, so a fast client
// waits on the disk rather than growing memory.
const BufferSize = 64 << 10

// ErrClosed is returned by a Writer's methods after Close.
var ErrClosed = errors.New("history: writer closed")

// Writer writes events as JSON lines. It is safe for concurrent use: each
// event is one line, whole, and the events of one goroutine keep their
// order. The first write error sticks and every later call returns it.
type Writer struct {
	closer io.Closer // nil when the caller owns the destination

	mu struct {
		sync.Mutex
		buf    *bufio.Writer // guarded by mu
		err    error         // guarded by mu: the first write error
		closed bool          // guarded by mu
	}
}

// NewWriter returns a Writer to w. Close flushes it but does not close w.
func NewWriter(w io.Writer) *Writer {
	hw := &Writer{}
	hw.mu.buf = bufio.NewWriterSize(w, BufferSize)
	return hw
}

// Create returns a Writer to a new file at path, which Close closes.
func Create(path string) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	w := NewWriter(f)
	w.closer = f
	return w, nil
}

// Write validates e and appends it as one line.
func (w *Writer) Write(e Event) error {
	line, err := encode(e)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked(); err != nil {
		return err
	}
	if _, err := w.mu.buf.Write(line); err != nil {
		w.mu.err = fmt.Errorf("history: write: %w", err)
	}
	return w.mu.err
}

// Flush writes out what is buffered.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked(); err != nil {
		return err
	}
	return w.flushLocked()
}

// Close flushes, closes the file of a Writer made by Create, and makes
// every later call return ErrClosed. It returns the first error the
// Writer met.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.closed {
		return ErrClosed
	}
	w.mu.closed = true
	if w.mu.err == nil {
		_ = w.flushLocked()
	}
	if w.closer != nil {
		if err := w.closer.Close(); err != nil && w.mu.err == nil {
			w.mu.err = fmt.Errorf("history: close: %w", err)
		}
	}
	return w.mu.err
}

func (w *Writer) usableLocked() error {
	if w.mu.closed {
		return ErrClosed
	}
	return w.mu.err
}

func (w *Writer) flushLocked() error {
	if err := w.mu.buf.Flush(); err != nil {
		w.mu.err = fmt.Errorf("history: flush: %w", err)
	}
	return w.mu.err
}

// encode validates e and returns it as a JSON line, "type" first.
func encode(e Event) ([]byte, error) {
	if err := e.validate(); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	var v any
	switch e := e.(type) {
	case Produce:
		if e.Outcome != OutcomeAck {
			e.Offset = -1
		}
		v = struct {
			Type string `json:"type"`
			Produce
		}{e.eventType(), e}
	case Txn:
		v = struct {
			Type string `json:"type"`
			Txn
		}{e.eventType(), e}
	case Consume:
		v = struct {
			Type string `json:"type"`
			Consume
		}{e.eventType(), e}
	case Final:
		v = struct {
			Type string `json:"type"`
			Final
		}{e.eventType(), e}
	case FinalEnd:
		v = struct {
			Type string `json:"type"`
			FinalEnd
		}{e.eventType(), e}
	}
	line, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("history: encode %s: %w", e.eventType(), err)
	}
	return append(line, '\n'), nil
}
