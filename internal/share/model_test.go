package share

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// model is the deliberately naive share-partition the property test checks
// Partition against: one map entry per in-flight offset, every rule applied
// offset by offset, no runs, no coalescing, no binary search.
type model struct {
	cfg                     Config
	start, end              int64
	recs                    map[int64]*mrec
	stateEpoch, leaderEpoch int32
}

type mrec struct {
	state    RecordState
	count    int16
	owner    string
	deadline int64
}

func newModel(cfg Config, st State) *model {
	m := &model{cfg: cfg, start: st.StartOffset, end: st.StartOffset, recs: map[int64]*mrec{},
		stateEpoch: st.StateEpoch, leaderEpoch: st.LeaderEpoch}
	batches := append([]StateBatch(nil), st.Batches...)
	sort.SliceStable(batches, func(i, j int) bool { return batches[i].FirstOffset < batches[j].FirstOffset })
	for _, b := range batches {
		for o := b.FirstOffset; o <= b.LastOffset; o++ {
			if o < m.end {
				continue
			}
			for ; m.end < o; m.end++ {
				m.recs[m.end] = &mrec{state: Available}
			}
			state := b.DeliveryState
			if state != Acknowledged && state != Archived {
				state = Available
			}
			m.recs[o] = &mrec{state: state, count: b.DeliveryCount}
			m.end = o + 1
		}
	}
	m.advance()
	return m
}

func (m *model) advance() {
	for m.start < m.end && (m.recs[m.start].state == Acknowledged || m.recs[m.start].state == Archived) {
		delete(m.recs, m.start)
		m.start++
	}
}

func (m *model) acquire(member string, batches []LogBatch, maxRecords int, now int64) []AcquiredRange {
	if maxRecords <= 0 {
		return nil
	}
	left := maxRecords
	limit := m.start + m.cfg.MaxInFlight
	if limit < m.start {
		limit = math.MaxInt64
	}
	var out []AcquiredRange
	emit := func(o int64, c int16) {
		if n := len(out); n > 0 && out[n-1].LastOffset+1 == o && out[n-1].DeliveryCount == c {
			out[n-1].LastOffset = o
			return
		}
		out = append(out, AcquiredRange{o, o, c})
	}
	cursor := m.start
	deadline := now + int64(m.cfg.LockDuration)
batches:
	for _, b := range batches {
		lo := max(b.FirstOffset, cursor)
		if lo > b.LastOffset {
			continue
		}
		cursor = b.LastOffset + 1
		for o := lo; o <= b.LastOffset; o++ {
			if o < m.end {
				r := m.recs[o]
				if r.state != Available {
					continue
				}
				if left == 0 {
					break batches
				}
				if b.Skip || r.count >= m.cfg.DeliveryCountLimit {
					r.state = Archived
					continue
				}
				r.state, r.count, r.owner, r.deadline = Acquired, r.count+1, member, deadline
				left--
				emit(o, r.count)
				continue
			}
			if left == 0 || o >= limit {
				break batches
			}
			for ; m.end < o; m.end++ {
				m.recs[m.end] = &mrec{state: Archived}
			}
			if b.Skip {
				m.recs[o] = &mrec{state: Archived}
			} else {
				m.recs[o] = &mrec{state: Acquired, count: 1, owner: member, deadline: deadline}
				left--
				emit(o, 1)
			}
			m.end = o + 1
		}
	}
	m.advance()
	return out
}

func (m *model) release(r *mrec) {
	r.state, r.owner, r.deadline = Available, "", 0
	if r.count >= m.cfg.DeliveryCountLimit {
		r.state = Archived
	}
}

