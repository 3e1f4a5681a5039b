package history

import (
	"errors"
	"fmt"
	"time"
)

// Event is one line of a history: a Produce, Txn, Consume, Final or
// FinalEnd.
type Event interface {
	// eventType is the line's "type" field; the method also closes the set.
	eventType() string
	validate() error
}

// Outcome is what a producer learned about one produce attempt.
type Outcome string

const (
	// OutcomeAck: the broker acknowledged the record at Produce.Offset.
	OutcomeAck Outcome = "ack"
	// OutcomeFail: the produce returned an error (Produce.Error). A retriable
	// error may still have written the record; Check only counts it.
	OutcomeFail Outcome = "fail"
	// OutcomeUnknown: no answer (a timeout, a lost connection, acks=0). The
	// record may or may not be in the log, and neither is an anomaly.
	OutcomeUnknown Outcome = "unknown"
)

// TxnStatus is what a transactional producer learned about ending a
// transaction.
type TxnStatus string

const (
	TxnCommitted TxnStatus = "committed"
	TxnAborted   TxnStatus = "aborted"
	// TxnUnknown: the client asked to end the transaction and learned
	// nothing (EndTxn timed out); the final read decides what happened.
	TxnUnknown TxnStatus = "unknown"
)

// Isolation is a reader's isolation level, spelled as Kafka's
// isolation.level config.
type Isolation string

const (
	ReadUncommitted Isolation = "read_uncommitted"
	ReadCommitted   Isolation = "read_committed"
)

// Produce is one produce attempt and its outcome. The value is unique per
// attempt within its partition: it is how the record is recognised
// wherever it is read. Retries inside the client (the ones an idempotent
// producer's sequence numbers deduplicate) are the same attempt.
type Produce struct {
	Client string `json:"client"`
	// Idempotent says the producer had enable.idempotence. A transactional
	// producer, or one whose ProducerID is known, is idempotent too.
	Idempotent    bool   `json:"idempotent,omitempty"`
	ProducerID    *int64 `json:"producer_id,omitempty"`
	ProducerEpoch *int16 `json:"producer_epoch,omitempty"`
	// TransactionalID and Txn name the transaction the record was written
	// in: Txn numbers the transactions of one transactional ID, and the
	// pair is unique within the history.
	TransactionalID string `json:"transactional_id,omitempty"`
	Txn             int64  `json:"txn,omitempty"`
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	// Key is the record's key; "" stands for a null key.
	Key     string  `json:"key,omitempty"`
	Value   string  `json:"value"`
	Outcome Outcome `json:"outcome"`
	// Offset is the acknowledged offset when Outcome is ack, -1 otherwise.
	Offset int64 `json:"offset"`
	// Error is the error the produce returned (fail) or the reason the
	// outcome is unknown; Retriable says whether Kafka calls it retriable.
	Error     string `json:"error,omitempty"`
	Retriable bool   `json:"retriable,omitempty"`
	// Time is when the outcome was learned; optional.
	Time time.Time `json:"time,omitzero"`

	// At is where the event was read ("file:line"); set by the Reader.
	At string `json:"-"`
}

// Txn is the outcome of ending one transaction.
type Txn struct {
	Client          string    `json:"client"`
	TransactionalID string    `json:"transactional_id"`
	Txn             int64     `json:"txn"`
	Outcome         TxnStatus `json:"outcome"`
	// Started is when the client began ending the transaction, before it
	// sent EndTxn; optional, it lets Check find read_committed consumers
	// that saw the transaction's records before the commit was asked for.
	Started time.Time `json:"started,omitzero"`
	// Time is when the outcome was learned; optional.
	Time  time.Time `json:"time,omitzero"`
	Error string    `json:"error,omitempty"`

	At string `json:"-"`
}

// Consume is one record a consumer received.
type Consume struct {
	Consumer string `json:"consumer"`
	// Session changes whenever the consumer's position in a partition is
	// set rather than advanced: a (re)assignment, a seek, an offset reset,
	// a restart. Within one session and partition offsets must increase.
	Session     string    `json:"session,omitempty"`
	Group       string    `json:"group,omitempty"`
	Isolation   Isolation `json:"isolation"`
	Topic       string    `json:"topic"`
	Partition   int32     `json:"partition"`
	Offset      int64     `json:"offset"`
	Key         string    `json:"key,omitempty"`
	Value       string    `json:"value"`
	LeaderEpoch *int32    `json:"leader_epoch,omitempty"`
	// Time is when the client received the record (the poll returned);
	// optional, compared with Txn.Started.
	Time time.Time `json:"time,omitzero"`

	At string `json:"-"`
}

// Final is one record of the final read.
type Final struct {
	Isolation Isolation `json:"isolation"`
	Topic     string    `json:"topic"`
	Partition int32     `json:"partition"`
	Offset    int64     `json:"offset"`
	Key       string    `json:"key,omitempty"`
	Value     string    `json:"value"`

	At string `json:"-"`
}

