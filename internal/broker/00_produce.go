package broker

// Produce (key 0), versions 0-13.
//
// Each partition's record set must be exactly one RecordBatch v2 (Kafka's
// rule from v3 on), validated as Kafka's LogValidator does (internal/record:
// size, CRC32C, magic, counts, codec, no control batches from clients) and
// checked against max.message.bytes and message.timestamp.after.max.ms /
// before.max.ms (KIP-937). It is appended with offsets assigned by the log;
// the response carries the base offset, the log append time (LogAppendTime
// topics) and the log start offset.
//
// acks must be -1, 0 or 1 (else INVALID_REQUIRED_ACKS). acks=-1 checks
// min.insync.replicas against the committed ISR before the append
// (NOT_ENOUGH_REPLICAS), then waits until the high watermark passes the
// batch (awaitCommitted): REQUEST_TIMED_OUT at TimeoutMillis,
// NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below the minimum,
// NOT_LEADER_OR_FOLLOWER if the leadership moved or the broker is shutting
// down. A leader alone in its ISR
// (the single node) has committed on append (in durable mode, with the
// group commit), so it answers at once. A produce to a follower is
// NOT_LEADER_OR_FOLLOWER. acks=0 gets no response;
// as in Kafka, a failed acks=0 produce closes the connection so the client
// learns of it. Clients cannot append to an internal topic
// (INVALID_TOPIC_EXCEPTION, as in Kafka): only its coordinator writes there.
//
// v13 names topics by ID (KIP-516). v0-2 carry message format 0/1, which
// this broker does not store: their partitions get
// UNSUPPORTED_FOR_MESSAGE_FORMAT. Versions 0-2 are still advertised because
// librdkafka before 2.11.1 drops compression when Produce v0 is missing.
//
// Idempotent producers (KIP-98): each batch with a producer ID is checked
// against that producer's last five batches on the partition
// (storage.ProducerStateTable): a retry is acknowledged with its original
// offsets and not written again, a gap is OUT_OF_ORDER_SEQUENCE_NUMBER, an
// old epoch INVALID_PRODUCER_EPOCH.
//
// compression.type (KIP-390 levels included): a batch whose codec is not the
// topic's is rebuilt with it before the append, as Kafka's LogValidator
// does; "producer" keeps the producer's codec.
//
// Transactional batches (KIP-98): from v12 (transactions v2, KIP-890) the
// partition is added to the producer's transaction implicitly, through the
// transaction coordinator, before the append (addToTransaction: in process
// when this broker coordinates the transactional ID, else AddPartitionsToTxn
// to the coordinator's broker, NOT_ENOUGH_REPLICAS if it cannot be
// reached, which the producer retries); below
// v12 the client adds it with AddPartitionsToTxn first, and the append is
// not verified against the coordinator (KIP-890 part 1 is left out).
//
// v10+ (KIP-951): a partition answered NOT_LEADER_OR_FOLLOWER carries its
// current leader and epoch, and the response the leaders' endpoints on the
// client's listener (leader_hint.go), so the client moves without a
// Metadata request.
//
// Authorization (authz.go): a request with a transactional batch needs
// WRITE on its transactional ID, else every partition is answered
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED (so is one with no transactional
// ID, as in Kafka); each topic needs WRITE, else its partitions are
// TOPIC_AUTHORIZATION_FAILED, before the topic's existence is checked (a
// topic named by an unknown ID is UNKNOWN_TOPIC_ID). IDEMPOTENT_WRITE is
// checked at InitProducerId, not here, as Kafka does since KIP-679.
//
// Broker-side schema ID validation (schema_validation.go): a topic with
// confluent.key.schema.validation or confluent.value.schema.validation
// refuses a batch with INVALID_RECORD, record_errors naming each record
// whose key or value does not carry a schema ID registered under the
// subject confluent.key/value.subject.name.strategy names; a registry
// that cannot answer is NOT_ENOUGH_REPLICAS, which producers retry.
//
// Mirror topics (mirror_append.go): an ordinary produce to a topic with
// samsa.mirror.source set is INVALID_REQUEST ("topic T is a read-only
// mirror of S; promote it ..."); a Produce v9+ carrying Samsa's tagged
// field model.MirrorAppendTag is a mirror append, which needs ClusterAction
// instead of Write and keeps the batches' offsets.
//
// Not yet: quotas (throttle is 0).

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/quota"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/replication"
	"github.com/samsa-io/samsa/internal/storage"
	"github.com/samsa-io/samsa/internal/txn"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.Produce, min: 0, max: 13, handle: typed(handleProduce)})
}