func (m *model) acknowledge(member string, ranges []AckRange, now int64) ([]error, bool) {
	errs := make([]error, len(ranges))
	changed := false
	for k, ar := range ranges {
		n := ar.LastOffset - ar.FirstOffset + 1
		if n <= 0 || (len(ar.Types) != 1 && int64(len(ar.Types)) != n) {
			errs[k] = ErrInvalidRequest
			continue
		}
		bad := false
		for _, t := range ar.Types {
			if t < 0 || t > 4 {
				bad = true
			}
		}
		if bad {
			errs[k] = ErrInvalidRequest
			continue
		}
		for o := ar.FirstOffset; o <= ar.LastOffset; o++ {
			r, ok := m.recs[o]
			if !ok || o < m.start || o >= m.end || r.state != Acquired || r.owner != member || now >= r.deadline {
				errs[k] = ErrInvalidRecordState
				break
			}
		}
		if errs[k] != nil {
			continue
		}
		for o := ar.FirstOffset; o <= ar.LastOffset; o++ {
			t := ar.Types[0]
			if len(ar.Types) > 1 {
				t = ar.Types[o-ar.FirstOffset]
			}
			r := m.recs[o]
			switch t {
			case AckAccept:
				r.state, r.owner, r.deadline = Acknowledged, "", 0
			case AckRelease:
				m.release(r)
			case AckReject, AckGap:
				r.state, r.owner, r.deadline = Archived, "", 0
			case AckRenew:
				r.deadline = now + int64(m.cfg.LockDuration)
			}
			if t != AckRenew {
				changed = true
			}
		}
	}
	m.advance()
	return errs, changed
}

func (m *model) releaseWhere(match func(*mrec) bool) int {
	n := 0
	for o := m.start; o < m.end; o++ {
		if r := m.recs[o]; r.state == Acquired && match(r) {
			m.release(r)
			n++
		}
	}
	m.advance()
	return n
}

func (m *model) advanceStart(offset int64) {
	if offset <= m.start {
		return
	}
	for o := m.start; o < offset && o < m.end; o++ {
		delete(m.recs, o)
	}
	m.start = offset
	m.end = max(m.end, offset)
	m.advance()
}

func (m *model) reset(offset int64) {
	m.recs = map[int64]*mrec{}
	m.start, m.end = offset, offset
}

func (m *model) snapshot() State {
	st := State{StateEpoch: m.stateEpoch, LeaderEpoch: m.leaderEpoch, StartOffset: m.start}
	for o := m.start; o < m.end; o++ {
		r := m.recs[o]
		state := r.state
		if state == Acquired {
			state = Available
		}
		if n := len(st.Batches); n > 0 && st.Batches[n-1].DeliveryState == state && st.Batches[n-1].DeliveryCount == r.count {
			st.Batches[n-1].LastOffset = o
			continue
		}
		st.Batches = append(st.Batches, StateBatch{o, o, state, r.count})
	}
	return st
}

func (m *model) stats() Stats {
	var s Stats
	for o := m.start; o < m.end; o++ {
		switch m.recs[o].state {
		case Available:
			s.Available++
		case Acquired:
			s.Acquired++
		case Acknowledged:
			s.Acknowledged++
		case Archived:
			s.Archived++
		}
	}
	return s
}

func (m *model) nextFetchOffset() int64 {
	for o := m.start; o < m.end; o++ {
		if m.recs[o].state == Available {
			return o
		}
	}
	return m.end
}

func (m *model) nextLockExpiry() time.Time {
	var best int64
	found := false
	for o := m.start; o < m.end; o++ {
		if r := m.recs[o]; r.state == Acquired && (!found || r.deadline < best) {
			best, found = r.deadline, true
		}
	}
	if !found {
		return time.Time{}
	}
	return time.Unix(0, best)
}

// checkRuns checks Partition's own representation: runs tile [start, end)
// ascending, none empty, neighbours differ, only Acquired runs have a holder
// and a deadline, and no run at the start is terminal.
func checkRuns(p *Partition) error {
	next := p.start
	for i, r := range p.runs {
		if r.first != next || r.last < r.first {
			return fmt.Errorf("run %d [%d,%d]: want first %d", i, r.first, r.last, next)
		}
		if i > 0 && p.runs[i-1].sameAs(&r) {
			return fmt.Errorf("runs %d and %d not coalesced", i-1, i)
		}
		if (r.state == Acquired) != (r.member != "") || (r.state != Acquired && r.deadline != 0) {
			return fmt.Errorf("run %d: state %v with member %q deadline %d", i, r.state, r.member, r.deadline)
		}
		next = r.last + 1
	}
	if next != p.end {
		return fmt.Errorf("runs end at %d, EndOffset %d", next, p.end)
	}
	if len(p.runs) > 0 && p.runs[0].state.terminal() {
		return fmt.Errorf("first run is %v", p.runs[0].state)
	}
	return nil
}