// FinalEnd closes the final read of one partition at one isolation level:
// the reader read every record from LogStartOffset up to HighWatermark.
// Without it the partition's final read does not count as complete.
type FinalEnd struct {
	Isolation Isolation `json:"isolation"`
	Topic     string    `json:"topic"`
	Partition int32     `json:"partition"`
	// HighWatermark is the offset the read stopped at: the high watermark
	// (read_uncommitted) or the last stable offset (read_committed), which
	// are equal once no transaction is open.
	HighWatermark  int64 `json:"high_watermark"`
	LogStartOffset int64 `json:"log_start_offset,omitempty"`
	// Compacted says the topic has cleanup.policy=compact: records with a
	// later record of the same key, and aborted transactional records, may
	// have been cleaned away.
	Compacted bool `json:"compacted,omitempty"`

	At string `json:"-"`
}

func (Produce) eventType() string  { return "produce" }
func (Txn) eventType() string      { return "txn" }
func (Consume) eventType() string  { return "consume" }
func (Final) eventType() string    { return "final" }
func (FinalEnd) eventType() string { return "final_end" }

// required lists the fields each event must carry on the wire; the Reader
// checks them before decoding, since a missing number decodes as 0.
var required = map[string][]string{
	"produce":   {"client", "topic", "partition", "value", "outcome"},
	"txn":       {"client", "transactional_id", "txn", "outcome"},
	"consume":   {"consumer", "isolation", "topic", "partition", "offset", "value"},
	"final":     {"isolation", "topic", "partition", "offset", "value"},
	"final_end": {"isolation", "topic", "partition", "high_watermark"},
}

func (p Produce) validate() error {
	switch {
	case p.Client == "":
		return errors.New("produce: no client")
	case p.Topic == "" || p.Partition < 0:
		return fmt.Errorf("produce: bad partition %q/%d", p.Topic, p.Partition)
	case p.Value == "":
		return errors.New("produce: empty value: values must be unique per attempt")
	}
	switch p.Outcome {
	case OutcomeAck:
		if p.Offset < 0 {
			return fmt.Errorf("produce %q: acknowledged at offset %d", p.Value, p.Offset)
		}
	case OutcomeFail, OutcomeUnknown:
	default:
		return fmt.Errorf("produce %q: outcome %q is not ack, fail or unknown", p.Value, p.Outcome)
	}
	return nil
}

func (t Txn) validate() error {
	switch {
	case t.Client == "" || t.TransactionalID == "":
		return errors.New("txn: no client or transactional_id")
	case t.Outcome != TxnCommitted && t.Outcome != TxnAborted && t.Outcome != TxnUnknown:
		return fmt.Errorf("txn %s#%d: outcome %q is not committed, aborted or unknown", t.TransactionalID, t.Txn, t.Outcome)
	}
	return nil
}

func (c Consume) validate() error {
	switch {
	case c.Consumer == "":
		return errors.New("consume: no consumer")
	case c.Topic == "" || c.Partition < 0 || c.Offset < 0:
		return fmt.Errorf("consume: bad record %q/%d@%d", c.Topic, c.Partition, c.Offset)
	}
	return validIsolation("consume", c.Isolation)
}

func (f Final) validate() error {
	if f.Topic == "" || f.Partition < 0 || f.Offset < 0 {
		return fmt.Errorf("final: bad record %q/%d@%d", f.Topic, f.Partition, f.Offset)
	}
	return validIsolation("final", f.Isolation)
}

func (f FinalEnd) validate() error {
	if f.Topic == "" || f.Partition < 0 || f.LogStartOffset < 0 || f.HighWatermark < f.LogStartOffset {
		return fmt.Errorf("final_end: bad partition %q/%d (log start %d, high watermark %d)", f.Topic, f.Partition, f.LogStartOffset, f.HighWatermark)
	}
	return validIsolation("final_end", f.Isolation)
}

func validIsolation(event string, i Isolation) error {
	if i != ReadUncommitted && i != ReadCommitted {
		return fmt.Errorf("%s: isolation %q is not read_uncommitted or read_committed", event, i)
	}
	return nil
}

// idempotent: Kafka deduplicates this producer's retries.
func (p *Produce) idempotent() bool {
	return p.Idempotent || p.ProducerID != nil || p.TransactionalID != ""
}

// History is a test's events, each kind in the order it was read. Only
// the order of one consumer session's events matters to Check.
type History struct {
	Produces  []Produce
	Txns      []Txn
	Consumes  []Consume
	Finals    []Final
	FinalEnds []FinalEnd
}

// Add appends an event to the history.
func (h *History) Add(e Event) {
	switch e := e.(type) {
	case Produce:
		h.Produces = append(h.Produces, e)
	case Txn:
		h.Txns = append(h.Txns, e)
	case Consume:
		h.Consumes = append(h.Consumes, e)
	case Final:
		h.Finals = append(h.Finals, e)
	case FinalEnd:
		h.FinalEnds = append(h.FinalEnds, e)
	}
}
