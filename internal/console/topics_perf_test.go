package console

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"testing"
	"time"
)

// TestTopicsPerf measures the topics pages on a cluster of 10,000
// topics and a topic of 1,000 partitions (each page is asked for
// 5 times; the median is logged and must stay under 300 ms). It is slow
// to set up, so it runs only with SAMSA_CONSOLE_PERF=1.
func TestTopicsPerf(t *testing.T) {
	if os.Getenv("SAMSA_CONSOLE_PERF") == "" {
		t.Skip("set SAMSA_CONSOLE_PERF=1 to measure the topics pages at scale")
	}
	tc := startConsole(t, Config{})
	setup := time.Now()
	for b := 0; b < 10; b++ {
		var names []string
		for i := range 1000 {
			names = append(names, fmt.Sprintf("perf-%05d", b*1000+i))
		}
		if resp, err := tc.Admin.CreateTopics(ctx(t), 1, 1, nil, names...); err != nil || resp.Error() != nil {
			t.Fatal(err, resp.Error())
		}
	}
	if _, err := tc.Admin.CreateTopic(ctx(t), 1000, 1, nil, "wide-1000"); err != nil {
		t.Fatal(err)
	}
	t.Logf("set up 10,000 topics and one of 1,000 partitions in %v", time.Since(setup))
	for _, p := range []string{"/topics", "/topics?page=50", "/topics?q=perf-09", "/topics?sort=size",
		"/topics/wide-1000", "/topics/wide-1000/partitions?page=10", "/topics/wide-1000/configs"} {
		var took []time.Duration
		for range 5 {
			start := time.Now()
			st, body := tc.get(p)
			took = append(took, time.Since(start))
			if st != 200 || took[len(took)-1] > 300*time.Millisecond {
				t.Logf("%s: %d in %v: %s", p, st, took[len(took)-1], regexp.MustCompile(`(?s)<div class="error".*?</div>`).FindAllString(body, -1))
			}
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		t.Logf("%-40s median %v (min %v, max %v)", p, took[2], took[0], took[4])
		if took[2] > 300*time.Millisecond {
			t.Errorf("%s: median %v, over 300 ms", p, took[2])
		}
	}
}