// propertyRun drives one seeded random sequence of operations through a
// Partition and the model, comparing every observable after each.
type propertyRun struct {
	rng     *rand.Rand
	p       *Partition
	m       *model
	now     int64
	log     []string
	members []string
	held    map[string][]AcquiredRange // what each member was handed lately
	acked   map[int64]bool             // offsets ever acknowledged (since the last Reset)
	minimum int64                      // the StartOffset floor (raised, reset only by Reset)
	tally   *tally
}

func (pr *propertyRun) logf(format string, args ...any) {
	pr.log = append(pr.log, fmt.Sprintf(format, args...))
}

func (pr *propertyRun) randomConfig() Config {
	return Config{
		LockDuration:       time.Duration(5+pr.rng.Intn(20)) * time.Second,
		DeliveryCountLimit: int16(1 + pr.rng.Intn(4)),
		MaxInFlight:        int64(5 + pr.rng.Intn(60)),
	}
}

func (pr *propertyRun) randomBatches() []LogBatch {
	var out []LogBatch
	o := pr.m.nextFetchOffset() + int64(pr.rng.Intn(5)) - 2
	if pr.rng.Intn(6) == 0 {
		o = pr.m.start + int64(pr.rng.Intn(int(pr.m.end-pr.m.start)+10)) - 3
	}
	for n := pr.rng.Intn(4); n >= 0; n-- {
		size := int64(1 + pr.rng.Intn(12))
		out = append(out, LogBatch{FirstOffset: o, LastOffset: o + size - 1, Skip: pr.rng.Intn(8) == 0})
		o += size
		switch pr.rng.Intn(6) {
		case 0:
			o += int64(1 + pr.rng.Intn(4)) // a hole: compacted away
		case 1:
			o -= int64(pr.rng.Intn(4)) // overlapping, as a misbehaving reader might
		}
	}
	return out
}

func (pr *propertyRun) randomAcks(member string) []AckRange {
	var out []AckRange
	for n := pr.rng.Intn(3); n >= 0; n-- {
		var first, last int64
		held := pr.held[member]
		if len(held) > 0 && pr.rng.Intn(4) != 0 {
			h := held[pr.rng.Intn(len(held))]
			first = h.FirstOffset + int64(pr.rng.Intn(int(h.LastOffset-h.FirstOffset+1)))
			last = first + int64(pr.rng.Intn(int(h.LastOffset-first+1)))
		} else {
			first = pr.m.start + int64(pr.rng.Intn(int(pr.m.end-pr.m.start)+4)) - 2
			last = first + int64(pr.rng.Intn(6)) - 1
		}
		ar := AckRange{FirstOffset: first, LastOffset: last}
		typ := func() AckType {
			if pr.rng.Intn(40) == 0 {
				return AckType(5 + pr.rng.Intn(3)) // unknown
			}
			return AckType(pr.rng.Intn(5))
		}
		if pr.rng.Intn(3) == 0 && last >= first {
			for range last - first + 1 {
				ar.Types = append(ar.Types, typ())
			}
			if pr.rng.Intn(20) == 0 {
				ar.Types = append(ar.Types, AckAccept) // one too many
			}
		} else {
			ar.Types = []AckType{typ()}
		}
		out = append(out, ar)
	}
	return out
}

