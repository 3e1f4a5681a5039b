package jaas

import (
	"fmt"
	"sort"
	"strings"
)

// sasl.jaas.config holds one JAAS login module entry:
//
//	<LoginModuleClass> <ControlFlag> (<option>=<value>)*;
//
// Kafka reads it with Java's StreamTokenizer (JaasConfig.java), and Parse
// follows that tokenizer so a value that works on Kafka works here:
//   - bytes up to and including space separate tokens;
//   - ';' and '=' are tokens of their own;
//   - a value is a word (any run of other characters) or a string quoted
//     with " or ', where \n \t \r \b \f \a \v, octal \ooo and \<char>
//     escape as in Java;
//   - '/' starts a comment: /* ... */, // to the end of the line, and also a
//     lone '/' to the end of the line, so a path has to be quoted;
//   - the control flag is case-insensitive;
//   - an option given twice keeps its last value.
//
// Two departures, both turning Kafka's odd parse into an error: a quoted
// string must close on the same line (Java ends it silently at the line
// break), and the config must hold exactly one entry (Kafka checks that in
// JaasContext, after parsing).
//
// Errors name offsets and option names, never values: values are passwords.

// The login modules of Kafka's SASL mechanisms.
const (
	PlainLoginModule       = "org.apache.kafka.common.security.plain.PlainLoginModule"
	ScramLoginModule       = "org.apache.kafka.common.security.scram.ScramLoginModule"
	OAuthBearerLoginModule = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
)

// Config is the login module entry of a sasl.jaas.config value. Its
// String and GoString hide the option values, so logging it leaks nothing.
type Config struct {
	// LoginModule is the class name, e.g. PlainLoginModule.
	LoginModule string
	// ControlFlag is required, requisite, sufficient or optional, in lower
	// case. Kafka takes a single login module, so the flag changes nothing.
	ControlFlag string
	// Options are the option names and their values.
	Options map[string]string
}

// Option returns an option's value.
func (j Config) Option(name string) (string, bool) {
	v, ok := j.Options[name]
	return v, ok
}

// String writes the entry back with every value replaced by [hidden].
func (j Config) String() string {
	var b strings.Builder
	b.WriteString(j.LoginModule)
	b.WriteString(" ")
	b.WriteString(j.ControlFlag)
	for _, k := range sortedKeys(j.Options) {
		fmt.Fprintf(&b, " %s=[hidden]", k)
	}
	b.WriteString(";")
	return b.String()
}

// GoString keeps %#v from printing the values either.
func (j Config) GoString() string { return "jaas.Config(" + j.String() + ")" }

// Parse reads a sasl.jaas.config value.
func Parse(s string) (Config, error) {
	lx := jaasLexer{src: s}
	var entries []Config
	for {
		t, err := lx.next()
		if err != nil {
			return Config{}, err
		}
		if t.kind == jaasEOF {
			break
		}
		e, err := parseJAASEntry(&lx, t)
		if err != nil {
			return Config{}, err
		}
		entries = append(entries, e)
	}
	switch len(entries) {
	case 0:
		return Config{}, fmt.Errorf("jaas: login module not specified")
	case 1:
		return entries[0], nil
	default:
		return Config{}, fmt.Errorf("jaas: config contains %d login modules, should be 1 module", len(entries))
	}
}

func parseJAASEntry(lx *jaasLexer, first jaasToken) (Config, error) {
	if !first.isValue() {
		return Config{}, fmt.Errorf("jaas: offset %d: expected a login module class, got %s", first.pos, first.kind)
	}
	e := Config{LoginModule: first.text, Options: map[string]string{}}
	flag, err := lx.next()
	if err != nil {
		return Config{}, err
	}
	if e.ControlFlag, err = controlFlag(flag); err != nil {
		return Config{}, err
	}
	for {
		t, err := lx.next()
		if err != nil {
			return Config{}, err
		}
		switch {
		case t.kind == jaasSemicolon:
			return e, nil
		case t.kind == jaasEOF:
			return Config{}, fmt.Errorf("jaas: entry for %s not terminated by a semicolon", e.LoginModule)
		case !t.isValue():
			return Config{}, fmt.Errorf("jaas: offset %d: expected an option name, got %s", t.pos, t.kind)
		}
		v, err := optionValue(lx, t.text)
		if err != nil {
			return Config{}, err
		}
		e.Options[t.text] = v
	}
}

func controlFlag(t jaasToken) (string, error) {
	if t.kind == jaasEOF {
		return "", fmt.Errorf("jaas: login module control flag not specified")
	}
	if t.kind != jaasWord {
		return "", fmt.Errorf("jaas: offset %d: expected a login module control flag, got %s", t.pos, t.kind)
	}
	switch f := strings.ToLower(t.text); f {
	case "required", "requisite", "sufficient", "optional":
		return f, nil
	}
	return "", fmt.Errorf("jaas: invalid login module control flag %q (want required, requisite, sufficient or optional)", t.text)
}

