package share

import (
	"errors"
	"reflect"
	"testing"
	"time"
	"unsafe"
)

var t0 = time.Unix(1_700_000_000, 0)

func testConfig() Config {
	return Config{LockDuration: 30 * time.Second, DeliveryCountLimit: 3, MaxInFlight: 100}
}

func batch(first, last int64) LogBatch { return LogBatch{FirstOffset: first, LastOffset: last} }

func accept(first, last int64) AckRange {
	return AckRange{FirstOffset: first, LastOffset: last, Types: []AckType{AckAccept}}
}

func ack(first, last int64, t AckType) AckRange {
	return AckRange{FirstOffset: first, LastOffset: last, Types: []AckType{t}}
}

func wantRanges(t *testing.T, got []AcquiredRange, want ...AcquiredRange) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("acquired %v, want %v", got, want)
	}
}

func wantErrs(t *testing.T, got []error, want ...error) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("errors %v, want %v", got, want)
	}
	for i := range got {
		if !errors.Is(got[i], want[i]) || (got[i] == nil) != (want[i] == nil) {
			t.Fatalf("errors %v, want %v", got, want)
		}
	}
}

func wantOffsets(t *testing.T, p *Partition, start, end, next int64) {
	t.Helper()
	if err := checkRuns(p); err != nil {
		t.Fatal(err)
	}
	if p.StartOffset() != start || p.EndOffset() != end || p.NextFetchOffset() != next {
		t.Fatalf("start/end/next = %d/%d/%d, want %d/%d/%d", p.StartOffset(), p.EndOffset(), p.NextFetchOffset(), start, end, next)
	}
}

func TestAcquireAcceptMovesStart(t *testing.T) {
	p := New(testConfig(), State{StartOffset: 10})
	wantOffsets(t, p, 10, 10, 10)
	wantRanges(t, p.Acquire("a", []LogBatch{batch(10, 14), batch(15, 19)}, 100, t0), AcquiredRange{10, 19, 1})
	wantOffsets(t, p, 10, 20, 20)
	if s := p.Stats(); s != (Stats{Acquired: 10}) {
		t.Fatalf("stats %+v", s)
	}
	errs, changed := p.Acknowledge("a", []AckRange{accept(12, 19)}, t0.Add(time.Second))
	wantErrs(t, errs, nil)
	if !changed {
		t.Fatal("accept: changed = false")
	}
	wantOffsets(t, p, 10, 20, 20) // 10 and 11 still held
	if got := p.DeliveryCompleteCount(); got != 8 {
		t.Fatalf("DeliveryCompleteCount = %d, want 8", got)
	}
	errs, _ = p.Acknowledge("a", []AckRange{accept(10, 11)}, t0.Add(time.Second))
	wantErrs(t, errs, nil)
	wantOffsets(t, p, 20, 20, 20)
	if len(p.runs) != 0 || p.Stats() != (Stats{}) {
		t.Fatalf("runs %v stats %+v after everything was accepted", p.runs, p.Stats())
	}
}

func TestAcknowledgeErrors(t *testing.T) {
	p := New(testConfig(), State{StartOffset: 0})
	p.Acquire("a", []LogBatch{batch(0, 9)}, 100, t0)
	now := t0.Add(time.Second)
	cases := []struct {
		name   string
		member string
		r      AckRange
		want   error
	}{
		{"by another member", "b", accept(0, 3), ErrInvalidRecordState},
		{"never acquired (past end)", "a", accept(8, 12), ErrInvalidRecordState},
		{"below start", "a", accept(-2, 1), ErrInvalidRecordState},
		{"first after last", "a", accept(5, 4), ErrInvalidRequest},
		{"types of the wrong length", "a", AckRange{0, 3, []AckType{AckAccept, AckAccept}}, ErrInvalidRequest},
		{"no types", "a", AckRange{0, 3, nil}, ErrInvalidRequest},
		{"unknown type", "a", ack(0, 3, 5), ErrInvalidRequest},
	}
	for _, c := range cases {
		errs, changed := p.Acknowledge(c.member, []AckRange{c.r}, now)
		wantErrs(t, errs, c.want)
		if changed {
			t.Errorf("%s: changed = true", c.name)
		}
	}
	if s := p.Stats(); s != (Stats{Acquired: 10}) {
		t.Fatalf("failed acknowledgements changed state: %+v", s)
	}
	// Ranges are independent: a bad one between good ones fails alone, and a
	// range that fails part-way changes none of its offsets.
	errs, _ := p.Acknowledge("a", []AckRange{accept(0, 1), accept(2, 12), ack(2, 3, AckReject)}, now)
	wantErrs(t, errs, nil, ErrInvalidRecordState, nil)
	if s := p.Stats(); s != (Stats{Acquired: 6}) {
		t.Fatalf("stats %+v, want 6 acquired", s)
	}
	wantOffsets(t, p, 4, 10, 10)
	// The same offset twice: the second finds it no longer acquired.
	errs, _ = p.Acknowledge("a", []AckRange{accept(4, 4), accept(4, 4)}, now)
	wantErrs(t, errs, nil, ErrInvalidRecordState)
}

