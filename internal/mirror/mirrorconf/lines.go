package mirrorconf

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Error is one refused setting: the key as written in the file, and why.
type Error struct {
	Key string
	Msg string
}

func (e *Error) Error() string { return e.Key + ": " + e.Msg }

// withLines prefixes each error in err with path, and each *Error with the line that sets
// its key too.
func withLines(err error, path string, lines map[string]int) error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = fmt.Errorf("%s: %w", path, e)
		var me *Error
		if errors.As(e, &me) {
			if n, ok := lines[me.Key]; ok {
				out[i] = fmt.Errorf("%s:%d: %w", path, n, e)
			}
		}
	}
	return errors.Join(out...)
}

// keyLines maps each key of a properties text to the line that sets it last (the value the
// loader keeps). It follows the Java properties syntax far enough to find keys: logical lines
// joined across a trailing odd backslash, # and ! comments, keys ending at an unescaped
// '=', ':' or whitespace, with escapes. It is only used for messages: a key it misreads just
// has no line.
func keyLines(text string) map[string]int {
	out := map[string]int{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		first := i
		line := strings.TrimLeft(strings.TrimSuffix(lines[i], "\r"), " \t\f")
		for oddBackslashes(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(strings.TrimSuffix(lines[i], "\r"), " \t\f")
		}
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		out[readKey(line)] = first + 1
	}
	return out
}

func oddBackslashes(line string) bool {
	return (len(line)-len(strings.TrimRight(line, `\`)))%2 == 1
}

func readKey(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		if c != '\\' || i+1 == len(line) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := line[i]; e {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 < len(line) {
				if r, err := strconv.ParseUint(line[i+1:i+5], 16, 16); err == nil {
					b.WriteRune(rune(r))
					i += 4
					continue
				}
			}
			b.WriteByte(e)
		default:
			b.WriteByte(e)
		}
	}
	return b.String()
}