func (pr *propertyRun) step() error {
	pr.now += int64(pr.rng.Intn(4000)) * int64(time.Millisecond)
	now := time.Unix(0, pr.now)
	member := pr.members[pr.rng.Intn(len(pr.members))]
	switch op := pr.rng.Intn(100); {
	case op < 35:
		batches := pr.randomBatches()
		maxRecords := pr.rng.Intn(30)
		pr.logf("t=%d Acquire(%s, %v, %d)", pr.now, member, batches, maxRecords)
		before := make(map[int64]mrec, len(pr.m.recs))
		for o, r := range pr.m.recs {
			before[o] = *r
		}
		end := pr.m.end
		got := pr.p.Acquire(member, batches, maxRecords, now)
		want := pr.m.acquire(member, batches, maxRecords, pr.now)
		pr.logf("  -> %v", got)
		if len(got) > 0 {
			pr.tally.acquired++
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("Acquire: got %v, model %v", got, want)
		}
		for _, a := range got {
			for o := a.FirstOffset; o <= a.LastOffset; o++ {
				if r, ok := before[o]; (ok && r.state != Available) || (!ok && o < end) {
					return fmt.Errorf("acquired offset %d was %v (holder %q)", o, r.state, r.owner)
				}
				if pr.acked[o] {
					return fmt.Errorf("acquired offset %d, acknowledged before", o)
				}
			}
			if a.DeliveryCount > pr.p.cfg.DeliveryCountLimit || a.DeliveryCount < 1 {
				return fmt.Errorf("acquired %v: delivery count outside [1, %d]", a, pr.p.cfg.DeliveryCountLimit)
			}
		}
		pr.held[member] = append(pr.held[member], got...)
		if len(pr.held[member]) > 8 {
			pr.held[member] = pr.held[member][len(pr.held[member])-8:]
		}
	case op < 70:
		ranges := pr.randomAcks(member)
		pr.logf("t=%d Acknowledge(%s, %v)", pr.now, member, ranges)
		gotErrs, gotChanged := pr.p.Acknowledge(member, ranges, now)
		wantErrs, wantChanged := pr.m.acknowledge(member, ranges, pr.now)
		pr.logf("  -> %v %v", gotErrs, gotChanged)
		for _, err := range gotErrs {
			if err == nil {
				pr.tally.ackApplied++
			} else {
				pr.tally.ackFailed++
			}
		}
		if !reflect.DeepEqual(gotErrs, wantErrs) || gotChanged != wantChanged {
			return fmt.Errorf("Acknowledge: got %v %v, model %v %v", gotErrs, gotChanged, wantErrs, wantChanged)
		}
		// A range that applied had every offset Acquired by member: its
		// Accept offsets are Acknowledged now, and must never be acquired
		// again.
		for i, ar := range ranges {
			if gotErrs[i] != nil {
				continue
			}
			for o := ar.FirstOffset; o <= ar.LastOffset; o++ {
				if t := ar.Types[0]; (len(ar.Types) == 1 && t == AckAccept) || (len(ar.Types) > 1 && ar.Types[o-ar.FirstOffset] == AckAccept) {
					pr.acked[o] = true
				}
			}
		}
	case op < 77:
		pr.logf("t=%d ReleaseMember(%s)", pr.now, member)
		got := pr.p.ReleaseMember(member)
		want := pr.m.releaseWhere(func(r *mrec) bool { return r.owner == member }) > 0
		if got != want {
			return fmt.Errorf("ReleaseMember: got %v, model %v", got, want)
		}
	case op < 87:
		pr.now += int64(pr.rng.Intn(15)) * int64(time.Second)
		now = time.Unix(0, pr.now)
		pr.logf("t=%d ExpireLocks", pr.now)
		got := pr.p.ExpireLocks(now)
		want := pr.m.releaseWhere(func(r *mrec) bool { return r.deadline <= pr.now })
		pr.tally.expired += got
		if got != want {
			return fmt.Errorf("ExpireLocks: got %d, model %d", got, want)
		}
	case op < 92:
		pr.logf("t=%d restore from Snapshot", pr.now)
		pr.p = New(pr.p.cfg, pr.p.Snapshot())
		pr.m = newModel(pr.m.cfg, pr.m.snapshot())
		pr.held = map[string][]AcquiredRange{}
	case op < 96:
		offset := pr.m.start + int64(pr.rng.Intn(int(pr.m.end-pr.m.start)+6)) - 2
		pr.logf("t=%d AdvanceStart(%d)", pr.now, offset)
		pr.p.AdvanceStart(offset)
		pr.m.advanceStart(offset)
	case op < 99:
		cfg := pr.randomConfig()
		pr.logf("t=%d SetConfig(%+v)", pr.now, cfg)
		pr.p.SetConfig(cfg)
		pr.m.cfg = cfg
	default:
		offset := pr.m.start + int64(pr.rng.Intn(20)) - 10
		pr.logf("t=%d Reset(%d)", pr.now, offset)
		pr.p.Reset(offset)
		pr.m.reset(offset)
		pr.acked = map[int64]bool{}
		pr.held = map[string][]AcquiredRange{}
		pr.minimum = offset
	}
	return pr.compare()
}

