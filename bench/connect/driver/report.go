package main

import (
	"fmt"
	"io"
	"slices"
)

// report prints, per runtime, the medians of the runs and, when both ran,
// Samsa's figure over Java's.
func report(w io.Writer, o options, results []trial) {
	type row struct {
		name string
		unit string
		get  func(trial) float64
	}
	rows := []row{
		{"end to end", "records/s", func(t trial) float64 { return t.EndToEndRate }},
		{"source only", "records/s", func(t trial) float64 { return t.SourceRate }},
		{"peak RSS (VmHWM)", "MiB", func(t trial) float64 { return float64(t.PeakRSSKiB) / 1024 }},
		{"mean RSS", "MiB", func(t trial) float64 { return float64(t.MeanRSSKiB) / 1024 }},
		{"worker CPU", "µs/record", func(t trial) float64 { return t.CPUMicrosPerRec }},
		{"broker CPU", "µs/record", func(t trial) float64 { return t.BrokerCPUSeconds / float64(t.Records) * 1e6 }},
		{"worker start-up", "s", func(t trial) float64 { return t.StartupSeconds }},
	}
	fmt.Fprintf(w, "\n%d lines of %d bytes, batch.size %d, offset.flush.interval.ms %d, producer.compression.type %q; medians of %d runs\n\n",
		o.lines, o.lineBytes, o.batchSize, o.flushMs, o.compress, o.runs)
	fmt.Fprint(w, "| figure |")
	for _, rt := range o.runtimes {
		fmt.Fprintf(w, " %s |", rt)
	}
	both := slices.Contains(o.runtimes, "samsa") && slices.Contains(o.runtimes, "java")
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
	for _, r := range rows {
		med := map[string]float64{}
		fmt.Fprintf(w, "| %s (%s) |", r.name, r.unit)
		for _, rt := range o.runtimes {
			var vs []float64
			for _, t := range results {
				if t.Runtime == rt {
					vs = append(vs, r.get(t))
				}
			}
			med[rt] = median(vs)
			fmt.Fprintf(w, " %s |", format(med[rt]))
		}
		if both {
			fmt.Fprintf(w, " %.2f |", med["samsa"]/med["java"])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\nevery run:")
	for _, t := range results {
		fmt.Fprintf(w, "  %s run %d: %s\n", t.Runtime, t.Run, t)
	}
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
