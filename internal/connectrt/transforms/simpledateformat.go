package transforms

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// simpleDateFormat is the part of Java's SimpleDateFormat that
// TimestampConverter's format and TimestampRouter's timestamp.format use,
// always in UTC as Kafka sets it: era G, year y, month M/L (number, or
// names from three letters), day d, day of year D, weekday E and u, AM/PM
// a, hours H k K h, minutes m, seconds s, milliseconds S, zones z Z X,
// 'quoted text' and ” for a quote. Week-based letters (Y w W F) are
// refused rather than guessed: their meaning hangs on a Java locale.
type simpleDateFormat struct {
	pattern string
	tokens  []sdfToken
}

type sdfToken struct {
	letter  byte // 0 for literal text
	count   int
	literal string
}

const sdfLetters = "GyMLdDEuaHkKhmsSzZXYwWF"

func newSimpleDateFormat(pattern string) (*simpleDateFormat, error) {
	f := &simpleDateFormat{pattern: pattern}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			lit, next, err := sdfQuoted(pattern, i)
			if err != nil {
				return nil, err
			}
			f.addLiteral(lit)
			i = next
		case isASCIILetter(c):
			if !strings.ContainsRune(sdfLetters, rune(c)) {
				return nil, fmt.Errorf("Illegal pattern character '%c'", c)
			}
			if strings.ContainsRune("YwWF", rune(c)) {
				return nil, fmt.Errorf("pattern letter '%c' is not supported: week-based fields depend on a Java locale", c)
			}
			j := i
			for j < len(pattern) && pattern[j] == c {
				j++
			}
			f.tokens = append(f.tokens, sdfToken{letter: c, count: j - i})
			i = j
		default:
			f.addLiteral(string(c))
			i++
		}
	}
	return f, nil
}

func isASCIILetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func (f *simpleDateFormat) addLiteral(s string) {
	if n := len(f.tokens); n > 0 && f.tokens[n-1].letter == 0 {
		f.tokens[n-1].literal += s
		return
	}
	f.tokens = append(f.tokens, sdfToken{literal: s})
}

// sdfQuoted reads 'text' at i (” inside is a quote; ” alone is one).
func sdfQuoted(p string, i int) (string, int, error) {
	if i+1 < len(p) && p[i+1] == '\'' {
		return "'", i + 2, nil
	}
	var b strings.Builder
	for j := i + 1; j < len(p); j++ {
		if p[j] != '\'' {
			b.WriteByte(p[j])
			continue
		}
		if j+1 < len(p) && p[j+1] == '\'' {
			b.WriteByte('\'')
			j++
			continue
		}
		return b.String(), j + 1, nil
	}
	return "", 0, errors.New("Unterminated quote")
}

func pad(n, width int) string {
	s := strconv.Itoa(abs(n))
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	if n < 0 {
		return "-" + s
	}
	return s
}

// format renders t in UTC.
func (f *simpleDateFormat) format(t time.Time) string {
	t = t.UTC()
	var b strings.Builder
	for _, tok := range f.tokens {
		if tok.letter == 0 {
			b.WriteString(tok.literal)
			continue
		}
		b.WriteString(formatField(t, tok))
	}
	return b.String()
}