func (pr *propertyRun) compare() error {
	p, m := pr.p, pr.m
	if err := checkRuns(p); err != nil {
		return err
	}
	type obs struct {
		Start, End, NextFetch int64
		CanAcquire            bool
		Stats                 Stats
		Snapshot              State
		NextLockExpiry        time.Time
	}
	got := obs{p.StartOffset(), p.EndOffset(), p.NextFetchOffset(), p.CanAcquire(), p.Stats(), p.Snapshot(), p.NextLockExpiry()}
	want := obs{m.start, m.end, m.nextFetchOffset(),
		m.nextFetchOffset() < m.end || m.end-m.start < m.cfg.MaxInFlight, m.stats(), m.snapshot(), m.nextLockExpiry()}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("state differs:\n got   %+v\n model %+v", got, want)
	}
	if got.Start < pr.minimum {
		return fmt.Errorf("StartOffset moved back from %d to %d", pr.minimum, got.Start)
	}
	pr.minimum = got.Start
	if got.End < got.Start {
		return fmt.Errorf("EndOffset %d below StartOffset %d", got.End, got.Start)
	}
	if n := got.Stats.Available + got.Stats.Acquired + got.Stats.Acknowledged + got.Stats.Archived; n != got.End-got.Start {
		return fmt.Errorf("stats count %d offsets, in flight %d", n, got.End-got.Start)
	}
	return nil
}

// TestPropertyAgainstModel: random operation sequences, many seeds; on a
// difference it prints the seed and the operations that led there.
func TestPropertyAgainstModel(t *testing.T) {
	seeds, steps := 500, 300
	if testing.Short() {
		seeds = 50
	}
	var tl tally
	for seed := int64(1); seed <= int64(seeds); seed++ {
		if err := runProperty(seed, steps, &tl); err != nil {
			t.Fatal(err)
		}
	}
	// How much each path was exercised, so a generator that stopped
	// reaching one shows here.
	t.Logf("%+v", tl)
	if tl.acquired == 0 || tl.ackApplied == 0 || tl.ackFailed == 0 || tl.expired == 0 {
		t.Fatalf("a path was never exercised: %+v", tl)
	}
}

// tally counts what a property run exercised.
type tally struct{ acquired, ackApplied, ackFailed, expired int }

func runProperty(seed int64, steps int, tl *tally) error {
	pr := &propertyRun{tally: tl, rng: rand.New(rand.NewSource(seed)), members: []string{"m1", "m2", "m3"},
		held: map[string][]AcquiredRange{}, acked: map[int64]bool{}, now: 1_700_000_000 * int64(time.Second)}
	cfg := pr.randomConfig()
	start := int64(pr.rng.Intn(100))
	pr.p = New(cfg, State{StartOffset: start})
	pr.m = newModel(cfg, State{StartOffset: start})
	pr.minimum = start
	pr.logf("New(%+v, start %d)", cfg, start)
	for i := 0; i < steps; i++ {
		if err := pr.step(); err != nil {
			tail := pr.log
			if len(tail) > 40 {
				tail = tail[len(tail)-40:]
			}
			return fmt.Errorf("seed %d, step %d: %v\nlast operations:\n%s", seed, i, err, strings.Join(tail, "\n"))
		}
	}
	return nil
}
