package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/samsa-io/samsa/bench/internal/tabulate"
)

// figure is one row of the report.
type figure struct {
	name string
	unit string
	get  func(trial) float64
}

var figures = []figure{
	{"delivery throughput, from the consumers' start", "records/s", func(t trial) float64 { return t.Rate }},
	{"delivery throughput, after the first record", "records/s", func(t trial) float64 { return t.DeliveryRate }},
	{"time to the first record", "s", func(t trial) float64 { return t.FirstSeconds }},
	{"duplicates (offsets delivered again)", "", func(t trial) float64 { return float64(t.Duplicates) }},
	{"redelivered (delivery count > 1)", "", func(t trial) float64 { return float64(t.Redelivered) }},
	{"acknowledgement errors", "", func(t trial) float64 { return float64(t.AckErrors) }},
	{"lag after the flush (unacknowledged)", "", func(t trial) float64 { return float64(t.Lag) }},
	{"fewest records one consumer got", "", func(t trial) float64 { return float64(t.PerConsumerMin) }},
	{"most records one consumer got", "", func(t trial) float64 { return float64(t.PerConsumerMax) }},
	{"broker CPU", "s per 1M records", func(t trial) float64 { return tabulate.PerMillion(t.BrokerCPUSeconds, t.Records) }},
	{"broker peak RSS, sampled", "MiB", func(t trial) float64 { return float64(t.PeakRSSKiB) / 1024 }},
	{"broker mean RSS", "MiB", func(t trial) float64 { return float64(t.MeanRSSKiB) / 1024 }},
	{"the consumers' CPU (this driver)", "s per 1M records", func(t trial) float64 { return tabulate.PerMillion(t.DriverCPUSeconds, t.Records) }},
	{"backlog produce time", "s", func(t trial) float64 { return t.ProduceSeconds }},
}

// liveFigures are the live mode's only, shown after the first three rows
// when a trial ran live.
var liveFigures = []figure{
	{"produce to delivery p50 (the producer runs ahead: mostly queueing)", "ms", func(t trial) float64 { return t.LatencyP50Millis }},
	{"produce to delivery p99", "ms", func(t trial) float64 { return t.LatencyP99Millis }},
}

var modeTitle = map[string]string{
	startConfig: "the backlog produced first, then share.auto.offset.reset=earliest on the group and the consumers started",
	startPrime:  "a consumer joined the empty topic and left, then the backlog was produced and the consumers started",
	startLive:   "the live mode: the consumers joined the empty topic, then the backlog was produced while they consumed, the clock started with the produce",
}

var brokerTitle = map[string]string{brokerSamsa: "Samsa", brokerKafka: "Kafka 4.4"}

// report writes a table per consumer count: each broker's median and
// [min..max] over the runs and, with both brokers, the Samsa/Kafka ratio
// taken run by run (the two ran in the same round), as the median and
// [min..max] of those ratios.
func report(w io.Writer, o options, results []trial) {
	fmt.Fprintf(w, "%d records of %d bytes in one partition (%s); every record accepted explicitly; median [min..max] of %d runs\n",
		o.records, o.valueBytes, modeTitle[o.start], o.runs)
	both := slices.Contains(o.brokers, brokerSamsa) && slices.Contains(o.brokers, brokerKafka)
	var cols []string
	for _, b := range allBrokers {
		if slices.Contains(o.brokers, b) {
			cols = append(cols, b)
		}
	}
	for _, c := range o.consumers {
		fmt.Fprintf(w, "\n### %d consumer%s\n\n| figure |", c, plural(c))
		for _, b := range cols {
			fmt.Fprintf(w, " %s |", brokerTitle[b])
		}
		if both {
			fmt.Fprint(w, " Samsa/Kafka |")
		}
		fmt.Fprint(w, "\n|---|")
		for range cols {
			fmt.Fprint(w, "---:|")
		}
		if both {
			fmt.Fprint(w, "---:|")
		}
		fmt.Fprintln(w)
		rows := figures
		if slices.ContainsFunc(results, func(t trial) bool { return t.Mode == startLive }) {
			rows = slices.Insert(slices.Clone(figures), 3, liveFigures...)
		}
		for _, f := range rows {
			name := f.name
			if f.unit != "" {
				name += " (" + f.unit + ")"
			}
			fmt.Fprintf(w, "| %s |", name)
			for _, b := range cols {
				fmt.Fprintf(w, " %s |", tabulate.Spread(values(results, b, c, f.get), format))
			}
			if both {
				fmt.Fprintf(w, " %s |", tabulate.Spread(ratios(results, c, f.get), format))
			}
			fmt.Fprintln(w)
		}
		for _, b := range cols {
			for _, t := range results {
				if t.Broker == b && t.Consumers == c && t.Mode != o.start {
					fmt.Fprintf(w, "\n%s: measured in %s: the group config was refused (%s).\n",
						brokerTitle[b], modeTitle[t.Mode], t.Refused)
					break
				}
			}
		}
	}
	fmt.Fprintln(w, "\nevery run:")
	for _, t := range results {
		fmt.Fprintf(w, "- %s run %d, %d consumers: %s\n", t.Broker, t.Run, t.Consumers, t)
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func values(results []trial, broker string, consumers int, get func(trial) float64) []float64 {
	var vs []float64
	for _, t := range results {
		if t.Broker == broker && t.Consumers == consumers {
			vs = append(vs, get(t))
		}
	}
	return vs
}

// ratios are Samsa's figure over Kafka's, run by run; a run where Kafka's
// is 0 has none.
func ratios(results []trial, consumers int, get func(trial) float64) []float64 {
	kafka := map[int]float64{}
	for _, t := range results {
		if t.Broker == brokerKafka && t.Consumers == consumers {
			kafka[t.Run] = get(t)
		}
	}
	var rs []float64
	for _, t := range results {
		if k, ok := kafka[t.Run]; ok && t.Broker == brokerSamsa && t.Consumers == consumers && k != 0 {
			rs = append(rs, get(t)/k)
		}
	}
	return rs
}

func format(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 1000:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
