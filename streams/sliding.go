package streams

import "fmt"

// slidingWindowAggProc is Kafka's KStreamSlidingWindowAggregate (KIP-450),
// on a store that iterates backward (Kafka's built-in stores all do, so
// its processReverse is the path it takes). A window is [start, end], both
// bounds included, end = start + time difference. Each record updates the
// windows holding it, then creates what is missing of: the right window of
// the previous record (if this record falls in it), its own left window
// (ending at it, holding the records within the time difference before
// it) and its own right window (starting just after it, when later records
// exist). Windows are only ever created where a record's edge is, so the
// windows present are exactly the distinct sets of records.
type slidingWindowAggProc struct {
	nc       *nodeContext
	def      *storeDef
	tn       *tableNode
	store    windowState
	windows  SlidingWindows
	agg      aggregation
	mkKey    func(k any, w Window) any
	observed int64
	cached   bool // the store's cache forwards (Kafka's TimestampedTupleForwarder)
}

// aggAt is Kafka's ValueAndTimestamp: an aggregate and the largest
// timestamp of its records; a nil *aggAt is null.
type aggAt struct {
	value any
	ts    int64
}

func (p *slidingWindowAggProc) init(nc *nodeContext) error {
	p.nc = nc
	s, err := nc.store(p.def.name)
	if err != nil {
		return err
	}
	ws, ok := s.(windowState)
	if !ok {
		return fmt.Errorf("streams: store %s is a %T, not a window store", p.def.name, s)
	}
	p.store = ws
	if cs, ok := s.(cachingWindowState); ok && cs.caching() {
		p.cached = true
		cs.setFlushListener(func(key any, start int64, newV, oldV any, ts int64) error {
			if !p.tn.sendOld {
				oldV = nil
			}
			w := Window{Start: start, End: start + p.windows.timeDifference}
			return nc.forward(rec{key: p.mkKey(key, w), value: change{newV: newV, oldV: oldV}, ts: ts})
		})
	}
	return nil
}

func (p *slidingWindowAggProc) close() error { return nil }

func (p *slidingWindowAggProc) process(r rec) error {
	if r.key == nil || r.value == nil {
		p.nc.task.dropped("a sliding-window aggregation's record with a null key or value")
		return nil
	}
	p.observed = max(p.observed, r.ts)
	closeTime := p.observed - p.windows.grace
	if r.ts+p.windows.timeDifference < closeTime {
		p.nc.task.dropped("a record for an expired window")
		return nil
	}
	if r.ts < p.windows.timeDifference {
		return p.processEarly(r, closeTime)
	}
	return p.processReverse(r, closeTime)
}

// slidingScan is what the scan of a key's nearby windows found.
type slidingScan struct {
	starts                    map[int64]bool
	leftAgg, rightAgg         *aggAt
	leftCreated, rightCreated bool
	prev                      *int64 // the previous record's timestamp, when it matters
}

func (p *slidingWindowAggProc) processReverse(r rec, closeTime int64) error {
	td := p.windows.timeDifference
	rows, err := p.store.fetchRange(r.key, max(0, r.ts-2*td), r.ts+1, true)
	if err != nil {
		return err
	}
	sc := slidingScan{starts: map[int64]bool{}}
scan:
	for _, row := range rows {
		sc.starts[row.start] = true
		end := row.start + td
		cur := &aggAt{row.value, row.ts}
		switch {
		case row.start == r.ts+1:
			sc.rightCreated = true
		case end > r.ts:
			if sc.rightAgg == nil {
				sc.rightAgg = cur
			}
			if err := p.update(Window{Start: row.start, End: end}, cur, true, r, closeTime); err != nil {
				return err
			}
		case end == r.ts:
			sc.leftCreated = true
			if err := p.update(Window{Start: row.start, End: end}, cur, true, r, closeTime); err != nil {
				return err
			}
			if row.ts >= r.ts {
				// The left window already holds a record as late as this
				// one: every window this record needs exists.
				return nil
			}
			prev := row.ts
			sc.prev = &prev
		default: // end < r.ts: the newest window wholly before the record
			sc.leftAgg = cur
			prev := row.ts
			sc.prev = &prev
			break scan
		}
	}
	return p.createWindows(r, closeTime, sc)
}