// errAcksZeroFailed closes an acks=0 connection whose produce failed.
var errAcksZeroFailed = errors.New("broker: acks=0 produce failed")

func handleProduce(b *Broker, c *conn, req *kmsg.ProduceRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	failed := false
	var waits []commitWait
	var refused int16
	mirror := b.mirrorModeOf(c, req)
	if !mirror.append && b.authorizer() != nil && hasTransactionalRecords(req) && (req.TransactionID == nil ||
		!b.authorize(c, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, *req.TransactionID)) {
		refused = kerr.TransactionalIDAuthorizationFailed.Code
	}
	write := b.authorizeEach(c, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTopic)
	for i := range req.Topics {
		rt := &req.Topics[i]
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		ts, topicErr := b.produceTopic(req.Version, rt)
		switch {
		case refused != 0:
			topicErr = refused
		case mirror.append:
			// ClusterAction, checked once for the request, stands for
			// Write (mirrorModeOf).
		case req.Version < 13 && !write(rt.Topic), ts != nil && req.Version >= 13 && !write(ts.name):
			topicErr = kerr.TopicAuthorizationFailed.Code
		}
		for j := range rt.Partitions {
			sp, w := b.producePartition(req, mirror, ts, topicErr, &rt.Partitions[j])
			ts.countProduce(topicErr, rt.Partitions[j].Records, sp.ErrorCode)
			failed = failed || sp.ErrorCode != 0
			st.Partitions = append(st.Partitions, sp)
			if w.p != nil {
				w.topic, w.part = i, j
				waits = append(waits, w)
			}
		}
		resp.Topics = append(resp.Topics, st)
	}
	b.awaitCommitted(c, req, resp, waits)
	if b.quotas.produce.Enabled() {
		// The whole request counts, as in Kafka, acks=0 included.
		c.throttleBy(quota.Produce, b.quotas.produce.Record(c.quotaUser(), c.clientID, float64(c.reqSize), b.cfg.Clock.Now()))
	}
	b.hintProduce(c, req, resp)
	if req.Acks == 0 {
		if failed {
			return nil, errAcksZeroFailed
		}
		return nil, nil
	}
	return resp, nil
}

// hasTransactionalRecords reports whether a partition's records are a
// transactional batch (Kafka's RequestUtils.hasTransactionalRecords, which
// reads each record set's first batch).
func hasTransactionalRecords(req *kmsg.ProduceRequest) bool {
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			if h, err := record.ParseHeader(p.Records); err == nil && h.IsTransactional() {
				return true
			}
		}
	}
	return false
}

// commitWait is an acks=all partition appended by the leader whose batch,
// up to last, must be on every ISR member (below the high watermark) before
// the answer.
type commitWait struct {
	topic, part int
	p           *replication.Partition
	last        int64
	minISR      int
}

// awaitCommitted holds an acks=all answer until each appended batch is
// committed, bounded by the request's timeout: REQUEST_TIMED_OUT then, as
// Kafka's produce purgatory, NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR
// shrank below min.insync.replicas meanwhile, NOT_LEADER_OR_FOLLOWER if
// this broker lost the leadership. The batch stays in the log whatever the
// answer: an idempotent retry is deduplicated.
func (b *Broker) awaitCommitted(c *conn, req *kmsg.ProduceRequest, resp *kmsg.ProduceResponse, waits []commitWait) {
	var ctx context.Context
	var waitStart time.Time // zero: no wait, the produce purgatory never entered
	for _, w := range waits {
		sp := &resp.Topics[w.topic].Partitions[w.part]
		// A leader alone in its ISR (the single node) has decided already:
		// no timer, no waiter.
		done, err := w.p.Committed(w.last, w.minISR)
		if !done {
			if waitStart.IsZero() {
				waitStart = time.Now()
				b.metrics.rt.producesWaiting.add(1)
			}
			if ctx == nil {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(b.tasks.Context(), time.Duration(max(req.TimeoutMillis, 0))*time.Millisecond)
				defer cancel()
			}
			err = w.p.WaitCommitted(ctx, w.last, w.minISR)
		}
		var code int16
		switch {
		case err == nil:
			continue
		case errors.Is(err, context.DeadlineExceeded):
			code = kerr.RequestTimedOut.Code
		case errors.Is(err, replication.ErrNotLeader):
			code = kerr.NotLeaderForPartition.Code
		case errors.Is(err, replication.ErrNotEnoughReplicasAfterAppend):
			code = kerr.NotEnoughReplicasAfterAppend.Code
		case errors.Is(err, context.Canceled):
			// The broker is stopping: its leaderships are moving or
			// gone, which the client retries elsewhere.
			code, err = kerr.NotLeaderForPartition.Code, fmt.Errorf("the broker is shutting down: %w", err)
		default:
			code = kerr.UnknownServerError.Code
		}
		msg := err.Error()
		sp.ErrorCode, sp.ErrorMessage = code, &msg
		sp.BaseOffset = -1
	}
	if !waitStart.IsZero() {
		b.metrics.rt.producesWaiting.add(-1)
		c.waited(purgatoryProduce, time.Since(waitStart))
	}
}