func TestAcknowledgeAfterLockExpiry(t *testing.T) {
	p := New(testConfig(), State{StartOffset: 0})
	p.Acquire("a", []LogBatch{batch(0, 4)}, 100, t0)
	if got := p.NextLockExpiry(); !got.Equal(t0.Add(30 * time.Second)) {
		t.Fatalf("NextLockExpiry = %v", got)
	}
	// At the deadline the lock has expired, even before ExpireLocks runs.
	errs, _ := p.Acknowledge("a", []AckRange{accept(0, 4)}, t0.Add(30*time.Second))
	wantErrs(t, errs, ErrInvalidRecordState)
	if n := p.ExpireLocks(t0.Add(30*time.Second - 1)); n != 0 {
		t.Fatalf("expired %d before the deadline", n)
	}
	if n := p.ExpireLocks(t0.Add(30 * time.Second)); n != 5 {
		t.Fatalf("expired %d, want 5", n)
	}
	if !p.NextLockExpiry().IsZero() {
		t.Fatal("NextLockExpiry with nothing acquired is not zero")
	}
	wantOffsets(t, p, 0, 5, 0)
	errs, _ = p.Acknowledge("a", []AckRange{accept(0, 4)}, t0.Add(31*time.Second))
	wantErrs(t, errs, ErrInvalidRecordState)
	// Redelivered with the next count, to anyone.
	wantRanges(t, p.Acquire("b", []LogBatch{batch(0, 4)}, 100, t0.Add(40*time.Second)), AcquiredRange{0, 4, 2})
}

func TestReleaseAtDeliveryLimitArchives(t *testing.T) {
	p := New(testConfig(), State{StartOffset: 0}) // limit 3
	now := t0
	for delivery := int16(1); delivery <= 3; delivery++ {
		wantRanges(t, p.Acquire("a", []LogBatch{batch(0, 1)}, 100, now), AcquiredRange{0, 1, delivery})
		errs, changed := p.Acknowledge("a", []AckRange{ack(0, 1, AckRelease)}, now)
		wantErrs(t, errs, nil)
		if !changed {
			t.Fatal("release: changed = false")
		}
		now = now.Add(time.Second)
	}
	// The third release hit the limit: archived, and the start moved past.
	wantOffsets(t, p, 2, 2, 2)
	wantRanges(t, p.Acquire("a", []LogBatch{batch(0, 1)}, 100, now))
}

func TestExpiryAndMemberReleaseAtLimit(t *testing.T) {
	cfg := testConfig()
	cfg.DeliveryCountLimit = 1
	p := New(cfg, State{StartOffset: 0})
	p.Acquire("a", []LogBatch{batch(0, 2)}, 100, t0)
	p.Acquire("b", []LogBatch{batch(3, 5)}, 100, t0.Add(10*time.Second))
	if n := p.ExpireLocks(t0.Add(30 * time.Second)); n != 3 {
		t.Fatalf("expired %d, want a's 3", n)
	}
	wantOffsets(t, p, 3, 6, 6) // delivered once, limit 1: archived
	if !p.ReleaseMember("b") {
		t.Fatal("ReleaseMember(b) = false")
	}
	if p.ReleaseMember("b") {
		t.Fatal("second ReleaseMember(b) = true")
	}
	wantOffsets(t, p, 6, 6, 6)
}

func TestReleaseMemberKeepsOthers(t *testing.T) {
	p := New(testConfig(), State{StartOffset: 0})
	p.Acquire("a", []LogBatch{batch(0, 4)}, 100, t0)
	p.Acquire("b", []LogBatch{batch(5, 9)}, 100, t0)
	p.ReleaseMember("a")
	if s := p.Stats(); s != (Stats{Available: 5, Acquired: 5}) {
		t.Fatalf("stats %+v", s)
	}
	wantOffsets(t, p, 0, 10, 0)
	// a's offsets are in flight but available: acquired by no one.
	errs, _ := p.Acknowledge("a", []AckRange{accept(0, 4)}, t0)
	wantErrs(t, errs, ErrInvalidRecordState)
	errs, _ = p.Acknowledge("b", []AckRange{accept(5, 9)}, t0)
	wantErrs(t, errs, nil)
}

