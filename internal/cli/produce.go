package cli

import (
	"bufio"
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
}

func newProduceCommand() *cobra.Command {
	var (
		conn connection
		pf   produceFlags
	)
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Produce one record per line of standard input",
		Long: `Produce one record per line of standard input until end of input (Ctrl-D).

Each line (without its line ending) is a record value; with --key-separator
the line is split at the first separator into key and value, and a line
without the separator is an error. Every --header
is added to every record. A summary goes to standard error. Any failed record
stops the command with a non-zero exit status.`,
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
	f.Int32Var(&pf.batchSize, "batch-size", 1000012, "maximum bytes of one record batch")
	return cmd
}

// produceTally counts what the brokers acknowledged and keeps the first
// failure. Promises run on the client's promise goroutine while the reading
// loop checks failed, hence the mutex.
type produceTally struct {
	mu       sync.Mutex
	records  int64
	bytes    int64
	firstErr error
	cancel   context.CancelFunc
}

func (t *produceTally) promise(r *kgo.Record, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		if t.firstErr == nil {
			t.firstErr = err
			t.cancel()
		}
		return
	}
	t.records++
	t.bytes += int64(len(r.Key) + len(r.Value))
}

func (t *produceTally) snapshot() (records, bytes int64, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.records, t.bytes, t.firstErr
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
	opts = append(opts, kgo.RecordDeliveryTimeout(conn.timeout))

	cl, err := conn.client(cmd, opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := checkTopic(cmd, conn, cl, topic, pf.partition); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	tally := &produceTally{cancel: cancel}
	start := conn.clock.Now()
	readErr := produceLines(ctx, cl, cmd.InOrStdin(), topic, pf, headers, tally.promise)

	// Flush with a fresh deadline: ctx may already be cancelled by a failed
	// record, and the records in flight still deserve their answer.
	flushCtx, flushCancel := context.WithTimeout(cmd.Context(), conn.timeout)
	defer flushCancel()
	flushErr := cl.Flush(flushCtx)
	elapsed := conn.clock.Now().Sub(start)

	records, nbytes, produceErr := tally.snapshot()
	fmt.Fprintf(cmd.ErrOrStderr(), "produced %d records (%d bytes) to %q in %s\n",
		records, nbytes, topic, elapsed.Round(time.Millisecond))
	switch {
	case produceErr != nil:
		return produceFailure(cmd, conn, topic, produceErr)
	case readErr != nil:
		return fmt.Errorf("read standard input: %w", readErr)
	case flushErr != nil:
		return fmt.Errorf("produce to topic %q: records still unacknowledged after %s (--timeout)", topic, conn.timeout)
	}
	return nil
}

// checkTopic fails early, with a sentence, when the topic or the fixed
// partition does not exist: otherwise the producer would retry unknown-topic
// errors until --timeout.
func checkTopic(cmd *cobra.Command, conn *connection, cl *kgo.Client, topic string, partition int32) error {
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()
	td, err := topicMetadata(ctx, conn.adminFor(cl), topic)
	if err != nil {
		return conn.reachErr(cmd, err)
	}
	if partition >= 0 {
		return checkPartition(td, partition)
	}
	return nil
}

// produceLines sends one record per line until EOF, a read error or a
// cancelled ctx (a record failed).
func produceLines(ctx context.Context, cl *kgo.Client, in io.Reader, topic string, pf *produceFlags,
	headers []kgo.RecordHeader, promise func(*kgo.Record, error)) error {
	br := bufio.NewReaderSize(in, 64<<10)
	sep := []byte(pf.keySeparator)
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte{'\n'}), []byte{'\r'})
			r := &kgo.Record{Topic: topic, Value: line, Headers: headers}
			if pf.partition >= 0 {
				r.Partition = pf.partition
			}
			if len(sep) > 0 {
				k, v, ok := bytes.Cut(line, sep)
				if !ok {
					return fmt.Errorf("line %d has no key separator %q", lineNo, pf.keySeparator)
				}
				r.Key, r.Value = k, v
			}
			cl.Produce(ctx, r, promise)
		}
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func produceFailure(cmd *cobra.Command, conn *connection, topic string, err error) error {
	switch {
	case errors.Is(err, kgo.ErrRecordTimeout):
		return fmt.Errorf("produce to topic %q: records not acknowledged within %s (--timeout)", topic, conn.timeout)
	case errors.Is(err, context.Canceled):
		return errors.New("interrupted")
	}
	if reached := conn.reachErr(cmd, err); reached != err {
		return reached
	}
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		return topicErr(topic, err, "")
	}
	return fmt.Errorf("produce to topic %q: %s", topic, kafkaReason(err, ""))
}
