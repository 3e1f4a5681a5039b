package console

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"
)

// Point is one sample of a chart's series.
type Point struct {
	At    time.Time
	Value float64
}

// Series is one line of a chart.
type Series struct {
	Name   string
	Points []Point
}

// chartSVG draws series as a line chart, server-side: an SVG with a
// title and a description (for screen readers), a y axis from 0 to the
// largest value (rounded up), time along x, colours from the theme's
// chart variables (classes s0..s3). unit labels the y axis ("rec/s").
func chartSVG(title, unit string, series []Series) template.HTML {
	const w, h, left, right, top, bottom = 640.0, 200.0, 56.0, 10.0, 10.0, 24.0
	var lo, hi time.Time
	maxV := 0.0
	for _, s := range series {
		for _, p := range s.Points {
			if lo.IsZero() || p.At.Before(lo) {
				lo = p.At
			}
			if p.At.After(hi) {
				hi = p.At
			}
			maxV = math.Max(maxV, p.Value)
		}
	}
	maxV = niceCeil(maxV)
	span := hi.Sub(lo).Seconds()
	if span <= 0 {
		span = 1
	}
	x := func(t time.Time) float64 { return left + (w-left-right)*t.Sub(lo).Seconds()/span }
	y := func(v float64) float64 { return top + (h-top-bottom)*(1-v/maxV) }
	var b strings.Builder
	esc := template.HTMLEscapeString
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-labelledby="%s-t %s-d" xmlns="http://www.w3.org/2000/svg">`, w, h, slug(title), slug(title))
	fmt.Fprintf(&b, `<title id="%s-t">%s</title>`, slug(title), esc(title))
	var desc []string
	for _, s := range series {
		if n := len(s.Points); n > 0 {
			desc = append(desc, fmt.Sprintf("%s: latest %s %s", s.Name, formatValue(s.Points[n-1].Value), unit))
		} else {
			desc = append(desc, s.Name+": no samples yet")
		}
	}
	fmt.Fprintf(&b, `<desc id="%s-d">%s</desc>`, slug(title), esc(strings.Join(desc, "; ")))
	// Axes and three y gridlines.
	fmt.Fprintf(&b, `<line class="axis" x1="%g" y1="%g" x2="%g" y2="%g"/>`, left, h-bottom, w-right, h-bottom)
	for i := 0; i <= 2; i++ {
		v := maxV * float64(i) / 2
		fmt.Fprintf(&b, `<line class="axis" x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke-dasharray="2 4"/>`, left, y(v), w-right, y(v))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%s</text>`, left-4, y(v)+4, esc(formatValue(v)))
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="start">%s</text>`, left, h-6, esc(unit))
	if !lo.IsZero() {
		fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="end">%s – %s UTC</text>`, w-right, h-6, lo.UTC().Format("15:04:05"), hi.UTC().Format("15:04:05"))
	}
	for i, s := range series {
		if len(s.Points) == 0 {
			continue
		}
		var d strings.Builder
		for j, p := range s.Points {
			cmd := "L"
			if j == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%.1f %.1f ", cmd, x(p.At), y(p.Value))
		}
		fmt.Fprintf(&b, `<path class="line s%d" d="%s"><title>%s</title></path>`, i%4, strings.TrimSpace(d.String()), esc(s.Name))
		if len(s.Points) == 1 {
			p := s.Points[0]
			fmt.Fprintf(&b, `<circle class="f%d" cx="%.1f" cy="%.1f" r="3"/>`, i%4, x(p.At), y(p.Value))
		}
	}
	b.WriteString(`</svg>`)
	if len(series) > 1 {
		b.WriteString(`<div class="legend">`)
		for i, s := range series {
			fmt.Fprintf(&b, `<span><i class="f%d"></i>%s</span>`, i%4, esc(s.Name))
		}
		b.WriteString(`</div>`)
	}
	return template.HTML(b.String())
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (1 for 0).
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func formatValue(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.3gG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.3g", v)
}

func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return "c-" + b.String()
}
