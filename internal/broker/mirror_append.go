package broker

// Mirror topics (docs/DESIGN-mirror-topics.md): a topic whose
// samsa.mirror.source is set is a read-only copy of a topic of another
// cluster. Ordinary produces to it are refused (INVALID_REQUEST, naming the
// source and how to promote it); the mirror process writes it with a
// mirror append, a Produce v9+ carrying Samsa's top-level tagged field
// model.MirrorAppendTag, whose batches keep the offsets the source gave
// them. The whole Produce path is reused: acks, min.insync.replicas, the
// ISR and high watermark, the produce purgatory, quotas, leader hints.
//
// Per partition of a mirror append, in this order (the first failure
// answers):
//   - the principal may ClusterAction the cluster (Kafka's permission for
//     replication; Write on the topic is not needed), else
//     CLUSTER_AUTHORIZATION_FAILED on every partition;
//   - the topic is a mirror topic, else INVALID_REQUEST;
//   - the record set is one or more whole batches (trailing bytes that do
//     not make one are dropped, as for Produce), each magic v2 (else
//     INVALID_RECORD), valid as a log's batch (record.Validate FromLog:
//     CORRUPT_MESSAGE for a bad CRC, MESSAGE_TOO_LARGE past
//     max.message.bytes), with no producer state (producer ID, epoch and
//     base sequence -1), not transactional, not control (INVALID_RECORD);
//   - the partition's log takes them (storage.Log.AppendMirror): batches
//     below its end are skipped (a retried append succeeds again), a
//     batch past it leaves a gap, an empty log restarts at the first base,
//     and a batch that holds the log end without starting there is
//     OFFSET_OUT_OF_RANGE: the batch is sound, its offsets are what the
//     log cannot take, and the code tells the mirror so without parsing
//     the message (a source whose compaction merged batches sends one;
//     the mirror then trims the records below the log end).
//
// Batches are written as they came but for their partition leader epoch,
// which becomes the leader's (outside the CRC): no recompression
// (compression.type), no schema ID validation, no timestamp checks or
// LogAppendTime stamping, since the records are the source's as it
// accepted them. The answer's base offset is the first appended batch's,
// or the first skipped one's when all were skipped.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/replication"
	"github.com/samsa-io/samsa/internal/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// mirrorMode is what a Produce request's mirror tag asks for.
type mirrorMode struct {
	append bool   // the request is a mirror append
	code   int16  // the append is refused on every partition with code
	msg    string // and this message
}

// mirrorModeOf reads the mirror tag and checks what applies to the whole
// request: the tag's value, no transactional ID, and ClusterAction.
func (b *Broker) mirrorModeOf(c *conn, req *kmsg.ProduceRequest) mirrorMode {
	var m mirrorMode
	var value []byte
	req.UnknownTags.Each(func(tag uint32, v []byte) {
		if tag == model.MirrorAppendTag {
			m.append, value = true, v
		}
	})
	switch {
	case !m.append:
	case len(value) != 1 || value[0] != model.MirrorAppendValue:
		m.code, m.msg = kerr.InvalidRequest.Code, fmt.Sprintf("mirror append tag %#x must hold the single byte %d", model.MirrorAppendTag, model.MirrorAppendValue)
	case req.TransactionID != nil:
		m.code, m.msg = kerr.InvalidRequest.Code, "a mirror append carries no transactional ID"
	case !b.authorizeCluster(c, kmsg.ACLOperationClusterAction):
		m.code, m.msg = kerr.ClusterAuthorizationFailed.Code, "a mirror append needs ClusterAction on the cluster"
	}
	return m
}

// mirrorSource is the source cluster a topic mirrors; "" for an ordinary
// topic.
func mirrorSource(ts *topicState) string { return ts.config.String(config.MirrorSourceConfig) }

// readOnlyMirror is the refusal of an ordinary produce to a mirror topic.
func readOnlyMirror(ts *topicState) string {
	return fmt.Sprintf("topic %s is a read-only mirror of %s; promote it (samsa mirror promote) to write to it", ts.name, mirrorSource(ts))
}

