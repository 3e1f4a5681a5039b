package s3sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// The user metadata every object carries: the commit it belongs to. A
// commit is the set of files one rotation of a Kafka partition writes
// (one per encoded partition); recovery reads it to tell a whole commit
// from one cut short by a crash.
const (
	metaCommitStart = "kafka-commit-start-offset"
	metaCommitEnd   = "kafka-commit-end-offset"
	metaCommitFiles = "kafka-commit-files"
)

// partitionWriter writes one Kafka partition's records into files, as
// Confluent's TopicPartitionWriter: one open file per encoded partition,
// all of them committed together when a rotation condition holds.
type partitionWriter struct {
	tp    connect.TopicPartition
	cfg   *config
	store *store
	log   *slog.Logger

	files       map[string]*openFile // by encoded partition
	order       []string             // encoded partitions in the order files were opened
	recordCount int64
	baseTime    int64 // the first record's time (rotate.interval.ms); valid when recordCount > 0
	lastEncoded string
	lastOffset  int64
	schema      *connect.Schema // the open files' value schema (Avro, Parquet)

	// sealed is a commit whose files are finished but not all uploaded; it
	// is retried before anything else happens to the partition.
	sealed *sealedCommit
	// committed is the offset after the last committed file (what
	// PreCommit returns), -1 while unknown.
	committed int64
	// nextOffset is the next offset this writer takes: records below it are
	// already in an open, sealed or committed file and are dropped when the
	// runtime delivers them again (a retried Put, a replay after a seek).
	nextOffset    int64
	nextScheduled time.Time
}

type openFile struct {
	key        string
	start, end int64 // first and last offset written
	records    int64
	enc        fileEncoder
}

type sealedCommit struct {
	start, end int64
	objects    []sealedObject
}

type sealedObject struct {
	key        string
	body       []byte
	start, end int64 // s3.object.tagging's startOffset and endOffset
	records    int64
	uploaded   bool
}

func newPartitionWriter(tp connect.TopicPartition, cfg *config, st *store, log *slog.Logger, now time.Time) *partitionWriter {
	w := &partitionWriter{tp: tp, cfg: cfg, store: st, log: log, files: map[string]*openFile{}, committed: -1, nextOffset: -1}
	w.scheduleNext(now)
	return w
}

// put takes one record. Errors wrapping errRecord or errPartition are the
// record's; the others are the store's (retriable).
func (w *partitionWriter) put(ctx context.Context, r *connect.SinkRecord, now time.Time) error {
	if err := w.uploadSealed(ctx); err != nil {
		return err
	}
	off := r.Offset()
	if off < w.nextOffset {
		return nil
	}
	if r.Value == nil {
		if w.cfg.nullValues == "ignore" {
			w.nextOffset = off + 1
			return nil
		}
		return fmt.Errorf("%w at offset %d of %s-%d: null value (behavior.on.null.values=fail)", errRecord, off, w.tp.Topic, w.tp.Partition)
	}
	var ts int64
	if w.cfg.rotateInterval > 0 {
		var err error
		if ts, err = w.cfg.extractor.extract(r, now); err != nil {
			return err
		}
	}
	encoded, err := w.cfg.partitioner.encodePartition(r, now)
	if err != nil {
		return err
	}
	if w.rotateBeforeWrite(r, encoded, ts, now) {
		if err := w.commit(ctx, now); err != nil {
			return err
		}
	}
	if err := w.write(r, encoded); err != nil {
		return err
	}
	if w.recordCount == 1 {
		w.baseTime = ts
	}
	if w.recordCount >= w.cfg.flushSize {
		return w.commit(ctx, now)
	}
	return nil
}

// rotateBeforeWrite is Confluent's rotation before a record is written: a
// new schema, rotate.interval.ms passed in record time or a new encoded
// partition (with rotate.interval.ms set), rotate.schedule.interval.ms
// reached.
func (w *partitionWriter) rotateBeforeWrite(r *connect.SinkRecord, encoded string, ts int64, now time.Time) bool {
	if w.recordCount == 0 {
		return false
	}
	if w.cfg.schemaBound() && !w.schema.Equal(r.ValueSchema) {
		return true
	}
	if w.cfg.rotateInterval > 0 && (ts-w.baseTime >= w.cfg.rotateInterval || encoded != w.lastEncoded) {
		return true
	}
	return w.scheduleDue(now)
}

