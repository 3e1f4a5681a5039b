package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/task"
	"github.com/samsa-io/samsa/pkg/serde"
)

// produceFlags are the flags of samsa produce.
type produceFlags struct {
	keySeparator string
	headers      []string
	compression  string
	acks         string
	partition    int32
	linger       time.Duration
	batchSize    int32
	serde        serdeFlags
}

func newProduceCommand() *cobra.Command {
	var (
		conn connection
		pf   produceFlags
	)
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Produce one record per line of standard input",
		Long: `Produce one record per line of standard input until end of input (Ctrl-D)
or an interrupt (Ctrl-C, SIGTERM): after an interrupt the lines already read
are still produced, their acknowledgements awaited for up to --timeout, and
the summary printed; a second interrupt ends the command at once.

Each line (without its line ending) is a record value; with --key-separator
the line is split at the first separator into key and value, and a line
without the separator is an error. Every --header
is added to every record.

A summary goes to standard error: records read and acknowledged, and when
they differ how many the brokers rejected and how many got no answer (those
may or may not have been written). A rejected record stops the command with
a non-zero exit status, and so do records left without an acknowledgement
for --timeout, whether the broker is gone, hung or refusing them: the
command never waits longer for the cluster.

With --value-schema (and --key-schema, with --key-separator) each line is
JSON and is encoded in Confluent's Schema Registry wire format: for Avro in
Avro's JSON encoding (a union's branch as {"type": value}, as
kafka-avro-console-producer reads it), for JSON Schema the document itself
(validated against the schema), for Protobuf protojson's mapping. A schema
file is registered under the subject (<topic>-value by default) unless
--auto-register=false, which looks it up instead; id:N and
subject:NAME[:VERSION] name a registered schema. A line the schema refuses
stops the command with its line number.

A missing topic is created where the cluster creates topics on first use
(auto.create.topics.enable), and the command says so.

Errors give Kafka's error and the broker's own message for it. A refusal
the producer retries (NOT_ENOUGH_REPLICAS, NOT_LEADER_OR_FOLLOWER, ...) is
printed as a warning the first time it comes back, and a timeout names the
broker's last answer.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runProduce(cmd, &conn, &pf, args[0])
		},
	}
	conn.register(cmd)
	f := cmd.Flags()
	f.StringVar(&pf.keySeparator, "key-separator", "", "split each line into key and value at the first occurrence of this string")
	f.StringArrayVarP(&pf.headers, "header", "H", nil, "header key=value added to every record (repeatable)")
	f.StringVar(&pf.compression, "compression", "none", "batch compression: none, gzip, snappy, lz4 or zstd")
	f.StringVar(&pf.acks, "acks", "all", "acknowledgements to wait for: 0, 1 or all")
	f.Int32Var(&pf.partition, "partition", -1, "produce every record to this partition (-1: the default partitioner)")
	f.DurationVar(&pf.linger, "linger", defaultLinger, "how long a partition's batch waits for more records")
	registerBatchSize(f, &pf.batchSize)
	pf.serde.register(f, true)
	return cmd
}

// consoleProducer is one run of samsa produce. The reading loop hands
// records to the client; promises run on the client's promise goroutine, so
// what they count is under mu.
type consoleProducer struct {
	cmd     *cobra.Command
	conn    *connection
	flags   *produceFlags
	topic   string
	headers []kgo.RecordHeader
	cl      *kgo.Client
	trouble *brokerTrouble
	answers *produceAnswers // nil with --acks 0: no responses to read
	acks    ackCounter
	keyEnc  *serde.Encoder     // nil: keys are the bytes read
	valEnc  *serde.Encoder     // nil: values are the bytes read
	read    int64              // records handed to the client (reading loop only)
	stop    context.CancelFunc // stops the reading loop at the first failure

	mu struct {
		sync.Mutex
		acked    int64
		bytes    int64 // keys and values of acked records
		rejected int64 // refused by a broker with a Kafka error

		firstRejection error
		rejectedAt     int32 // the partition of firstRejection
		firstErr       error
	}
}

func (p *consoleProducer) promise(r *kgo.Record, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acks.answered.Add(1)
	if err != nil {
		if rejected(err) {
			p.mu.rejected++
			if p.mu.firstRejection == nil {
				p.mu.firstRejection, p.mu.rejectedAt = err, r.Partition
			}
		}
		if p.mu.firstErr == nil {
			p.mu.firstErr = err
			p.stop()
		}
		return
	}
	p.mu.acked++
	p.mu.bytes += int64(len(r.Key) + len(r.Value))
}

// rejected reports whether err is a broker's definite refusal of a record.
// Timeouts (the broker's or the client's) and a closed client leave it
// unknown whether the record was written.
func rejected(err error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke) && ke != kerr.RequestTimedOut && ke != kerr.NotEnoughReplicasAfterAppend
}

func runProduce(cmd *cobra.Command, conn *connection, pf *produceFlags, topic string) error {
	var headers []kgo.RecordHeader
	for _, h := range pf.headers {
		k, v, err := parseKeyValue("--header", h)
		if err != nil {
			return err
		}
		headers = append(headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	opts, err := producerOpts(pf.acks, pf.compression, pf.linger, pf.batchSize)
	if err != nil {
		return err
	}
	if pf.partition < -1 {
		return fmt.Errorf("invalid --partition %d", pf.partition)
	}
	if pf.partition >= 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	if err := pf.serde.check(cmd.Flags().Changed); err != nil {
		return err
	}
	if pf.serde.key.spec != "" && pf.keySeparator == "" {
		return errors.New("--key-schema needs --key-separator: the key is the part of each line before it")
	}
	trouble := &brokerTrouble{}
	opts = append(opts, kgo.RecordDeliveryTimeout(conn.timeout), kgo.WithHooks(trouble))
	var answers *produceAnswers
	if pf.acks != "0" {
		stderr := cmd.ErrOrStderr()
		answers = newProduceAnswers(func(a brokerAnswer) {
			fmt.Fprintf(stderr, "warning: %s answered partition %d with %s; retrying for up to %s (--timeout)\n",
				a.broker, a.partition, a.reason(), conn.timeout)
		})
	}

	var cl *kgo.Client
	if answers != nil {
		cl, err = conn.clientWrapping(cmd, answers.wrap, opts...)
	} else {
		cl, err = conn.client(cmd, opts...)
	}
	if err != nil {
		return err
	}
	p := &consoleProducer{cmd: cmd, conn: conn, flags: pf, topic: topic, headers: headers, cl: cl, trouble: trouble, answers: answers}
	if err := checkTopic(cmd, conn, cl, topic, pf.partition); err != nil {
		cl.Close()
		return err
	}
	if err := p.schemaEncoders(); err != nil {
		cl.Close()
		return err
	}
	return p.run()
}

// run produces standard input and reports. Three contexts: records live in
// recordCtx, which only a stall ends (franz-go fails the buffered records of
// an ended context); stopCtx ends the reading loop, on a stall or the first
// failed record; SIGINT or SIGTERM end the reading too, but what was read
// is still produced. Flushing waits at most --timeout.
func (p *consoleProducer) run() error {
	base := p.cmd.Context()
	recordCtx, stall := context.WithCancelCause(base)
	defer stall(nil)
	stopCtx, stop := context.WithCancel(recordCtx)
	defer stop()
	p.stop = stop
	sigCtx, stopSignals := signalContext(p.cmd)
	defer stopSignals()

	watches := task.NewGroup(base)
	defer watches.Stop()
	watchAcks(watches, p.conn.clock, p.conn.timeout, &p.acks, func() { stall(errStalled) })

	readCtx, stopReading := context.WithCancel(base)
	defer stopReading()
	reader := readLines(readCtx, p.cmd.InOrStdin())

	start := p.conn.clock.Now()
	readErr := p.produceLines(stopCtx, sigCtx, recordCtx, reader, stopSignals)
	if context.Cause(recordCtx) != errStalled {
		// A flush cut short leaves records unacknowledged, which the
		// summary and the error report; its own error adds nothing.
		flushCtx, cancel := context.WithTimeout(recordCtx, p.conn.timeout)
		_ = p.cl.Flush(flushCtx)
		cancel()
	}
	elapsed := p.conn.clock.Now().Sub(start)
	p.cl.Close() // fails what is still buffered: every promise has run after this
	if p.answers != nil {
		p.answers.close()
	}
	watches.Stop()
	stopReading()
	reader.stop()

	p.mu.Lock()
	acked, nbytes, rejected := p.mu.acked, p.mu.bytes, p.mu.rejected
	firstRejection, rejectedAt, firstErr := p.mu.firstRejection, p.mu.rejectedAt, p.mu.firstErr
	p.mu.Unlock()
	last := lastAnswer(p.answers, p.trouble)
	p.printSummary(acked, nbytes, rejected, elapsed)
	switch {
	case firstRejection != nil:
		return produceFailure(p.cmd, p.conn, p.topic, firstRejection, p.brokerMessage(rejectedAt, firstRejection), last)
	case errors.As(readErr, new(*lineError)):
		return readErr // a line the command cannot produce: not a read failure
	case readErr != nil:
		return fmt.Errorf("read standard input: %w", readErr)
	case acked == p.read:
		return nil
	case base.Err() != nil:
		return errors.New("interrupted")
	case firstErr != nil && !closing(firstErr):
		return produceFailure(p.cmd, p.conn, p.topic, firstErr, "", last)
	}
	return fmt.Errorf("produce to topic %q: no acknowledgement within %s (--timeout)%s",
		p.topic, p.conn.timeout, last)
}

// printSummary says what was read and what became of it.
func (p *consoleProducer) printSummary(acked, nbytes, rejected int64, elapsed time.Duration) {
	took := elapsed.Round(time.Millisecond)
	if acked == p.read {
		fmt.Fprintf(p.cmd.ErrOrStderr(), "produced %d records (%d bytes) to %q in %s\n", acked, nbytes, p.topic, took)
		return
	}
	fmt.Fprintf(p.cmd.ErrOrStderr(), "produced %d of %d records read (%d bytes) to %q in %s: "+
		"%d rejected, %d unacknowledged (they may or may not have been written)\n",
		acked, p.read, nbytes, p.topic, took, rejected, p.read-acked-rejected)
}

// checkTopic fails early, with a sentence, when the topic or the fixed
// partition does not exist: otherwise the producer would retry unknown-topic
// errors until --timeout. A missing topic is created where the cluster
// creates topics on first use (auto.create.topics.enable), as Kafka's
// console producer would have it created, and the command says so.
func checkTopic(cmd *cobra.Command, conn *connection, cl *kgo.Client, topic string, partition int32) error {
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()
	td, err := topicMetadata(ctx, conn.adminFor(cl), topic)
	if err == nil {
		if partition >= 0 {
			return checkPartition(td, partition)
		}
		return nil
	}
	if !errors.Is(err, errNoTopic) {
		return conn.reachErr(cmd, err)
	}
	created, err := autoCreateTopic(ctx, cl, topic)
	switch {
	case err != nil:
		return conn.reachErr(cmd, err)
	case !created:
		return fmt.Errorf("topic %q does not exist, and the cluster does not create topics on first use "+
			"(auto.create.topics.enable=false): create it with samsa topic create", topic)
	}
	n, err := waitForLeaders(ctx, cl, topic)
	if err != nil {
		return fmt.Errorf("topic %q: created on first use but partitions have no leader after %s (--timeout)", topic, conn.timeout)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "topic %q did not exist: the cluster created it on first use "+
		"(auto.create.topics.enable), partitions: %d\n", topic, n)
	if partition >= int32(n) {
		return fmt.Errorf("topic %q has no partition %d (it has %d)", topic, partition, n)
	}
	return nil
}

// autoCreateTopic asks for topic's metadata allowing auto-creation, and
// reports whether the cluster created it (or already had it).
func autoCreateTopic(ctx context.Context, cl *kgo.Client, topic string) (bool, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = true
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return false, err
	}
	if len(resp.Topics) != 1 {
		return false, fmt.Errorf("topic %q: %d topics in the Metadata answer", topic, len(resp.Topics))
	}
	switch err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); {
	case err == nil, errors.Is(err, kerr.LeaderNotAvailable): // created, leaders on the way
		return true, nil
	case errors.Is(err, kerr.UnknownTopicOrPartition):
		return false, nil
	default:
		return false, topicErr(topic, err, "")
	}
}

// produceLines sends one record per line until the input ends, stopCtx
// ends, or a signal comes; after a signal it still sends the lines already
// read. It returns a read error or a line without the key separator.
func (p *consoleProducer) produceLines(stopCtx, sigCtx, recordCtx context.Context, reader *lineReader, stopSignals func()) error {
	sep := []byte(p.flags.keySeparator)
	signaled := sigCtx.Done()
	draining := false // interrupted, and every line read is queued: take those
	for lineNo := 1; stopCtx.Err() == nil; {
		var l inputLine
		if draining {
			select {
			case l = <-reader.lines:
			default:
				return nil
			}
		} else {
			select {
			case l = <-reader.lines:
			case <-stopCtx.Done():
				return nil
			case <-signaled:
				stopSignals() // a second Ctrl-C ends the process at once
				signaled = nil
				draining = !reader.interrupt()
				continue
			}
		}
		if l.text != nil {
			if err := p.produceLine(recordCtx, l.text, sep, lineNo); err != nil {
				return err
			}
			lineNo++
		}
		switch {
		case errors.Is(l.err, io.EOF), errors.Is(l.err, errInterrupted):
			return nil
		case l.err != nil:
			return l.err
		}
	}
	return nil
}

func (p *consoleProducer) produceLine(recordCtx context.Context, text, sep []byte, lineNo int) error {
	r := &kgo.Record{Topic: p.topic, Value: text, Headers: p.headers}
	if p.flags.partition >= 0 {
		r.Partition = p.flags.partition
	}
	if len(sep) > 0 {
		k, v, ok := bytes.Cut(text, sep)
		if !ok {
			return fmt.Errorf("line %d has no key separator %q", lineNo, p.flags.keySeparator)
		}
		r.Key, r.Value = k, v
	}
	if err := p.encode(r, lineNo); err != nil {
		return err
	}
	p.read++
	p.acks.sent.Add(1)
	p.cl.Produce(recordCtx, r, p.promise)
	return nil
}

// schemaEncoders resolves --key-schema and --value-schema (registering or
// looking up a schema file) before the first line is read.
func (p *consoleProducer) schemaEncoders() error {
	s := &p.flags.serde
	if !s.used() {
		return nil
	}
	sd, err := s.serde(p.conn.timeout)
	if err != nil {
		return err
	}
	ctx, cancel := p.conn.opContext(p.cmd.Context())
	defer cancel()
	if p.valEnc, err = s.encoder(ctx, sd, p.topic, &s.value); err != nil {
		return err
	}
	if p.keyEnc, err = s.encoder(ctx, sd, p.topic, &s.key); err != nil {
		return err
	}
	for _, e := range []*serde.Encoder{p.keyEnc, p.valEnc} {
		if e != nil {
			fmt.Fprintf(p.cmd.ErrOrStderr(), "%s: schema id %d (%s)\n", subjectOrID(e), e.Schema().ID, e.Schema().Type)
		}
	}
	return nil
}

func subjectOrID(e *serde.Encoder) string {
	if e.Subject() == "" {
		return fmt.Sprintf("schema id %d", e.Schema().ID)
	}
	return fmt.Sprintf("subject %q", e.Subject())
}

// lineError is a line the command cannot turn into a record.
type lineError struct{ err error }

func (e *lineError) Error() string { return e.err.Error() }
func (e *lineError) Unwrap() error { return e.err }

// encode replaces the line's key and value with their encoding under
// their schemas.
func (p *consoleProducer) encode(r *kgo.Record, lineNo int) error {
	var err error
	if p.keyEnc != nil {
		if r.Key, err = p.keyEnc.EncodeJSON(r.Key); err != nil {
			return &lineError{fmt.Errorf("line %d: key: %w", lineNo, err)}
		}
	}
	if p.valEnc != nil {
		if r.Value, err = p.valEnc.EncodeJSON(r.Value); err != nil {
			return &lineError{fmt.Errorf("line %d: value: %w", lineNo, err)}
		}
	}
	return nil
}

// brokerMessage is the broker's own words for a record's Kafka error.
func (p *consoleProducer) brokerMessage(partition int32, err error) string {
	var ke *kerr.Error
	if p.answers == nil || !errors.As(err, &ke) {
		return ""
	}
	return p.answers.message(partition, ke.Code)
}

// produceFailure renders why records failed: brokerMessage is the broker's
// words for a Kafka error, last ends a sentence with what the cluster last
// said (lastAnswer), for a timeout.
func produceFailure(cmd *cobra.Command, conn *connection, topic string, err error, brokerMessage, last string) error {
	switch {
	case errors.Is(err, kgo.ErrRecordTimeout):
		return fmt.Errorf("produce to topic %q: records not acknowledged within %s (--timeout)%s", topic, conn.timeout, last)
	case errors.Is(err, context.Canceled):
		return errors.New("interrupted")
	}
	if reached := conn.reachErr(cmd, err); reached != err {
		return reached
	}
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		return topicErr(topic, err, "")
	}
	return fmt.Errorf("produce to topic %q: %s", topic, kafkaReason(err, brokerMessage))
}
