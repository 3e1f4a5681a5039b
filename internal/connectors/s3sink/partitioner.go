package s3sink

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	// Time zones by IANA name must work in a container without zoneinfo:
	// path.format directories depend on them.
	_ "time/tzdata"

	"github.com/samsa-io/samsa/connect"
)

// errPartition marks a record a partitioner or extractor cannot place
// (Confluent's PartitionException): the record's fault, not the store's, so
// it goes to the errant record reporter when there is one.
var errPartition = errors.New("s3sink: cannot partition record")

// partitioner names the directory (the "encoded partition") a record's file
// lives in, as Confluent's storage-common partitioners do.
type partitioner interface {
	encodePartition(r *connect.SinkRecord, now time.Time) (string, error)
}

func newPartitioner(c connect.Config, dirDelim string, ex timestampExtractor) (partitioner, error) {
	switch class := c.String(cfgPartitionerClass); class {
	case partitionerDefault:
		return defaultPartitioner{}, nil
	case partitionerField:
		fields := c.List(cfgPartitionField)
		if len(fields) == 0 {
			return nil, fmt.Errorf("Invalid value for configuration %s: FieldPartitioner needs at least one field", cfgPartitionField)
		}
		return fieldPartitioner{fields: fields, delim: dirDelim}, nil
	case partitionerHourly:
		return newTimeBased(c, "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", time.Hour.Milliseconds(), dirDelim, ex)
	case partitionerDaily:
		return newTimeBased(c, "'year'=YYYY/'month'=MM/'day'=dd", 24*time.Hour.Milliseconds(), dirDelim, ex)
	default:
		return newTimeBased(c, c.String(cfgPathFormat), c.Int(cfgPartitionDur), dirDelim, ex)
	}
}

// defaultPartitioner is Confluent's DefaultPartitioner: partition=<N>.
type defaultPartitioner struct{}

func (defaultPartitioner) encodePartition(r *connect.SinkRecord, _ time.Time) (string, error) {
	return "partition=" + strconv.Itoa(int(topicPartitionOf(r).Partition)), nil
}

// fieldPartitioner is Confluent's FieldPartitioner: <field>=<value> per
// field, joined by directory.delim.
type fieldPartitioner struct {
	fields []string
	delim  string
}

func (p fieldPartitioner) encodePartition(r *connect.SinkRecord, _ time.Time) (string, error) {
	parts := make([]string, 0, len(p.fields))
	for _, name := range p.fields {
		v, err := fieldValue(r, name)
		if err != nil {
			return "", err
		}
		s, err := partitionValue(name, v)
		if err != nil {
			return "", err
		}
		parts = append(parts, name+"="+s)
	}
	return strings.Join(parts, p.delim), nil
}

// partitionValue renders the types Confluent's FieldPartitioner accepts:
// integers, strings and booleans.
func partitionValue(name string, v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "null", nil
	case int8, int16, int32, int64, bool:
		return fmt.Sprint(x), nil
	case string:
		return x, nil
	}
	return "", fmt.Errorf("%w: field %s has type %T, not an integer, string or boolean", errPartition, name, v)
}

// fieldValue finds a dotted field in a Struct or schemaless map value.
func fieldValue(r *connect.SinkRecord, path string) (any, error) {
	v := r.Value
	for _, name := range strings.Split(path, ".") {
		switch x := v.(type) {
		case *connect.Struct:
			f, ok := x.Schema().Field(name)
			if !ok {
				return nil, fmt.Errorf("%w: field %s is not in the value's schema", errPartition, path)
			}
			v = x.GetField(f)
		case map[string]any:
			v = x[name]
		case nil:
			return nil, nil
		default:
			return nil, fmt.Errorf("%w: the value (%T) is not a struct or map, so it has no field %s", errPartition, r.Value, path)
		}
	}
	return v, nil
}

// timeBasedPartitioner is Confluent's TimeBasedPartitioner: the record's
// time, floored to partition.duration.ms in the time zone, formatted by
// path.format.
type timeBasedPartitioner struct {
	durationMs int64
	loc        *time.Location
	format     *jodaFormat
	extractor  timestampExtractor
}