func (b *Broker) produceTopic(version int16, rt *kmsg.ProduceRequestTopic) (*topicState, int16) {
	return b.topics.lookup(version >= 13, rt.TopicID, rt.Topic)
}

// producePartition appends one partition's batch and answers it; for an
// acks=all append the commitWait names what the answer must wait for (its
// p is nil otherwise).
func (b *Broker) producePartition(req *kmsg.ProduceRequest, mirror mirrorMode, ts *topicState, topicErr int16, rp *kmsg.ProduceRequestTopicPartition) (kmsg.ProduceResponseTopicPartition, commitWait) {
	sp := kmsg.NewProduceResponseTopicPartition()
	sp.Partition = rp.Partition
	sp.BaseOffset = -1
	fail := func(code int16, msg string) (kmsg.ProduceResponseTopicPartition, commitWait) {
		sp.ErrorCode = code
		if msg != "" {
			sp.ErrorMessage = &msg
		}
		return sp, commitWait{}
	}
	switch {
	case mirror.code != 0:
		// Before the topic's existence, which a principal refused
		// ClusterAction must not learn, as Write is checked before it.
		return fail(mirror.code, mirror.msg)
	case topicErr != 0:
		return fail(topicErr, "")
	case req.Acks != 0 && req.Acks != 1 && req.Acks != -1:
		return fail(kerr.InvalidRequiredAcks.Code, "")
	case req.Version < 3:
		return fail(kerr.UnsupportedForMessageFormat.Code, "message formats 0 and 1 are not supported; use Produce v3 or later")
	case ts.internal:
		// The coordinators append to their topics themselves, not through
		// Produce; a client's records there would corrupt their state.
		return fail(kerr.InvalidTopicException.Code, "Cannot append to internal topic "+ts.name)
	case !mirror.append && mirrorSource(ts) != "":
		return fail(kerr.InvalidRequest.Code, readOnlyMirror(ts))
	}
	p, code := ts.partition(rp.Partition)
	if code != 0 {
		return fail(code, "")
	}
	var minISR int
	if req.Acks == -1 {
		if minISR = int(ts.config.Int("min.insync.replicas")); minISR > p.ISRSize() {
			return fail(kerr.NotEnoughReplicas.Code, fmt.Sprintf("ISR has %d replicas, min.insync.replicas is %d", p.ISRSize(), minISR))
		}
	}
	if mirror.append {
		res, code, msg := b.appendMirror(ts, p, rp.Records)
		if code != 0 {
			return fail(code, msg)
		}
		sp.BaseOffset, sp.LogStartOffset = res.FirstOffset, res.LogStartOffset
		if req.Acks == -1 {
			return sp, commitWait{p: p, last: res.LastOffset, minISR: minISR}
		}
		return sp, commitWait{}
	}
	n, code, msg := checkProduceFraming(rp.Records)
	if code != 0 {
		return fail(code, msg)
	}
	batch := rp.Records[:n]
	if req.Version < 7 && record.Codec(batch[22]&record.CompressionMask) == record.CodecZstd {
		return fail(kerr.UnsupportedCompressionType.Code, "zstd needs Produce v7 or later (KIP-110)")
	}
	sw, code, msg := b.schemaWalkFor(ts, produceTimeout(req))
	if code != 0 {
		return fail(code, msg)
	}
	defer sw.release()
	if code, msg := b.validateProduceBatch(ts, batch, &sp, sw); code != 0 {
		return fail(code, msg)
	}
	if code, msg := sw.outcome(&sp); code != 0 {
		return fail(code, msg)
	}
	batch, code, msg = recompressForTopic(ts, batch)
	if code != 0 {
		return fail(code, msg)
	}
	if code, msg := b.addToTransaction(req, ts.name, rp.Partition, batch); code != 0 {
		return fail(code, msg)
	}
	res, err := p.Append(batch)
	if err != nil {
		code, msg := appendErrorCode(err)
		return fail(code, msg)
	}
	sp.BaseOffset = res.FirstOffset
	sp.LogAppendTime = res.LogAppendTime
	sp.LogStartOffset = res.LogStartOffset
	if req.Acks == -1 {
		return sp, commitWait{p: p, last: res.LastOffset, minISR: minISR}
	}
	return sp, commitWait{}
}

