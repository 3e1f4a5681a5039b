package streams

import (
	"encoding/binary"
	"fmt"
)

// subscriptionInstruction is Kafka's SubscriptionWrapper.Instruction: what
// the right side does with a subscription, with Kafka's byte values.
type subscriptionInstruction byte

const (
	// deleteKeyNoPropagate removes an old subscription after a foreign key
	// change (inner join): the new subscription answers.
	deleteKeyNoPropagate subscriptionInstruction = 0
	// deleteKeyAndPropagate removes the subscription and answers with a
	// null: the left row was deleted (or, in a left join, moved away).
	deleteKeyAndPropagate subscriptionInstruction = 1
	// propagateNullIfNoFKValAvailable answers with the right row or null.
	propagateNullIfNoFKValAvailable subscriptionInstruction = 2
	// propagateOnlyIfFKValAvailable answers only when the right row exists
	// (an inner join's new row: nothing to retract otherwise).
	propagateOnlyIfFKValAvailable subscriptionInstruction = 3
)

// TableJoined names a foreign-key join's nodes, stores and internal topics
// (Kafka's TableJoined): <name>-subscription-registration-topic and so on;
// empty generates Kafka's KTABLE-FK-JOIN-... names.
type TableJoined[K, VR any] struct {
	Name string
	// Materialized keeps (and makes queryable) the result; without a store
	// name the result is kept only if a later lookup needs it.
	Materialized *Materialized[K, VR]
}

// ForeignKeyJoin joins each left row with the right row whose key
// foreignKey extracts from it (Kafka's KTable#join(KTable, Function,
// ...), KIP-213); ok=false is Kafka's null foreign key: the row joins
// nothing. The result is keyed by the left key; it changes when either
// row changes, and a delete of either side deletes it. Left updates are
// sent to the right table's partitions over the subscription
// registration topic; answers come back over the subscription response
// topic and are dropped when the left row changed meanwhile.
func ForeignKeyJoin[K, V, KO, VO, VR any](l *Table[K, V], r *Table[KO, VO], foreignKey func(key K, value V) (KO, bool), joiner func(key K, left V, right VO) VR, tj ...TableJoined[K, VR]) *Table[K, VR] {
	return foreignKeyJoin[K, V, KO, VO, VR](l, r, foreignKey, false, func(k, a, b any) any {
		return joiner(as[K](k), a.(V), b.(VO))
	}, tj)
}

// ForeignKeyLeftJoin keeps every left row (right nil when no right row
// matches, or the foreign key is null), as Kafka's KTable#leftJoin with a
// foreign key extractor.
func ForeignKeyLeftJoin[K, V, KO, VO, VR any](l *Table[K, V], r *Table[KO, VO], foreignKey func(key K, value V) (KO, bool), joiner func(key K, left V, right *VO) VR, tj ...TableJoined[K, VR]) *Table[K, VR] {
	return foreignKeyJoin[K, V, KO, VO, VR](l, r, foreignKey, true, func(k, a, b any) any {
		return joiner(as[K](k), a.(V), ptrTo[VO](b))
	}, tj)
}

// fkJoinNames are the names of a foreign-key join's parts, drawn from
// the builder's counter in Kafka's order (KTableImpl#doJoinOnForeignKey).
type fkJoinNames struct {
	registrationTopic, send, registrationSink, registrationSource string
	store, receive, joinForeign, foreignJoin                      string
	responseTopic, responseSink, responseSource, resolver, result string
	resultStore                                                   string
}

