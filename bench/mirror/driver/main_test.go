package main

import (
	"strings"
	"testing"
	"time"

	"github.com/magiconair/properties"

	"github.com/samsa-io/samsa/internal/mirror/mirrorconf"
)

// Every mode's mm2.properties is one samsa mirror accepts, with the mode's
// switch reaching the flow: a refused or misspelt setting would fail the
// run only after the brokers and the preload.
func TestPropertiesParse(t *testing.T) {
	o := options{tasksMax: 4}
	for _, mode := range allModes {
		props, err := properties.LoadString(mm2Properties(o, "127.0.0.1:1", "127.0.0.1:2", "live-x-1", mode))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := mirrorconf.Parse(props.Map())
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if len(cfg.Flows) != 1 {
			t.Fatalf("%s: %d flows, want A->B only", mode, len(cfg.Flows))
		}
		f := cfg.Flows[0]
		if f.OffsetPreserving != (mode == modePreserve) || f.ExactlyOnce != (mode == modeEOS) || f.TasksMax != 4 {
			t.Errorf("%s: offset preserving %v, exactly once %v, tasks.max %d", mode, f.OffsetPreserving, f.ExactlyOnce, f.TasksMax)
		}
	}
}

// The report's ratios are each Samsa mode's figure over MirrorMaker 2's,
// run by run.
func TestReportRatios(t *testing.T) {
	o := options{modes: []string{modeTranslate, modeMM2}, runs: 2, records: 1, live: time.Second}
	results := []trial{
		{Mode: modeTranslate, Run: 1, Rate: 300, Records: 1},
		{Mode: modeMM2, Run: 1, Rate: 100, Records: 1},
		{Mode: modeMM2, Run: 2, Rate: 100, Records: 1},
		{Mode: modeTranslate, Run: 2, Rate: 500, Records: 1},
	}
	var b strings.Builder
	report(&b, o, results)
	want := "| backlog throughput, from the mirror's start (records/s) | 400.0 [300.0..500.0] | 4.00 [3.00..5.00] | 100.0 [100.0..100.0] |"
	if !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	if p := percentile(d, 0.50); p != 50 {
		t.Errorf("p50 %v, want 50", p)
	}
	if p := percentile(d, 0.99); p != 99 {
		t.Errorf("p99 %v, want 99", p)
	}
	if p := percentile(d[:1], 0.99); p != 1 {
		t.Errorf("p99 of one %v, want 1", p)
	}
}
