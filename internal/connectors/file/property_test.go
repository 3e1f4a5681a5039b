package file

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// splitLines is the rule in one pass over the whole content: lines end with
// \n, \r\n or \r; a \r at the very end is not yet an end; the text after
// the last end is not a line yet.
func splitLines(content string) []line {
	var out []line
	pos := 0
	for {
		i := strings.IndexAny(content[pos:], "\r\n")
		if i < 0 {
			return out
		}
		end := pos + i + 1
		if content[pos+i] == '\r' {
			if end == len(content) {
				return out
			}
			if content[end] == '\n' {
				end++
			}
		}
		out = append(out, line{decodeUTF8([]byte(content[pos : pos+i])), int64(end)})
		pos = end
	}
}

// However the file grows, in whatever pieces, and however the task is
// restarted from its committed offset in between, the records are the
// file's lines once each, with their byte positions.
func TestSourceLinesProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		pieces := rapid.SliceOfN(rapid.SliceOf(rapid.SampledFrom([]string{"a", "é", "\r", "\n", "\r\n", "\xff"})), 1, 8).Draw(rt, "pieces")
		batch := rapid.IntRange(1, 4).Draw(rt, "batch")
		restarts := rapid.SliceOfN(rapid.Bool(), len(pieces), len(pieces)).Draw(rt, "restarts")

		dir, err := os.MkdirTemp("", "prop")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "in.txt")
		props := map[string]string{"file": path, "topic": "t", "batch.size": string(rune('0' + batch))}
		sctx := newSourceCtx(props)
		newTask := func() *SourceTask {
			task := NewSourceTask()
			task.clock, task.idle = testClock, 0
			if err := task.Start(sctx, props); err != nil {
				rt.Fatal(err)
			}
			return task
		}
		task := newTask()
		var got []line
		var content strings.Builder
		drain := func() {
			for {
				records, err := task.Poll(bg)
				if err != nil {
					rt.Fatal(err)
				}
				if len(records) > batch {
					rt.Fatalf("%d records in a batch of %d", len(records), batch)
				}
				if len(records) == 0 {
					return
				}
				sctx.commit(rt, records)
				for _, r := range records {
					got = append(got, line{r.Value.(string), r.SourceOffset[PositionField]})
				}
			}
		}
		for i, piece := range pieces {
			s := strings.Join(piece, "")
			content.WriteString(s)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				rt.Fatal(err)
			}
			f.WriteString(s)
			f.Close()
			drain()
			if restarts[i] {
				task.Stop()
				task = newTask()
			}
		}
		drain()
		task.Stop()
		want := splitLines(content.String())
		if len(want) != len(got) {
			rt.Fatalf("content %q: got %#v, want %#v", content.String(), got, want)
		}
		for i := range want {
			if want[i] != got[i] {
				rt.Fatalf("content %q: line %d got %#v, want %#v", content.String(), i, got[i], want[i])
			}
		}
	})
}