func optionValue(lx *jaasLexer, key string) (string, error) {
	eq, err := lx.next()
	if err != nil {
		return "", err
	}
	if eq.kind != jaasEquals {
		return "", fmt.Errorf("jaas: value not specified for key %q", key)
	}
	v, err := lx.next()
	if err != nil {
		return "", err
	}
	if !v.isValue() {
		return "", fmt.Errorf("jaas: value not specified for key %q", key)
	}
	return v.text, nil
}

type jaasKind int

const (
	jaasEOF jaasKind = iota
	jaasWord
	jaasQuoted
	jaasEquals
	jaasSemicolon
)

func (k jaasKind) String() string {
	switch k {
	case jaasEOF:
		return "end of input"
	case jaasWord:
		return "a word"
	case jaasQuoted:
		return "a quoted string"
	case jaasEquals:
		return `"="`
	default:
		return `";"`
	}
}

type jaasToken struct {
	kind jaasKind
	text string
	pos  int
}

// isValue reports whether t can be a name or a value: Java's tokenizer
// gives both words and quoted strings an sval.
func (t jaasToken) isValue() bool { return t.kind == jaasWord || t.kind == jaasQuoted }

type jaasLexer struct {
	src string
	i   int
}

func (lx *jaasLexer) next() (jaasToken, error) {
	lx.skipSpaceAndComments()
	if lx.i >= len(lx.src) {
		return jaasToken{kind: jaasEOF, pos: lx.i}, nil
	}
	start := lx.i
	switch c := lx.src[lx.i]; c {
	case ';':
		lx.i++
		return jaasToken{kind: jaasSemicolon, pos: start}, nil
	case '=':
		lx.i++
		return jaasToken{kind: jaasEquals, pos: start}, nil
	case '"', '\'':
		text, err := lx.quoted(c)
		return jaasToken{kind: jaasQuoted, text: text, pos: start}, err
	}
	for lx.i < len(lx.src) && !endsWord(lx.src[lx.i]) {
		lx.i++
	}
	return jaasToken{kind: jaasWord, text: lx.src[start:lx.i], pos: start}, nil
}

func endsWord(c byte) bool {
	return c <= ' ' || c == ';' || c == '=' || c == '/' || c == '"' || c == '\''
}

func (lx *jaasLexer) skipSpaceAndComments() {
	for lx.i < len(lx.src) {
		c := lx.src[lx.i]
		switch {
		case c <= ' ':
			lx.i++
		case c == '/' && strings.HasPrefix(lx.src[lx.i:], "/*"):
			end := strings.Index(lx.src[lx.i+2:], "*/")
			if end < 0 {
				lx.i = len(lx.src)
				return
			}
			lx.i += 2 + end + 2
		case c == '/':
			// Both "//" and a lone '/' run to the end of the line.
			end := strings.IndexAny(lx.src[lx.i:], "\r\n")
			if end < 0 {
				lx.i = len(lx.src)
				return
			}
			lx.i += end
		default:
			return
		}
	}
}

// quoted reads a string opened by quote at lx.i, unescaping as Java's
// StreamTokenizer does.
func (lx *jaasLexer) quoted(quote byte) (string, error) {
	start := lx.i
	lx.i++
	var b strings.Builder
	for lx.i < len(lx.src) {
		c := lx.src[lx.i]
		switch {
		case c == quote:
			lx.i++
			return b.String(), nil
		case c == '\n' || c == '\r':
			return "", fmt.Errorf("jaas: offset %d: quoted string not closed before the end of the line", start)
		case c == '\\':
			lx.i++
			lx.escape(&b)
		default:
			b.WriteByte(c)
			lx.i++
		}
	}
	return "", fmt.Errorf("jaas: offset %d: quoted string not closed", start)
}

var jaasEscapes = map[byte]byte{'a': 7, 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v'}

// escape reads what follows a backslash; at the end of input the backslash
// stands for nothing, and the missing quote is reported by the caller.
func (lx *jaasLexer) escape(b *strings.Builder) {
	if lx.i >= len(lx.src) {
		return
	}
	c := lx.src[lx.i]
	if c >= '0' && c <= '7' {
		b.WriteRune(rune(lx.octal()))
		return
	}
	lx.i++
	if e, ok := jaasEscapes[c]; ok {
		b.WriteByte(e)
		return
	}
	b.WriteByte(c)
}

// octal reads one to three octal digits; a third digit is taken only when
// the first is at most 3, so the value fits a byte.
func (lx *jaasLexer) octal() int {
	first := lx.src[lx.i]
	v := int(first - '0')
	lx.i++
	for n := 1; n < 3 && lx.i < len(lx.src); n++ {
		c := lx.src[lx.i]
		if c < '0' || c > '7' || (n == 2 && first > '3') {
			break
		}
		v = v<<3 + int(c-'0')
		lx.i++
	}
	return v
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
