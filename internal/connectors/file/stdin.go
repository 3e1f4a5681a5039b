package file

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/samsa-io/samsa/internal/task"
)

// The process has one standard input, read by one goroutine for as long as
// it has data: a read from it cannot be interrupted, so a task that stops
// leaves it to the next task rather than waiting on it.
var stdin struct {
	once   sync.Once
	chunks chan []byte
	group  *task.Group
}

// stdinChunks starts reading standard input on first use; the channel is
// closed at its end. The channel's bound holds what is read ahead of the
// tasks.
func stdinChunks() <-chan []byte {
	stdin.once.Do(func() {
		stdin.chunks = make(chan []byte, 16)
		stdin.group = task.NewGroup(context.Background())
		stdin.group.Go(func(ctx context.Context) { pump(ctx, os.Stdin, stdin.chunks) })
	})
	return stdin.chunks
}

// pump copies r into chunks until r ends or fails.
func pump(ctx context.Context, r io.Reader, chunks chan<- []byte) {
	defer close(chunks)
	for {
		buf := make([]byte, readChunk)
		n, err := r.Read(buf)
		if n > 0 {
			select {
			case chunks <- buf[:n]:
			case <-ctx.Done():
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// stdinInput takes what the pump has read, without waiting.
type stdinInput struct {
	chunks <-chan []byte
}

func (si *stdinInput) next() ([]byte, error) {
	if si.chunks == nil {
		return nil, io.EOF
	}
	select {
	case c, ok := <-si.chunks:
		if !ok {
			si.chunks = nil
			return nil, io.EOF
		}
		return c, nil
	default:
		return nil, nil
	}
}

func (si *stdinInput) close() error { return nil }

// decodeUTF8 reads a line as UTF-8, as Kafka's reader does, with each
// invalid byte replaced by U+FFFD.
func decodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for _, r := range string(b) { // an invalid byte ranges as one RuneError
		sb.WriteRune(r)
	}
	return sb.String()
}
