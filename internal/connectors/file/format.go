package file

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// javaString renders a value as Java's String.valueOf does, which is what
// Kafka's sink prints, so that the file's lines match Kafka's: null,
// 1.0 for a double, [a, b] for a list, {k=v} for a map. Bytes are written
// as they are (Java would print the array's identity, [B@1b6d3586, which
// no one wants); map entries are sorted by key, where Java's HashMap
// order is unspecified.
func javaString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case []byte:
		return string(x)
	case float64:
		return javaDouble(x, 64)
	case float32:
		return javaDouble(float64(x), 32)
	case time.Time:
		return x.Format("Mon Jan 02 15:04:05 MST 2006") // java.util.Date
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = javaString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		return javaMap(len(x), func(yield func(k, v any)) {
			for k, e := range x {
				yield(k, e)
			}
		})
	case map[any]any:
		return javaMap(len(x), func(yield func(k, v any)) {
			for k, e := range x {
				yield(k, e)
			}
		})
	case *connect.Struct:
		return x.String()
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

func javaMap(n int, each func(yield func(k, v any))) string {
	entries := make([]string, 0, n)
	each(func(k, v any) { entries = append(entries, javaString(k)+"="+javaString(v)) })
	sort.Strings(entries)
	return "{" + strings.Join(entries, ", ") + "}"
}

// javaDouble is Double.toString (Float.toString for bits 32): plain
// decimal with at least one fractional digit between 10^-3 and 10^7,
// computerized scientific notation (1.0E10) outside.
func javaDouble(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, bits) // 1.5E+10
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