func TestGapAndPerOffsetTypes(t *testing.T) {
	p := New(testConfig(), State{StartOffset: 0})
	p.Acquire("a", []LogBatch{batch(0, 5)}, 100, t0)
	r := AckRange{0, 5, []AckType{AckAccept, AckGap, AckReject, AckRelease, AckRenew, AckAccept}}
	errs, changed := p.Acknowledge("a", []AckRange{r}, t0.Add(20*time.Second))
	wantErrs(t, errs, nil)
	if !changed {
		t.Fatal("changed = false")
	}
	st := p.Snapshot()
	// 3 released, 4 renewed (acquired: persisted as available), 5 accepted.
	want := []StateBatch{{3, 4, Available, 1}, {5, 5, Acknowledged, 1}}
	if st.StartOffset != 3 || !reflect.DeepEqual(st.Batches, want) {
		t.Fatalf("snapshot %+v, want start 3 batches %v", st, want)
	}
	if s := p.Stats(); s != (Stats{Available: 1, Acquired: 1, Acknowledged: 1}) {
		t.Fatalf("stats %+v", s)
	}
}

func TestRenewExtendsLock(t *testing.T) {
	p := New(testConfig(), State{StartOffset: 0})
	p.Acquire("a", []LogBatch{batch(0, 9)}, 100, t0)
	errs, changed := p.Acknowledge("a", []AckRange{ack(0, 4, AckRenew)}, t0.Add(20*time.Second))
	wantErrs(t, errs, nil)
	if changed {
		t.Fatal("renew alone: changed = true")
	}
	if got := p.NextLockExpiry(); !got.Equal(t0.Add(30 * time.Second)) {
		t.Fatalf("NextLockExpiry = %v, want the unrenewed half's", got)
	}
	if n := p.ExpireLocks(t0.Add(30 * time.Second)); n != 5 {
		t.Fatalf("expired %d, want 5", n)
	}
	// The renewed half is still held until t0+50s.
	errs, _ = p.Acknowledge("a", []AckRange{accept(0, 4)}, t0.Add(49*time.Second))
	wantErrs(t, errs, nil)
	// Renewing after expiry fails as any acknowledgement does.
	p.Acquire("a", []LogBatch{batch(5, 9)}, 100, t0.Add(50*time.Second))
	errs, _ = p.Acknowledge("a", []AckRange{ack(5, 9, AckRenew)}, t0.Add(80*time.Second))
	wantErrs(t, errs, ErrInvalidRecordState)
}

func TestStartOffsetSkipsTerminalOffsets(t *testing.T) {
	p := New(testConfig(), State{StartOffset: 0})
	p.Acquire("a", []LogBatch{batch(0, 9)}, 100, t0)
	p.Acknowledge("a", []AckRange{accept(5, 9), ack(2, 3, AckReject)}, t0)
	wantOffsets(t, p, 0, 10, 10)
	p.Acknowledge("a", []AckRange{ack(0, 0, AckGap)}, t0)
	wantOffsets(t, p, 1, 10, 10)
	p.Acknowledge("a", []AckRange{accept(1, 1)}, t0)
	wantOffsets(t, p, 4, 10, 10) // over 1 (accepted), 2-3 (rejected) to 4
	p.Acknowledge("a", []AckRange{accept(4, 4)}, t0)
	wantOffsets(t, p, 10, 10, 10)
}

func TestMaxInFlightStopsAcquisition(t *testing.T) {
	cfg := testConfig()
	cfg.MaxInFlight = 10
	p := New(cfg, State{StartOffset: 100})
	wantRanges(t, p.Acquire("a", []LogBatch{batch(100, 104), batch(105, 114)}, 100, t0), AcquiredRange{100, 109, 1})
	wantOffsets(t, p, 100, 110, 110)
	if p.CanAcquire() {
		t.Fatal("CanAcquire with 10 of 10 in flight")
	}
	wantRanges(t, p.Acquire("b", []LogBatch{batch(110, 114)}, 100, t0))
	// Releasing makes offsets available again, within the window.
	p.Acknowledge("a", []AckRange{ack(105, 109, AckRelease)}, t0)
	if !p.CanAcquire() {
		t.Fatal("CanAcquire false with released offsets")
	}
	wantRanges(t, p.Acquire("b", []LogBatch{batch(105, 114)}, 100, t0), AcquiredRange{105, 109, 2})
	// Accepting the head slides the window.
	p.Acknowledge("a", []AckRange{accept(100, 102)}, t0)
	wantRanges(t, p.Acquire("b", []LogBatch{batch(110, 114)}, 100, t0), AcquiredRange{110, 112, 1})
}

