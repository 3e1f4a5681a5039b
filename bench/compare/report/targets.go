package main

import (
	"fmt"
	"math"
	"strings"
)

// target is one of the goals, checked on the median of a series
// (a per-round ratio or an absolute figure).
type target struct {
	goal     string
	workload string
	s        summary
	limit    float64
	atMost   bool   // the goal is s.median <= limit; otherwise >= limit
	unit     string // "×" for ratios, else appended after a space
}

// measured formats the summary in the target's unit.
func (t target) measured() string {
	if t.s.n == 0 {
		return "–"
	}
	if t.unit == "×" {
		return ratioCell(t.s)
	}
	return cell(t.s) + " " + t.unit
}

// met reports whether the target is met; ok is false without data.
func (t target) met() (met, ok bool) {
	if t.s.n == 0 {
		return false, false
	}
	if t.atMost {
		return t.s.median <= t.limit, true
	}
	return t.s.median >= t.limit, true
}

// result is "met (12% to spare)", "**missed** by 24%" or "no data"; the
// percentage is of the limit.
func (t target) result() string {
	met, ok := t.met()
	if !ok {
		return "no data"
	}
	pct := math.Abs(t.s.median-t.limit) / t.limit * 100
	if met {
		return fmt.Sprintf("met (%s%% to spare)", sig(pct))
	}
	return fmt.Sprintf("**missed** by %s%%", sig(pct))
}

func (t target) limitString() string {
	op := "≥"
	if t.atMost {
		op = "≤"
	}
	if t.unit == "×" {
		return op + " " + sig(t.limit) + "×"
	}
	return op + " " + sig(t.limit) + " " + t.unit
}

// scaled multiplies every value of s by f.
func scaled(s series, f float64) series {
	if s == nil {
		return nil
	}
	out := series{}
	for r, v := range s {
		out[r] = v * f
	}
	return out
}

// targets are the goals of the issue, in the order of the report.
func (rep *report) targets() []target {
	m, k := rep.main, bKafka
	name := rep.name(m)
	var ts []target
	for _, kind := range []string{"produce", "consume"} {
		for _, wl := range rep.workloadsOf(kind) {
			ts = append(ts, target{goal: "broker CPU per 1M records, " + name + "/Kafka", workload: wl,
				s: ratio(rep.get(wl, m, mCPU), rep.get(wl, k, mCPU)), limit: 0.5, atMost: true, unit: "×"})
		}
	}
	for _, kind := range []string{"produce", "consume"} {
		for _, wl := range rep.workloadsOf(kind) {
			ts = append(ts, target{goal: "throughput, " + name + "/Kafka", workload: wl,
				s: ratio(rep.get(wl, m, mRecords), rep.get(wl, k, mRecords)), limit: 1, unit: "×"})
		}
	}
	for _, wl := range rep.workloadsOf("e2e") {
		ts = append(ts, target{goal: "end-to-end p99, " + name + "/Kafka", workload: wl,
			s: ratio(rep.get(wl, m, mP99), rep.get(wl, k, mP99)), limit: 0.5, atMost: true, unit: "×"})
	}
	const mibToMB = 1 << 20 / 1e6
	ts = append(ts,
		target{goal: name + " RSS idle after start", s: scaled(rep.get(wStart, m, mIdleRSS), mibToMB).summary(),
			limit: 30, atMost: true, unit: "MB"},
		target{goal: name + " peak RSS under load (all workloads)", s: scaled(rep.get(wWholePhase, m, mPeakRSS), mibToMB).summary(),
			limit: 200, atMost: true, unit: "MB"},
		target{goal: name + " start to first Metadata answer", s: rep.get(wStart, m, mMetadata).summary(),
			limit: 100, atMost: true, unit: "ms"})
	for _, wl := range rep.workloadsOf("produce") {
		ts = append(ts, target{goal: "durable throughput, Samsa durable/Samsa", workload: wl,
			s: ratio(rep.get(wl, bDurable, mRecords), rep.get(wl, bSamsa, mRecords)), limit: 0.8, unit: "×"})
	}
	return ts
}

// targetsTable checks the targets on the medians over rounds.
func (rep *report) targetsTable(b *strings.Builder) {
	ts := rep.targets()
	met, missed, none := 0, 0, 0
	for _, t := range ts {
		switch ok, data := t.met(); {
		case !data:
			none++
		case ok:
			met++
		default:
			missed++
		}
	}
	fmt.Fprintf(b, "## Targets\n\n")
	fmt.Fprintf(b, "The issue's targets, checked on the median over rounds (of the per-round ratio where there is one): ")
	fmt.Fprintf(b, "**%d met, %d missed**", met, missed)
	if none > 0 {
		fmt.Fprintf(b, ", %d without data", none)
	}
	fmt.Fprintf(b, ". \"Missed by\" and \"to spare\" are percentages of the limit. MB here is 10⁶ bytes.\n\n")
	fmt.Fprintf(b, "| Target | Workload | Measured | Limit | Result |\n|---|---|---:|---:|---|\n")
	for _, t := range ts {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", t.goal, t.workload, t.measured(), t.limitString(), t.result())
	}
	if row := rep.ceilingRow(); row != "" {
		fmt.Fprintf(b, "%s", row)
	}
	fmt.Fprintf(b, "\n")
}

// ceilingRow summarises, over the produce and consume workloads, how close
// Samsa and Kafka come to the client-only ceiling (kfake): the range of
// the per-workload medians of the per-round ratios.
func (rep *report) ceilingRow() string {
	if !rep.has(bKfake) {
		return ""
	}
	span := func(broker string) string {
		lo, hi := summary{}, summary{}
		var loW, hiW string
		for _, kind := range []string{"produce", "consume"} {
			for _, wl := range rep.workloadsOf(kind) {
				s := ratio(rep.get(wl, broker, mRecords), rep.get(wl, bKfake, mRecords))
				if s.n == 0 {
					continue
				}
				if lo.n == 0 || s.median < lo.median {
					lo, loW = s, wl
				}
				if hi.n == 0 || s.median > hi.median {
					hi, hiW = s, wl
				}
			}
		}
		if lo.n == 0 {
			return rep.name(broker) + " –"
		}
		return fmt.Sprintf("%s %s× (%s) .. %s× (%s)", rep.name(broker), sig(lo.median), loW, sig(hi.median), hiW)
	}
	return fmt.Sprintf("| client-only ceiling (kfake): throughput/ceiling, lowest .. highest workload | all produce and consume | %s; %s | | for reading the throughput targets |\n",
		span(rep.main), span(bKafka))
}