func (w *partitionWriter) write(r *connect.SinkRecord, encoded string) error {
	f, ok := w.files[encoded]
	if !ok {
		enc, err := w.cfg.newEncoder(r.ValueSchema)
		if err != nil {
			return err
		}
		f = &openFile{key: w.fileKey(encoded, r.Offset()), start: r.Offset(), enc: enc}
	}
	if err := f.enc.write(r); err != nil {
		return err
	}
	f.end, f.records = r.Offset(), f.records+1
	if !ok {
		w.files[encoded] = f
		w.order = append(w.order, encoded)
	}
	if w.recordCount == 0 {
		w.schema = r.ValueSchema
	}
	w.recordCount++
	w.lastEncoded = encoded
	w.lastOffset = r.Offset()
	w.nextOffset = r.Offset() + 1
	return nil
}

// fileKey is Confluent's object key:
// <topics.dir>/<topic>/<encoded partition>/<topic>+<partition>+<start offset, 10 digits><ext>.
func (w *partitionWriter) fileKey(encoded string, start int64) string {
	name := fmt.Sprintf("%s%s%d%s%010d%s", w.tp.Topic, w.cfg.fileDelim, w.tp.Partition, w.cfg.fileDelim, start, w.cfg.extension())
	return w.dirPrefix() + encoded + w.cfg.dirDelim + name
}

// dirPrefix is where every file of the topic lives.
func (w *partitionWriter) dirPrefix() string {
	if w.cfg.topicsDir == "" {
		return w.tp.Topic + w.cfg.dirDelim
	}
	return w.cfg.topicsDir + w.cfg.dirDelim + w.tp.Topic + w.cfg.dirDelim
}

// commit finishes the open files and uploads them; the offset to commit
// moves only once every file of the commit is in the store.
func (w *partitionWriter) commit(ctx context.Context, now time.Time) error {
	if w.recordCount == 0 {
		return nil
	}
	sc := &sealedCommit{end: w.lastOffset, start: w.lastOffset}
	for _, encoded := range w.order {
		f := w.files[encoded]
		body, err := f.enc.finish()
		if err != nil {
			return err
		}
		sc.start = min(sc.start, f.start)
		sc.objects = append(sc.objects, sealedObject{key: f.key, body: body, start: f.start, end: f.end, records: f.records})
	}
	w.files, w.order, w.recordCount, w.schema = map[string]*openFile{}, nil, 0, nil
	w.sealed = sc
	w.scheduleNext(now)
	return w.uploadSealed(ctx)
}

func (w *partitionWriter) uploadSealed(ctx context.Context) error {
	sc := w.sealed
	if sc == nil {
		return nil
	}
	meta := map[string]string{
		metaCommitStart: strconv.FormatInt(sc.start, 10),
		metaCommitEnd:   strconv.FormatInt(sc.end, 10),
		metaCommitFiles: strconv.Itoa(len(sc.objects)),
	}
	for i := range sc.objects {
		o := &sc.objects[i]
		if o.uploaded {
			continue
		}
		if err := w.store.put(ctx, o.key, o.body, meta, w.objectTags(o)); err != nil {
			return connect.Retriable(err)
		}
		o.uploaded = true
	}
	w.sealed = nil
	w.committed = sc.end + 1
	w.log.Debug("files committed", "topic", w.tp.Topic, "partition", w.tp.Partition, "files", len(sc.objects), "next_offset", w.committed)
	return nil
}

// tick retries a sealed commit and applies rotate.schedule.interval.ms
// without a record (Confluent checks it on every put, empty or not).
func (w *partitionWriter) tick(ctx context.Context, now time.Time) error {
	if err := w.uploadSealed(ctx); err != nil {
		return err
	}
	if w.recordCount > 0 && w.scheduleDue(now) {
		return w.commit(ctx, now)
	}
	if w.recordCount == 0 && w.scheduleDue(now) {
		w.scheduleNext(now)
	}
	return nil
}

func (w *partitionWriter) scheduleDue(now time.Time) bool {
	return w.cfg.rotateSchedule > 0 && !now.Before(w.nextScheduled)
}