func TestMaxRecordsSplitsBatch(t *testing.T) {
	p := New(testConfig(), State{StartOffset: 0})
	wantRanges(t, p.Acquire("a", []LogBatch{batch(0, 9)}, 4, t0), AcquiredRange{0, 3, 1})
	wantOffsets(t, p, 0, 4, 4)
	wantRanges(t, p.Acquire("b", []LogBatch{batch(0, 9)}, 0, t0))
	wantRanges(t, p.Acquire("b", []LogBatch{batch(0, 9)}, 100, t0), AcquiredRange{4, 9, 1})
}

func TestSkipBatchArchivedWithoutDelivery(t *testing.T) {
	p := New(testConfig(), State{StartOffset: 0})
	got := p.Acquire("a", []LogBatch{batch(0, 2), {FirstOffset: 3, LastOffset: 3, Skip: true}, batch(4, 6)}, 100, t0)
	wantRanges(t, got, AcquiredRange{0, 2, 1}, AcquiredRange{4, 6, 1})
	st := p.Snapshot()
	want := []StateBatch{{0, 2, Available, 1}, {3, 3, Archived, 0}, {4, 6, Available, 1}}
	if !reflect.DeepEqual(st.Batches, want) {
		t.Fatalf("snapshot batches %v, want %v", st.Batches, want)
	}
	// A skipped batch alone, at the start, moves the start over it.
	p = New(testConfig(), State{StartOffset: 0})
	wantRanges(t, p.Acquire("a", []LogBatch{{FirstOffset: 0, LastOffset: 4, Skip: true}}, 100, t0))
	wantOffsets(t, p, 5, 5, 5)
}

func TestHolesBetweenBatchesArchived(t *testing.T) {
	p := New(testConfig(), State{StartOffset: 0})
	got := p.Acquire("a", []LogBatch{batch(2, 3), batch(7, 8)}, 100, t0)
	wantRanges(t, got, AcquiredRange{2, 3, 1}, AcquiredRange{7, 8, 1})
	want := []StateBatch{{2, 3, Available, 1}, {4, 6, Archived, 0}, {7, 8, Available, 1}}
	if st := p.Snapshot(); st.StartOffset != 2 || !reflect.DeepEqual(st.Batches, want) {
		t.Fatalf("snapshot %+v, want start 2 batches %v", st, want)
	}
}

func TestReacquireAvailableWithinFetch(t *testing.T) {
	p := New(testConfig(), State{StartOffset: 0})
	p.Acquire("a", []LogBatch{batch(0, 9)}, 100, t0)
	p.Acknowledge("a", []AckRange{ack(2, 3, AckRelease), accept(4, 5)}, t0)
	// A re-read from 2: 2-3 again (count 2), 4-5 done, 6-9 still a's,
	// 10-11 new (count 1).
	got := p.Acquire("b", []LogBatch{batch(0, 11)}, 100, t0)
	wantRanges(t, got, AcquiredRange{2, 3, 2}, AcquiredRange{10, 11, 1})
}

func TestAdvanceStart(t *testing.T) {
	p := New(testConfig(), State{StartOffset: 0})
	p.Acquire("a", []LogBatch{batch(0, 9)}, 100, t0)
	p.AdvanceStart(4)
	wantOffsets(t, p, 4, 10, 10)
	if s := p.Stats(); s != (Stats{Acquired: 6}) {
		t.Fatalf("stats %+v", s)
	}
	errs, _ := p.Acknowledge("a", []AckRange{accept(2, 5)}, t0)
	wantErrs(t, errs, ErrInvalidRecordState)
	p.AdvanceStart(2) // backwards: nothing
	wantOffsets(t, p, 4, 10, 10)
	p.AdvanceStart(50) // past the end: empty, fetching from there
	wantOffsets(t, p, 50, 50, 50)
	wantRanges(t, p.Acquire("a", []LogBatch{batch(40, 55)}, 100, t0), AcquiredRange{50, 55, 1})
}

func TestReset(t *testing.T) {
	p := New(testConfig(), State{StartOffset: 100})
	p.Acquire("a", []LogBatch{batch(100, 109)}, 100, t0)
	p.Reset(20)
	wantOffsets(t, p, 20, 20, 20)
	if p.Stats() != (Stats{}) || len(p.Snapshot().Batches) != 0 {
		t.Fatalf("state left after Reset: %+v", p.Snapshot())
	}
	wantRanges(t, p.Acquire("a", []LogBatch{batch(20, 21)}, 100, t0), AcquiredRange{20, 21, 1})
}

