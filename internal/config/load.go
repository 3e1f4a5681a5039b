package config

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/magiconair/properties"
)

// LoadBrokerProperties reads a server.properties file, applies overrides (from command-line
// flags; they win over the file) and returns the validated broker values, all with source
// STATIC_BROKER_CONFIG. Every name must be a broker config and every value valid; the error
// names each bad one, with the line of the file that sets it.
//
// The file is read as Java properties (key=value, key: value, # and ! comments, line
// continuations, \uXXXX escapes) in UTF-8. ${...} is left as written: Kafka does not expand
// variables in server.properties, and a JAAS config or password may contain "${".
func LoadBrokerProperties(path string, overrides map[string]string) (Values, error) {
	raw, lines, err := readProperties(path)
	if err != nil {
		return Values{}, err
	}
	for k, v := range overrides {
		raw[k] = v
		delete(lines, k)
	}
	v, err := Parse(Broker, raw)
	if err != nil {
		return Values{}, fmt.Errorf("config: load %s: %w", path, withLines(err, path, lines))
	}
	return v, nil
}

// withLines prefixes each config error of err with the line of the file that set it.
func withLines(err error, path string, lines map[string]int) error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for i, e := range errs {
		var ce *Error
		if errors.As(e, &ce) {
			if n, ok := lines[ce.Name]; ok {
				errs[i] = fmt.Errorf("%s:%d: %w", path, n, e)
			}
		}
	}
	return errors.Join(errs...)
}

// lineError matches the errors of github.com/magiconair/properties, which put the line
// number in their own words.
var lineError = regexp.MustCompile(`^properties: Line (\d+): (.*)$`)

// readProperties returns the file's configs and the line each is set on (the last, when a
// key is set twice: the last one wins).
func readProperties(path string) (map[string]string, map[string]int, error) {
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	lines, err := keyLines(string(buf))
	if err != nil {
		return nil, nil, fmt.Errorf("config: parse %s:%w", path, err)
	}
	loader := properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	p, err := loader.LoadBytes(buf)
	if err != nil {
		if m := lineError.FindStringSubmatch(err.Error()); m != nil {
			return nil, nil, fmt.Errorf("config: parse %s:%s: %s", path, m[1], m[2])
		}
		return nil, nil, fmt.Errorf("config: parse %s: %w", path, err)
	}
	return p.Map(), lines, nil
}

// keyLines finds the line each key of a properties file starts on, as Java's
// Properties.load reads keys: the first unescaped '=', ':' or blank ends the key, a
// backslash escapes the next character, and a line ending in an odd number of backslashes
// continues on the next. It refuses what Java would read as an empty key ("=value"),
// which the properties library reports without saying why. The error is "<line>: why",
// for the caller to put the path in front.
func keyLines(text string) (map[string]int, error) {
	out := map[string]int{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		start := i
		line := strings.TrimLeft(strings.TrimSuffix(lines[i], "\r"), " \t\f")
		for continues(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(strings.TrimSuffix(lines[i], "\r"), " \t\f")
		}
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		key := propertyKey(line)
		if key == "" {
			return nil, fmt.Errorf("%d: a line with an empty key: %q", start+1, line)
		}
		out[key] = start + 1
	}
	return out, nil
}

// continues reports whether a line ends in an odd number of backslashes.
func continues(line string) bool {
	n := len(line) - len(strings.TrimRight(line, `\`))
	return n%2 == 1
}

// propertyKey returns the unescaped key of a logical line that is not blank or a comment.
func propertyKey(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line):
			i++
			switch line[i] {
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 'f':
				b.WriteByte('\f')
			case 'u':
				if r, err := strconv.ParseUint(line[i+1:min(i+5, len(line))], 16, 32); err == nil && i+5 <= len(line) {
					b.WriteRune(rune(r))
					i += 4
				}
			default:
				b.WriteByte(line[i])
			}
		case c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
