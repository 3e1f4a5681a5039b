package datagen

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/clock"
)

// pcgStream is the second word of each record's PCG state; the first is the
// seed the offset carries.
const pcgStream = 0x5a3c_d47e_91b2_0f68

// maxBatch bounds one poll's records when no interval is asked for.
const maxBatch = 100

// maxWait is the longest a poll waits, so the runtime can commit and stop.
const maxWait = time.Second

// Task generates one quickstart's records. Each record is drawn from a
// random source seeded by the seed the previous record left; the seed
// after it, the record count and the task's generation are its source
// offset, so a restarted task continues the same sequence.
type Task struct {
	log       *slog.Logger
	clock     clock.Clock
	s         settings
	taskID    int32
	partition map[string]any

	generation int64 // this lifetime's, from the stored offset
	count      int64 // records made by this task over its lifetimes
	seed       int64 // the random source of the next record
	nextAt     time.Time
	finished   bool // iterations reached (logged once)
}

// NewTask makes a datagen task.
func NewTask() *Task { return &Task{clock: clock.Real} }

var _ connect.SourceTask = (*Task)(nil)

func (t *Task) Start(ctx connect.SourceTaskContext, props map[string]string) error {
	s, err := parseSettings(props)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(props[TaskIDConfig], 10, 32)
	if err != nil || id < 0 {
		return fmt.Errorf("datagen: the task config's %s %q is not a task number", TaskIDConfig, props[TaskIDConfig])
	}
	t.log, t.s, t.taskID = ctx.Logger(), s, int32(id)
	t.partition = map[string]any{TaskIDConfig: t.taskID}
	t.seed = initialSeed(s.seed, t.taskID)
	offset, err := ctx.Offset(t.partition)
	if err != nil {
		return fmt.Errorf("datagen: read the stored offset of task %d: %w", id, err)
	}
	if offset != nil {
		return t.restore(offset)
	}
	return nil
}

// initialSeed gives each task its own sequence: from random.seed, advanced
// once per task before it (Confluent's scheme), or random without one.
func initialSeed(seed *int64, taskID int32) int64 {
	if seed == nil {
		return rand.Int64()
	}
	s := *seed
	for range taskID {
		s = int64(rand.New(rand.NewPCG(uint64(s), pcgStream)).Uint64())
	}
	return s
}

// restore takes the stored offset: the state the task would have next.
func (t *Task) restore(offset map[string]any) error {
	for _, f := range []struct {
		name string
		into *int64
	}{{TaskGenerationField, &t.generation}, {CurrentIterationField, &t.count}, {RandomSeedField, &t.seed}} {
		v, ok := offset[f.name].(int64)
		if !ok {
			return fmt.Errorf("datagen: the stored offset of task %d has %s %v (%T), not a Long", t.taskID, f.name, offset[f.name], offset[f.name])
		}
		*f.into = v
	}
	t.log.Info("datagen: continuing from the stored offset", "task", t.taskID, "count", t.count, "generation", t.generation)
	return nil
}

// Poll makes the next record after a random wait below max.interval, or up
// to maxBatch records at once when max.interval is 0. After iterations
// records it makes no more.
func (t *Task) Poll(ctx context.Context) ([]connect.SourceRecord, error) {
	if t.s.iterations > 0 && t.count >= t.s.iterations {
		t.finish(ctx)
		return nil, nil
	}
	if t.s.maxInterval > 0 {
		if !t.due(ctx) {
			return nil, nil
		}
		return []connect.SourceRecord{t.next()}, nil
	}
	var out []connect.SourceRecord
	for len(out) < maxBatch && (t.s.iterations < 1 || t.count < t.s.iterations) {
		out = append(out, t.next())
	}
	return out, nil
}

func (t *Task) finish(ctx context.Context) {
	if !t.finished {
		t.finished = true
		t.log.Info(fmt.Sprintf("datagen: generated the configured %d number of messages; the task makes no more", t.s.iterations), "task", t.taskID)
	}
	sleep(ctx, maxWait)
}

// due waits for the next record's time, at most maxWait.
func (t *Task) due(ctx context.Context) bool {
	now := t.clock.Now()
	if t.nextAt.IsZero() {
		// The wait is not drawn from the seeded source, as in Confluent's
		// task: the data repeats, the timing need not.
		t.nextAt = now.Add(time.Duration(rand.Int64N(int64(t.s.maxInterval))))
	}
	if wait := t.nextAt.Sub(now); wait > 0 {
		sleep(ctx, min(wait, maxWait))
		if t.clock.Now().Before(t.nextAt) {
			return false
		}
	}
	t.nextAt = time.Time{}
	return true
}

func sleep(ctx context.Context, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
}

// next makes a record and moves the state on.
func (t *Task) next() connect.SourceRecord {
	r := rand.New(rand.NewPCG(uint64(t.seed), pcgStream))
	value := t.s.quickstart.generate(r, t.count)
	nextSeed := int64(r.Uint64())
	field, _ := t.s.quickstart.schema.Field(t.s.keyField)
	key, _ := value.Get(t.s.keyField)
	rec := connect.SourceRecord{
		Record: connect.Record{
			Topic:       t.s.topic,
			KeySchema:   field.Schema,
			Key:         key,
			ValueSchema: t.s.quickstart.schema,
			Value:       value,
			Headers: connect.Headers{
				{Key: TaskGenerationField, Schema: connect.Int64Schema, Value: t.generation},
				{Key: TaskIDConfig, Schema: connect.Int64Schema, Value: int64(t.taskID)},
				{Key: CurrentIterationField, Schema: connect.Int64Schema, Value: t.count},
			},
		},
		SourcePartition: t.partition,
		SourceOffset: map[string]any{
			TaskGenerationField:   t.generation + 1,
			CurrentIterationField: t.count + 1,
			RandomSeedField:       nextSeed,
		},
	}
	t.seed = nextSeed
	t.count++
	return rec
}

func (t *Task) Stop() error { return nil }