// produceTimeout is the request's timeout; none given (acks=0 clients
// may send 0) is the schema lookups' own bound.
func produceTimeout(req *kmsg.ProduceRequest) time.Duration {
	if req.TimeoutMillis <= 0 {
		return schemaLookupTimeout
	}
	return time.Duration(req.TimeoutMillis) * time.Millisecond
}

// validateProduceBatch applies Kafka's produce-time checks to the one batch
// a partition's record set must be, and hands each record to the topic's
// schema ID validation (sw, nil when off) in the same walk. A failure
// about one record also names it (KIP-467 record_errors, v8+).
func (b *Broker) validateProduceBatch(ts *topicState, records []byte, sp *kmsg.ProduceResponseTopicPartition, sw *schemaWalk) (int16, string) {
	cfg := record.ValidateConfig{
		MaxMessageBytes:      int(ts.config.Int("max.message.bytes")),
		CompactedTopic:       slices.Contains(ts.config.List("cleanup.policy"), "compact"),
		TopicLogAppendTime:   ts.config.String("message.timestamp.type") == "LogAppendTime",
		TimestampBeforeMaxMs: ts.config.Long("message.timestamp.before.max.ms"),
		TimestampAfterMaxMs:  ts.config.Long("message.timestamp.after.max.ms"),
	}
	if !cfg.TopicLogAppendTime {
		cfg.NowMs = b.cfg.Clock.Now().UnixMilli()
	}
	if sw != nil {
		cfg.EachRecord = sw.record
	}
	_, err := record.Validate(records, cfg)
	if err == nil {
		return 0, ""
	}
	var re *record.RecordError
	if errors.As(err, &re) {
		sp.ErrorRecords = append(sp.ErrorRecords, kmsg.ProduceResponseTopicPartitionErrorRecord{
			RelativeOffset: int32(re.BatchIndex), ErrorMessage: kmsg.StringPtr(strings.TrimPrefix(re.Error(), "record: ")),
		})
	}
	// The package prefix means nothing to a client: "invalid record:
	// record 0: ...", not "record: invalid record: record 0: ...".
	return recordErrorCode(err), strings.TrimPrefix(err.Error(), "record: ")
}

// topicCodec is the codec and level a topic's compression.type stores
// batches with; false for "producer", which keeps each batch as it came.
func topicCodec(cfg config.Values) (record.Codec, int, bool) {
	switch cfg.String("compression.type") {
	case "uncompressed":
		return record.CodecNone, 0, true
	case "gzip":
		return record.CodecGzip, int(cfg.Int("compression.gzip.level")), true
	case "snappy":
		return record.CodecSnappy, 0, true
	case "lz4":
		return record.CodecLZ4, int(cfg.Int("compression.lz4.level")), true
	case "zstd":
		return record.CodecZstd, int(cfg.Int("compression.zstd.level")), true
	}
	return 0, 0, false
}

