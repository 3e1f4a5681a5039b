package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"sync"

	"github.com/samsa-io/samsa/internal/task"
)

// errInterrupted ends the lines of a reader that was interrupted.
var errInterrupted = errors.New("interrupted")

// inputLine is one line of input without its line ending, or, as the last
// item, how the input ended: io.EOF, the read error, or errInterrupted.
type inputLine struct {
	text []byte
	err  error
}

// lineReader reads lines on a goroutine of its own, because a read of
// standard input cannot be cancelled. When it is interrupted it still
// passes on every complete line it has read, then errInterrupted; a read
// in progress at that moment is left to end at the next line or the end of
// the input (or with the process), and what it brings is dropped.
type lineReader struct {
	lines chan inputLine
	tasks *task.Group
	done  chan struct{}

	mu struct {
		sync.Mutex
		interrupted bool
		reading     bool // in a read that waits for input: every line read so far is in lines
	}
}

// readLines starts reading in. ctx ends a reader whose lines nobody takes
// any more.
func readLines(ctx context.Context, in io.Reader) *lineReader {
	r := &lineReader{lines: make(chan inputLine, 256), tasks: task.NewGroup(ctx), done: make(chan struct{})}
	r.tasks.Go(func(ctx context.Context) {
		defer close(r.done)
		r.run(ctx, bufio.NewReaderSize(in, 64<<10))
	})
	return r
}

func (r *lineReader) run(ctx context.Context, br *bufio.Reader) {
	for {
		r.mu.Lock()
		complete := bytes.IndexByte(peekBuffered(br), '\n') >= 0
		if r.mu.interrupted && !complete {
			r.mu.Unlock()
			r.send(ctx, inputLine{err: errInterrupted})
			return
		}
		r.mu.reading = !complete
		r.mu.Unlock()

		line, err := br.ReadBytes('\n')

		r.mu.Lock()
		r.mu.reading = false
		r.mu.Unlock()
		item := inputLine{err: err}
		if len(line) > 0 {
			item.text = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte{'\n'}), []byte{'\r'})
			if item.text == nil {
				item.text = []byte{} // an empty line is a record with an empty value
			}
		}
		if !r.send(ctx, item) || err != nil {
			return
		}
	}
}

func peekBuffered(br *bufio.Reader) []byte {
	b, _ := br.Peek(br.Buffered())
	return b
}

func (r *lineReader) send(ctx context.Context, item inputLine) bool {
	select {
	case r.lines <- item:
		return true
	case <-ctx.Done():
		return false
	}
}

// interrupt asks the reader to stop after the lines it has read. It
// reports whether more lines are coming, ended by errInterrupted; if not,
// every line read is already in r.lines.
func (r *lineReader) interrupt() (more bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.interrupted = true
	select {
	case <-r.done:
		return false
	default:
	}
	return !r.mu.reading
}

// stop waits for the reader if it has finished; a reader still blocked in
// a read is left to end by itself.
func (r *lineReader) stop() {
	select {
	case <-r.done:
		r.tasks.Stop()
	default:
	}
}
