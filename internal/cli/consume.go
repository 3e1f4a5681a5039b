package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/task"
)

// consumeFlags are the flags of samsa consume.
type consumeFlags struct {
	from      string
	partition int32
	group     string
	follow    bool
	max       int64
	format    string
	json      bool
	isolation string
	serde     serdeFlags
}

func newConsumeCommand() *cobra.Command {
	var (
		conn connection
		cf   consumeFlags
	)
	cmd := &cobra.Command{
		Use:   "consume TOPIC",
		Short: "Print records of a topic",
		Long: `Print records of a topic, by default from the beginning of every partition up
to the end offsets listed when the command starts; with --follow it keeps
waiting for new records until interrupted, or until no broker has answered
for --timeout.

--from applies per partition: beginning, end, offset:N (clamped to the log
start), or timestamp:T with T in RFC 3339 or Unix milliseconds (the first
record at or after T). With --group the group's committed offsets win and
--from only applies to partitions without a commit; printed records are
committed when the command ends.

--value-format schema (and --key-format schema) decodes records written in
Confluent's Schema Registry wire format, each with the schema its ID names
in the registry (--registry-url), and prints them as JSON: Avro in Avro's
JSON encoding (as kafka-avro-console-consumer prints it), JSON Schema as the
document, Protobuf in protojson's mapping. With --json the decoded key and
value are JSON values, and "key_schema_id" and "value_schema_id" name their
schemas. --value-schema also checks that every record was written with that
schema. A record that cannot be decoded (not in the wire format, an unknown
schema ID, bytes the schema does not read) stops the command with its
partition and offset.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConsume(cmd, &conn, &cf, args[0])
		},
	}
	conn.register(cmd)
	f := cmd.Flags()
	f.StringVar(&cf.from, "from", "beginning", "where to start in each partition: beginning, end, offset:N or timestamp:RFC3339|ms")
	f.Int32Var(&cf.partition, "partition", -1, "read only this partition (-1: all)")
	f.StringVar(&cf.group, "group", "", "consume as a member of this consumer group and commit what was printed")
	f.BoolVarP(&cf.follow, "follow", "f", false,
		"keep waiting for new records instead of stopping at the end (until interrupted, or no broker answers for --timeout)")
	f.Int64Var(&cf.max, "max", 0, "stop after this many records (0: no limit)")
	f.StringVar(&cf.format, "format", defaultFormat, formatHelp)
	f.BoolVar(&cf.json, "json", false, jsonHelp)
	f.StringVar(&cf.isolation, "isolation", "read_uncommitted", "read_committed (skip aborted and open transactions) or read_uncommitted")
	cf.serde.register(f, false)
	return cmd
}

// startKind says how --from picks the first offset of a partition.
type startKind int

const (
	fromBeginning startKind = iota
	fromEnd
	fromOffset
	fromTimestamp
)

// startSpec is a parsed --from. value is the offset for fromOffset and the
// Unix millisecond for fromTimestamp.
type startSpec struct {
	kind  startKind
	value int64
}

func parseFrom(s string) (startSpec, error) {
	bad := func(why string) (startSpec, error) {
		return startSpec{}, fmt.Errorf("invalid --from %q: %s", s, why)
	}
	switch strings.ToLower(s) {
	case "beginning", "earliest":
		return startSpec{kind: fromBeginning}, nil
	case "end", "latest":
		return startSpec{kind: fromEnd}, nil
	}
	kind, arg, ok := strings.Cut(s, ":")
	if !ok {
		return bad("want beginning, end, offset:N or timestamp:RFC3339|ms")
	}
	switch strings.ToLower(kind) {
	case "offset":
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || n < 0 {
			return bad("the offset must be a non-negative integer")
		}
		return startSpec{kind: fromOffset, value: n}, nil
	case "timestamp":
		if ms, err := strconv.ParseInt(arg, 10, 64); err == nil {
			if ms < 0 {
				return bad("the timestamp must not be negative")
			}
			return startSpec{kind: fromTimestamp, value: ms}, nil
		}
		t, err := time.Parse(time.RFC3339Nano, arg)
		if err != nil {
			return bad("the timestamp must be RFC 3339 (2006-01-02T15:04:05Z) or Unix milliseconds")
		}
		return startSpec{kind: fromTimestamp, value: t.UnixMilli()}, nil
	}
	return bad("want beginning, end, offset:N or timestamp:RFC3339|ms")
}

// kgoOffset is the same start for the group consumer, which picks the offset
// of partitions without a commit itself.
func (s startSpec) kgoOffset() kgo.Offset {
	switch s.kind {
	case fromEnd:
		return kgo.NewOffset().AtEnd()
	case fromOffset:
		return kgo.NewOffset().At(s.value)
	case fromTimestamp:
		return kgo.NewOffset().AfterMilli(s.value)
	}
	return kgo.NewOffset().AtStart()
}

// parseIsolation reports the level and whether it is read_committed.
func parseIsolation(s string) (kgo.IsolationLevel, bool, error) {
	switch strings.ToLower(s) {
	case "read_uncommitted":
		return kgo.ReadUncommitted(), false, nil
	case "read_committed":
		return kgo.ReadCommitted(), true, nil
	}
	return kgo.IsolationLevel{}, false, fmt.Errorf("invalid --isolation %q: want read_committed or read_uncommitted", s)
}

// bounds are, per partition, the first offset the command reads and the end
// offset it stops before (without --follow).
type bounds struct {
	start map[int32]int64
	end   map[int32]int64
}

// resolveBounds lists the offsets --from and the end snapshot need. commits
// (group mode) override --from for the partitions that have one.
func resolveBounds(ctx context.Context, adm *kadm.Client, topic string, partitions []int32,
	spec startSpec, readCommitted bool, commits map[int32]int64) (bounds, error) {
	listEnd := adm.ListEndOffsets
	if readCommitted {
		listEnd = adm.ListCommittedOffsets // last stable offsets
	}
	ends, err := listOffsets(ctx, topic, partitions, listEnd)
	if err != nil {
		return bounds{}, err
	}
	logStarts, err := listOffsets(ctx, topic, partitions, adm.ListStartOffsets)
	if err != nil {
		return bounds{}, err
	}
	var byTime map[int32]int64
	if spec.kind == fromTimestamp {
		byTime, err = listOffsets(ctx, topic, partitions, func(ctx context.Context, topics ...string) (kadm.ListedOffsets, error) {
			return adm.ListOffsetsAfterMilli(ctx, spec.value, topics...)
		})
		if err != nil {
			return bounds{}, err
		}
	}
	b := bounds{start: map[int32]int64{}, end: ends}
	for _, p := range partitions {
		start := logStarts[p]
		switch {
		case hasKey(commits, p):
			start = max(commits[p], logStarts[p])
		case spec.kind == fromEnd:
			start = ends[p]
		case spec.kind == fromOffset:
			start = max(spec.value, logStarts[p])
		case spec.kind == fromTimestamp:
			start = byTime[p]
		}
		b.start[p] = start
	}
	return b, nil
}

func hasKey(m map[int32]int64, k int32) bool {
	_, ok := m[k]
	return ok
}

// listOffsets runs one kadm listing and keeps the partitions asked for.
func listOffsets(ctx context.Context, topic string, partitions []int32,
	list func(context.Context, ...string) (kadm.ListedOffsets, error)) (map[int32]int64, error) {
	listed, err := list(ctx, topic)
	if err != nil {
		return nil, err
	}
	out := make(map[int32]int64, len(partitions))
	for _, p := range partitions {
		lo, ok := listed.Lookup(topic, p)
		if !ok {
			return nil, fmt.Errorf("topic %q partition %d: no offset in the ListOffsets answer", topic, p)
		}
		if lo.Err != nil {
			return nil, topicErr(topic, lo.Err, "")
		}
		out[p] = lo.Offset
	}
	return out, nil
}

// endTracker knows which partitions have reached their end snapshot. In
// group mode only assigned partitions count, and nothing is finished before
// the first assignment. Group callbacks run on the client's goroutines, hence
// the mutex.
type endTracker struct {
	mu       sync.Mutex
	end      map[int32]int64
	reached  map[int32]bool
	assigned map[int32]bool // nil outside group mode
	onDone   func()
}

func newEndTracker(b bounds, groupMode bool, onDone func()) *endTracker {
	t := &endTracker{end: b.end, reached: map[int32]bool{}, onDone: onDone}
	for p, start := range b.start {
		t.reached[p] = start >= b.end[p]
	}
	if groupMode {
		t.assigned = map[int32]bool{}
	}
	return t
}

// pastEnd reports whether a record at offset is beyond the snapshot.
func (t *endTracker) pastEnd(p int32, offset int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return offset >= t.end[p]
}

// observe notes that offset of p was read; the last offset before the end
// finishes the partition. It reports whether this call finished it.
func (t *endTracker) observe(p int32, offset int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reached[p] || offset < t.end[p]-1 {
		return false
	}
	t.reached[p] = true
	t.checkLocked()
	return true
}

// assign adds or removes assigned partitions and returns those of ps that
// are already finished.
func (t *endTracker) assign(ps []int32, on bool) []int32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var reached []int32
	for _, p := range ps {
		if on {
			t.assigned[p] = true
		} else {
			delete(t.assigned, p)
		}
		if t.reached[p] {
			reached = append(reached, p)
		}
	}
	t.checkLocked()
	return reached
}

func (t *endTracker) checkLocked() {
	if t.doneLocked() {
		t.onDone()
	}
}

func (t *endTracker) done() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.doneLocked()
}

func (t *endTracker) doneLocked() bool {
	if t.assigned != nil {
		for p := range t.assigned {
			if !t.reached[p] {
				return false
			}
		}
		return true
	}
	for _, r := range t.reached {
		if !r {
			return false
		}
	}
	return true
}

// pending lists the partitions not yet at their end, for the idle error.
func (t *endTracker) pending() []int32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []int32
	for p, r := range t.reached {
		if !r && (t.assigned == nil || t.assigned[p]) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// consumer is one run of samsa consume.
type consumer struct {
	cmd      *cobra.Command
	conn     *connection
	flags    *consumeFlags
	topic    string
	cl       *kgo.Client
	tracker  *endTracker // nil with --follow
	out      *bufio.Writer
	format   *recordFormat
	enc      *recordJSONEncoder
	buf      []byte
	printed  int64
	writeErr error          // first failed write to stdout, or record that could not be decoded
	decoder  *recordDecoder // nil: keys and values are printed as they are
	trouble  *brokerTrouble // the last transport failure, for errors
	closing  atomic.Bool    // set once close has made the final commit
}

func runConsume(cmd *cobra.Command, conn *connection, cf *consumeFlags, topic string) error {
	spec, err := parseFrom(cf.from)
	if err != nil {
		return err
	}
	isolation, readCommitted, err := parseIsolation(cf.isolation)
	if err != nil {
		return err
	}
	if cf.max < 0 {
		return fmt.Errorf("invalid --max %d: must not be negative", cf.max)
	}
	if cf.json && cmd.Flags().Changed("format") {
		return errors.New("--json and --format cannot be used together")
	}
	if cf.group != "" && cf.partition >= 0 {
		return errors.New("--partition cannot be used with --group: the group assigns partitions")
	}
	if err := cf.serde.check(cmd.Flags().Changed); err != nil {
		return err
	}
	c := &consumer{cmd: cmd, conn: conn, flags: cf, topic: topic}
	if !cf.json {
		if c.format, err = parseFormat(cf.format); err != nil {
			return err
		}
	}

	sigCtx, stop := signalContext(cmd)
	defer stop()
	lostCtx, lose := context.WithCancelCause(sigCtx)
	defer lose(nil)
	pollCtx, finish := context.WithCancel(lostCtx)
	defer finish()

	b, partitions, err := c.plan(sigCtx, spec, readCommitted)
	if err != nil {
		return err
	}
	decCtx, cancelDec := conn.opContext(sigCtx)
	c.decoder, err = cf.serde.decoder(decCtx, topic, conn.timeout)
	cancelDec()
	if err != nil {
		return err
	}
	if !cf.follow {
		c.tracker = newEndTracker(b, cf.group != "", finish)
		if cf.group == "" && c.tracker.done() {
			fmt.Fprintf(cmd.ErrOrStderr(), "consumed 0 records\n")
			return nil
		}
	}

	c.trouble = &brokerTrouble{}
	opts := []kgo.Opt{
		kgo.FetchIsolationLevel(isolation),
		kgo.KeepControlRecords(),
		kgo.WithHooks(c.trouble),
	}
	if cf.group != "" {
		opts = append(opts, c.groupOpts(spec)...)
	} else {
		offsets := map[int32]kgo.Offset{}
		for _, p := range partitions {
			if cf.follow || b.start[p] < b.end[p] {
				offsets[p] = kgo.NewOffset().At(b.start[p])
			}
		}
		opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))
	}
	if c.cl, err = conn.client(cmd, opts...); err != nil {
		return err
	}
	// Without --follow every poll is bounded by --timeout; with it a poll
	// waits for new records as long as it takes, so a watch makes sure the
	// cluster is still there.
	watches := task.NewGroup(lostCtx)
	if cf.follow {
		watchContact(watches, conn.clock, conn.timeout, c.cl, func() { lose(errStalled) })
	}

	c.out = bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10)
	if cf.json {
		c.enc = newRecordJSONEncoder(c.out)
	}
	loopErr := c.loop(pollCtx)
	watches.Stop()
	if context.Cause(lostCtx) == errStalled {
		loopErr = fmt.Errorf("consume from topic %q: no broker answered for %s (--timeout)%s",
			topic, conn.timeout, lastTrouble(c.trouble))
	}
	flushErr := c.out.Flush()
	closeErr := c.close(cmd.Context())
	fmt.Fprintf(cmd.ErrOrStderr(), "consumed %d records\n", c.printed)
	return joinErrors([]error{loopErr, flushErr, closeErr})
}

// plan checks the topic and lists where every partition starts and ends.
func (c *consumer) plan(ctx context.Context, spec startSpec, readCommitted bool) (bounds, []int32, error) {
	cl, err := c.conn.client(c.cmd)
	if err != nil {
		return bounds{}, nil, err
	}
	adm := c.conn.adminFor(cl)
	defer adm.Close()
	ctx, cancel := c.conn.opContext(ctx)
	defer cancel()
	td, err := topicMetadata(ctx, adm, c.topic)
	if err != nil {
		return bounds{}, nil, c.conn.reachErr(c.cmd, err)
	}
	partitions := td.Partitions.Numbers()
	if c.flags.partition >= 0 {
		if err := checkPartition(td, c.flags.partition); err != nil {
			return bounds{}, nil, err
		}
		partitions = []int32{c.flags.partition}
	}
	var commits map[int32]int64
	if c.flags.group != "" {
		fetched, err := adm.FetchOffsetsForTopics(ctx, c.flags.group, c.topic)
		if errors.Is(err, kerr.GroupIDNotFound) {
			err = nil // a new group: no commits yet
		}
		if err != nil {
			return bounds{}, nil, fmt.Errorf("group %q: %s", c.flags.group, kafkaReason(c.conn.reachErr(c.cmd, err), ""))
		}
		commits = map[int32]int64{}
		for p, o := range fetched[c.topic] {
			if o.Err == nil && o.At >= 0 {
				commits[p] = o.At
			}
		}
	}
	b, err := resolveBounds(ctx, adm, c.topic, partitions, spec, readCommitted, commits)
	if err != nil {
		return bounds{}, nil, c.conn.reachErr(c.cmd, err)
	}
	return b, partitions, nil
}

// groupOpts joins the group. Assignment changes feed the end tracker so the
// command stops once the partitions it owns are read. Replacing the default
// revoke callback means committing there ourselves: marks exist only for
// printed records, so committing them is exactly what a rebalance needs.
func (c *consumer) groupOpts(spec startSpec) []kgo.Opt {
	track := func(cl *kgo.Client, ps map[string][]int32, on bool) {
		if c.tracker == nil {
			return
		}
		if reached := c.tracker.assign(ps[c.topic], on); on {
			c.pause(cl, reached...)
		}
	}
	return []kgo.Opt{
		kgo.ConsumerGroup(c.flags.group),
		kgo.ConsumeTopics(c.topic),
		kgo.ConsumeStartOffset(spec.kgoOffset()),
		kgo.AutoCommitMarks(),
		kgo.OnPartitionsAssigned(func(_ context.Context, cl *kgo.Client, ps map[string][]int32) {
			track(cl, ps, true)
		}),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, ps map[string][]int32) {
			// A failed commit here is retried by the final commit for the
			// partitions still owned; the others are the new owner's.
			// Leaving the group revokes everything, but close has
			// committed just before.
			if !c.closing.Load() {
				ctx, cancel := c.conn.opContext(ctx)
				_ = cl.CommitMarkedOffsets(ctx)
				cancel()
			}
			track(cl, ps, false)
		}),
		kgo.OnPartitionsLost(func(_ context.Context, cl *kgo.Client, ps map[string][]int32) {
			track(cl, ps, false)
		}),
	}
}

// pause stops fetching finished partitions. Besides saving the transfer of
// records past the end, it keeps a fetch from long-polling (fetch.max.wait)
// on a partition with nothing left while another partition, whose start
// offset the client resolved a moment later, has records waiting: a fetch
// already in flight does not pick up the late partition.
func (c *consumer) pause(cl *kgo.Client, ps ...int32) {
	if len(ps) > 0 {
		cl.PauseFetchPartitions(map[string][]int32{c.topic: ps})
	}
}

// loop polls until the end snapshot, --max, or an interrupt. Without
// --follow a poll that brings nothing for --timeout is an error: the end was
// listed, so records must be on their way.
func (c *consumer) loop(ctx context.Context) error {
	for ctx.Err() == nil {
		pollCtx, cancel := ctx, context.CancelFunc(func() {})
		if c.tracker != nil {
			pollCtx, cancel = context.WithTimeout(ctx, c.conn.timeout)
		}
		fetches := c.cl.PollFetches(pollCtx)
		idle := pollCtx.Err() != nil && ctx.Err() == nil
		cancel()
		var progressed, stop bool
		fetches.EachRecord(func(r *kgo.Record) {
			if stop || r.Topic != c.topic {
				return
			}
			progressed = true
			stop = c.handle(r)
		})
		if err := c.out.Flush(); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		if c.writeErr != nil {
			return c.writeErr
		}
		if stop {
			return nil
		}
		if err := c.fetchErr(fetches); err != nil {
			return err
		}
		if idle && !progressed {
			return fmt.Errorf("consume from topic %q: nothing read for %s (--timeout) before the end of partitions %v",
				c.topic, c.conn.timeout, c.tracker.pending())
		}
	}
	return nil
}

// handle prints one record and reports whether --max is reached.
func (c *consumer) handle(r *kgo.Record) bool {
	if c.tracker != nil {
		past := c.tracker.pastEnd(r.Partition, r.Offset)
		if c.tracker.observe(r.Partition, r.Offset) {
			c.pause(c.cl, r.Partition)
		}
		if past {
			return false
		}
	}
	if r.Attrs.IsControl() {
		return false
	}
	var key, value *decodedPart
	if c.decoder != nil {
		ctx, cancel := c.conn.opContext(c.cmd.Context())
		var err error
		key, value, err = c.decoder.decode(ctx, r)
		cancel()
		if err != nil {
			if c.writeErr == nil {
				c.writeErr = fmt.Errorf("consume from topic %q: %w", c.topic, err)
			}
			return true
		}
		if c.enc == nil {
			r = decodedRecord(r, key, value)
		}
	}
	if c.enc != nil {
		if err := c.enc.encodeDecoded(r, key, value); err != nil && c.writeErr == nil {
			c.writeErr = fmt.Errorf("write output: %w", err)
		}
	} else {
		c.buf = c.format.appendRecord(c.buf[:0], r)
		if _, err := c.out.Write(c.buf); err != nil && c.writeErr == nil {
			c.writeErr = fmt.Errorf("write output: %w", err)
		}
	}
	if c.flags.group != "" {
		c.cl.MarkCommitRecords(r)
	}
	c.printed++
	return c.flags.max > 0 && c.printed >= c.flags.max
}

// decodedRecord is r with its key and value replaced by their decoded
// JSON, for --format.
func decodedRecord(r *kgo.Record, key, value *decodedPart) *kgo.Record {
	cp := *r
	if key != nil {
		cp.Key = key.json
	}
	if value != nil {
		cp.Value = value.json
	}
	return &cp
}

// fetchErr returns the first fetch error worth stopping for. Context errors
// are how polls end; data loss is reported and consumption goes on, as the
// client already resumed at the nearest offset.
func (c *consumer) fetchErr(fetches kgo.Fetches) error {
	for _, fe := range fetches.Errors() {
		var loss *kgo.ErrDataLoss
		switch {
		case errors.Is(fe.Err, context.Canceled), errors.Is(fe.Err, context.DeadlineExceeded):
		case errors.As(fe.Err, &loss):
			fmt.Fprintf(c.cmd.ErrOrStderr(), "warning: %v\n", loss)
		case errors.Is(fe.Err, kgo.ErrClientClosed):
			return errors.New("consumer closed")
		default:
			if fe.Topic == "" {
				return c.conn.reachErr(c.cmd, fe.Err)
			}
			return fmt.Errorf("consume from topic %q partition %d: %s", fe.Topic, fe.Partition, kafkaReason(fe.Err, ""))
		}
	}
	return nil
}

// close commits the group's offsets for everything printed and closes the
// client, both within one --timeout. franz-go's commit waits for a commit
// already in flight (the periodic autocommit) whatever its context says, and
// Close leaves the group, which first waits for a join in flight: a
// coordinator that stopped answering holds either well past --timeout (a
// join for the group's rebalance timeout, a minute by default). So both run
// on a goroutine the command stops waiting for at the deadline; past it they
// go on without the command, which is about to exit, and the group forgets
// the member when its session times out, as it would after a crash.
func (c *consumer) close(ctx context.Context) error {
	if c.flags.group == "" {
		c.cl.Close()
		return nil
	}
	ctx, cancel := c.conn.opContext(ctx)
	defer cancel()
	committed := make(chan error, 1)
	closed := make(chan struct{})
	g := task.NewGroup(context.Background())
	g.Go(func(context.Context) {
		err := c.cl.CommitMarkedOffsets(ctx)
		c.closing.Store(true)
		committed <- err
		c.cl.Close()
		close(closed)
	})
	var err error
	select {
	case err = <-committed:
		select {
		case <-closed:
			g.Stop()
		case <-ctx.Done():
		}
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("group %q: commit offsets: %s", c.flags.group, kafkaReason(c.conn.reachErr(c.cmd, err), ""))
	}
	return nil
}
