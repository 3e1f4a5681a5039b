package config

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestApplyIncremental(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := []struct {
		name    string
		c       *Catalog
		current map[string]string
		ops     []AlterOp
		want    map[string]string
		wantErr error
	}{
		{"set", Topic, nil, []AlterOp{{Name: "retention.ms", Op: OpSet, Value: s("1000")}},
			map[string]string{"retention.ms": "1000"}, nil},
		{"set replaces", Topic, map[string]string{"retention.ms": "5"}, []AlterOp{{Name: "retention.ms", Op: OpSet, Value: s("6")}},
			map[string]string{"retention.ms": "6"}, nil},
		{"delete", Topic, map[string]string{"retention.ms": "5", "segment.ms": "9"}, []AlterOp{{Name: "retention.ms", Op: OpDelete}},
			map[string]string{"segment.ms": "9"}, nil},
		{"delete absent", Topic, nil, []AlterOp{{Name: "retention.ms", Op: OpDelete}}, map[string]string{}, nil},
		{"append to default", Topic, nil, []AlterOp{{Name: "cleanup.policy", Op: OpAppend, Value: s("compact")}},
			map[string]string{"cleanup.policy": "delete,compact"}, nil},
		{"append present item", Topic, map[string]string{"cleanup.policy": "compact"}, []AlterOp{{Name: "cleanup.policy", Op: OpAppend, Value: s("compact")}},
			map[string]string{"cleanup.policy": "compact"}, nil},
		{"append to empty list", Topic, map[string]string{"cleanup.policy": ""},
			[]AlterOp{{Name: "cleanup.policy", Op: OpAppend, Value: s("compact,delete")}},
			map[string]string{"cleanup.policy": "compact,delete"}, nil},
		{"subtract", Topic, map[string]string{"cleanup.policy": "compact,delete"},
			[]AlterOp{{Name: "cleanup.policy", Op: OpSubtract, Value: s("compact")}},
			map[string]string{"cleanup.policy": "delete"}, nil},
		{"subtract from default leaves empty", Topic, nil, []AlterOp{{Name: "cleanup.policy", Op: OpSubtract, Value: s("delete")}},
			map[string]string{"cleanup.policy": ""}, nil},
		{"subtract absent item", Topic, map[string]string{"cleanup.policy": "compact"}, []AlterOp{{Name: "cleanup.policy", Op: OpSubtract, Value: s("delete")}},
			map[string]string{"cleanup.policy": "compact"}, nil},
		{"several ops", Topic, map[string]string{"retention.ms": "5"}, []AlterOp{
			{Name: "retention.ms", Op: OpDelete},
			{Name: "segment.bytes", Op: OpSet, Value: s("2097152")},
			{Name: "cleanup.policy", Op: OpAppend, Value: s("compact")},
		}, map[string]string{"segment.bytes": "2097152", "cleanup.policy": "delete,compact"}, nil},
		{"broker append list", Broker, nil, []AlterOp{{Name: "group.consumer.assignors", Op: OpAppend, Value: s("custom")}},
			map[string]string{"group.consumer.assignors": "uniform,range,custom"}, nil},
		{"unsupported at its default", Topic, nil, []AlterOp{{Name: "preallocate", Op: OpSet, Value: s("false")}},
			map[string]string{"preallocate": "false"}, nil},
		{"unsupported", Topic, nil, []AlterOp{{Name: "remote.storage.enable", Op: OpSet, Value: s("true")}}, nil, ErrNotSupported},
		{"unsupported appended", Broker, nil, []AlterOp{{Name: "metric.reporters", Op: OpAppend, Value: s("com.example.Reporter")}}, nil, ErrNotSupported},
		{"delete unsupported", Topic, map[string]string{"remote.storage.enable": "true"}, []AlterOp{{Name: "remote.storage.enable", Op: OpDelete}},
			map[string]string{}, nil},
		{"append to non-list", Topic, nil, []AlterOp{{Name: "retention.ms", Op: OpAppend, Value: s("1")}}, nil, ErrInvalidValue},
		{"subtract from non-list", Topic, nil, []AlterOp{{Name: "compression.type", Op: OpSubtract, Value: s("lz4")}}, nil, ErrInvalidValue},
		{"append invalid item", Topic, nil, []AlterOp{{Name: "cleanup.policy", Op: OpAppend, Value: s("forever")}}, nil, ErrInvalidValue},
		{"set invalid value", Topic, nil, []AlterOp{{Name: "segment.bytes", Op: OpSet, Value: s("10")}}, nil, ErrInvalidValue},
		{"unknown config", Topic, nil, []AlterOp{{Name: "log.retention.ms", Op: OpSet, Value: s("1")}}, nil, ErrUnknownConfig},
		{"duplicate keys", Topic, nil, []AlterOp{
			{Name: "retention.ms", Op: OpSet, Value: s("1")},
			{Name: "retention.ms", Op: OpDelete},
		}, nil, ErrInvalidRequest},
		{"null value for set", Topic, nil, []AlterOp{{Name: "retention.ms", Op: OpSet}}, nil, ErrInvalidRequest},
		{"unknown op", Topic, nil, []AlterOp{{Name: "retention.ms", Op: 9, Value: s("1")}}, nil, ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before map[string]string
			if tt.current != nil {
				before = map[string]string{}
				for k, v := range tt.current {
					before[k] = v
				}
			}
			got, err := tt.c.ApplyIncremental(tt.current, tt.ops)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if tt.current != nil && !cmp.Equal(before, tt.current) {
				t.Error("ApplyIncremental modified current")
			}
		})
	}
}
