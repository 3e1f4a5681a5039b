package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
)

func numCPU() int { return runtime.NumCPU() }

// verdict is a page's mark against the target: PASS when its p90 is
// under it.
func verdict(r result, target float64) string {
	switch {
	case r.Absent:
		return "absent"
	case r.Error != "":
		return "ERROR"
	case r.P90 < target:
		return "PASS"
	}
	return "MISS"
}

// report writes the data set and a table of every page.
func report(w io.Writer, res results) {
	d, m := res.Data, res.Machine
	fmt.Fprintf(w, "Run: %s UTC, %s; console: %s; %d CPUs, load average %s before, %s after; open files limit %s\n",
		m.StartedAt, m.Samsa, m.Console, m.CPUs, m.LoadBefore, m.LoadAfter, m.NoFile)
	fmt.Fprintf(w, "Data: %s: %d records of %d-byte values in %d partitions (%.0f MiB on disk); %d topics of %d partitions; %d partitions in all\n",
		bigTopic, d.Records, d.ValueBytes, d.Partitions, float64(d.BigTopicBytes)/(1<<20), d.SmallTopics, d.TopicPartitions,
		d.Partitions+d.SmallTopics*d.TopicPartitions)
	fmt.Fprintf(w, "Load: topics created in %.1fs; %s produced in %.1fs (%.0f records/s, %d producers, batches up to %d bytes); groups committed in %.1fs",
		d.CreateSeconds, bigTopic, d.LoadSeconds, float64(d.Records)/max(d.LoadSeconds, 1e-9), d.Producers, d.BatchBytes, d.GroupsSeconds)
	if m.Reused {
		fmt.Fprint(w, " (loaded by an earlier run)")
	}
	fmt.Fprintf(w, "\nNodes: %d samsa serve; open files %v, RSS %s MiB (peak %s MiB) after the pages\n", m.Nodes, m.BrokerFDs, mibs(m.BrokerRSS), mibs(m.BrokerPeak))
	fmt.Fprintf(w, "Background, no page open (Kafka requests per second, broker ms per second): %s\n", apis(res.Background))
	fmt.Fprintf(w, "Two scrapes of /metrics in a row cause %s: taken off each page's\n", apis(res.ScrapeCost))
	fmt.Fprintf(w, "Each page: %d warm-up requests, then %d timed, sequential, one browser session; the Kafka requests and the records read are the least of %d more requests, each between two scrapes of every node's /metrics. "+
		"A Fetch's broker time includes its wait: the background's long polls (the registries' and Connect workers' readers) that end during a long page are counted as its own; the records read (the big topic's bytes sent, over its bytes per record on disk) are the page's alone\n\n",
		res.Warmup, res.N, probes)
	fmt.Fprintf(w, "| page | path | median ms | p90 ms | < %.0f ms | bytes | Kafka requests of one view (broker ms) | records read |\n", res.Target)
	fmt.Fprintln(w, "|---|---|--:|--:|---|--:|---|--:|")
	for _, r := range res.Pages {
		v := verdict(r, res.Target)
		switch v {
		case "absent":
			fmt.Fprintf(w, "| %s | `%s` | | | absent | | | |\n", r.Name, r.Path)
			continue
		case "ERROR":
			fmt.Fprintf(w, "| %s | `%s` | | | ERROR | | %s | |\n", r.Name, r.Path, strings.ReplaceAll(r.Error, "|", "/"))
			continue
		}
		read := ""
		if r.Browser || r.FetchBytes > 0 {
			read = fmt.Sprintf("%.0f (%.0f KiB)", r.RecordsRead, float64(r.FetchBytes)/1024)
		}
		fmt.Fprintf(w, "| %s | `%s` | %.1f | %.1f | %s | %d | %s | %s |\n",
			r.Name, r.Path, r.Median, r.P90, v, r.Bytes, apis(r.APIs), read)
	}
}

// apis is "Name×count (ms)" of each API a view used, most time first.
func apis(us []apiUse) string {
	var parts []string
	for _, u := range us {
		n := fmt.Sprintf("%.1f", u.Count)
		if u.Count == float64(int64(u.Count)) {
			n = fmt.Sprintf("%.0f", u.Count)
		}
		parts = append(parts, fmt.Sprintf("%s×%s (%.1f)", u.API, n, u.BrokerMs))
	}
	return strings.Join(parts, ", ")
}

func mibs(vs []float64) string {
	var parts []string
	for _, v := range vs {
		parts = append(parts, fmt.Sprintf("%.0f", v))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