func newFKJoinNames(b *Builder, name string) fkJoinNames {
	const fk = "KTABLE-FK-JOIN-"
	var n fkJoinNames
	n.registrationTopic = suffixOrNew(b, name, "-subscription-registration", fk+"SUBSCRIPTION-REGISTRATION-") + "-topic"
	n.send = suffixOrNew(b, name, "-subscription-registration-processor", fk+"SUBSCRIPTION-REGISTRATION-")
	n.registrationSink = suffixOrNew(b, name, "-subscription-registration-sink", "KTABLE-SINK-")
	n.registrationSource = suffixOrNew(b, name, "-subscription-registration-source", "KTABLE-SOURCE-")
	n.store = suffixOrNew(b, name, "-subscription-store", fk+"SUBSCRIPTION-STATE-STORE-")
	n.receive = suffixOrNew(b, name, "-subscription-receive", fk+"SUBSCRIPTION-PROCESSOR-")
	n.joinForeign = suffixOrNew(b, name, "-subscription-join-foreign", fk+"SUBSCRIPTION-PROCESSOR-")
	n.foreignJoin = suffixOrNew(b, name, "-foreign-join-subscription", fk+"SUBSCRIPTION-PROCESSOR-")
	n.responseTopic = suffixOrNew(b, name, "-subscription-response", fk+"SUBSCRIPTION-RESPONSE-") + "-topic"
	n.responseSink = suffixOrNew(b, name, "-subscription-response-sink", "KTABLE-SINK-")
	n.responseSource = suffixOrNew(b, name, "-subscription-response-source", "KTABLE-SOURCE-")
	n.resolver = suffixOrNew(b, name, "-subscription-response-resolver", fk+"SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-")
	n.result = suffixOrNew(b, name, "-result", fk+"OUTPUT-")
	return n
}

func foreignKeyJoin[K, V, KO, VO, VR any](l *Table[K, V], r *Table[KO, VO], foreignKey func(K, V) (KO, bool), left bool, joiner func(k, l, r any) any, opts []TableJoined[K, VR]) *Table[K, VR] {
	b := l.b
	tj, err := optional(opts)
	b.fail(err)
	if l.tn == nil || r.tn == nil || l.tn.getter == nil || r.tn.getter == nil {
		b.failf("foreign-key join: both tables must be readable by key")
		return &Table[K, VR]{b: b}
	}
	lks, lvs := serdeOr(b, l.keySerde), serdeOr(b, l.valueSerde)
	rks, rvs := serdeOr(b, r.keySerde), serdeOr(b, r.valueSerde)
	if b.err != nil {
		return &Table[K, VR]{b: b}
	}
	r.tn.enableSendOld()
	l.tn.enableSendOld()
	n := newFKJoinNames(b, tj.Name)
	var mat Materialized[K, VR]
	if tj.Materialized != nil {
		mat = *tj.Materialized
	}
	n.resultStore = mat.StoreName
	if n.resultStore == "" {
		// Kafka names the result's store even when it is not kept.
		n.resultStore = b.newStoreName("KTABLE-FK-JOIN-OUTPUT-")
	}
	extract := func(k, v any) any {
		fk, ok := foreignKey(as[K](k), v.(V))
		if !ok {
			return nil
		}
		return fk
	}
	fkSerde, pkSerde, leftValues := box(rks), box(lks), box(lvs)
	subSerde := &subscriptionSerde{pk: pkSerde}
	respSerde := &responseSerde{value: box(rvs)}
	hashTopic := n.registrationTopic + "-vh"

	// The left side: send subscriptions to the right table's partitions.
	b.addProcessor(n.send, []string{l.name}, func() processor {
		return &subscriptionSendProc{left: left, foreignKey: extract, fkSerde: fkSerde, values: leftValues, hashTopic: hashTopic}
	})
	b.addSink(&node{name: n.registrationSink, kind: sinkNode, topic: n.registrationTopic, keySerde: fkSerde, valueSerde: subSerde}, []string{n.send})
	b.topo.addInternalTopic(n.registrationTopic, 0)
	b.addSource(&node{name: n.registrationSource, kind: sourceNode, topics: []string{n.registrationTopic}, keySerde: fkSerde, valueSerde: subSerde})
	if b.err != nil {
		return &Table[K, VR]{b: b}
	}
	b.topo.copartitionSources(append(sourcesOf(b.topo, r.name), n.registrationSource)...)

	// The right side: keep subscriptions, answer them, and answer again
	// on each right update.
	b.addStore(&storeDef{name: n.store, kind: subscriptionStore, timestamped: true, logging: true, keySerde: fkSerde, valueSerde: pkSerde})
	b.addProcessor(n.receive, []string{n.registrationSource}, func() processor { return &subscriptionReceiveProc{store: n.store} }, n.store)
	rt := r.tn
	b.addProcessor(n.joinForeign, []string{n.receive}, func() processor { return &subscriptionJoinProc{getter: rt.getter} }, rt.storesForGetter()...)
	b.addProcessor(n.foreignJoin, []string{r.name}, func() processor { return &foreignTableJoinProc{store: n.store} }, n.store)
	b.topo.addInternalTopic(n.responseTopic, 0)
	b.addSink(&node{name: n.responseSink, kind: sinkNode, topic: n.responseTopic, keySerde: pkSerde, valueSerde: respSerde,
		partitioner: responsePartition}, []string{n.joinForeign, n.foreignJoin})
	b.addSource(&node{name: n.responseSource, kind: sourceNode, topics: []string{n.responseTopic}, keySerde: pkSerde, valueSerde: respSerde})
	if b.err != nil {
		return &Table[K, VR]{b: b}
	}
	b.topo.copartitionSources(append(sourcesOf(b.topo, l.name), n.responseSource)...)

	// Back on the left side: resolve the answers against the current left
	// row, then keep the result as a table.
	lt := l.tn
	b.addProcessor(n.resolver, []string{n.responseSource}, func() processor {
		return &responseJoinProc{left: left, getter: lt.getter, values: leftValues, hashTopic: hashTopic, joiner: joiner}
	}, lt.storesForGetter()...)
	vs := firstSerde(mat.Value, defaultOrNil[VR]())
	res := &tableNode{}
	def := &storeDef{name: n.resultStore, kind: keyValueStore, timestamped: true, inMemory: mat.InMemory,
		logging: !mat.LoggingDisabled, logConfig: mat.LogConfig, caching: !mat.CachingDisabled,
		keySerde: pkSerde, valueSerde: box(vs)}
	res.materialize = func() string {
		if res.store == "" {
			if vs == nil {
				var zero VR
				b.failf("foreign-key join %s: its result is kept in a store and needs a value serde for %T (TableJoined.Materialized.Value)", n.result, zero)
			}
			res.store = n.resultStore
			b.addStore(def)
			b.fail(b.topo.ConnectProcessorAndStateStores([]string{n.result}, n.resultStore))
		}
		return n.resultStore
	}
	res.getter = func(nc *nodeContext) (valueGetter, error) { return storeGetter(res.store)(nc) }
	res.storesForGetter = func() []string { return []string{res.materialize()} }
	b.addProcessor(n.result, []string{n.resolver}, func() processor { return &tableSourceProc{tn: res} })
	if mat.StoreName != "" {
		res.materialize()
	}
	return &Table[K, VR]{b: b, name: n.result, keySerde: lks, valueSerde: vs, tn: res}
}

