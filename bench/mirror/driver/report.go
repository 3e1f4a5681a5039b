package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/samsa-io/samsa/bench/internal/tabulate"
)

// figure is one row of the report.
type figure struct {
	name string
	unit string
	get  func(trial) float64
}

var figures = []figure{
	{"backlog throughput, from the mirror's start", "records/s", func(t trial) float64 { return t.Rate }},
	{"backlog copy rate, after the first record", "records/s", func(t trial) float64 { return t.CopyRate }},
	{"start-up to the first record on B", "s", func(t trial) float64 { return t.StartupSeconds }},
	{"end-to-end lag under load, p50", "ms", func(t trial) float64 { return t.LagP50Millis }},
	{"end-to-end lag under load, p99", "ms", func(t trial) float64 { return t.LagP99Millis }},
	{"end-to-end lag under load, max", "ms", func(t trial) float64 { return t.LagMaxMillis }},
	{"mirror CPU, backlog (start-up included)", "s per 1M records", func(t trial) float64 { return tabulate.PerMillion(t.CPUBacklogSeconds, t.Records) }},
	{"mirror CPU, backlog after the first record", "s per 1M records", func(t trial) float64 { return tabulate.PerMillion(t.CPUCopySeconds, t.Records) }},
	{"mirror CPU, under load", "s per 1M records", func(t trial) float64 { return tabulate.PerMillion(t.CPULiveSeconds, t.LiveOnB) }},
	{"mirror peak RSS, VmHWM", "MiB", func(t trial) float64 { return float64(t.PeakRSSKiB) / 1024 }},
	{"mirror mean RSS", "MiB", func(t trial) float64 { return float64(t.MeanRSSKiB) / 1024 }},
	{"both brokers' CPU, backlog", "s per 1M records", func(t trial) float64 { return tabulate.PerMillion(t.BrokerCPUSeconds, t.Records) }},
	{"the driver's CPU (its consumer on B), backlog", "s per 1M records", func(t trial) float64 { return tabulate.PerMillion(t.DriverCPUSeconds, t.Records) }},
	{"backlog records read on B", "", func(t trial) float64 { return float64(t.BacklogOnB) }},
	{"live records read on B / produced", "", func(t trial) float64 {
		if t.LiveSent == 0 {
			return 0
		}
		return float64(t.LiveOnB) / float64(t.LiveSent)
	}},
}

var modeTitle = map[string]string{
	modeTranslate: "Samsa translate",
	modeEOS:       "Samsa exactly once",
	modePreserve:  "Samsa offset preserving",
	modeMM2:       "MirrorMaker 2",
}

// report writes, per figure, each mode's median and [min..max] over the
// runs and, for each Samsa mode when MirrorMaker 2 ran too, the ratio
// Samsa/MM2 taken run by run (the two ran in the same round), as the
// median and [min..max] of those ratios.
func report(w io.Writer, o options, results []trial) {
	fmt.Fprintf(w, "%d records of %d bytes (keys k000000000...) in %d partitions preloaded on A; lag phase %d records/s for %v after a %v pause; tasks.max %d; median [min..max] of %d runs\n\n",
		o.records, o.valueBytes, o.partitions, o.rate, o.live.Round(time.Second), o.settle, o.tasksMax, o.runs)
	withMM2 := slices.Contains(o.modes, modeMM2)
	var cols []string
	for _, m := range allModes {
		if slices.Contains(o.modes, m) {
			cols = append(cols, m)
		}
	}
	fmt.Fprint(w, "| figure |")
	for _, m := range cols {
		fmt.Fprintf(w, " %s |", modeTitle[m])
		if withMM2 && m != modeMM2 {
			fmt.Fprint(w, " /MM2 |")
		}
	}
	fmt.Fprint(w, "\n|---|")
	for _, m := range cols {
		fmt.Fprint(w, "---:|")
		if withMM2 && m != modeMM2 {
			fmt.Fprint(w, "---:|")
		}
	}
	fmt.Fprintln(w)
	for _, f := range figures {
		name := f.name
		if f.unit != "" {
			name += " (" + f.unit + ")"
		}
		fmt.Fprintf(w, "| %s |", name)
		for _, m := range cols {
			fmt.Fprintf(w, " %s |", tabulate.Spread(values(results, m, f.get), format))
			if withMM2 && m != modeMM2 {
				fmt.Fprintf(w, " %s |", tabulate.Spread(ratios(results, m, f.get), format))
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\nevery run:")
	for _, t := range results {
		fmt.Fprintf(w, "- %s run %d: %s\n", t.Mode, t.Run, t)
	}
}

func values(results []trial, mode string, get func(trial) float64) []float64 {
	var vs []float64
	for _, t := range results {
		if t.Mode == mode {
			vs = append(vs, get(t))
		}
	}
	return vs
}

// ratios are mode's figure over MirrorMaker 2's, run by run.
func ratios(results []trial, mode string, get func(trial) float64) []float64 {
	mm2 := map[int]float64{}
	for _, t := range results {
		if t.Mode == modeMM2 {
			mm2[t.Run] = get(t)
		}
	}
	var rs []float64
	for _, t := range results {
		if j, ok := mm2[t.Run]; ok && t.Mode == mode && j != 0 {
			rs = append(rs, get(t)/j)
		}
	}
	return rs
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
