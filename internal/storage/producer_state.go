package storage

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/samsa-io/samsa/internal/record"
)

// Producer state: what a partition log knows about each idempotent or
// transactional producer (KIP-98), so a retried batch is acknowledged with
// its original offsets instead of being written twice, a gap in sequence
// numbers is refused, an older producer epoch is fenced, and read_committed
// fetches know the last stable offset and the aborted transactions.
//
// The table is pure: no I/O, no clock, no locking. The Log owns one and
// guards it with its mu, like its segments. Snapshots (producer_snapshot.go)
// persist it; recovery loads the newest snapshot and replays the batches
// after it.

// Marker errors of the producer state checks; the broker maps them to
// Kafka error codes.
var (
	// ErrOutOfOrderSequence: a batch whose first sequence is not the last
	// one plus one, or a new producer epoch that does not start at 0.
	// Kafka: OUT_OF_ORDER_SEQUENCE_NUMBER.
	ErrOutOfOrderSequence = errors.New("storage: out of order sequence number")
	// ErrInvalidProducerEpoch: a batch or marker with an epoch older than
	// the producer's current one (a zombie). Kafka: INVALID_PRODUCER_EPOCH
	// for produce (since 2.7, so the client can abort and retry), which
	// the transaction coordinator reports as PRODUCER_FENCED.
	ErrInvalidProducerEpoch = errors.New("storage: invalid producer epoch")
	// ErrInvalidTxnState: a non-transactional batch from a producer with
	// an ongoing transaction. Kafka: INVALID_TXN_STATE.
	ErrInvalidTxnState = errors.New("storage: invalid transaction state")
	// ErrTransactionCoordinatorFenced: a transaction marker written by an
	// older coordinator epoch than one already seen for this producer.
	// Kafka: TRANSACTION_COORDINATOR_FENCED.
	ErrTransactionCoordinatorFenced = errors.New("storage: transaction coordinator fenced")
)

// ProducerBatchesToRetain is how many of a producer's latest batches are
// kept for duplicate detection: Kafka's NUM_BATCHES_TO_RETAIN, matching
// the producer's max.in.flight.requests.per.connection limit of 5 with
// idempotence.
const ProducerBatchesToRetain = 5

// DefaultProducerIDExpirationMs is Kafka's producer.id.expiration.ms: one day.
const DefaultProducerIDExpirationMs = 24 * 60 * 60 * 1000

// ProducerBatch is one appended batch of a producer, as remembered for
// duplicate detection.
type ProducerBatch struct {
	FirstSeq    int32
	LastSeq     int32
	FirstOffset int64
	LastOffset  int64
	Timestamp   int64 // the batch's max timestamp
}

// DuplicateBatch is returned by Check for a retried batch: the broker
// answers the produce request with these offsets and appends nothing.
type DuplicateBatch = ProducerBatch

// ProducerState is a copy of one producer's entry (DescribeProducers,
// tests).
type ProducerState struct {
	ProducerID       int64
	Epoch            int16
	CoordinatorEpoch int32 // -1 until a transaction marker is seen
	LastTimestamp    int64
	TxnFirstOffset   int64           // first offset of the ongoing transaction, -1 if none
	Batches          []ProducerBatch // oldest first, at most ProducerBatchesToRetain
}

// LastSeq is the last sequence appended, or -1 (record.NoSequence).
func (p *ProducerState) LastSeq() int32 {
	if len(p.Batches) == 0 {
		return record.NoSequence
	}
	return p.Batches[len(p.Batches)-1].LastSeq
}

// AbortedTxn is an entry of the aborted-transaction index, in Kafka's
// .txnindex terms: the producer, the transaction's first and last (the
// abort marker's) offsets, and the last stable offset when it aborted.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// ProducerStateTable is the producer state of one partition. The zero
// value is not usable; call NewProducerStateTable. Not safe for
// concurrent use: the Log guards it with its mu.
type ProducerStateTable struct {
	producers map[int64]*ProducerState
	// ongoing maps producer ID to its ongoing transaction's first offset,
	// mirroring ProducerState.TxnFirstOffset so FirstUnstableOffset does
	// not walk every producer.
	ongoing map[int64]int64
	aborted []AbortedTxn // ordered by LastOffset (the order markers are appended)
}