// subscriptionSendProc is Kafka's SubscriptionSendProcessorSupplier: each
// left change becomes subscriptions keyed by foreign key, carrying the
// hash of the new left value.
type subscriptionSendProc struct {
	nc         *nodeContext
	left       bool
	foreignKey func(k, v any) any
	fkSerde    anySerde
	values     anySerde
	hashTopic  string
}

func (p *subscriptionSendProc) init(nc *nodeContext) error { p.nc = nc; return nil }
func (p *subscriptionSendProc) close() error               { return nil }

func (p *subscriptionSendProc) process(r rec) error {
	c := r.value.(change)
	var hash []byte
	if c.newV != nil {
		vb, err := p.values.serialize(p.hashTopic, c.newV)
		if err != nil {
			return err
		}
		hash = valueHash(vb)
	}
	send := func(fk any, in subscriptionInstruction) error {
		partition := int32(-1)
		if md, ok := p.nc.task.recordMetadata(); ok {
			partition = md.Partition
		}
		out := r
		out.key, out.value = fk, &subscription{hash: hash, instruction: in, primaryKey: r.key, primaryPartition: partition}
		return p.nc.forward(out)
	}
	fkOf := func(v any) any {
		if v == nil {
			return nil
		}
		return p.foreignKey(r.key, v)
	}
	oldFK, newFK := fkOf(c.oldV), fkOf(c.newV)
	if p.left {
		return p.leftJoinInstructions(c, oldFK, newFK, send)
	}
	return p.innerJoinInstructions(c, oldFK, newFK, send)
}

