package convert

import (
	"encoding/base64"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The functions here write JSON text the way Kafka's JsonConverter does
// through Jackson, so that a record this converter writes is the same bytes
// Kafka Connect writes: no spaces, object members in the order Kafka sets
// them, control characters escaped with upper-case hex, '/' and non-ASCII
// left as they are, doubles and floats as Java's Double.toString and
// Float.toString print them, decimals as BigDecimal.toString, bytes as
// standard padded base64.

const hexDigits = "0123456789ABCDEF"

// appendJSONString writes s as a JSON string. Invalid UTF-8 (a Java string
// cannot hold it) is written as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			b = appendASCII(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

func appendASCII(b []byte, c byte) []byte {
	switch c {
	case '"':
		return append(b, '\\', '"')
	case '\\':
		return append(b, '\\', '\\')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	}
	if c < 0x20 {
		return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
	}
	return append(b, c)
}

// appendBase64 writes bytes as Jackson writes a binary node.
func appendBase64(b []byte, p []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, p)
	return append(b, '"')
}

// appendJavaDouble writes f as Jackson writes a double: Double.toString,
// and the non-finite values as quoted strings (Jackson's default
// QUOTE_NON_NUMERIC_NUMBERS).
func appendJavaDouble(b []byte, f float64) []byte { return appendJavaFloating(b, f, 64) }

// appendJavaFloat writes f as Jackson writes a float (Float.toString).
func appendJavaFloat(b []byte, f float32) []byte { return appendJavaFloating(b, float64(f), 32) }

func appendJavaFloating(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	return append(b, javaFloatingString(f, bits)...)
}

// javaFloatingString is Java's Double.toString (bits 64) or Float.toString
// (bits 32): the shortest digits that read back to the same value (as Java
// 19 and later print them), in plain notation from 10^-3 up to 10^7 with at
// least one digit after the point, else as d.dddE<exponent>.
func javaFloatingString(f float64, bits int) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	sci := strconv.FormatFloat(f, 'e', -1, bits) // -d.ddde±XX
	neg := sci[0] == '-'
	if neg {
		sci = sci[1:]
	}
	mant, expText, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	var out strings.Builder
	if neg {
		out.WriteByte('-')
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		writePlain(&out, digits, exp)
	} else {
		out.WriteByte(digits[0])
		out.WriteByte('.')
		if len(digits) > 1 {
			out.WriteString(digits[1:])
		} else {
			out.WriteByte('0')
		}
		out.WriteByte('E')
		out.WriteString(strconv.Itoa(exp))
	}
	return out.String()
}

// writePlain writes digits × 10^(exp-len(digits)+1) in plain notation
// with at least one digit on each side of the point.
func writePlain(out *strings.Builder, digits string, exp int) {
	if exp < 0 {
		out.WriteString("0.")
		out.WriteString(strings.Repeat("0", -exp-1))
		out.WriteString(digits)
		return
	}
	if len(digits) <= exp+1 {
		out.WriteString(digits)
		out.WriteString(strings.Repeat("0", exp+1-len(digits)))
		out.WriteString(".0")
		return
	}
	out.WriteString(digits[:exp+1])
	out.WriteByte('.')
	out.WriteString(digits[exp+1:])
}

// bigDecimalString is Java's BigDecimal.toString of unscaled × 10^-scale:
// plain notation when the scale is not negative and the adjusted exponent
// is at least -6, else scientific with an explicit sign on the exponent.
func bigDecimalString(unscaled *big.Int, scale int) string {
	if unscaled == nil {
		unscaled = new(big.Int)
	}
	digits := new(big.Int).Abs(unscaled).String()
	sign := ""
	if unscaled.Sign() < 0 {
		sign = "-"
	}
	adjusted := -scale + len(digits) - 1
	if scale >= 0 && adjusted >= -6 {
		switch {
		case scale == 0:
			return sign + digits
		case len(digits) > scale:
			return sign + digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
		default:
			return sign + "0." + strings.Repeat("0", scale-len(digits)) + digits
		}
	}
	s := sign + digits[:1]
	if len(digits) > 1 {
		s += "." + digits[1:]
	}
	s += "E"
	if adjusted > 0 {
		s += "+"
	}
	return s + strconv.Itoa(adjusted)
}

// parseBigDecimal reads a JSON number as Java's new BigDecimal(text) does:
// the scale is the number of digits after the point less the exponent.
func parseBigDecimal(text string) (*big.Int, int, bool) {
	mant, exp := text, 0
	if i := strings.IndexAny(text, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(text[i+1:], "+"))
		if err != nil {
			return nil, 0, false
		}
		mant, exp = text[:i], e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	u, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return nil, 0, false
	}
	return u, len(frac) - exp, true
}

// stripLeadingZeros rewrites numbers with leading zeros (0012, -007.5),
// which Kafka's JsonDeserializer accepts (ALLOW_LEADING_ZEROS_FOR_NUMBERS)
// and Go's decoder does not, to their plain form; strings are left alone.
// It reports whether it changed anything.
func stripLeadingZeros(data []byte) ([]byte, bool) {
	out := make([]byte, 0, len(data))
	inString, escaped, changed := false, false, false
	prev := byte(0) // the last byte outside white space
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			inString = escaped || c != '"'
			escaped = !escaped && c == '\\'
		case c == '"':
			inString = true
		case (c == '-' || c == '0') && (prev == 0 || prev == '[' || prev == ',' || prev == ':'):
			start := i
			if c == '-' {
				out = append(out, c)
				i++
			}
			zeros := i
			for i < len(data) && data[i] == '0' {
				i++
			}
			if i-zeros > 1 || (i-zeros == 1 && i < len(data) && data[i] >= '0' && data[i] <= '9') {
				changed = true
			}
			if i == zeros || i >= len(data) || data[i] < '0' || data[i] > '9' {
				if i > zeros {
					out = append(out, '0') // keep one zero before a point or the end
				}
			}
			i--
			if i < start {
				i = start
			}
			prev = '0'
			continue
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			prev = c
		}
		out = append(out, c)
	}
	return out, changed
}
