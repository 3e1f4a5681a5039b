package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Reader reads the events of one JSON-lines history. Blank lines are
// skipped; anything else that is not a valid event is an error naming its
// line: an unknown type or field, a missing required field, a bad value.
type Reader struct {
	r    *bufio.Reader
	name string
	line int
}

// NewReader reads events from r; name (a file name) prefixes the At of
// each event and every error.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, BufferSize), name: name}
}

// Next returns the next event, or io.EOF after the last.
func (r *Reader) Next() (Event, error) {
	for {
		line, err := r.r.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		r.line++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		at := fmt.Sprintf("%s:%d", r.name, r.line)
		e, err := decode(line, at)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		return e, nil
	}
}

// decode parses one line: its fields first, to check the required ones are
// there, then strictly into the event its type names.
func decode(line []byte, at string) (Event, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return nil, err
	}
	var typ string
	if raw, ok := fields["type"]; !ok || json.Unmarshal(raw, &typ) != nil {
		return nil, errors.New(`no "type" string`)
	}
	need, ok := required[typ]
	if !ok {
		return nil, fmt.Errorf("unknown event type %q", typ)
	}
	for _, f := range need {
		if _, ok := fields[f]; !ok {
			return nil, fmt.Errorf("%s: no %q", typ, f)
		}
	}
	var e Event
	var err error
	switch typ {
	case "produce":
		var v struct {
			Type string `json:"type"`
			Produce
		}
		err = strict(line, &v)
		v.At = at
		if _, ok := fields["offset"]; !ok && v.Outcome == OutcomeAck {
			return nil, fmt.Errorf("produce %q: acknowledged with no offset", v.Value)
		}
		if v.Outcome != OutcomeAck {
			v.Offset = -1
		}
		e = v.Produce
	case "txn":
		var v struct {
			Type string `json:"type"`
			Txn
		}
		err = strict(line, &v)
		v.At = at
		e = v.Txn
	case "consume":
		var v struct {
			Type string `json:"type"`
			Consume
		}
		err = strict(line, &v)
		v.At = at
		e = v.Consume
	case "final":
		var v struct {
			Type string `json:"type"`
			Final
		}
		err = strict(line, &v)
		v.At = at
		e = v.Final
	case "final_end":
		var v struct {
			Type string `json:"type"`
			FinalEnd
		}
		err = strict(line, &v)
		v.At = at
		e = v.FinalEnd
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", typ, err)
	}
	return e, e.validate()
}

func strict(line []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// ReadAll adds every event of r to h.
func ReadAll(h *History, r io.Reader, name string) error {
	hr := NewReader(r, name)
	for {
		e, err := hr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		h.Add(e)
	}
}

// ReadFiles reads the histories at paths, in order, into one.
func ReadFiles(paths ...string) (*History, error) {
	h := &History{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		err = ReadAll(h, f, p)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
	}
	return h, nil
}
