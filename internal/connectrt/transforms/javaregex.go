package transforms

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/connect"
)

// Java regular expressions run on Go's RE2 here: the common syntax is
// the same; what RE2 lacks (backreferences, lookaround, possessive
// quantifiers) is refused when the config is read, never misread.

// compileWhole compiles a pattern that must match a whole string, as
// Java's Matcher.matches().
func compileWhole(pattern string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(pattern); err != nil {
		return nil, err
	}
	return regexp.Compile(`^(?:` + pattern + `)$`)
}

// regexValidator is Kafka's RegexValidator.
type regexValidator struct{}

func (regexValidator) Validate(_ string, v any) error {
	s, _ := v.(string)
	if _, err := regexp.Compile(s); err != nil {
		return fmt.Errorf("Invalid regex: %v", err)
	}
	return nil
}

// composite runs validators in order, as Kafka's CompositeValidator.
type composite []connect.Validator

func (c composite) Validate(name string, v any) error {
	for _, x := range c {
		if err := x.Validate(name, v); err != nil {
			return err
		}
	}
	return nil
}

// javaReplacement is a Matcher.replaceFirst replacement string: $n and
// ${name} name groups, a backslash takes the next character literally.
type javaReplacement struct {
	parts []replPart
}

type replPart struct {
	literal string
	group   int // -1 for a literal
}

func parseJavaReplacement(repl string, re *regexp.Regexp) (*javaReplacement, error) {
	out := &javaReplacement{}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out.parts = append(out.parts, replPart{literal: lit.String(), group: -1})
			lit.Reset()
		}
	}
	groups := re.NumSubexp()
	for i := 0; i < len(repl); i++ {
		switch c := repl[i]; c {
		case '\\':
			i++
			if i >= len(repl) {
				return nil, errors.New("character to be escaped is missing")
			}
			lit.WriteByte(repl[i])
		case '$':
			g, next, err := replGroup(repl, i+1, re, groups)
			if err != nil {
				return nil, err
			}
			flush()
			out.parts = append(out.parts, replPart{group: g})
			i = next - 1
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return out, nil
}

// replGroup reads the group reference after a '$' at i: ${name}, or
// digits, taking further digits only while the number stays a group (as
// Java does, so $10 with one group is group 1 then "0").
func replGroup(repl string, i int, re *regexp.Regexp, groups int) (int, int, error) {
	if i >= len(repl) {
		return 0, 0, errors.New("Illegal group reference: group index is missing")
	}
	if repl[i] == '{' {
		end := strings.IndexByte(repl[i:], '}')
		if end < 0 {
			return 0, 0, errors.New("named capturing group is missing trailing '}'")
		}
		name := repl[i+1 : i+end]
		idx := re.SubexpIndex(name)
		if idx < 0 {
			return 0, 0, fmt.Errorf("No group with name {%s}", name)
		}
		return idx, i + end + 1, nil
	}
	if !isDigit(repl[i]) {
		return 0, 0, errors.New("Illegal group reference")
	}
	g := int(repl[i] - '0')
	if g > groups {
		return 0, 0, fmt.Errorf("No group %d", g)
	}
	i++
	for i < len(repl) && isDigit(repl[i]) {
		next, _ := strconv.Atoi(strconv.Itoa(g) + string(repl[i]))
		if next > groups {
			break
		}
		g = next
		i++
	}
	return g, i, nil
}

// expand renders the replacement for a match of re in s (submatch
// indexes m).
func (jr *javaReplacement) expand(s string, m []int) string {
	var b strings.Builder
	for _, p := range jr.parts {
		if p.group < 0 {
			b.WriteString(p.literal)
			continue
		}
		if start, end := m[2*p.group], m[2*p.group+1]; start >= 0 {
			b.WriteString(s[start:end])
		}
	}
	return b.String()
}