// appendMirror checks a mirror append's record set and appends it to the
// partition it leads.
func (b *Broker) appendMirror(ts *topicState, p *replication.Partition, records []byte) (storage.AppendResult, int16, string) {
	if mirrorSource(ts) == "" {
		return storage.AppendResult{}, kerr.InvalidRequest.Code, fmt.Sprintf("topic %s is not a mirror topic (%s is not set)", ts.name, config.MirrorSourceConfig)
	}
	n, code, msg := checkMirrorBatches(records, int(ts.config.Int("max.message.bytes")))
	if code != 0 {
		return storage.AppendResult{}, code, msg
	}
	res, err := p.AppendMirror(records[:n])
	if err == nil {
		return res, 0, ""
	}
	var overlap *storage.MirrorOverlapError
	switch {
	case errors.As(err, &overlap):
		return res, kerr.OffsetOutOfRange.Code, fmt.Sprintf("mirror batch %d..%d holds the log end offset %d without starting there; send the batch's records from offset %d on",
			overlap.BaseOffset, overlap.LastOffset, overlap.LogEndOffset, overlap.LogEndOffset)
	case errors.Is(err, storage.ErrInvalidOffset):
		return res, kerr.InvalidRecord.Code, "mirror batches must follow one another in offset order: " + err.Error()
	case errors.Is(err, storage.ErrLeaderEpochRegression):
		// The log holds batches of a newer leader epoch: this replica is
		// a leader that has been replaced.
		return res, kerr.NotLeaderForPartition.Code, err.Error()
	}
	code, msg = appendErrorCode(err)
	return res, code, msg
}

// checkMirrorBatches checks each whole batch of a mirror append and
// returns the length of the whole batches; bytes after the last whole one
// are dropped, as Produce drops them.
func checkMirrorBatches(records []byte, maxMessageBytes int) (int, int16, string) {
	n := 0
	for n < len(records) {
		rest := records[n:]
		if len(rest) > 16 && rest[16] != record.Magic {
			return 0, kerr.InvalidRecord.Code, fmt.Sprintf("mirror appends take record batches with magic 2 only, not %d", rest[16])
		}
		h, err := record.ParseHeader(rest)
		if err == nil {
			err = record.CheckComplete(&h, rest)
		}
		if err != nil {
			if n > 0 {
				break // a partial batch at the end
			}
			return 0, kerr.InvalidRecord.Code, "mirror append partition has no complete record batch: " + strings.TrimPrefix(err.Error(), "record: ")
		}
		batch := records[n : n+h.Size()]
		if _, err := record.Validate(batch, record.ValidateConfig{FromLog: true, MaxMessageBytes: maxMessageBytes}); err != nil {
			return 0, recordErrorCode(err), fmt.Sprintf("mirror batch at offset %d: %s", h.BaseOffset, strings.TrimPrefix(err.Error(), "record: "))
		}
		switch {
		case h.IsControl():
			return 0, kerr.InvalidRecord.Code, fmt.Sprintf("mirror batch at offset %d is a control batch; the mirror drops them", h.BaseOffset)
		case h.IsTransactional():
			return 0, kerr.InvalidRecord.Code, fmt.Sprintf("mirror batch at offset %d is transactional; the mirror sends committed batches with the transactional bit cleared", h.BaseOffset)
		case h.ProducerID != -1 || h.ProducerEpoch != -1 || h.BaseSequence != record.NoSequence:
			return 0, kerr.InvalidRecord.Code, fmt.Sprintf("mirror batch at offset %d carries producer state (producer ID %d, epoch %d, base sequence %d); mirror batches carry -1 for all three",
				h.BaseOffset, h.ProducerID, h.ProducerEpoch, h.BaseSequence)
		}
		n += h.Size()
	}
	if n == 0 {
		return 0, kerr.InvalidRecord.Code, "mirror append partition has no record batch"
	}
	return n, 0, ""
}