// NewProducerStateTable returns an empty table.
func NewProducerStateTable() *ProducerStateTable {
	return &ProducerStateTable{producers: map[int64]*ProducerState{}, ongoing: map[int64]int64{}}
}

// Len is the number of producers.
func (t *ProducerStateTable) Len() int { return len(t.producers) }

// Producer returns a copy of a producer's state.
func (t *ProducerStateTable) Producer(pid int64) (ProducerState, bool) {
	p, ok := t.producers[pid]
	if !ok {
		return ProducerState{}, false
	}
	return p.clone(), true
}

// Producers returns a copy of every producer's state, by producer ID.
func (t *ProducerStateTable) Producers() []ProducerState {
	out := make([]ProducerState, 0, len(t.producers))
	for _, p := range t.producers {
		out = append(out, p.clone())
	}
	slices.SortFunc(out, func(a, b ProducerState) int { return cmpInt64(a.ProducerID, b.ProducerID) })
	return out
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (p *ProducerState) clone() ProducerState {
	c := *p
	c.Batches = slices.Clone(p.Batches)
	return c
}

func newProducerState(pid int64) *ProducerState {
	return &ProducerState{ProducerID: pid, Epoch: record.NoProducerEpoch, CoordinatorEpoch: -1, LastTimestamp: -1, TxnFirstOffset: -1}
}

// lastSequence is the sequence of a batch's last record, wrapping past
// math.MaxInt32 to 0 as producers do.
func lastSequence(h *record.Header) int32 {
	if h.BaseSequence < 0 {
		return record.NoSequence
	}
	return int32((int64(h.BaseSequence) + int64(h.LastOffsetDelta)) % (math.MaxInt32 + 1))
}

// inSequence: next follows last, wrapping at math.MaxInt32.
func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}

// Check validates a data batch a client produced (the leader's append)
// against the producer's state, before it is appended. Batches without a
// producer ID pass. The rules are Kafka's (UnifiedLog and
// ProducerAppendInfo), in this order:
//
//   - same epoch and the same first and last sequence as one of the last
//     ProducerBatchesToRetain batches: a retry; dup holds the original
//     offsets and nothing must be appended;
//   - an epoch older than the producer's: ErrInvalidProducerEpoch;
//   - a newer epoch (a bump, KIP-360) must start at sequence 0, else
//     ErrOutOfOrderSequence;
//   - the same epoch must continue at the last sequence + 1 (0 after
//     math.MaxInt32), else ErrOutOfOrderSequence;
//   - a producer with no state at all (new, or expired, or whose state
//     was lost with its batches) is accepted at any sequence: Kafka stopped
//     answering UNKNOWN_PRODUCER_ID in 2.5 (KIP-360) and accepts the write
//     so the producer recovers; its sequence is then checked from there;
//   - a non-transactional batch while the producer has a transaction
//     ongoing: ErrInvalidTxnState.
//
// Transaction markers are checked with CheckMarker; followers (replication)
// skip Check and only Update, as Kafka's AppendOrigin.REPLICATION skips the
// sequence check and only logs an older producer or coordinator epoch.
// Kafka's follower still refuses a non-transactional batch inside an open
// transaction (INVALID_TXN_STATE); ours takes it, since a follower that
// refuses its leader's batch can never catch up, and a leader never
// writes one.
func (t *ProducerStateTable) Check(h *record.Header) (dup *DuplicateBatch, err error) {
	return checkData(t.producers[h.ProducerID], h)
}