func formatField(t time.Time, tok sdfToken) string {
	n := tok.count
	switch tok.letter {
	case 'G':
		if t.Year() <= 0 {
			return "BC"
		}
		return "AD"
	case 'y':
		y := t.Year()
		if y <= 0 {
			y = 1 - y
		}
		if n == 2 {
			return pad(y%100, 2)
		}
		return pad(y, n)
	case 'M', 'L':
		switch {
		case n >= 4:
			return t.Month().String()
		case n == 3:
			return t.Month().String()[:3]
		}
		return pad(int(t.Month()), n)
	case 'd':
		return pad(t.Day(), n)
	case 'D':
		return pad(t.YearDay(), n)
	case 'E':
		if n >= 4 {
			return t.Weekday().String()
		}
		return t.Weekday().String()[:3]
	case 'u':
		wd := int(t.Weekday())
		if wd == 0 {
			wd = 7
		}
		return pad(wd, n)
	case 'a':
		if t.Hour() < 12 {
			return "AM"
		}
		return "PM"
	case 'H':
		return pad(t.Hour(), n)
	case 'k':
		h := t.Hour()
		if h == 0 {
			h = 24
		}
		return pad(h, n)
	case 'K':
		return pad(t.Hour()%12, n)
	case 'h':
		h := t.Hour() % 12
		if h == 0 {
			h = 12
		}
		return pad(h, n)
	case 'm':
		return pad(t.Minute(), n)
	case 's':
		return pad(t.Second(), n)
	case 'S':
		return pad(t.Nanosecond()/1e6, n)
	case 'z':
		if n >= 4 {
			return "Coordinated Universal Time"
		}
		return "UTC"
	case 'Z':
		return "+0000"
	case 'X':
		return "Z"
	}
	return ""
}

// parse reads a time as SimpleDateFormat.parse(String) does: fields
// absent from the pattern are those of 1970-01-01T00:00:00.000Z, text
// after the pattern's end is ignored, out-of-range fields roll over
// (Java's lenient calendar), and a mismatch is an error.
func (f *simpleDateFormat) parse(s string) (time.Time, error) {
	p := sdfParse{s: s, year: 1970, month: 1, day: 1, loc: time.UTC}
	for i, tok := range f.tokens {
		abutting := i+1 < len(f.tokens) && isNumericToken(f.tokens[i+1])
		if err := p.token(tok, abutting); err != nil {
			return time.Time{}, err
		}
	}
	return p.time(), nil
}

func isNumericToken(t sdfToken) bool {
	switch t.letter {
	case 'y', 'd', 'D', 'u', 'H', 'k', 'K', 'h', 'm', 's', 'S':
		return true
	case 'M', 'L':
		return t.count <= 2
	}
	return false
}

type sdfParse struct {
	s                             string
	pos                           int
	year, month, day, yearDay     int
	hour, hour12, minute, sec, ms int
	has12, pm, bc                 bool
	loc                           *time.Location
}

var errSDFMismatch = errors.New("unparseable date")

func (p *sdfParse) token(tok sdfToken, abutting bool) error {
	if tok.letter == 0 {
		if !strings.HasPrefix(p.s[p.pos:], tok.literal) {
			return errSDFMismatch
		}
		p.pos += len(tok.literal)
		return nil
	}
	switch tok.letter {
	case 'G':
		return p.text([]string{"AD", "BC"}, func(i int) { p.bc = i == 1 })
	case 'E':
		return p.text(weekdayNames(), func(int) {})
	case 'a':
		return p.text([]string{"AM", "PM"}, func(i int) { p.pm = i == 1 })
	case 'M', 'L':
		if tok.count >= 3 {
			return p.text(monthNames(), func(i int) { p.month = i%12 + 1 })
		}
	case 'z', 'Z', 'X':
		return p.zone()
	}
	width := 0
	if abutting {
		width = tok.count
	}
	n, digits, err := p.number(width)
	if err != nil {
		return err
	}
	p.setField(tok, n, digits)
	return nil
}

func (p *sdfParse) setField(tok sdfToken, n, digits int) {
	switch tok.letter {
	case 'y':
		if tok.count <= 2 && digits == 2 {
			n = twoDigitYear(n)
		}
		p.year = n
	case 'M', 'L':
		p.month = n
	case 'd':
		p.day = n
	case 'D':
		p.yearDay = n
	case 'H', 'k':
		if tok.letter == 'k' && n == 24 {
			n = 0
		}
		p.hour = n
	case 'K', 'h':
		p.has12, p.hour12 = true, n%12
	case 'm':
		p.minute = n
	case 's':
		p.sec = n
	case 'S':
		p.ms = n
	}
}