// scheduleNext sets the next scheduled rotation: the first multiple of
// rotate.schedule.interval.ms after now, counted from local midnight.
func (w *partitionWriter) scheduleNext(now time.Time) {
	if w.cfg.rotateSchedule <= 0 {
		return
	}
	local := now.In(w.cfg.location)
	midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, w.cfg.location)
	interval := time.Duration(w.cfg.rotateSchedule) * time.Millisecond
	w.nextScheduled = midnight.Add((now.Sub(midnight)/interval + 1) * interval)
}

// recover finds where the store says this partition stands: the offset
// after the last whole commit. The files of a commit cut short by a crash
// (fewer files than its metadata counts) are deleted, so that replaying
// from that commit's start writes each record into exactly one object.
// It returns -1 when the store has no file of the partition.
func (w *partitionWriter) recover(ctx context.Context) (int64, error) {
	prefix := w.dirPrefix()
	if err := w.store.abortStaleUploads(ctx, prefix, func(k string) bool { _, ok := w.startOffsetOf(k); return ok }); err != nil {
		w.log.Warn("cannot list unfinished uploads; they stay invisible", "prefix", prefix, "error", err)
	}
	keys, err := w.store.list(ctx, prefix)
	if err != nil {
		return -1, err
	}
	files := w.ourFiles(keys)
	for len(files) > 0 {
		last := files[len(files)-1]
		meta, err := w.store.metadata(ctx, last.key)
		if err != nil {
			return -1, err
		}
		start, end, count, ok := commitOf(meta)
		if !ok {
			w.log.Warn("newest file carries no commit metadata (not written by this sink); resuming from the consumer's committed offset", "key", last.key)
			return -1, nil
		}
		var inCommit []fileAt
		for _, f := range files {
			if f.start >= start {
				inCommit = append(inCommit, f)
			}
		}
		if len(inCommit) >= count {
			w.committed, w.nextOffset = end+1, end+1
			return end + 1, nil
		}
		w.log.Warn("deleting the files of a commit cut short", "topic", w.tp.Topic, "partition", w.tp.Partition,
			"commit_start", start, "files_found", len(inCommit), "files_expected", count)
		for _, f := range inCommit {
			if err := w.store.delete(ctx, f.key); err != nil {
				return -1, err
			}
		}
		files = files[:len(files)-len(inCommit)]
	}
	return -1, nil
}

type fileAt struct {
	key   string
	start int64
}

// ourFiles picks this partition's files from keys, by start offset.
func (w *partitionWriter) ourFiles(keys []string) []fileAt {
	var files []fileAt
	for _, k := range keys {
		if start, ok := w.startOffsetOf(k); ok {
			files = append(files, fileAt{key: k, start: start})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].start < files[j].start })
	return files
}

// startOffsetOf parses <topic>+<partition>+<offset><ext> from a key's last
// element.
func (w *partitionWriter) startOffsetOf(key string) (int64, bool) {
	name := key[strings.LastIndex(key, w.cfg.dirDelim)+len(w.cfg.dirDelim):]
	prefix := w.tp.Topic + w.cfg.fileDelim + strconv.Itoa(int(w.tp.Partition)) + w.cfg.fileDelim
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || (n < len(rest) && rest[n] != '.') {
		return 0, false
	}
	off, err := strconv.ParseInt(rest[:n], 10, 64)
	return off, err == nil
}

func commitOf(meta map[string]string) (start, end int64, files int, ok bool) {
	get := func(k string) (int64, bool) {
		for mk, v := range meta {
			if strings.EqualFold(mk, k) {
				n, err := strconv.ParseInt(v, 10, 64)
				return n, err == nil
			}
		}
		return 0, false
	}
	start, ok1 := get(metaCommitStart)
	end, ok2 := get(metaCommitEnd)
	n, ok3 := get(metaCommitFiles)
	return start, end, int(n), ok1 && ok2 && ok3 && n > 0
}

// isRecordError reports whether err is the record's fault (to the errant
// record reporter) rather than the store's.
func isRecordError(err error) bool {
	return errors.Is(err, errRecord) || errors.Is(err, errPartition)
}