func checkData(p *ProducerState, h *record.Header) (*DuplicateBatch, error) {
	if h.ProducerID < 0 || h.IsControl() {
		return nil, nil
	}
	if p == nil || p.Epoch == record.NoProducerEpoch {
		if p != nil && p.TxnFirstOffset >= 0 && !h.IsTransactional() {
			return nil, fmt.Errorf("%w: producer %d has a transaction ongoing", ErrInvalidTxnState, h.ProducerID)
		}
		return nil, nil
	}
	if h.ProducerEpoch == p.Epoch {
		last := lastSequence(h)
		for i := range p.Batches {
			if b := &p.Batches[i]; b.FirstSeq == h.BaseSequence && b.LastSeq == last {
				d := *b
				return &d, nil
			}
		}
	}
	switch {
	case h.ProducerEpoch < p.Epoch:
		return nil, fmt.Errorf("%w: producer %d epoch %d is older than %d", ErrInvalidProducerEpoch, h.ProducerID, h.ProducerEpoch, p.Epoch)
	case h.ProducerEpoch > p.Epoch:
		if h.BaseSequence != 0 {
			return nil, fmt.Errorf("%w: producer %d new epoch %d starts at sequence %d, not 0", ErrOutOfOrderSequence, h.ProducerID, h.ProducerEpoch, h.BaseSequence)
		}
	default:
		if !inSequence(p.LastSeq(), h.BaseSequence) {
			return nil, fmt.Errorf("%w: producer %d epoch %d sequence %d after %d", ErrOutOfOrderSequence, h.ProducerID, h.ProducerEpoch, h.BaseSequence, p.LastSeq())
		}
	}
	if p.TxnFirstOffset >= 0 && !h.IsTransactional() {
		return nil, fmt.Errorf("%w: producer %d has a transaction ongoing", ErrInvalidTxnState, h.ProducerID)
	}
	return nil, nil
}

// CheckCoordinatorBatch validates a transactional data batch that a
// coordinator writes on a producer's behalf (TxnOffsetCommit into
// __consumer_offsets): such batches carry no sequence numbers, so as for
// Kafka's AppendOrigin.COORDINATOR only the epoch is checked
// (ErrInvalidProducerEpoch).
func (t *ProducerStateTable) CheckCoordinatorBatch(h *record.Header) error {
	p := t.producers[h.ProducerID]
	if h.ProducerID < 0 || p == nil || h.ProducerEpoch >= p.Epoch {
		return nil
	}
	return fmt.Errorf("%w: producer %d epoch %d is older than %d", ErrInvalidProducerEpoch, h.ProducerID, h.ProducerEpoch, p.Epoch)
}

// CheckMarker validates a transaction marker the coordinator writes
// (WriteTxnMarkers) for producer pid at epoch with coordinatorEpoch:
// an epoch older than the producer's is ErrInvalidProducerEpoch, a
// coordinator epoch older than one already seen is
// ErrTransactionCoordinatorFenced. This is Kafka's check for transaction
// versions 0 and 1; the stricter transactions v2 rule (KIP-890: the marker
// epoch must be greater) is not applied.
func (t *ProducerStateTable) CheckMarker(pid int64, epoch int16, coordinatorEpoch int32) error {
	return checkMarker(t.producers[pid], pid, epoch, coordinatorEpoch)
}

func checkMarker(p *ProducerState, pid int64, epoch int16, coordinatorEpoch int32) error {
	if p == nil {
		return nil
	}
	if epoch < p.Epoch {
		return fmt.Errorf("%w: marker for producer %d at epoch %d, current %d", ErrInvalidProducerEpoch, pid, epoch, p.Epoch)
	}
	if coordinatorEpoch < p.CoordinatorEpoch {
		return fmt.Errorf("%w: marker for producer %d from coordinator epoch %d, current %d", ErrTransactionCoordinatorFenced, pid, coordinatorEpoch, p.CoordinatorEpoch)
	}
	return nil
}