// recompressForTopic rebuilds a validated batch with the topic's codec
// when compression.type names one and the producer used another, as
// Kafka's LogValidator does (record.Recompress keeps offsets, timestamps,
// producer fields and attributes, so idempotence and transactions are
// unaffected). A codec that matches is kept whatever its level, as in
// Kafka. The rebuilt batch must still fit max.message.bytes.
func recompressForTopic(ts *topicState, batch []byte) ([]byte, int16, string) {
	target, level, ok := topicCodec(ts.config)
	if !ok || record.Codec(batch[22]&record.CompressionMask) == target {
		return batch, 0, ""
	}
	out, err := record.Recompress(nil, batch, target, level, 0)
	if err != nil {
		return nil, recordErrorCode(err), err.Error()
	}
	if max := int(ts.config.Int("max.message.bytes")); len(out) > max {
		return nil, kerr.MessageTooLarge.Code, fmt.Sprintf("batch of %d bytes once compressed with %s, max.message.bytes is %d", len(out), target, max)
	}
	return out, 0, ""
}

// checkProduceFraming applies Kafka's checks on the record set as a whole,
// in Kafka's order (ProduceRequest.validateRecords over
// ByteBufferLogInputStream): no whole batch is INVALID_RECORD, a size
// field below the smallest message is CORRUPT_MESSAGE, a magic other than 2
// or a second whole batch is INVALID_RECORD. Trailing bytes that do not
// make a whole batch are dropped, as Kafka trims them. It returns the
// length of the one batch.
func checkProduceFraming(records []byte) (int, int16, string) {
	const minRecordSize = 14 // Kafka's LegacyRecord.RECORD_OVERHEAD_V0
	if len(records) < record.LogOverhead {
		return 0, kerr.InvalidRecord.Code, "produce request partition has no record batch"
	}
	size := int32(binary.BigEndian.Uint32(records[8:]))
	switch {
	case size < minRecordSize:
		return 0, kerr.CorruptMessage.Code, fmt.Sprintf("record batch size %d is below the minimum %d", size, minRecordSize)
	case int64(size)+record.LogOverhead > int64(len(records)):
		return 0, kerr.InvalidRecord.Code, "produce request partition has no complete record batch"
	case records[16] != record.Magic:
		return 0, kerr.InvalidRecord.Code, fmt.Sprintf("produce requests may only contain record batches with magic 2, not %d", records[16])
	}
	n := int(size) + record.LogOverhead
	if rest := records[n:]; len(rest) >= record.LogOverhead {
		next := int32(binary.BigEndian.Uint32(rest[8:]))
		if next >= minRecordSize && int64(next)+record.LogOverhead <= int64(len(rest)) {
			return 0, kerr.InvalidRecord.Code, "produce requests must contain exactly one record batch per partition"
		}
	}
	return n, 0, ""
}

// recordErrorCode maps internal/record's validation errors to Kafka codes.
func recordErrorCode(err error) int16 {
	switch {
	case errors.Is(err, record.ErrTooLarge):
		return kerr.MessageTooLarge.Code
	case errors.Is(err, record.ErrUnsupportedMagic):
		return kerr.UnsupportedForMessageFormat.Code
	case errors.Is(err, record.ErrUnsupportedCodec):
		return kerr.UnsupportedCompressionType.Code
	case errors.Is(err, record.ErrInvalidTimestamp):
		return kerr.InvalidTimestamp.Code
	case errors.Is(err, record.ErrControlFromClient), errors.Is(err, record.ErrInvalidRecord):
		return kerr.InvalidRecord.Code
	}
	return kerr.CorruptMessage.Code
}

// appendErrorCode maps a failed append.
func appendErrorCode(err error) (int16, string) {
	switch {
	case errors.Is(err, storage.ErrLogFailed), errors.Is(err, storage.ErrClosed), errors.Is(err, storage.ErrLogDirOffline),
		errors.Is(err, storage.ErrTooManyOpenFiles), storage.IsIOError(err):
		return kerr.KafkaStorageError.Code, err.Error()
	case errors.Is(err, record.ErrCorrupt), errors.Is(err, record.ErrTruncated):
		return kerr.CorruptMessage.Code, err.Error()
	case errors.Is(err, storage.ErrOutOfOrderSequence):
		return kerr.OutOfOrderSequenceNumber.Code, err.Error()
	case errors.Is(err, storage.ErrInvalidProducerEpoch):
		return kerr.InvalidProducerEpoch.Code, err.Error()
	case errors.Is(err, storage.ErrInvalidTxnState):
		return kerr.InvalidTxnState.Code, err.Error()
	case errors.Is(err, storage.ErrTransactionCoordinatorFenced):
		return kerr.TransactionCoordinatorFenced.Code, err.Error()
	case errors.Is(err, replication.ErrNotLeader):
		return kerr.NotLeaderForPartition.Code, err.Error()
	case errors.Is(err, replication.ErrNotEnoughReplicasAfterAppend):
		return kerr.NotEnoughReplicasAfterAppend.Code, err.Error()
	}
	return kerr.UnknownServerError.Code, err.Error()
}

