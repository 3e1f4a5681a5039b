package s3sink

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// jodaFormat is a Joda-Time DateTimeFormat pattern, the language of
// Confluent's path.format: letters are fields (repeated for width), text in
// single quotes is literal, ” is a quote. Names of months, days, eras and
// AM/PM are English; another locale with such fields is refused rather than
// written in the wrong language.
type jodaFormat struct {
	parts []jodaPart
}

type jodaPart struct {
	literal string
	letter  byte
	count   int
}

// jodaLetters are the pattern letters Joda-Time knows.
const jodaLetters = "GCYyxwedEDMdaKhHkmsSzZ"

func parseJodaFormat(pattern, locale string) (*jodaFormat, error) {
	f := &jodaFormat{}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			f.parts = append(f.parts, jodaPart{literal: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			end, text, err := jodaQuoted(pattern, i)
			if err != nil {
				return nil, err
			}
			lit.WriteString(text)
			i = end
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			if !strings.ContainsRune(jodaLetters, rune(c)) {
				return nil, fmt.Errorf("Illegal pattern component: %c", c)
			}
			n := 1
			for i+n < len(pattern) && pattern[i+n] == c {
				n++
			}
			flush()
			p := jodaPart{letter: c, count: n}
			if p.isText() && !englishLocale(locale) {
				return nil, fmt.Errorf("locale %s: names of months, days, eras and AM/PM are written only in English", locale)
			}
			f.parts = append(f.parts, p)
			i += n
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return f, nil
}

// jodaQuoted reads quoted text starting at pattern[i] == '\”.
func jodaQuoted(pattern string, i int) (int, string, error) {
	if i+1 < len(pattern) && pattern[i+1] == '\'' {
		return i + 2, "'", nil
	}
	var b strings.Builder
	for j := i + 1; j < len(pattern); j++ {
		if pattern[j] != '\'' {
			b.WriteByte(pattern[j])
			continue
		}
		if j+1 < len(pattern) && pattern[j+1] == '\'' {
			b.WriteByte('\'')
			j++
			continue
		}
		return j + 1, b.String(), nil
	}
	return 0, "", fmt.Errorf("unterminated quote in pattern %q", pattern)
}

func englishLocale(locale string) bool {
	l := strings.ToLower(locale)
	return l == "en" || strings.HasPrefix(l, "en_") || strings.HasPrefix(l, "en-")
}

func (p jodaPart) isText() bool {
	switch p.letter {
	case 'G', 'E', 'a':
		return true
	case 'M':
		return p.count >= 3
	}
	return false
}

func (f *jodaFormat) format(t time.Time) string {
	var b strings.Builder
	for _, p := range f.parts {
		if p.letter == 0 {
			b.WriteString(p.literal)
			continue
		}
		b.WriteString(p.format(t))
	}
	return b.String()
}

func (p jodaPart) format(t time.Time) string {
	switch p.letter {
	case 'G':
		if t.Year() <= 0 {
			return "BC"
		}
		return "AD"
	case 'C':
		return pad(t.Year()/100, p.count)
	case 'Y', 'y':
		return jodaYear(t.Year(), p.count)
	case 'x':
		y, _ := t.ISOWeek()
		return jodaYear(y, p.count)
	case 'w':
		_, w := t.ISOWeek()
		return pad(w, p.count)
	case 'e':
		return pad(isoWeekday(t), p.count)
	case 'E':
		if p.count >= 4 {
			return t.Weekday().String()
		}
		return t.Weekday().String()[:3]
	case 'D':
		return pad(t.YearDay(), p.count)
	case 'M':
		switch {
		case p.count >= 4:
			return t.Month().String()
		case p.count == 3:
			return t.Month().String()[:3]
		}
		return pad(int(t.Month()), p.count)
	case 'd':
		return pad(t.Day(), p.count)
	case 'a':
		if t.Hour() < 12 {
			return "AM"
		}
		return "PM"
	case 'K':
		return pad(t.Hour()%12, p.count)
	case 'h':
		return pad((t.Hour()+11)%12+1, p.count)
	case 'H':
		return pad(t.Hour(), p.count)
	case 'k':
		return pad((t.Hour()+23)%24+1, p.count)
	case 'm':
		return pad(t.Minute(), p.count)
	case 's':
		return pad(t.Second(), p.count)
	case 'S':
		ms := fmt.Sprintf("%09d", t.Nanosecond())
		if p.count <= 9 {
			return ms[:p.count]
		}
		return ms + strings.Repeat("0", p.count-9)
	case 'z':
		name, _ := t.Zone()
		return name
	case 'Z':
		return jodaOffset(t, p.count)
	}
	return ""
}

// jodaYear prints a year: "yy" is the last two digits, others pad.
func jodaYear(y, count int) string {
	if count == 2 {
		return pad(((y%100)+100)%100, 2)
	}
	return pad(y, count)
}

func isoWeekday(t time.Time) int {
	if t.Weekday() == time.Sunday {
		return 7
	}
	return int(t.Weekday())
}

func jodaOffset(t time.Time, count int) string {
	if count >= 3 {
		return t.Location().String()
	}
	_, off := t.Zone()
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	h, m := off/3600, off%3600/60
	if count == 2 {
		return fmt.Sprintf("%s%02d:%02d", sign, h, m)
	}
	return fmt.Sprintf("%s%02d%02d", sign, h, m)
}

func pad(n, width int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	if neg {
		return "-" + s
	}
	return s
}
