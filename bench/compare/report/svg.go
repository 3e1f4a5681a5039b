package main

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Plain SVG 1.1, no scripts or external fonts, so the charts render on
// GitHub and in any browser.

var color = map[string]string{bSamsa: "#d1495b", bDurable: "#edae49", bKafka: "#00798c", bKfake: "#8d8d8d",
	bSamsa3: "#8f2d56", bKafka3: "#003d5b", bSamsaTLS: "#f29ca6", bKafkaTLS: "#7fcdd6"}

const font = `font-family="sans-serif"`

type bar struct {
	broker string
	s      summary
}

type barGroup struct {
	label string
	bars  []bar
}

// barChart draws horizontal bars, one group per workload, each bar the
// median with a whisker from min to max; every group has a bar per broker,
// in the legend's order.
func barChart(title string, groups []barGroup, brokers []string) string {
	const (
		left, right, top = 230.0, 30.0, 64.0
		barH, gap        = 14.0, 10.0
		width            = 820.0
	)
	var maxV float64
	for _, g := range groups {
		for _, b := range g.bars {
			maxV = max(maxV, b.s.max, b.s.median)
		}
	}
	step := niceStep(maxV / 5)
	axisMax := math.Max(step, math.Ceil(maxV/step)*step)
	plotW := width - left - right
	groupH := float64(len(groups[0].bars))*barH + gap
	height := top + float64(len(groups))*groupH + 40
	x := func(v float64) float64 { return left + v/axisMax*plotW }

	var b strings.Builder
	svgOpen(&b, width, height, title)
	// Grid and axis labels.
	for v := 0.0; v <= axisMax+step/2; v += step {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x(v), top-5, x(v), height-35)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" %s>%s</text>`+"\n", x(v), height-20, font, tick(v))
	}
	for i, g := range groups {
		y0 := top + float64(i)*groupH
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="end" %s>%s</text>`+"\n",
			left-8, y0+float64(len(g.bars))*barH/2+4, font, html.EscapeString(g.label))
		for j, br := range g.bars {
			if br.s.n == 0 {
				continue
			}
			y := y0 + float64(j)*barH
			fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s</title></rect>`+"\n",
				left, y+1, x(br.s.median)-left, barH-2, color[br.broker], displayName[br.broker], cell(br.s))
			if br.s.n > 1 {
				cy := y + barH/2
				fmt.Fprintf(&b, `<path d="M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f" stroke="#222" fill="none"/>`+"\n",
					x(br.s.min), cy, x(br.s.max), x(br.s.min), cy-3, cy+3, x(br.s.max), cy-3, cy+3)
			}
		}
	}
	legend(&b, width-right-legendWidth(brokers), 48, brokers)
	b.WriteString("</svg>\n")
	return b.String()
}