// leftJoinInstructions are Kafka 4.4's for a left join: unsubscribe the
// old foreign key silently when it changed, then ask the new one (null
// included) for its row or null.
func (p *subscriptionSendProc) leftJoinInstructions(c change, oldFK, newFK any, send func(any, subscriptionInstruction) error) error {
	if c.oldV == nil && c.newV == nil {
		return nil
	}
	if oldFK != nil {
		changed, err := p.fkChanged(oldFK, newFK)
		if err != nil {
			return err
		}
		if changed {
			if err := send(oldFK, deleteKeyNoPropagate); err != nil {
				return err
			}
		}
	}
	return send(newFK, propagateNullIfNoFKValAvailable)
}

// innerJoinInstructions are Kafka 4.4's for an inner join: a delete, or a
// move to a null foreign key, retracts through the old key; a changed
// foreign key unsubscribes the old one and asks the new one for its row
// or null (the old result must go); otherwise only a present row answers.
func (p *subscriptionSendProc) innerJoinInstructions(c change, oldFK, newFK any, send func(any, subscriptionInstruction) error) error {
	if c.newV == nil {
		if oldFK != nil {
			return send(oldFK, deleteKeyAndPropagate)
		}
		return nil
	}
	if newFK == nil {
		p.nc.task.dropped("a foreign-key join row with a null foreign key")
		if oldFK != nil {
			return send(oldFK, deleteKeyAndPropagate)
		}
		return nil
	}
	if oldFK == nil {
		return send(newFK, propagateOnlyIfFKValAvailable)
	}
	changed, err := p.fkChanged(oldFK, newFK)
	if err != nil {
		return err
	}
	if !changed {
		return send(newFK, propagateOnlyIfFKValAvailable)
	}
	if err := send(oldFK, deleteKeyNoPropagate); err != nil {
		return err
	}
	return send(newFK, propagateNullIfNoFKValAvailable)
}

// fkChanged compares foreign keys as Kafka does: by their serialized
// bytes.
func (p *subscriptionSendProc) fkChanged(a, b any) (bool, error) {
	ab, err := p.fkSerde.serialize(p.hashTopic, a)
	if err != nil {
		return false, err
	}
	bb, err := p.fkSerde.serialize(p.hashTopic, b)
	if err != nil {
		return false, err
	}
	return (ab == nil) != (bb == nil) || string(ab) != string(bb), nil
}

// combinedKey is Kafka's CombinedKey: a foreign key and a primary key.
type combinedKey struct{ fk, pk any }

// subscriptionAt is a subscription with the timestamp of its record.
type subscriptionAt struct {
	sub *subscription
	ts  int64
}

// subscriptionReceiveProc is Kafka's SubscriptionReceiveProcessorSupplier:
// it keeps (or removes) the subscription and passes it on.
type subscriptionReceiveProc struct {
	nc    *nodeContext
	store string
	subs  subscriptionState
}

func (p *subscriptionReceiveProc) init(nc *nodeContext) error {
	p.nc = nc
	s, err := nc.store(p.store)
	if err != nil {
		return err
	}
	p.subs = s.(subscriptionState)
	return nil
}

func (p *subscriptionReceiveProc) close() error { return nil }

func (p *subscriptionReceiveProc) process(r rec) error {
	sub := r.value.(*subscription)
	if r.key == nil && sub.instruction != propagateNullIfNoFKValAvailable {
		p.nc.task.dropped("a subscription with a null foreign key")
		return nil
	}
	if r.key != nil {
		var err error
		switch sub.instruction {
		case deleteKeyAndPropagate, deleteKeyNoPropagate:
			err = p.subs.remove(r.key, sub.primaryKey)
		default:
			err = p.subs.put(r.key, sub.primaryKey, sub, r.ts)
		}
		if err != nil {
			return err
		}
	}
	r.key, r.value = combinedKey{fk: r.key, pk: sub.primaryKey}, subscriptionAt{sub: sub, ts: r.ts}
	return p.nc.forward(r)
}

