package history

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Kind names an anomaly. docs/HISTORY-CHECK.md defines each exactly.
type Kind string

const (
	// LostWrite: an acknowledged record is not in the final read at its
	// offset (missing, overwritten by another value, or only at another
	// offset), or a committed transaction's acknowledged record is not
	// visible to the final read_committed read.
	LostWrite Kind = "lost-write"
	// AckBeyondHighWatermark: a record was acknowledged at an offset at or
	// past the final read_uncommitted high watermark.
	AckBeyondHighWatermark Kind = "ack-beyond-high-watermark"
)

// Observation is one event that is evidence for an anomaly.
type Observation struct {
	// Source says who saw what: "produce by p1 (ack)", "consumer c1
	// session 2 (read_committed)", "final read_uncommitted".
	Source string `json:"source"`
	Offset int64  `json:"offset"` // -1 when the event has none
	Value  string `json:"value,omitempty"`
	At     string `json:"at,omitempty"` // the event's file:line
}

// Anomaly is one thing the history shows went wrong.
type Anomaly struct {
	Kind      Kind   `json:"kind"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Offset and Value are the record at issue (-1 and "" when the
	// anomaly is about no single offset or value).
	Offset   int64         `json:"offset"`
	Value    string        `json:"value,omitempty"`
	Detail   string        `json:"detail"`
	Evidence []Observation `json:"evidence"`
}

// Counts summarise the history, anomalies or not.
type Counts struct {
	Partitions int `json:"partitions"`
	Produces   int `json:"produces"`
	Acked      int `json:"acked"`
	// Failed counts failed attempts, FailedRetriable those of them with a
	// retriable error, FailedPresent those found in the final read anyway.
	Failed          int `json:"failed"`
	FailedRetriable int `json:"failed_retriable"`
	FailedPresent   int `json:"failed_present"`
	// Unknown outcomes, split by whether the final read holds the record.
	UnknownPresent int `json:"unknown_present"`
	UnknownAbsent  int `json:"unknown_absent"`
	// BelowLogStart counts acknowledged records below the final log start
	// offset, which retention or DeleteRecords may have removed.
	BelowLogStart int `json:"below_log_start"`

	Transactions int `json:"transactions"`
	Committed    int `json:"committed"`
	Aborted      int `json:"aborted"`
	// TxnUnknown transactions are resolved by the final read:
	// InferredCommitted if read_committed sees any of their records,
	// InferredAborted if only read_uncommitted does, else undetermined.
	TxnUnknown        int `json:"txn_unknown"`
	InferredCommitted int `json:"inferred_committed"`
	InferredAborted   int `json:"inferred_aborted"`
	// NeverEnded transactions have records but no outcome event: they were
	// never committed.
	NeverEnded int `json:"never_ended"`

	Consumed     int `json:"consumed"`
	FinalRecords int `json:"final_records"`
	// Unattributed counts final read_uncommitted records no produce event
	// wrote; Check judges only records it knows the origin of.
	Unattributed int `json:"unattributed"`
}

// Report is the result of Check.
type Report struct {
	// Anomalies are failures, sorted by partition, offset and kind.
	Anomalies []Anomaly `json:"anomalies"`
	// AtLeastOnce are duplicates written by producers without idempotence,
	// which at-least-once delivery allows; Failed says whether they count.
	AtLeastOnce []Anomaly `json:"at_least_once"`
	Counts      Counts    `json:"counts"`
}

// Failed reports whether the history shows an anomaly; at-least-once
// duplicates count only when failAtLeastOnce is set.
func (r *Report) Failed(failAtLeastOnce bool) bool {
	return len(r.Anomalies) > 0 || failAtLeastOnce && len(r.AtLeastOnce) > 0
}

// Kinds lists the kinds of the report's anomalies, at-least-once
// duplicates included, each once, sorted.
func (r *Report) Kinds() []Kind {
	var out []Kind
	for _, a := range slices.Concat(r.Anomalies, r.AtLeastOnce) {
		out = append(out, a.Kind)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func sortAnomalies(as []Anomaly) {
	slices.SortStableFunc(as, func(a, b Anomaly) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition),
			cmp.Compare(a.Offset, b.Offset), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Value, b.Value))
	})
}

// WriteText writes the report for people: each anomaly with its evidence,
// then the counts.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, a := range r.Anomalies {
		writeAnomaly(&b, a, "")
	}
	for _, a := range r.AtLeastOnce {
		writeAnomaly(&b, a, " (allowed with at-least-once)")
	}
	c := r.Counts
	fmt.Fprintf(&b, "%d anomalies, %d at-least-once duplicates\n", len(r.Anomalies), len(r.AtLeastOnce))
	fmt.Fprintf(&b, "partitions %d; produces %d: acked %d, failed %d (%d retriable, %d present), unknown %d present %d absent; below log start %d\n",
		c.Partitions, c.Produces, c.Acked, c.Failed, c.FailedRetriable, c.FailedPresent, c.UnknownPresent, c.UnknownAbsent, c.BelowLogStart)
	fmt.Fprintf(&b, "transactions %d: committed %d, aborted %d, unknown %d (inferred committed %d, aborted %d), never ended %d\n",
		c.Transactions, c.Committed, c.Aborted, c.TxnUnknown, c.InferredCommitted, c.InferredAborted, c.NeverEnded)
	fmt.Fprintf(&b, "consumed %d; final records %d, unattributed %d\n", c.Consumed, c.FinalRecords, c.Unattributed)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeAnomaly(b *strings.Builder, a Anomaly, note string) {
	fmt.Fprintf(b, "%s%s %s/%d", a.Kind, note, a.Topic, a.Partition)
	if a.Offset >= 0 {
		fmt.Fprintf(b, " offset %d", a.Offset)
	}
	if a.Value != "" {
		fmt.Fprintf(b, " value %q", a.Value)
	}
	fmt.Fprintf(b, ": %s\n", a.Detail)
	for _, o := range a.Evidence {
		fmt.Fprintf(b, "    %s", o.Source)
		if o.Offset >= 0 {
			fmt.Fprintf(b, " offset %d", o.Offset)
		}
		if o.Value != "" {
			fmt.Fprintf(b, " value %q", o.Value)
		}
		if o.At != "" {
			fmt.Fprintf(b, " [%s]", o.At)
		}
		b.WriteByte('\n')
	}
}