// Update records an appended data batch (its header carries the offsets
// it was appended at). It never fails: a follower applies what the leader
// wrote even where the leader's checks would have refused it, as Kafka
// does for replicated appends. Batches without a producer ID and control
// batches are ignored; markers go through UpdateMarker or UpdateBatch.
func (t *ProducerStateTable) Update(h *record.Header) {
	if h.ProducerID < 0 || h.IsControl() {
		return
	}
	p := t.entry(h.ProducerID)
	applyData(p, h)
	t.syncOngoing(p)
}

// UpdateMarker records an appended transaction marker batch: it ends the
// producer's ongoing transaction, and an abort of a transaction that
// wrote data adds an entry to the aborted index. A marker without an
// ongoing transaction changes only the epochs and timestamp, as in Kafka.
func (t *ProducerStateTable) UpdateMarker(h *record.Header, commit bool, coordinatorEpoch int32) {
	p := t.entry(h.ProducerID)
	c, ok := applyMarker(p, h, commit, coordinatorEpoch)
	t.syncOngoing(p)
	if ok {
		t.complete(c)
	}
}

// UpdateBatch records one whole appended batch: data batches as Update,
// transaction markers (parsed from the batch's control record) as
// UpdateMarker. Control batches of other types (KRaft) and empty control
// batches (a compacted transaction) are skipped. Errors are corruption
// of the control record.
func (t *ProducerStateTable) UpdateBatch(batch []byte) error {
	h, err := record.ParseHeader(batch)
	if err != nil {
		return err
	}
	if !h.IsControl() {
		t.Update(&h)
		return nil
	}
	m, ok, err := parseMarker(batch)
	if err != nil || !ok {
		return err
	}
	t.UpdateMarker(&h, m.commit, m.coordinatorEpoch)
	return nil
}

type endTxnMarker struct {
	commit           bool
	coordinatorEpoch int32
}

// parseMarker reads the first record of a control batch; ok is false for
// an empty batch or a control type that is not a transaction marker.
func parseMarker(batch []byte) (m endTxnMarker, ok bool, err error) {
	var perr error
	err = record.Iterate(batch, len(batch)*64+1<<20, func(r *record.Record) bool {
		typ, e := record.ParseControlKey(r.Key)
		if e != nil {
			perr = e
			return false
		}
		if typ != record.ControlAbort && typ != record.ControlCommit {
			return false
		}
		m.commit, m.coordinatorEpoch, perr = record.ParseEndTxnMarker(r.Key, r.Value)
		ok = perr == nil
		return false
	})
	if err == nil {
		err = perr
	}
	if err != nil {
		return m, false, fmt.Errorf("storage: transaction marker: %w", err)
	}
	return m, ok, nil
}

func (t *ProducerStateTable) entry(pid int64) *ProducerState {
	p := t.producers[pid]
	if p == nil {
		p = newProducerState(pid)
		t.producers[pid] = p
	}
	return p
}

func (t *ProducerStateTable) syncOngoing(p *ProducerState) {
	if p.TxnFirstOffset >= 0 {
		t.ongoing[p.ProducerID] = p.TxnFirstOffset
	} else {
		delete(t.ongoing, p.ProducerID)
	}
}

// setEpoch moves to a new epoch; a different epoch forgets the batches,
// whose sequences belonged to the old one.
func (p *ProducerState) setEpoch(epoch int16) {
	if epoch != p.Epoch {
		p.Epoch = epoch
		p.Batches = p.Batches[:0]
	}
}

func applyData(p *ProducerState, h *record.Header) {
	p.setEpoch(h.ProducerEpoch)
	if len(p.Batches) == ProducerBatchesToRetain {
		p.Batches = append(p.Batches[:0], p.Batches[1:]...)
	}
	p.Batches = append(p.Batches, ProducerBatch{
		FirstSeq: h.BaseSequence, LastSeq: lastSequence(h),
		FirstOffset: h.BaseOffset, LastOffset: h.LastOffset(), Timestamp: h.MaxTimestamp,
	})
	p.LastTimestamp = h.MaxTimestamp
	if h.IsTransactional() && p.TxnFirstOffset < 0 {
		p.TxnFirstOffset = h.BaseOffset
	}
}

