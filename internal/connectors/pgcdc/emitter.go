package pgcdc

import (
	"time"

	"github.com/samsa-io/samsa/connect"
)

// emitter builds Debezium's records.
type emitter struct {
	s       *settings
	version string
	source  *connect.Schema
	beatKey *connect.Schema
	beatVal *connect.Schema
	now     func() time.Time
}

func newEmitter(s *settings, version string) *emitter {
	return &emitter{
		s: s, version: version, source: sourceSchema(), now: time.Now,
		beatKey: connect.NewStruct("io.debezium.connector.common.ServerNameKey").Version(1).Field("serverName", connect.StringSchema).MustBuild(),
		beatVal: connect.NewStruct("io.debezium.connector.common.Heartbeat").Version(1).Field("ts_ms", connect.Int64Schema).MustBuild(),
	}
}

// change is a change event: op c, u, d, r or t.
func (e *emitter) change(t *table, op string, key, before, after *connect.Struct, si sourceInfo, pos position) connect.SourceRecord {
	now := e.now()
	v := connect.NewStructValue(t.envelope)
	if before != nil {
		v.MustPut("before", before)
	}
	if after != nil {
		v.MustPut("after", after)
	}
	v.MustPut("source", e.sourceStruct(si)).
		MustPut("op", op).
		MustPut("ts_ms", now.UnixMilli()).
		MustPut("ts_us", now.UnixMicro()).
		MustPut("ts_ns", now.UnixNano())
	r := connect.SourceRecord{
		Record:          connect.Record{Topic: t.topic, ValueSchema: t.envelope, Value: v},
		SourcePartition: map[string]any{"server": e.s.prefix},
		SourceOffset:    pos.offset(),
	}
	if key != nil {
		r.KeySchema, r.Key = t.keySchema, key
	}
	return r
}

// tombstone follows a delete: the same key and offset, a null value.
func (e *emitter) tombstone(del connect.SourceRecord) connect.SourceRecord {
	r := del
	r.ValueSchema, r.Value, r.Headers = nil, nil, nil
	return r
}

// heartbeat is Debezium's heartbeat record, carrying a position.
func (e *emitter) heartbeat(pos position) connect.SourceRecord {
	return connect.SourceRecord{
		Record: connect.Record{
			Topic:     e.s.heartbeatTopic,
			KeySchema: e.beatKey, Key: connect.NewStructValue(e.beatKey).MustPut("serverName", e.s.prefix),
			ValueSchema: e.beatVal, Value: connect.NewStructValue(e.beatVal).MustPut("ts_ms", e.now().UnixMilli()),
		},
		SourcePartition: map[string]any{"server": e.s.prefix},
		SourceOffset:    pos.offset(),
	}
}