// subscriptionResponse is Kafka's SubscriptionResponseWrapper: the right
// value (nil: none) for a left row, with the hash of the left value the
// subscription was made from.
type subscriptionResponse struct {
	hash             []byte
	value            any
	primaryPartition int32 // where the answer goes, -1: by key
}

func responsePartition(_ string, _, value any, partitions int32) (int32, bool) {
	resp, ok := value.(*subscriptionResponse)
	if !ok || resp.primaryPartition < 0 || resp.primaryPartition >= partitions {
		return 0, false
	}
	return resp.primaryPartition, true
}

// subscriptionJoinProc is Kafka's SubscriptionJoinProcessorSupplier: it
// answers a subscription with the right row, as its instruction says.
type subscriptionJoinProc struct {
	nc     *nodeContext
	getter func(nc *nodeContext) (valueGetter, error)
	get    valueGetter
}

func (p *subscriptionJoinProc) init(nc *nodeContext) error {
	p.nc = nc
	g, err := p.getter(nc)
	p.get = g
	return err
}

func (p *subscriptionJoinProc) close() error { return nil }

func (p *subscriptionJoinProc) process(r rec) error {
	ck, sa := r.key.(combinedKey), r.value.(subscriptionAt)
	var fv any
	ts := sa.ts
	if ck.fk != nil {
		v, vts, err := p.get(ck.fk)
		if err != nil {
			return err
		}
		if fv = v; v != nil && vts > ts {
			ts = vts
		}
	}
	respond := func(value any) error {
		out := r
		out.key, out.ts = ck.pk, ts
		out.value = &subscriptionResponse{hash: sa.sub.hash, value: value, primaryPartition: sa.sub.primaryPartition}
		return p.nc.forward(out)
	}
	switch sa.sub.instruction {
	case deleteKeyAndPropagate:
		return respond(nil)
	case propagateNullIfNoFKValAvailable:
		return respond(fv)
	case propagateOnlyIfFKValAvailable:
		if fv != nil {
			return respond(fv)
		}
	}
	return nil
}

// foreignTableJoinProc is Kafka's ForeignTableJoinProcessorSupplier: a
// right update answers every subscription to its key again, with the
// right record's timestamp.
type foreignTableJoinProc struct {
	nc    *nodeContext
	store string
	subs  subscriptionState
}

func (p *foreignTableJoinProc) init(nc *nodeContext) error {
	p.nc = nc
	s, err := nc.store(p.store)
	if err != nil {
		return err
	}
	p.subs = s.(subscriptionState)
	return nil
}

func (p *foreignTableJoinProc) close() error { return nil }

func (p *foreignTableJoinProc) process(r rec) error {
	if r.key == nil {
		p.nc.task.dropped("a right table record with a null key")
		return nil
	}
	c := r.value.(change)
	return p.subs.scan(r.key, func(pk any, sub *subscription) error {
		out := r
		out.key = pk
		out.value = &subscriptionResponse{hash: sub.hash, value: c.newV, primaryPartition: sub.primaryPartition}
		return p.nc.forward(out)
	})
}

// responseJoinProc is Kafka's ResponseJoinProcessorSupplier: an answer
// counts only if the left row is still the one it was asked for (same
// hash); then it emits the join result, or a tombstone.
type responseJoinProc struct {
	nc        *nodeContext
	left      bool
	getter    func(nc *nodeContext) (valueGetter, error)
	get       valueGetter
	values    anySerde
	hashTopic string
	joiner    func(k, l, r any) any
}

func (p *responseJoinProc) init(nc *nodeContext) error {
	p.nc = nc
	g, err := p.getter(nc)
	p.get = g
	return err
}

func (p *responseJoinProc) close() error { return nil }

