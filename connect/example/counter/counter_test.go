package counter

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/connect"
)

// taskContext is a SourceTaskContext with one stored offset.
type taskContext struct{ offsets map[int64]map[string]any }

func (c taskContext) Offset(p map[string]any) (map[string]any, error) {
	return c.offsets[p["task"].(int64)], nil
}
func (c taskContext) Config() map[string]string { return nil }
func (c taskContext) Logger() *slog.Logger      { return slog.New(slog.DiscardHandler) }

func TestConfig(t *testing.T) {
	cases := []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"topic": "t"}, ""},
		{map[string]string{}, `Missing required configuration "topic" which has no default value.`},
		{map[string]string{"topic": ""}, "Invalid value  for configuration topic: String must be non-empty"},
		{map[string]string{"topic": "t", "batch.size": "0"}, "Invalid value 0 for configuration batch.size: Value must be at least 1"},
		{map[string]string{"topic": "t", "interval.ms": "-1"}, "Invalid value -1 for configuration interval.ms: Value must be at least 0"},
	}
	for _, tc := range cases {
		err := (&Connector{}).Start(nil, tc.props)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("Start(%v) = %q, want %q", tc.props, got, tc.want)
		}
	}
	c := &Connector{}
	for raw, bad := range map[string]bool{"-1": false, "5": false, "0": true, "-2": true, "x": false} {
		got := c.Validate(map[string]string{"limit": raw})
		if bad != (len(got) == 1 && strings.Contains(got[0].Errors[0], "Value must be -1 or positive")) {
			t.Errorf("Validate(limit=%s) = %+v", raw, got)
		}
	}
}

func TestTaskConfigs(t *testing.T) {
	c := &Connector{}
	if err := c.Start(nil, map[string]string{"topic": "t"}); err != nil {
		t.Fatal(err)
	}
	cfgs, err := c.TaskConfigs(3)
	if err != nil || len(cfgs) != 3 {
		t.Fatalf("TaskConfigs = %v, %v", cfgs, err)
	}
	for i, cfg := range cfgs {
		if cfg["topic"] != "t" || cfg[taskIDConfig] != string(rune('0'+i)) {
			t.Errorf("task %d config %v", i, cfg)
		}
	}
}

func TestTaskResumesAfterItsOffsetAndStopsAtTheLimit(t *testing.T) {
	task := &Task{}
	ctx := taskContext{offsets: map[int64]map[string]any{1: {"count": int64(6)}}}
	if err := task.Start(ctx, map[string]string{"topic": "t", "interval.ms": "0", "batch.size": "3", "limit": "10", taskIDConfig: "1"}); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for range 3 {
		recs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if !reflect.DeepEqual(r.SourcePartition, map[string]any{"task": int64(1)}) || r.Topic != "t" || r.Key != "task-1" {
				t.Fatalf("record %+v", r)
			}
			if err := connect.Validate(r.ValueSchema, r.Value); err != nil {
				t.Fatal(err)
			}
			n, _ := r.Value.(*connect.Struct).Get("count")
			if n != r.SourceOffset["count"] {
				t.Fatalf("value %v, offset %v", r.Value, r.SourceOffset)
			}
			got = append(got, n.(int64))
		}
	}
	if !reflect.DeepEqual(got, []int64{7, 8, 9}) {
		t.Errorf("counts %v, want 7 8 9 (after the offset 6, below the limit 10)", got)
	}
}

func TestAlterOffsets(t *testing.T) {
	c := &Connector{}
	cases := []struct {
		offsets []connect.SourcePartitionOffset
		want    string
	}{
		{[]connect.SourcePartitionOffset{{Partition: map[string]any{"task": int64(0)}, Offset: map[string]any{"count": int64(3)}}}, ""},
		{[]connect.SourcePartitionOffset{{Partition: map[string]any{"task": int64(0)}}}, ""},
		{[]connect.SourcePartitionOffset{{Partition: map[string]any{"file": "x"}}}, `source partition map[file:x] has no "task"`},
		{[]connect.SourcePartitionOffset{{Partition: map[string]any{"task": int64(0)}, Offset: map[string]any{"count": "3"}}}, `offset map[count:3]: "count" must be an integer >= 0`},
		{[]connect.SourcePartitionOffset{{Partition: map[string]any{"task": int64(0)}, Offset: map[string]any{"count": int64(-1)}}}, `offset map[count:-1]: "count" must be an integer >= 0`},
	}
	for _, tc := range cases {
		done, err := c.AlterOffsets(nil, tc.offsets)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want || done != (tc.want == "") {
			t.Errorf("AlterOffsets(%v) = %v, %q; want %q", tc.offsets, done, got, tc.want)
		}
	}
}