// twoDigitYear puts a yy year within 80 years before and 20 after now,
// as SimpleDateFormat's default century.
func twoDigitYear(yy int) int {
	start := time.Now().Year() - 80
	y := start/100*100 + yy
	if y < start {
		y += 100
	}
	return y
}

// number reads digits: exactly width of them when the next field abuts
// this one, else as many as there are.
func (p *sdfParse) number(width int) (int, int, error) {
	end := p.pos
	for end < len(p.s) && p.s[end] >= '0' && p.s[end] <= '9' && (width == 0 || end-p.pos < width) {
		end++
	}
	if end == p.pos || end-p.pos > 9 {
		return 0, 0, errSDFMismatch
	}
	n, _ := strconv.Atoi(p.s[p.pos:end])
	digits := end - p.pos
	p.pos = end
	return n, digits, nil
}

// text matches the longest of names at the position, case-insensitively.
func (p *sdfParse) text(names []string, set func(int)) error {
	best, bestLen := -1, 0
	rest := strings.ToLower(p.s[p.pos:])
	for i, n := range names {
		if len(n) > bestLen && strings.HasPrefix(rest, strings.ToLower(n)) {
			best, bestLen = i, len(n)
		}
	}
	if best < 0 {
		return errSDFMismatch
	}
	p.pos += bestLen
	set(best)
	return nil
}

func monthNames() []string {
	var out []string
	for m := time.January; m <= time.December; m++ {
		out = append(out, m.String())
	}
	for m := time.January; m <= time.December; m++ {
		out = append(out, m.String()[:3])
	}
	return out
}

func weekdayNames() []string {
	var out []string
	for d := time.Sunday; d <= time.Saturday; d++ {
		out = append(out, d.String(), d.String()[:3])
	}
	return out
}

// zone reads Z, ±hh, ±hhmm, ±hh:mm, GMT/UTC with an optional offset, or
// an IANA zone name.
func (p *sdfParse) zone() error {
	rest := p.s[p.pos:]
	switch {
	case strings.HasPrefix(rest, "Z"):
		p.pos++
		p.loc = time.UTC
		return nil
	case strings.HasPrefix(rest, "GMT"), strings.HasPrefix(rest, "UTC"):
		p.pos += 3
		p.loc = time.UTC
		if p.pos < len(p.s) && (p.s[p.pos] == '+' || p.s[p.pos] == '-') {
			return p.offset()
		}
		return nil
	case strings.HasPrefix(rest, "+"), strings.HasPrefix(rest, "-"):
		return p.offset()
	}
	end := p.pos
	for end < len(p.s) && (isASCIILetter(p.s[end]) || p.s[end] == '/' || p.s[end] == '_') {
		end++
	}
	loc, err := time.LoadLocation(p.s[p.pos:end])
	if end == p.pos || err != nil {
		return errSDFMismatch
	}
	p.loc, p.pos = loc, end
	return nil
}

func (p *sdfParse) offset() error {
	sign := 1
	if p.s[p.pos] == '-' {
		sign = -1
	}
	p.pos++
	h, digits, err := p.number(2)
	if err != nil {
		return err
	}
	m := 0
	if p.pos < len(p.s) && p.s[p.pos] == ':' {
		p.pos++
		if m, _, err = p.number(2); err != nil {
			return err
		}
	} else if digits == 2 && p.pos+1 < len(p.s) && isDigit(p.s[p.pos]) && isDigit(p.s[p.pos+1]) {
		m, _, _ = p.number(2)
	}
	p.loc = time.FixedZone("", sign*(h*3600+m*60))
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *sdfParse) time() time.Time {
	hour := p.hour
	if p.has12 {
		hour = p.hour12
		if p.pm {
			hour += 12
		}
	}
	year := p.year
	if p.bc {
		year = 1 - year
	}
	month, day := time.Month(p.month), p.day
	if p.yearDay > 0 {
		month, day = time.January, p.yearDay
	}
	return time.Date(year, month, day, hour, p.minute, p.sec, p.ms*int(time.Millisecond), p.loc).UTC()
}