// addToTransaction adds the partition to the producer's transaction when a
// transactional batch arrives through Produce v12+ (transactions v2,
// KIP-890: the client no longer sends AddPartitionsToTxn). Older versions
// rely on the client's explicit AddPartitionsToTxn.
func (b *Broker) addToTransaction(req *kmsg.ProduceRequest, topic string, partition int32, batch []byte) (int16, string) {
	if req.Version < 12 || req.TransactionID == nil {
		return 0, ""
	}
	h, err := record.ParseHeader(batch)
	if err != nil || !h.IsTransactional() {
		return 0, ""
	}
	add := kmsg.NewPtrAddPartitionsToTxnRequest()
	add.Version = 5
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch = *req.TransactionID, h.ProducerID, h.ProducerEpoch
	rt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	rt.Topic, rt.Partitions = topic, []int32{partition}
	tx.Topics = []kmsg.AddPartitionsToTxnRequestTransactionTopic{rt}
	add.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{tx}
	resp, err := b.addPartitionsToTxn(add, time.Duration(max(req.TimeoutMillis, 0))*time.Millisecond)
	if err != nil {
		return kerr.NotEnoughReplicas.Code, "adding the partition to the transaction: " + err.Error()
	}
	if resp.ErrorCode != 0 {
		return resp.ErrorCode, "adding the partition to the transaction failed"
	}
	for _, t := range resp.Transactions {
		for _, tt := range t.Topics {
			for _, p := range tt.Partitions {
				if p.ErrorCode != 0 {
					return p.ErrorCode, "adding the partition to the transaction failed"
				}
			}
		}
	}
	return 0, ""
}

// addPartitionsToTxn sends a transaction-v2 AddPartitionsToTxn to the
// transaction's coordinator (txnCoordinator), waiting up to timeout (the
// produce's) for a remote one; the local one answers without a timer. An
// error means the
// coordinator could not be asked; the produce answers NOT_ENOUGH_REPLICAS
// then, as Kafka's leader does when its verification cannot reach the
// coordinator, which the producer retries.
func (b *Broker) addPartitionsToTxn(add *kmsg.AddPartitionsToTxnRequest, timeout time.Duration) (*kmsg.AddPartitionsToTxnResponse, error) {
	addr, err := b.txnCoordinator(add.Transactions[0].TransactionalID)
	if err != nil {
		return nil, err
	}
	if addr == "" {
		return b.txns.AddPartitionsToTxn(add), nil
	}
	ctx, cancel := context.WithTimeout(b.tasks.Context(), timeout)
	defer cancel()
	raw, err := b.peers.request(ctx, addr, add)
	if err != nil {
		return nil, err
	}
	return raw.(*kmsg.AddPartitionsToTxnResponse), nil
}

// txnCoordinator is where a transactional ID's coordinator is: "" for
// this broker's (it leads the ID's __transaction_state partition, or no
// live broker does, and ours answers NOT_COORDINATOR, which clients
// retry), else the leader's inter-broker address. The leader of a
// partition a transactional producer writes to, and the group
// coordinator of a transaction-v2 TxnOffsetCommit, reach the transaction
// coordinator this way (KIP-890).
func (b *Broker) txnCoordinator(id string) (string, error) {
	img := b.meta.Load()
	partition := txn.PartitionFor(id, b.brokerConfig(img).Int("transaction.state.log.num.partitions"))
	leader, ok := b.coordinatorNode(img, txn.StateTopic, partition)
	if !ok || int32(leader) == b.cfg.NodeID {
		return "", nil
	}
	addr := b.leaderAddr(leader)
	if addr == "" {
		return "", fmt.Errorf("transaction coordinator broker %d has no inter-broker endpoint", leader)
	}
	return addr, nil
}
