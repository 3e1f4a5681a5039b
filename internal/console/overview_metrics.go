package console

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Samsa brokers' own counters, read from their admin listeners'
// /metrics (Prometheus text) when c.cfg.AdminURLs are set. The names are
// the broker's (internal/broker/metrics*.go).
const (
	overviewMetricBytesIn  = "samsa_topic_bytes_in_total"
	overviewMetricBytesOut = "samsa_topic_bytes_out_total"
	overviewMetricReqSum   = "samsa_request_duration_seconds_sum"
	overviewMetricReqCount = "samsa_request_duration_seconds_count"
)

// overviewScraped is one reading of every admin URL's counters, keyed by
// URL and label so that a broker restarting (its counters back to 0) is
// clamped like any drop: bytes as counted, request time in microseconds.
type overviewScraped struct {
	bytesIn, bytesOut map[any]int64
	// by API ("Produce", "Fetch"): the request time sum and count.
	reqSum, reqCount map[string]map[any]int64
}

type overviewLabelKey struct{ URL, Label string }

// overviewScrape reads every admin URL's /metrics as user (basic auth
// when users log in); nil when any fails (a partial sum would read as
// a drop in traffic).
func overviewScrape(ctx context.Context, hc *http.Client, urls []string, user, password string) (*overviewScraped, error) {
	out := &overviewScraped{bytesIn: map[any]int64{}, bytesOut: map[any]int64{},
		reqSum: map[string]map[any]int64{"Produce": {}, "Fetch": {}}, reqCount: map[string]map[any]int64{"Produce": {}, "Fetch": {}}}
	for _, base := range urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/metrics", nil)
		if err != nil {
			return nil, err
		}
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("%s/metrics: HTTP %d", base, resp.StatusCode)
		}
		err = overviewParseProm(io.LimitReader(resp.Body, 64<<20), func(name string, labels map[string]string, v float64) {
			switch name {
			case overviewMetricBytesIn:
				out.bytesIn[overviewLabelKey{base, labels["topic"]}] = int64(v)
			case overviewMetricBytesOut:
				out.bytesOut[overviewLabelKey{base, labels["topic"]}] = int64(v)
			case overviewMetricReqSum:
				if m := out.reqSum[labels["api"]]; m != nil {
					m[overviewLabelKey{base, ""}] = int64(v * 1e6)
				}
			case overviewMetricReqCount:
				if m := out.reqCount[labels["api"]]; m != nil {
					m[overviewLabelKey{base, ""}] = int64(v)
				}
			}
		})
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("%s/metrics: %w", base, err)
		}
	}
	return out, nil
}

// overviewParseProm calls fn for each sample of the Prometheus text
// format in r whose name is one of the overview's.
func overviewParseProm(r io.Reader, fn func(name string, labels map[string]string, v float64)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "samsa_") {
			continue // comments, blank lines and other families
		}
		name, rest := line, ""
		labels := map[string]string{}
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		switch name {
		case overviewMetricBytesIn, overviewMetricBytesOut, overviewMetricReqSum, overviewMetricReqCount:
		default:
			continue
		}
		if strings.HasPrefix(rest, "{") {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				return fmt.Errorf("bad sample line %q", line)
			}
			for _, kv := range overviewSplitLabels(rest[1:end]) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return fmt.Errorf("bad label in %q", line)
				}
				if uq, err := strconv.Unquote(v); err == nil {
					v = uq
				}
				labels[k] = v
			}
			rest = rest[end+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return fmt.Errorf("no value in %q", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return fmt.Errorf("bad value in %q", line)
		}
		fn(name, labels, v)
	}
	return sc.Err()
}

// overviewSplitLabels splits `a="x",b="y,z"` at the commas outside quotes.
func overviewSplitLabels(s string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// overviewBrokerCounters turn readings of the brokers' counters into
// rates: bytes in and out per second, and the mean Produce and Fetch
// request time per interval (the growth of the time sum over the growth
// of the count).
type overviewBrokerCounters struct {
	in, out          overviewCounter
	prodSum, prodN   overviewCounter
	fetchSum, fetchN overviewCounter
}

func (bc *overviewBrokerCounters) next(at time.Time, s *overviewScraped, maxGap time.Duration, p *overviewPoint) {
	if s == nil {
		return
	}
	p.BrokerIn, p.HasBrokerIn = bc.in.next(at, s.bytesIn, maxGap)
	p.BrokerOut, p.HasBrokerOut = bc.out.next(at, s.bytesOut, maxGap)
	mean := func(sum, n *overviewCounter, api string) (float64, bool) {
		su, ok1 := sum.next(at, s.reqSum[api], maxGap)
		cn, ok2 := n.next(at, s.reqCount[api], maxGap)
		if !ok1 || !ok2 || cn <= 0 {
			return 0, false
		}
		return su / cn / 1000, true // µs to ms
	}
	p.ProduceMs, p.HasProduce = mean(&bc.prodSum, &bc.prodN, "Produce")
	p.FetchMs, p.HasFetch = mean(&bc.fetchSum, &bc.fetchN, "Fetch")
}