// processEarly handles a record earlier than the time difference after
// the epoch, whose left window would start before 0: Kafka keeps such
// records in the window [0, time difference] and creates their right
// windows as later records come.
func (p *slidingWindowAggProc) processEarly(r rec, closeTime int64) error {
	td := p.windows.timeDifference
	rows, err := p.store.fetchRange(r.key, 0, r.ts+1, false)
	if err != nil {
		return err
	}
	sc := slidingScan{starts: map[int64]bool{}}
	var combined *aggAt
	for _, row := range rows {
		sc.starts[row.start] = true
		cur := &aggAt{row.value, row.ts}
		switch {
		case row.start == 0:
			combined = cur
			if row.ts < r.ts {
				prev := row.ts
				sc.prev = &prev
			}
		case row.start <= r.ts:
			sc.rightAgg = cur
			if err := p.update(Window{Start: row.start, End: row.start + td}, cur, true, r, closeTime); err != nil {
				return err
			}
		case row.start == r.ts+1:
			sc.rightCreated = true
		default:
			return fmt.Errorf("streams: sliding windows: unexpected window starting at %d for a record at %d", row.start, r.ts)
		}
	}
	// Without a right window found, the combined window holds only records
	// after this one when its newest record is later than this one.
	if sc.rightAgg == nil && combined != nil && combined.ts > r.ts {
		sc.rightAgg = combined
	}
	if !sc.rightCreated && sc.rightAgg != nil && sc.rightAgg.ts > r.ts {
		if err := p.createCurrentRight(r, sc.rightAgg); err != nil {
			return err
		}
	}
	if sc.prev != nil && !sc.starts[*sc.prev+1] {
		if err := p.update(Window{Start: *sc.prev + 1, End: *sc.prev + 1 + td}, p.initial(r.ts), false, r, closeTime); err != nil {
			return err
		}
	}
	if combined == nil {
		return p.update(Window{Start: 0, End: td}, p.initial(r.ts), false, r, closeTime)
	}
	return p.update(Window{Start: 0, End: td}, combined, true, r, closeTime)
}

// createWindows creates the windows the scan found missing.
func (p *slidingWindowAggProc) createWindows(r rec, closeTime int64, sc slidingScan) error {
	td := p.windows.timeDifference
	if sc.prev != nil {
		start := *sc.prev + 1
		// The previous record's right window, if this record falls in it.
		if !sc.starts[start] && start+td >= r.ts {
			if err := p.update(Window{Start: start, End: start + td}, p.initial(r.ts), false, r, closeTime); err != nil {
				return err
			}
		}
	}
	if !sc.leftCreated {
		cur := p.initial(r.ts)
		if sc.prev != nil && r.ts-td <= *sc.prev {
			// The previous record is within reach: the left window starts
			// from the aggregate of the window before the record.
			cur = &aggAt{sc.leftAgg.value, r.ts}
		}
		if err := p.update(Window{Start: r.ts - td, End: r.ts}, cur, false, r, closeTime); err != nil {
			return err
		}
	}
	if !sc.rightCreated && sc.rightAgg != nil && sc.rightAgg.ts > r.ts {
		return p.createCurrentRight(r, sc.rightAgg)
	}
	return nil
}

// initial is a new window's aggregate before the record: the
// initializer's (null for reduce) at the record's time.
func (p *slidingWindowAggProc) initial(ts int64) *aggAt {
	v := p.agg.init()
	if v == nil {
		return nil
	}
	return &aggAt{v, ts}
}

// createCurrentRight creates the record's right window holding the later
// records' aggregate (not this record: it is before the window).
func (p *slidingWindowAggProc) createCurrentRight(r rec, right *aggAt) error {
	td := p.windows.timeDifference
	w := Window{Start: r.ts + 1, End: r.ts + 1 + td}
	if err := p.store.put(r.key, w.Start, right.value, right.ts); err != nil {
		return err
	}
	if p.cached {
		return nil
	}
	return p.nc.forward(rec{key: p.mkKey(r.key, w), value: change{newV: right.value}, ts: right.ts, headers: r.headers})
}

// update adds the record to a window (Kafka's updateWindowAndForward):
// cur is the window's aggregate so far (nil: none), existed says whether
// the store had the window. A window ended before closeTime is dropped.
func (p *slidingWindowAggProc) update(w Window, cur *aggAt, existed bool, r rec, closeTime int64) error {
	if w.End < closeTime {
		p.nc.task.dropped("a record for an expired window")
		return nil
	}
	var old any
	ts := r.ts
	if cur != nil {
		old, ts = cur.value, max(r.ts, cur.ts)
	}
	newAgg := p.agg.add(r.key, r.value, old)
	if err := p.store.put(r.key, w.Start, newAgg, ts); err != nil {
		return err
	}
	if p.cached {
		return nil
	}
	var oldV any
	if existed && p.tn.sendOld {
		oldV = old
	}
	return p.nc.forward(rec{key: p.mkKey(r.key, w), value: change{newV: newAgg, oldV: oldV}, ts: ts, headers: r.headers})
}
