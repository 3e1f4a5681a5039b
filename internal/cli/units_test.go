package cli

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/clock"
)

func TestParseFrom(t *testing.T) {
	cases := []struct {
		in   string
		want startSpec
		bad  bool
	}{
		{in: "beginning", want: startSpec{kind: fromBeginning}},
		{in: "earliest", want: startSpec{kind: fromBeginning}},
		{in: "end", want: startSpec{kind: fromEnd}},
		{in: "offset:0", want: startSpec{kind: fromOffset}},
		{in: "offset:42", want: startSpec{kind: fromOffset, value: 42}},
		{in: "timestamp:1700000000000", want: startSpec{kind: fromTimestamp, value: 1_700_000_000_000}},
		{in: "timestamp:2023-11-14T22:13:20Z", want: startSpec{kind: fromTimestamp, value: 1_700_000_000_000}},
		{in: "timestamp:2023-11-14T23:13:20.5+01:00", want: startSpec{kind: fromTimestamp, value: 1_700_000_000_500}},
		{in: "", bad: true},
		{in: "offset:", bad: true},
		{in: "offset:-3", bad: true},
		{in: "offset:x", bad: true},
		{in: "timestamp:-1", bad: true},
		{in: "timestamp:2023-11-14", bad: true},
		{in: "lag:3", bad: true},
	}
	for _, tc := range cases {
		got, err := parseFrom(tc.in)
		if tc.bad != (err != nil) || got != tc.want {
			t.Errorf("parseFrom(%q) = %+v, %v; want %+v, bad=%t", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestParseFormat(t *testing.T) {
	r := &kgo.Record{
		Topic: "t", Partition: 3, Offset: 17, Key: []byte("k"), Value: []byte("v"),
		Timestamp: time.UnixMilli(1234),
		Headers:   []kgo.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "b"}},
	}
	cases := []struct {
		format, want string
	}{
		{`%v\n`, "v\n"},
		{`%T[%p]@%o %k=%v t=%t h=%h`, "t[3]@17 k=v t=1234 h=a=1,b="},
		{`100%% \\ \t|`, "100% \\ \t|"},
		{`plain`, "plain"},
		{``, ""},
	}
	for _, tc := range cases {
		f, err := parseFormat(tc.format)
		if err != nil {
			t.Errorf("parseFormat(%q): %v", tc.format, err)
			continue
		}
		if got := string(f.appendRecord(nil, r)); got != tc.want {
			t.Errorf("format %q = %q, want %q", tc.format, got, tc.want)
		}
	}
	for _, bad := range []string{`%`, `%q`, `\`, `\x`} {
		if _, err := parseFormat(bad); err == nil {
			t.Errorf("parseFormat(%q) succeeded", bad)
		}
	}
}

func TestHistogramBuckets(t *testing.T) {
	prevHi := int64(-1)
	for i := range histBuckets {
		lo, hi := histBounds(i)
		if lo != prevHi+1 || hi < lo {
			t.Fatalf("bucket %d = [%d, %d] after %d", i, lo, hi, prevHi)
		}
		if histIndex(lo) != i || histIndex(hi) != i {
			t.Fatalf("bucket %d = [%d, %d] maps back to %d, %d", i, lo, hi, histIndex(lo), histIndex(hi))
		}
		if lo >= histSub && float64(hi-lo+1)/float64(lo) > 1.0/histSub+1e-9 {
			t.Fatalf("bucket %d = [%d, %d] is wider than 1/%d of its start", i, lo, hi, histSub)
		}
		prevHi = hi
		if hi < 0 || i == histBuckets-1 {
			break
		}
	}
}

func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	rng := rand.New(rand.NewPCG(1, 2))
	samples := make([]time.Duration, 100_000)
	for i := range samples {
		samples[i] = time.Duration(rng.ExpFloat64() * float64(time.Millisecond))
		h.record(samples[i])
	}
	slices.Sort(samples)
	for _, q := range []float64{0.5, 0.95, 0.99, 0.999, 1} {
		exact := samples[int(q*float64(len(samples)-1))]
		got := h.quantile(q)
		if diff := float64(got-exact) / float64(exact); diff > 0.02 || diff < -0.02 {
			t.Errorf("q%g = %s, exact %s (off by %.1f%%)", q, got, exact, diff*100)
		}
	}
	if h.quantile(1) != samples[len(samples)-1] {
		t.Errorf("max = %s, want %s", h.quantile(1), samples[len(samples)-1])
	}
	if (&histogram{}).summary() != nil {
		t.Errorf("empty histogram has a summary")
	}
}

func TestHistogramRecordDoesNotAllocate(t *testing.T) {
	var h histogram
	if n := testing.AllocsPerRun(1000, func() { h.record(1234567) }); n != 0 {
		t.Fatalf("record allocates %g times", n)
	}
}

func TestParseProcStat(t *testing.T) {
	// A command name with spaces and a parenthesis must not shift fields.
	stat := "4242 (java (kafka) x) S 1 4242 4242 0 -1 4194304 1000 0 0 0 1234 567 0 0 20 0 80 0 100 0 0"
	u, s, err := parseProcStat([]byte(stat))
	if err != nil || u != 1234 || s != 567 {
		t.Fatalf("parseProcStat = %d, %d, %v; want 1234, 567", u, s, err)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 x 11"} {
		if _, _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("parseProcStat(%q) succeeded", bad)
		}
	}
}

// FuzzParseProcStat: any /proc/<pid>/stat content gives times or an error.
func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("4242 (java (kafka) x) S 1 4242 4242 0 -1 4194304 1000 0 0 0 1234 567 0 0 20 0 80 0 100 0 0"))
	f.Add([]byte("1 (x) S 1 2"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parseProcStat(data)
	})
}

func TestPacer(t *testing.T) {
	// At 1000 records/s the pacer sleeps about a millisecond per record:
	// 50 records take at least 45ms of wall time.
	p := newPacer(clock.Real, 1000)
	start := time.Now()
	for i := range int64(50) {
		if err := p.wait(t.Context(), i); err != nil {
			t.Fatal(err)
		}
	}
	p.stop()
	if d := time.Since(start); d < 45*time.Millisecond {
		t.Fatalf("50 records at 1000/s took %s", d)
	}
}

func TestStallWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	steps := []struct {
		ms       int
		pending  bool
		progress int64
		stalled  bool
	}{
		{0, false, 0, false},
		{5000, false, 0, false}, // idle time does not count
		{5100, true, 0, false},  // work pending from here
		{6000, true, 0, false},
		{6099, true, 0, false},
		{6100, true, 0, true}, // a second with no progress
		{6200, true, 1, false},
		{7199, true, 1, false},
		{7200, true, 1, true},
		{7300, false, 1, false}, // done: the clock starts again
		{9000, true, 1, false},
		{9999, true, 1, false},
		{10000, true, 1, true},
	}
	w := stallWatch{timeout: time.Second}
	for _, s := range steps {
		if got := w.observe(at(s.ms), s.pending, s.progress); got != s.stalled {
			t.Fatalf("at %dms (pending %t, progress %d): stalled = %t, want %t", s.ms, s.pending, s.progress, got, s.stalled)
		}
	}
}