// curveChart plots latency against percentile on a "nines" axis
// (-log10(1-p)), latency on a log axis: each round a thin line, the median
// over rounds at each percentile a thick one. The first of brokers is drawn
// last, on top.
func curveChart(title string, byBroker map[string]map[int][]point, brokers []string) string {
	const (
		left, right, top, bottom = 70.0, 30.0, 50.0, 50.0
		width, height            = 720.0, 420.0
	)
	const maxNines = 5.0 // where p = 100 (the max) is drawn
	nines := func(p float64) float64 {
		if p >= 100 {
			return maxNines
		}
		return min(-math.Log10(1-p/100), maxNines-0.5)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, rounds := range byBroker {
		for _, pts := range rounds {
			for _, pt := range pts {
				if pt.ms > 0 {
					lo, hi = min(lo, pt.ms), max(hi, pt.ms)
				}
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0.1, 1
	}
	ylo, yhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if yhi <= ylo {
		yhi = ylo + 1
	}
	plotW, plotH := width-left-right, height-top-bottom
	x := func(p float64) float64 { return left + (nines(p)-nines(50))/(maxNines-nines(50))*plotW }
	y := func(ms float64) float64 {
		return top + plotH - (math.Log10(math.Max(ms, math.Pow(10, ylo)))-ylo)/(yhi-ylo)*plotH
	}

	var b strings.Builder
	svgOpen(&b, width, height, title)
	for _, p := range []float64{50, 90, 99, 99.9, 99.99, 100} {
		label := tick(p)
		if p == 100 {
			label = "max"
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x(p), top, x(p), top+plotH)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" %s>%s</text>`+"\n", x(p), top+plotH+16, font, label)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="middle" %s>percentile</text>`+"\n", left+plotW/2, height-10, font)
	for e := ylo; e <= yhi; e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if e == yhi && m > 1 {
				break
			}
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#%s"/>`+"\n", left, y(v), left+plotW, y(v),
				map[bool]string{true: "ccc", false: "eee"}[m == 1])
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="end" %s>%s</text>`+"\n", left-6, y(v)+4, font, tick(v))
		}
	}
	fmt.Fprintf(&b, `<text x="16" y="%.1f" font-size="12" text-anchor="middle" transform="rotate(-90 16 %.1f)" %s>latency, ms (log)</text>`+"\n",
		top+plotH/2, top+plotH/2, font)
	for _, br := range slices.Backward(brokers) {
		rounds := byBroker[br]
		if len(rounds) == 0 {
			continue
		}
		var rs []int
		for r := range rounds {
			rs = append(rs, r)
		}
		slices.Sort(rs)
		for _, r := range rs {
			fmt.Fprintf(&b, `<polyline class="round" fill="none" stroke="%s" stroke-opacity="0.35" stroke-width="1" points="%s"/>`+"\n",
				color[br], polyPoints(rounds[r], x, y))
		}
		fmt.Fprintf(&b, `<polyline class="median" fill="none" stroke="%s" stroke-width="2.5" points="%s"><title>%s median</title></polyline>`+"\n",
			color[br], polyPoints(medianCurve(rounds), x, y), displayName[br])
	}
	legend(&b, left+12, top+8, brokers)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#555" %s>thick: median over rounds; thin: each round</text>`+"\n",
		left+12, top+26, font)
	b.WriteString("</svg>\n")
	return b.String()
}

// medianCurve is the median latency over rounds at each percentile.
func medianCurve(rounds map[int][]point) []point {
	byP := map[float64][]float64{}
	var ps []float64
	for _, pts := range rounds {
		for _, pt := range pts {
			if _, ok := byP[pt.p]; !ok {
				ps = append(ps, pt.p)
			}
			byP[pt.p] = append(byP[pt.p], pt.ms)
		}
	}
	slices.Sort(ps)
	var out []point
	for _, p := range ps {
		out = append(out, point{p, summarize(byP[p]).median})
	}
	return out
}

func polyPoints(pts []point, x, y func(float64) float64) string {
	var parts []string
	for _, pt := range pts {
		parts = append(parts, fmt.Sprintf("%.1f,%.1f", x(pt.p), y(pt.ms)))
	}
	return strings.Join(parts, " ")
}

func svgOpen(b *strings.Builder, width, height float64, title string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`+"\n",
		width, height, width, height)
	fmt.Fprintf(b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(b, `<text x="%.1f" y="24" font-size="15" font-weight="bold" text-anchor="middle" %s>%s</text>`+"\n",
		width/2, font, html.EscapeString(title))
}

func legend(b *strings.Builder, x, y float64, brokers []string) {
	for _, br := range brokers {
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="12" height="12" fill="%s"/>`+"\n", x, y-10, color[br])
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="12" %s>%s</text>`+"\n", x+16, y, font, html.EscapeString(displayName[br]))
		x += legendItemWidth(br)
	}
}

// legendItemWidth estimates one legend entry's width (12px sans-serif:
// about 7px a character).
func legendItemWidth(br string) float64 { return 16 + 7*float64(len(displayName[br])) + 18 }

func legendWidth(brokers []string) float64 {
	w := 0.0
	for _, br := range brokers {
		w += legendItemWidth(br)
	}
	return w
}

// tick formats an axis value as short as it goes: 50, 99.9, 0.01.
func tick(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// niceStep rounds a raw axis step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}