func TestNewFromState(t *testing.T) {
	st := State{StateEpoch: 3, LeaderEpoch: 7, StartOffset: 10, Batches: []StateBatch{
		{5, 11, Acknowledged, 1},    // partly below the start: the rest moves it
		{12, 13, Available, 2},      //
		{16, 17, Acquired, 1},       // never persisted so; taken as available
		{18, 19, Archived, 3},       //
		{12, 12, Acknowledged, 1},   // overlaps: ignored
		{20, 20, RecordState(9), 0}, // unknown: available
	}}
	p := New(testConfig(), st)
	wantOffsets(t, p, 12, 21, 12)
	got := p.Snapshot()
	want := State{StateEpoch: 3, LeaderEpoch: 7, StartOffset: 12, Batches: []StateBatch{
		{12, 13, Available, 2}, {14, 15, Available, 0}, {16, 17, Available, 1}, {18, 19, Archived, 3}, {20, 20, Available, 0}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot %+v\nwant %+v", got, want)
	}
	wantRanges(t, p.Acquire("a", []LogBatch{batch(12, 20)}, 100, t0),
		AcquiredRange{12, 13, 3}, AcquiredRange{14, 15, 1}, AcquiredRange{16, 17, 2}, AcquiredRange{20, 20, 1})
}

func TestLoweredLimitArchivesOnAcquire(t *testing.T) {
	p := New(testConfig(), State{StartOffset: 0, Batches: []StateBatch{{0, 4, Available, 3}, {5, 9, Available, 1}}})
	cfg := testConfig()
	cfg.DeliveryCountLimit = 2
	p.SetConfig(cfg)
	wantRanges(t, p.Acquire("a", []LogBatch{batch(0, 9)}, 100, t0), AcquiredRange{5, 9, 2})
	wantOffsets(t, p, 5, 10, 10)
}

// TestMemory2000InFlight measures the in-flight state at Kafka 4.2's default
// of 2000 record locks, both when whole batches share a state (a few runs)
// and when every offset differs from its neighbours (one run per offset).
func TestMemory2000InFlight(t *testing.T) {
	cfg := testConfig()
	cfg.MaxInFlight = 2000
	// The runs' backing array is the whole of it (member strings are
	// shared with the caller's): count its capacity, which the heap's noise
	// cannot blur.
	measure := func(build func(*Partition)) (int64, int) {
		p := New(cfg, State{StartOffset: 0})
		build(p)
		return int64(cap(p.runs)) * int64(unsafe.Sizeof(run{})), len(p.runs)
	}
	batches, runs := measure(func(p *Partition) {
		for o := int64(0); o < 2000; o += 500 {
			p.Acquire("consumer-1", []LogBatch{batch(o, o+499)}, 500, t0)
		}
	})
	worst, worstRuns := measure(func(p *Partition) {
		p.Acquire("consumer-1", []LogBatch{batch(0, 1999)}, 2000, t0)
		var acks []AckRange
		for o := int64(1); o < 2000; o += 2 { // every other offset: alternating states
			acks = append(acks, accept(o, o))
		}
		p.Acknowledge("consumer-1", acks, t0)
	})
	t.Logf("2000 in flight: %d runs, %d bytes as 500-record batches; %d runs, %d bytes alternating", runs, batches, worstRuns, worst)
	if runs != 1 || worstRuns != 2000 {
		t.Fatalf("runs %d and %d, want 1 and 2000", runs, worstRuns)
	}
	if worst > 2000*128 {
		t.Fatalf("%d bytes for 2000 runs: more than 128 per offset", worst)
	}
}

// BenchmarkAcquireAck acquires 500-record batches and accepts them, the
// steady state of a consumer keeping up.
func BenchmarkAcquireAck(b *testing.B) {
	cfg := testConfig()
	cfg.MaxInFlight = 2000
	p := New(cfg, State{StartOffset: 0})
	acks := []AckRange{{Types: []AckType{AckAccept}}}
	batches := []LogBatch{{}}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		o := int64(i) * 500
		batches[0] = LogBatch{FirstOffset: o, LastOffset: o + 499}
		got := p.Acquire("consumer-1", batches, 500, t0)
		if len(got) != 1 || got[0].LastOffset != o+499 {
			b.Fatalf("acquired %v", got)
		}
		acks[0].FirstOffset, acks[0].LastOffset = o, o+499
		if errs, _ := p.Acknowledge("consumer-1", acks, t0); errs[0] != nil {
			b.Fatal(errs[0])
		}
	}
	b.ReportMetric(500, "records/op")
}