func newTimeBased(c connect.Config, pathFormat string, durationMs int64, dirDelim string, ex timestampExtractor) (partitioner, error) {
	if durationMs <= 0 {
		return nil, fmt.Errorf("Invalid value %d for configuration %s: Partition duration needs to be a positive.", durationMs, cfgPartitionDur)
	}
	pathFormat = strings.TrimSuffix(pathFormat, dirDelim)
	if strings.TrimSpace(pathFormat) == "" {
		return nil, fmt.Errorf("Invalid value for configuration %s: Path format cannot be empty.", cfgPathFormat)
	}
	locale := c.String(cfgLocale)
	if locale == "" {
		return nil, fmt.Errorf("Invalid value for configuration %s: Locale cannot be empty.", cfgLocale)
	}
	tz := c.String(cfgTimezone)
	if tz == "" {
		return nil, fmt.Errorf("Invalid value for configuration %s: Timezone cannot be empty.", cfgTimezone)
	}
	loc, err := loadLocation(tz)
	if err != nil {
		return nil, err
	}
	f, err := parseJodaFormat(pathFormat, locale)
	if err != nil {
		return nil, fmt.Errorf("Invalid value %s for configuration %s: %w", pathFormat, cfgPathFormat, err)
	}
	return &timeBasedPartitioner{durationMs: durationMs, loc: loc, format: f, extractor: ex}, nil
}

func (p *timeBasedPartitioner) encodePartition(r *connect.SinkRecord, now time.Time) (string, error) {
	ts, err := p.extractor.extract(r, now)
	if err != nil {
		return "", err
	}
	return p.format.format(bucketStart(ts, p.durationMs, p.loc)), nil
}

// bucketStart floors ts to a multiple of durationMs counted in local time
// (so daily buckets start at local midnight), as Confluent's getPartition.
func bucketStart(ts int64, durationMs int64, loc *time.Location) time.Time {
	_, offset := time.UnixMilli(ts).In(loc).Zone()
	local := ts + int64(offset)*1000
	floored := local / durationMs * durationMs // truncation toward zero, as Java's
	// Turn the local wall time back into an instant in loc.
	w := time.UnixMilli(floored).UTC()
	return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc)
}

// timestampExtractor gives a record's time in epoch milliseconds.
type timestampExtractor interface {
	extract(r *connect.SinkRecord, now time.Time) (int64, error)
}

func newTimestampExtractor(c connect.Config) (timestampExtractor, error) {
	switch c.String(cfgTSExtractor) {
	case "Record":
		return recordTime{}, nil
	case "RecordField":
		return recordFieldTime{field: c.String(cfgTSField)}, nil
	}
	return wallclockTime{}, nil
}

type wallclockTime struct{}

func (wallclockTime) extract(_ *connect.SinkRecord, now time.Time) (int64, error) {
	return now.UnixMilli(), nil
}

type recordTime struct{}

func (recordTime) extract(r *connect.SinkRecord, _ time.Time) (int64, error) {
	if r.Timestamp.IsZero() {
		return 0, fmt.Errorf("%w: the record at offset %d has no timestamp", errPartition, r.Offset())
	}
	return r.Timestamp.UnixMilli(), nil
}

type recordFieldTime struct{ field string }

func (e recordFieldTime) extract(r *connect.SinkRecord, _ time.Time) (int64, error) {
	v, err := fieldValue(r, e.field)
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case float64: // schemaless JSON numbers
		return int64(x), nil
	case time.Time:
		return x.UnixMilli(), nil
	case string:
		return parseISOTime(x)
	case nil:
		return 0, fmt.Errorf("%w: timestamp field %s is null", errPartition, e.field)
	}
	return 0, fmt.Errorf("%w: timestamp field %s has unsupported type %T", errPartition, e.field, v)
}

// parseISOTime reads the ISO-8601 forms Joda's dateTimeParser accepts most
// often; a string of digits is epoch milliseconds, as Confluent's.
func parseISOTime(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("%w: timestamp %q is not ISO-8601", errPartition, s)
}

// topicPartitionOf is the partition a record was read from: offsets are
// committed for it and files are named after it, so a transform that
// renames topics does not rename files (Confluent's sink cannot follow such
// a rename either).
func topicPartitionOf(r *connect.SinkRecord) connect.TopicPartition {
	if r.OriginalTopic != "" {
		return connect.TopicPartition{Topic: r.OriginalTopic, Partition: r.OriginalPartition}
	}
	tp := connect.TopicPartition{Topic: r.Topic}
	if r.Partition != nil {
		tp.Partition = *r.Partition
	}
	return tp
}