// completedTxn is a transaction ended by a marker.
type completedTxn struct {
	producerID  int64
	firstOffset int64
	lastOffset  int64 // the marker's offset
	aborted     bool
}

func applyMarker(p *ProducerState, h *record.Header, commit bool, coordinatorEpoch int32) (completedTxn, bool) {
	c := completedTxn{producerID: p.ProducerID, firstOffset: p.TxnFirstOffset, lastOffset: h.BaseOffset, aborted: !commit}
	ok := p.TxnFirstOffset >= 0
	p.setEpoch(h.ProducerEpoch)
	p.TxnFirstOffset = -1
	p.CoordinatorEpoch = coordinatorEpoch
	p.LastTimestamp = h.MaxTimestamp
	return c, ok
}

// complete adds an abort to the aborted index. Its last stable offset is
// the first offset of the earliest transaction of another producer still
// ongoing, else the offset after the marker (Kafka's lastStableOffset for
// a completed transaction); fetches use it to stop scanning the index.
func (t *ProducerStateTable) complete(c completedTxn) {
	if !c.aborted {
		return
	}
	lso := c.lastOffset + 1
	for pid, first := range t.ongoing {
		if pid != c.producerID {
			lso = min(lso, first)
		}
	}
	t.aborted = append(t.aborted, AbortedTxn{ProducerID: c.producerID, FirstOffset: c.firstOffset, LastOffset: c.lastOffset, LastStableOffset: lso})
}

// FirstUnstableOffset is the first offset of the earliest ongoing
// transaction, or -1 if none: the last stable offset is the smaller of
// this and the high watermark.
func (t *ProducerStateTable) FirstUnstableOffset() int64 {
	first := int64(-1)
	for _, off := range t.ongoing {
		if first < 0 || off < first {
			first = off
		}
	}
	return first
}

// AbortedTransactions lists the aborted transactions that overlap the
// offsets [fetchOffset, upperBound) (upperBound is the fetch's last
// stable offset or the end of the data returned), as a read_committed
// Fetch (v4+) reports them: the consumer drops their records. Like
// Kafka's transaction index scan, it stops at the first entry whose last
// stable offset reaches upperBound: no later abort can overlap.
func (t *ProducerStateTable) AbortedTransactions(fetchOffset, upperBound int64) []AbortedTxn {
	i, _ := slices.BinarySearchFunc(t.aborted, fetchOffset, func(a AbortedTxn, off int64) int { return cmpInt64(a.LastOffset, off) })
	var out []AbortedTxn
	for _, a := range t.aborted[i:] {
		if a.FirstOffset < upperBound {
			out = append(out, a)
		}
		if a.LastStableOffset >= upperBound {
			break
		}
	}
	return out
}

// AbortedIndex returns a copy of the whole aborted-transaction index.
func (t *ProducerStateTable) AbortedIndex() []AbortedTxn { return slices.Clone(t.aborted) }

// TrimAborted forgets aborted transactions that end below logStartOffset:
// no fetch can reach them. Producer entries are kept (KIP-360: a
// producer's state outlives its batches until it expires).
func (t *ProducerStateTable) TrimAborted(logStartOffset int64) {
	i, _ := slices.BinarySearchFunc(t.aborted, logStartOffset, func(a AbortedTxn, off int64) int { return cmpInt64(a.LastOffset, off) })
	t.aborted = slices.Delete(t.aborted, 0, i)
}

// Expire removes producers without an ongoing transaction whose last
// batch or marker timestamp is expirationMs or more before nowMs
// (producer.id.expiration.ms, DefaultProducerIDExpirationMs), and returns
// how many it removed. A later batch from an expired producer is accepted
// at any sequence (see Check).
func (t *ProducerStateTable) Expire(nowMs, expirationMs int64) int {
	n := 0
	for pid, p := range t.producers {
		if p.TxnFirstOffset < 0 && nowMs-p.LastTimestamp >= expirationMs {
			delete(t.producers, pid)
			n++
		}
	}
	return n
}

