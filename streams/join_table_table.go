package streams

// joinKind is which rows of a join survive without a partner.
type joinKind int

const (
	innerJoin joinKind = iota
	leftJoin           // the left (this) side's rows survive
	rightJoin          // the processor of a left join's right side: only rows with a left partner
	outerJoin
)

// TableTableJoin joins two tables on their keys (Kafka's KTable#join): a
// row exists while both sides have one; each side's update looks the other
// up; the result's timestamp is the larger of the two rows'. Give a
// Materialized to keep (and query) the result in a store.
func TableTableJoin[K, V, VO, VR any](l *Table[K, V], r *Table[K, VO], joiner func(key K, left V, right VO) VR, m ...Materialized[K, VR]) *Table[K, VR] {
	this := func(k, a, b any) any { return joiner(as[K](k), a.(V), b.(VO)) }
	other := func(k, a, b any) any { return joiner(as[K](k), b.(V), a.(VO)) }
	return tableTableJoin(l, r, innerJoin, this, other, m)
}

// TableTableLeftJoin keeps every left row (Kafka's KTable#leftJoin); right
// is nil while the right table has no row of the key.
func TableTableLeftJoin[K, V, VO, VR any](l *Table[K, V], r *Table[K, VO], joiner func(key K, left V, right *VO) VR, m ...Materialized[K, VR]) *Table[K, VR] {
	this := func(k, a, b any) any { return joiner(as[K](k), a.(V), ptrTo[VO](b)) }
	other := func(k, a, b any) any { return joiner(as[K](k), b.(V), ptrTo[VO](a)) }
	return tableTableJoin(l, r, leftJoin, this, other, m)
}

// TableTableOuterJoin keeps the rows of either side (Kafka's
// KTable#outerJoin); the absent side is nil, never both.
func TableTableOuterJoin[K, V, VO, VR any](l *Table[K, V], r *Table[K, VO], joiner func(key K, left *V, right *VO) VR, m ...Materialized[K, VR]) *Table[K, VR] {
	this := func(k, a, b any) any { return joiner(as[K](k), ptrTo[V](a), ptrTo[VO](b)) }
	other := func(k, a, b any) any { return joiner(as[K](k), ptrTo[V](b), ptrTo[VO](a)) }
	return tableTableJoin(l, r, outerJoin, this, other, m)
}

// tableTableJoin builds Kafka's KTableKTableJoinNode: KTABLE-JOINTHIS-
// under the left table looking up the right one, KTABLE-JOINOTHER- the
// other way round, and KTABLE-MERGE- below both (keeping the result's store
// when materialized). thisJoiner takes (key, left, right), otherJoiner
// (key, right, left); either may be nil for an absent side as the kind
// allows.
func tableTableJoin[K, V, VO, VR any](l *Table[K, V], r *Table[K, VO], kind joinKind, thisJoiner, otherJoiner func(k, a, b any) any, m []Materialized[K, VR]) *Table[K, VR] {
	b := l.b
	mat, err := optional(m)
	b.fail(err)
	storeName := mat.StoreName
	if len(m) > 0 && storeName == "" {
		storeName = b.newStoreName("KTABLE-MERGE-")
	}
	mergeName := b.newName("KTABLE-MERGE-")
	thisName, otherName := b.newName("KTABLE-JOINTHIS-"), b.newName("KTABLE-JOINOTHER-")
	if l.tn == nil || r.tn == nil || l.tn.getter == nil || r.tn.getter == nil {
		b.failf("table join %s: both tables must be readable by key", mergeName)
		return &Table[K, VR]{b: b}
	}
	b.topo.copartitionSources(append(sourcesOf(b.topo, l.name), sourcesOf(b.topo, r.name)...)...)
	// Kafka's KTableImpl#doJoin: the side whose rows survive alone sends
	// its old values, so that its delete can retract the result.
	if kind == leftJoin || kind == outerJoin {
		l.tn.enableSendOld()
	}
	if kind == outerJoin {
		r.tn.enableSendOld()
	}
	res := &tableNode{}
	res.onSendOld = func() {
		l.tn.enableSendOld()
		r.tn.enableSendOld()
	}
	otherKind := kind
	if kind == leftJoin {
		otherKind = rightJoin
	}
	lt, rt := l.tn, r.tn
	b.addProcessor(thisName, []string{l.name}, func() processor {
		return &tableJoinProc{res: res, kind: kind, joiner: thisJoiner, otherGetter: rt.getter}
	}, rt.storesForGetter()...)
	b.addProcessor(otherName, []string{r.name}, func() processor {
		return &tableJoinProc{res: res, kind: otherKind, joiner: otherJoiner, otherGetter: lt.getter}
	}, lt.storesForGetter()...)
	ks := serdeOr(b, firstSerde(mat.Key, l.keySerde))
	vs := firstSerde(mat.Value, defaultOrNil[VR]())
	var stores []string
	if storeName != "" {
		b.addStore(&storeDef{name: storeName, kind: keyValueStore, timestamped: true, inMemory: mat.InMemory,
			logging: !mat.LoggingDisabled, logConfig: mat.LogConfig, caching: !mat.CachingDisabled,
			keySerde: box(ks), valueSerde: box(serdeOr(b, vs))})
		res.store = storeName
		res.getter = storeGetter(storeName)
		res.storesForGetter = func() []string { return []string{storeName} }
		stores = []string{storeName}
	} else {
		res.getter = joinedGetter(kind, thisJoiner, lt.getter, rt.getter)
		res.storesForGetter = func() []string { return append(lt.storesForGetter(), rt.storesForGetter()...) }
	}
	b.addProcessor(mergeName, []string{thisName, otherName}, func() processor { return &tableMergeProc{res: res} }, stores...)
	return &Table[K, VR]{b: b, name: mergeName, keySerde: ks, valueSerde: vs, tn: res}
}

