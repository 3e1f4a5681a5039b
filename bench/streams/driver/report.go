package main

import (
	"fmt"
	"io"
	"slices"
)

// figure is one row of the report.
type figure struct {
	name string
	unit string
	get  func(trial) float64
}

var figures = []figure{
	{"throughput", "records/s", func(t trial) float64 { return t.Rate }},
	{"peak RSS, VmHWM", "MiB", func(t trial) float64 { return float64(t.PeakRSSKiB) / 1024 }},
	{"mean RSS", "MiB", func(t trial) float64 { return float64(t.MeanRSSKiB) / 1024 }},
	{"application CPU", "µs/record", func(t trial) float64 { return t.CPUMicrosPerRec }},
	{"broker CPU", "µs/record", func(t trial) float64 { return t.BrokerCPUSeconds / float64(t.Records) * 1e6 }},
	{"output records", "", func(t trial) float64 { return float64(t.OutputRecords) }},
	{"start-up", "s", func(t trial) float64 { return t.StartupSeconds }},
}

// report prints, per topology and runtime, the median and [min..max] of
// the runs and, when both ran, Samsa's figure over Java's taken per run
// (the two ran one after the other in the same round) as the median and
// [min..max] of those ratios, as docs/PERFORMANCE.md reports ratios.
func report(w io.Writer, o options, results []trial) {
	for _, topo := range o.topologies {
		var rs []trial
		for _, t := range results {
			if t.Topology == topo {
				rs = append(rs, t)
			}
		}
		fmt.Fprintf(w, "\n%s: %d records in %d partitions, commit.interval.ms %d, statestore.cache.max.bytes %d; median [min..max] of %d runs\n\n",
			topo, o.records, o.partitions, o.commitMs, o.cacheBytes, o.runs)
		table(w, o, rs)
	}
	fmt.Fprintln(w, "\nevery run:")
	for _, t := range results {
		fmt.Fprintf(w, "  %s %s run %d: %s\n", t.Runtime, t.Topology, t.Run, t)
	}
}

func table(w io.Writer, o options, results []trial) {
	both := slices.Contains(o.runtimes, "samsa") && slices.Contains(o.runtimes, "java")
	fmt.Fprint(w, "| figure |")
	for _, rt := range o.runtimes {
		fmt.Fprintf(w, " %s |", rt)
	}
	if both {
		fmt.Fprint(w, " Samsa/Java |")
	}
	fmt.Fprint(w, "\n|---|")
	for range o.runtimes {
		fmt.Fprint(w, "---:|")
	}
	if both {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, f := range figures {
		name := f.name
		if f.unit != "" {
			name += " (" + f.unit + ")"
		}
		fmt.Fprintf(w, "| %s |", name)
		for _, rt := range o.runtimes {
			fmt.Fprintf(w, " %s |", spread(values(results, rt, f.get)))
		}
		if both {
			fmt.Fprintf(w, " %s |", spread(ratios(results, f.get)))
		}
		fmt.Fprintln(w)
	}
}

func values(results []trial, runtime string, get func(trial) float64) []float64 {
	var vs []float64
	for _, t := range results {
		if t.Runtime == runtime {
			vs = append(vs, get(t))
		}
	}
	return vs
}

// ratios are Samsa's figure over Java's, run by run.
func ratios(results []trial, get func(trial) float64) []float64 {
	java := map[int]float64{}
	for _, t := range results {
		if t.Runtime == "java" {
			java[t.Run] = get(t)
		}
	}
	var rs []float64
	for _, t := range results {
		if j, ok := java[t.Run]; ok && t.Runtime == "samsa" && j != 0 {
			rs = append(rs, get(t)/j)
		}
	}
	return rs
}

func spread(vs []float64) string {
	if len(vs) == 0 {
		return "-"
	}
	return fmt.Sprintf("%s [%s..%s]", format(median(vs)), format(slices.Min(vs)), format(slices.Max(vs)))
}

func median(vs []float64) float64 {
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

func format(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