// ProducerAppend checks and stages the batches of one append, so a later
// batch of the same producer in the same append is checked against the
// earlier ones, and nothing reaches the table unless the write succeeds
// (Commit). Obtain it with NewAppend; it must not outlive changes to the
// table made other than through it.
type ProducerAppend struct {
	t      *ProducerStateTable
	staged map[int64]*ProducerState // what the checks of later batches see
	ops    []stagedBatch            // every batch in append order, for Commit
}

// stagedBatch is a data batch or transaction marker waiting for Commit.
type stagedBatch struct {
	h                record.Header
	marker, commit   bool
	coordinatorEpoch int32
}

// NewAppend starts staging one append.
func (t *ProducerStateTable) NewAppend() *ProducerAppend {
	return &ProducerAppend{t: t}
}

func (a *ProducerAppend) lookup(pid int64) *ProducerState {
	if p, ok := a.staged[pid]; ok {
		return p
	}
	return a.t.producers[pid]
}

func (a *ProducerAppend) stage(pid int64) *ProducerState {
	if p, ok := a.staged[pid]; ok {
		return p
	}
	if a.staged == nil {
		a.staged = map[int64]*ProducerState{}
	}
	p := newProducerState(pid)
	if cur := a.t.producers[pid]; cur != nil {
		c := cur.clone()
		p = &c
	}
	a.staged[pid] = p
	return p
}

// Check is ProducerStateTable.Check against the table plus the batches
// staged so far.
func (a *ProducerAppend) Check(h *record.Header) (*DuplicateBatch, error) {
	return checkData(a.lookup(h.ProducerID), h)
}

// CheckMarker is ProducerStateTable.CheckMarker against the staged state.
func (a *ProducerAppend) CheckMarker(pid int64, epoch int16, coordinatorEpoch int32) error {
	return checkMarker(a.lookup(pid), pid, epoch, coordinatorEpoch)
}

// Update stages a data batch with its assigned offsets.
func (a *ProducerAppend) Update(h *record.Header) {
	if h.ProducerID < 0 || h.IsControl() {
		return
	}
	applyData(a.stage(h.ProducerID), h)
	a.ops = append(a.ops, stagedBatch{h: *h})
}

// UpdateMarker stages a transaction marker with its assigned offset.
func (a *ProducerAppend) UpdateMarker(h *record.Header, commit bool, coordinatorEpoch int32) {
	applyMarker(a.stage(h.ProducerID), h, commit, coordinatorEpoch)
	a.ops = append(a.ops, stagedBatch{h: *h, marker: true, commit: commit, coordinatorEpoch: coordinatorEpoch})
}

// UpdateBatch stages one whole batch, as ProducerStateTable.UpdateBatch.
func (a *ProducerAppend) UpdateBatch(batch []byte) error {
	h, err := record.ParseHeader(batch)
	if err != nil {
		return err
	}
	if !h.IsControl() {
		a.Update(&h)
		return nil
	}
	m, ok, err := parseMarker(batch)
	if err != nil || !ok {
		return err
	}
	a.UpdateMarker(&h, m.commit, m.coordinatorEpoch)
	return nil
}

// Commit applies the staged batches to the table, after the write
// succeeded, one by one in append order, exactly as a replay of them
// (ReplayBatches) would: an abort's last stable offset sees every
// transaction still open at its marker, one that a later batch of the same
// append ends included, as Kafka's ongoing-transaction list does. A
// follower's appends carry many producers' batches and markers at once.
func (a *ProducerAppend) Commit() {
	for i := range a.ops {
		op := &a.ops[i]
		if op.marker {
			a.t.UpdateMarker(&op.h, op.commit, op.coordinatorEpoch)
		} else {
			a.t.Update(&op.h)
		}
	}
	a.staged, a.ops = nil, nil
}