func (p *responseJoinProc) process(r rec) error {
	resp := r.value.(*subscriptionResponse)
	cur, _, err := p.get(r.key)
	if err != nil {
		return err
	}
	var curHash []byte
	if cur != nil {
		vb, err := p.values.serialize(p.hashTopic, cur)
		if err != nil {
			return err
		}
		curHash = valueHash(vb)
	}
	if string(curHash) != string(resp.hash) || (curHash == nil) != (resp.hash == nil) {
		p.nc.task.dropped("a stale foreign-key join response")
		return nil
	}
	r.value = nil
	if cur != nil && (resp.value != nil || p.left) {
		r.value = p.joiner(r.key, cur, resp.value)
	}
	return p.nc.forward(r)
}

// subscriptionSerde writes a subscription in Kafka's SubscriptionWrapper
// format, version 1: the version byte (its top bit set when there is no
// hash), the instruction, the 16-byte hash, the primary key, the primary
// partition (int32, big endian).
type subscriptionSerde struct{ pk anySerde }

func (s *subscriptionSerde) serialize(topic string, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	sub := v.(*subscription)
	pk, err := s.pk.serialize(topic+"-pk", sub.primaryKey)
	if err != nil {
		return nil, err
	}
	version := byte(1)
	if sub.hash == nil {
		version |= 0x80
	}
	out := append([]byte{version, byte(sub.instruction)}, sub.hash...)
	out = append(out, pk...)
	return binary.BigEndian.AppendUint32(out, uint32(sub.primaryPartition)), nil
}

func (s *subscriptionSerde) deserialize(topic string, b []byte) (any, error) {
	if b == nil {
		return nil, nil
	}
	if len(b) < 2 {
		return nil, fmt.Errorf("streams: a subscription of %d bytes is too short", len(b))
	}
	version, hashNull := b[0]&0x7f, b[0]&0x80 != 0
	if version != 1 {
		return nil, fmt.Errorf("streams: subscription version %d is not supported (only 1)", version)
	}
	sub := &subscription{instruction: subscriptionInstruction(b[1])}
	if sub.instruction > propagateOnlyIfFKValAvailable {
		return nil, fmt.Errorf("streams: unknown subscription instruction %d", b[1])
	}
	rest := b[2:]
	if !hashNull {
		if len(rest) < 16 {
			return nil, fmt.Errorf("streams: a subscription's hash is cut short")
		}
		sub.hash, rest = append([]byte(nil), rest[:16]...), rest[16:]
	}
	if len(rest) < 4 {
		return nil, fmt.Errorf("streams: a subscription's primary partition is missing")
	}
	pkb := rest[:len(rest)-4]
	sub.primaryPartition = int32(binary.BigEndian.Uint32(rest[len(rest)-4:]))
	pk, err := s.pk.deserialize(topic+"-pk", pkb)
	if err != nil {
		return nil, err
	}
	sub.primaryKey = pk
	return sub, nil
}

// responseSerde writes a response in Kafka's SubscriptionResponseWrapper
// format, version 0: the version byte (top bit set when there is no
// hash), the 16-byte hash, the right value (absent: null). Only this
// application reads it, so the primary partition it carries in memory is
// not written (Kafka's neither).
type responseSerde struct{ value anySerde }

func (s *responseSerde) serialize(topic string, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	resp := v.(*subscriptionResponse)
	vb, err := s.value.serialize(topic, resp.value)
	if err != nil {
		return nil, err
	}
	version := byte(0)
	if resp.hash == nil {
		version |= 0x80
	}
	out := append([]byte{version}, resp.hash...)
	return append(out, vb...), nil
}

func (s *responseSerde) deserialize(topic string, b []byte) (any, error) {
	if b == nil {
		return nil, nil
	}
	if len(b) < 1 || b[0]&0x7f != 0 {
		return nil, fmt.Errorf("streams: subscription response of %d bytes: unsupported or missing version", len(b))
	}
	resp := &subscriptionResponse{primaryPartition: -1}
	rest := b[1:]
	if b[0]&0x80 == 0 {
		if len(rest) < 16 {
			return nil, fmt.Errorf("streams: a subscription response's hash is cut short")
		}
		resp.hash, rest = append([]byte(nil), rest[:16]...), rest[16:]
	}
	if len(rest) > 0 {
		v, err := s.value.deserialize(topic, rest)
		if err != nil {
			return nil, err
		}
		resp.value = v
	}
	return resp, nil
}
