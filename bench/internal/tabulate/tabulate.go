package tabulate

import (
	"fmt"
	"slices"
)

// Median is the median of vs; 0 for none.
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Spread is "median [min..max]" of vs, each number by format; the value
// alone for one run, "-" for none.
func Spread(vs []float64, format func(float64) string) string {
	if len(vs) == 0 {
		return "-"
	}
	if len(vs) == 1 {
		return format(vs[0])
	}
	return fmt.Sprintf("%s [%s..%s]", format(Median(vs)), format(slices.Min(vs)), format(slices.Max(vs)))
}

// PerMillion scales v, measured over records, to a million records; 0
// for no records.
func PerMillion(v float64, records int) float64 {
	if records == 0 {
		return 0
	}
	return v / float64(records) * 1e6
}
