package metaprops

import (
	"fmt"
	"strconv"
	"strings"
)

// parseProperties reads text as java.util.Properties.load reads a file:
//
//   - natural lines end at \n, \r or \r\n; blanks (space, tab, form feed)
//     at the start of each are skipped;
//   - a line whose first non-blank is '#' or '!' is a comment, and so is a
//     blank line;
//   - a line ending in an odd number of backslashes continues on the next
//     (the backslash dropped, the next line's leading blanks skipped), a
//     comment line never does;
//   - the key ends at the first unescaped '=', ':' or blank; blanks, then
//     at most one '=' or ':', then blanks separate it from the value;
//   - escapes: \t \n \r \f, \uXXXX, and a backslash before anything else
//     stands for that character.
//
// A key given twice keeps its last value. The only error is a malformed
// \uXXXX, as in Java; the error names the line.
//
// Not github.com/magiconair/properties, which internal/config reads
// server.properties with: it does not join a key continued on the next
// line as Java does, and it reports a malformed \uXXXX in other words
// (TestDecode and TestDecodeRefuses fail with it). Kafka writes
// meta.properties with Java's Properties.store, so a file another tool
// wrote must read as Java reads it.
func parseProperties(text string) (map[string]string, error) {
	out := map[string]string{}
	r := lineReader{text: text}
	for {
		line, lineNo, ok := r.next()
		if !ok {
			return out, nil
		}
		rawKey, rawValue := splitKeyValue(line)
		key, err := unescape(rawKey)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", lineNo, err)
		}
		value, err := unescape(rawValue)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", lineNo, err)
		}
		out[key] = value
	}
}

// lineReader hands out logical lines: comments and blank lines skipped,
// continuations joined.
type lineReader struct {
	text string
	line int // natural lines consumed
}

// natural returns the next natural line without its terminator.
func (r *lineReader) natural() (string, bool) {
	if r.text == "" {
		return "", false
	}
	r.line++
	i := strings.IndexAny(r.text, "\r\n")
	if i < 0 {
		line := r.text
		r.text = ""
		return line, true
	}
	line := r.text[:i]
	if r.text[i] == '\r' && i+1 < len(r.text) && r.text[i+1] == '\n' {
		i++
	}
	r.text = r.text[i+1:]
	return line, true
}

func trimBlanks(s string) string { return strings.TrimLeft(s, " \t\f") }

// next returns the next logical line that holds a key, and the number of
// the natural line it starts on.
func (r *lineReader) next() (string, int, bool) {
	for {
		first, ok := r.natural()
		if !ok {
			return "", 0, false
		}
		start := r.line
		line := trimBlanks(first)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		var b strings.Builder
		for continues(line) {
			b.WriteString(line[:len(line)-1])
			more, ok := r.natural()
			if !ok {
				line = ""
				break
			}
			line = trimBlanks(more)
		}
		b.WriteString(line)
		return b.String(), start, true
	}
}

// continues reports whether a line ends in an odd number of backslashes.
func continues(line string) bool {
	n := len(line) - len(strings.TrimRight(line, `\`))
	return n%2 == 1
}

// splitKeyValue splits a logical line into its escaped key and value.
func splitKeyValue(line string) (string, string) {
	keyEnd, valueStart, sep := len(line), len(line), false
	escaped := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if !escaped && (c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f') {
			keyEnd, valueStart, sep = i, i+1, c == '=' || c == ':'
			break
		}
		escaped = c == '\\' && !escaped
	}
	for ; valueStart < len(line); valueStart++ {
		c := line[valueStart]
		if c == ' ' || c == '\t' || c == '\f' {
			continue
		}
		if !sep && (c == '=' || c == ':') {
			sep = true
			continue
		}
		break
	}
	return line[:keyEnd], line[valueStart:]
}

// unescape resolves a key's or value's escapes.
func unescape(s string) (string, error) {
	if strings.IndexByte(s, '\\') < 0 {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if len(s)-i-1 < 4 {
				return "", fmt.Errorf(`malformed \uxxxx escape %q`, s[i-1:])
			}
			n, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf(`malformed \uxxxx escape %q`, s[i-1:i+5])
			}
			b.WriteRune(rune(n)) // a lone surrogate becomes U+FFFD
			i += 4
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