// tableJoinProc is Kafka's KTableKTableInnerJoin, LeftJoin, RightJoin and
// OuterJoin processors: an update of this side looks up the other side's
// row and computes the result's new (and, when asked, old) value.
type tableJoinProc struct {
	nc          *nodeContext
	res         *tableNode
	kind        joinKind
	joiner      func(k, this, other any) any
	otherGetter func(nc *nodeContext) (valueGetter, error)
	other       valueGetter
}

func (p *tableJoinProc) init(nc *nodeContext) error {
	p.nc = nc
	g, err := p.otherGetter(nc)
	p.other = g
	return err
}

func (p *tableJoinProc) process(r rec) error {
	if r.key == nil {
		p.nc.task.dropped("a table join record with a null key")
		return nil
	}
	c := r.value.(change)
	other, otherTS, err := p.other(r.key)
	if err != nil {
		return err
	}
	if other == nil {
		switch p.kind {
		case innerJoin, rightJoin:
			return nil
		}
		if c.newV == nil && c.oldV == nil {
			return nil
		}
	} else if otherTS > r.ts {
		r.ts = otherTS
	}
	sendOld := p.res.sendOld
	var newV, oldV any
	switch p.kind {
	case rightJoin:
		// The right side of a left join: the left row exists, so a right
		// delete is the left row joined with nothing, not a delete.
		newV = p.joiner(r.key, c.newV, other)
		if sendOld {
			oldV = p.joiner(r.key, c.oldV, other)
		}
	case outerJoin:
		if other != nil || c.newV != nil {
			newV = p.joiner(r.key, c.newV, other)
		}
		if sendOld && (other != nil || c.oldV != nil) {
			oldV = p.joiner(r.key, c.oldV, other)
		}
	default:
		if c.newV != nil {
			newV = p.joiner(r.key, c.newV, other)
		}
		if sendOld && c.oldV != nil {
			oldV = p.joiner(r.key, c.oldV, other)
		}
	}
	r.value = change{newV: newV, oldV: oldV}
	return p.nc.forward(r)
}

func (p *tableJoinProc) close() error { return nil }

// tableMergeProc is Kafka's KTableKTableJoinMerger: it passes both join
// processors' changes on, keeping the result in its store when
// materialized (then the old value is the store's).
type tableMergeProc struct {
	nc    *nodeContext
	res   *tableNode
	store kvState
}

func (p *tableMergeProc) init(nc *nodeContext) error {
	p.nc = nc
	if p.res.store != "" {
		s, err := nc.store(p.res.store)
		if err != nil {
			return err
		}
		p.store = s.(kvState)
	}
	return nil
}

func (p *tableMergeProc) process(r rec) error {
	c := r.value.(change)
	if p.store != nil {
		old, _, _, err := p.store.get(r.key)
		if err != nil {
			return err
		}
		if err := p.store.put(r.key, c.newV, r.ts); err != nil {
			return err
		}
		c.oldV = old
	}
	if !p.res.sendOld {
		c.oldV = nil
	}
	r.value = c
	return p.nc.forward(r)
}

func (p *tableMergeProc) close() error { return nil }

// joinedGetter looks a key's join result up from both sides (Kafka's
// KTableKTableAbstractJoinValueGetterSupplier), for an unmaterialized join
// read by a later join.
func joinedGetter(kind joinKind, joiner func(k, l, r any) any, lg, rg func(nc *nodeContext) (valueGetter, error)) func(nc *nodeContext) (valueGetter, error) {
	return func(nc *nodeContext) (valueGetter, error) {
		left, err := lg(nc)
		if err != nil {
			return nil, err
		}
		right, err := rg(nc)
		if err != nil {
			return nil, err
		}
		return func(key any) (any, int64, error) {
			lv, lts, err := left(key)
			if err != nil {
				return nil, -1, err
			}
			rv, rts, err := right(key)
			if err != nil {
				return nil, -1, err
			}
			if (lv == nil && kind != outerJoin) || (rv == nil && kind == innerJoin) || (lv == nil && rv == nil) {
				return nil, -1, nil
			}
			ts := lts
			if lv == nil || (rv != nil && rts > ts) {
				ts = rts
			}
			return joiner(key, lv, rv), ts, nil
		}, nil
	}
}
