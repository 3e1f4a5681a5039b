package main

import (
	"math"
	"slices"
	"strconv"
)

// series is one metric of one broker in one workload, by round.
type series map[int]float64

// summary is the median and range of a series.
type summary struct {
	n                int
	median, min, max float64
}

func summarize(vs []float64) summary {
	if len(vs) == 0 {
		return summary{}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return summary{n: len(s), median: m, min: s[0], max: s[len(s)-1]}
}

func (s series) values() []float64 {
	var vs []float64
	for _, r := range s.rounds() {
		vs = append(vs, s[r])
	}
	return vs
}

func (s series) rounds() []int {
	var rs []int
	for r := range s {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	return rs
}

func (s series) summary() summary { return summarize(s.values()) }

// ratio pairs a and b round by round (a/b) over the rounds both have.
func ratio(a, b series) summary {
	var vs []float64
	for _, r := range a.rounds() {
		if bv, ok := b[r]; ok && bv != 0 {
			vs = append(vs, a[r]/bv)
		}
	}
	return summarize(vs)
}

// sig formats v with three significant digits (whole numbers from 1000 up)
// and no exponent.
func sig(v float64) string {
	if math.Abs(v) < 1000 {
		v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	}
	av := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case av >= 1000:
		return commas(math.Round(v))
	case av >= 100:
		return trim(v, 0)
	case av >= 10:
		return trim(v, 1)
	case av >= 1:
		return trim(v, 2)
	case av >= 0.1:
		return trim(v, 3)
	}
	return trim(v, 4)
}

func trim(v float64, decimals int) string { return strconv.FormatFloat(v, 'f', decimals, 64) }

// commas writes an integer with thousands separators: 1234567 -> 1,234,567.
func commas(v float64) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', 0, 64)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if v < 0 {
		return "-" + string(out)
	}
	return string(out)
}
