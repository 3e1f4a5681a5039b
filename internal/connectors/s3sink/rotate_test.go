package s3sink

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/clock"
)

// TestRotateIntervalByRecordTime: with rotate.interval.ms and the Record
// extractor, a record whose timestamp is an interval past the open files'
// first record commits them before it is written; flush.size is far away.
func TestRotateIntervalByRecordTime(t *testing.T) {
	s3 := newFakeS3(t)
	task, _ := startTask(t, s3.props(cfgFlushSize, "100", cfgRotateInterval, "1000", cfgTSExtractor, "Record"), nil, tp0)
	base := time.UnixMilli(1_700_000_000_000)
	var recs []connect.SinkRecord
	for i, ms := range []int64{0, 500, 999, 1000, 1500, 2100} {
		recs = append(recs, rec(tp0, int64(i), base.Add(time.Duration(ms)*time.Millisecond), nil, map[string]any{"n": i}))
	}
	put(t, task, recs)
	want := map[string]int{
		"topics/orders/partition=0/orders+0+0000000000.json": 3, // 0, 500, 999
		"topics/orders/partition=0/orders+0+0000000003.json": 2, // 1000, 1500; 2100 opens the next file
	}
	got := map[string]int{}
	for k, b := range s3.objects() {
		got[k] = len(lines(b))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("files (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[connect.TopicPartition]int64{tp0: 5}, preCommit(t, task)); d != "" {
		t.Fatalf("precommit: %s", d)
	}
}

// TestRotateSchedule: rotate.schedule.interval.ms commits open files at the
// wall-clock boundary, with no new record, when the runtime calls PreCommit.
func TestRotateSchedule(t *testing.T) {
	s3 := newFakeS3(t)
	clk := clock.NewManual(time.Date(2026, 1, 2, 10, 0, 10, 0, time.UTC))
	task, _ := startTask(t, s3.props(cfgFlushSize, "100", cfgRotateSchedule, "60000", cfgTimezone, "UTC"), clk, tp0)
	put(t, task, jsonRecs(tp0, 0, 2))
	if got := preCommit(t, task); len(got) != 0 || len(s3.keys()) != 0 {
		t.Fatalf("before the boundary: precommit %v, objects %v", got, s3.keys())
	}
	clk.Set(time.Date(2026, 1, 2, 10, 1, 0, 0, time.UTC))
	if d := cmp.Diff(map[connect.TopicPartition]int64{tp0: 2}, preCommit(t, task)); d != "" {
		t.Fatalf("precommit at the boundary: %s", d)
	}
	if d := cmp.Diff([]string{"topics/orders/partition=0/orders+0+0000000000.json"}, s3.keys()); d != "" {
		t.Fatalf("keys: %s", d)
	}
}

// TestTimeBasedPartitionerPaths: the encoded partition is the record time
// floored to partition.duration.ms in the time zone, formatted by
// path.format; one commit writes one file per directory.
func TestTimeBasedPartitionerPaths(t *testing.T) {
	s3 := newFakeS3(t)
	props := s3.props(cfgFlushSize, "4",
		cfgPartitionerClass, partitionerTimeBased,
		cfgPathFormat, "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
		cfgPartitionDur, "3600000", cfgLocale, "en-US", cfgTimezone, "America/New_York",
		cfgTSExtractor, "Record")
	task, _ := startTask(t, props, nil, tp0)
	at := func(s string) time.Time {
		ts, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	put(t, task, []connect.SinkRecord{
		rec(tp0, 0, at("2026-03-01T04:59:00Z"), nil, map[string]any{"n": 0}), // 23:59 on Feb 28 in New York
		rec(tp0, 1, at("2026-03-01T05:10:00Z"), nil, map[string]any{"n": 1}), // 00:10 on Mar 1
		rec(tp0, 2, at("2026-03-01T04:01:00Z"), nil, map[string]any{"n": 2}), // back in the 23h directory
		rec(tp0, 3, at("2026-03-01T05:59:59Z"), nil, map[string]any{"n": 3}),
	})
	want := map[string][]string{
		"topics/orders/year=2026/month=02/day=28/hour=23/orders+0+0000000000.json": {`{"n":0}`, `{"n":2}`},
		"topics/orders/year=2026/month=03/day=01/hour=00/orders+0+0000000001.json": {`{"n":1}`, `{"n":3}`},
	}
	got := map[string][]string{}
	for k, b := range s3.objects() {
		got[k] = lines(b)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("objects (-want +got):\n%s", d)
	}
}

func TestFieldPartitionerPaths(t *testing.T) {
	s3 := newFakeS3(t)
	task, _ := startTask(t, s3.props(cfgFlushSize, "3", cfgPartitionerClass, partitionerField, cfgPartitionField, "region,tier"), nil, tp0)
	s := connect.NewStruct("V").Field("region", connect.StringSchema).Field("tier", connect.Int32Schema).MustBuild()
	v := func(region string, tier int32) *connect.Struct {
		return connect.NewStructValue(s).MustPut("region", region).MustPut("tier", tier)
	}
	put(t, task, []connect.SinkRecord{
		rec(tp0, 0, time.Now(), s, v("eu", 1)),
		rec(tp0, 1, time.Now(), s, v("us", 2)),
		rec(tp0, 2, time.Now(), s, v("eu", 1)),
	})
	want := []string{
		"topics/orders/region=eu/tier=1/orders+0+0000000000.json",
		"topics/orders/region=us/tier=2/orders+0+0000000001.json",
	}
	if d := cmp.Diff(want, s3.keys()); d != "" {
		t.Fatalf("keys (-want +got):\n%s", d)
	}
}

func TestJodaFormat(t *testing.T) {
	at := time.Date(2026, 7, 4, 15, 6, 7, 89_000_000, time.UTC)
	for pattern, want := range map[string]string{
		"'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH": "year=2026/month=07/day=04/hour=15",
		"yyyy-MM-dd'T'HH:mm:ss.SSS":                 "2026-07-04T15:06:07.089",
		"yy/M/d/h a":                                "26/7/4/3 PM",
		"MMM MMMM EEE EEEE D":                       "Jul July Sat Saturday 185",
		"'it''s' ''":                                "it's '",
		"ZZ":                                        "+00:00",
	} {
		f, err := parseJodaFormat(pattern, "en")
		if err != nil {
			t.Fatalf("%s: %v", pattern, err)
		}
		if got := f.format(at); got != want {
			t.Errorf("%s = %q, want %q", pattern, got, want)
		}
	}
	if _, err := parseJodaFormat("MMMM", "fr"); err == nil {
		t.Error("month names with locale fr were accepted")
	}
	if _, err := parseJodaFormat("qq", "en"); err == nil {
		t.Error("an unknown pattern letter was accepted")
	}
}

// TestConfigRefusals: what cannot work is refused with the config's name.
func TestConfigRefusals(t *testing.T) {
	s3 := newFakeS3(t)
	for name, tc := range map[string]struct {
		overrides []string
		want      string
	}{
		"no bucket":            {[]string{cfgBucket, ""}, cfgBucket},
		"unknown format":       {[]string{cfgFormatClass, "x.Format"}, cfgFormatClass},
		"time based no locale": {[]string{cfgPartitionerClass, partitionerTimeBased, cfgPathFormat, "YYYY", cfgPartitionDur, "1000", cfgTimezone, "UTC"}, cfgLocale},
		"time based no tz":     {[]string{cfgPartitionerClass, partitionerTimeBased, cfgPathFormat, "YYYY", cfgPartitionDur, "1000", cfgLocale, "en"}, cfgTimezone},
		"bad tz":               {[]string{cfgPartitionerClass, partitionerTimeBased, cfgPathFormat, "YYYY", cfgPartitionDur, "1000", cfgLocale, "en", cfgTimezone, "Mars/Base"}, cfgTimezone},
		"no duration":          {[]string{cfgPartitionerClass, partitionerTimeBased, cfgPathFormat, "YYYY", cfgLocale, "en", cfgTimezone, "UTC"}, cfgPartitionDur},
		"field no fields":      {[]string{cfgPartitionerClass, partitionerField}, cfgPartitionField},
		"schedule no tz":       {[]string{cfgRotateSchedule, "1000"}, cfgTimezone},
		"small part":           {[]string{cfgPartSize, "1024"}, cfgPartSize},
		"lz4 parquet":          {[]string{cfgFormatClass, formatParquet, cfgParquetCodec, "lz4"}, cfgParquetCodec},
		"bzip2 avro":           {[]string{cfgFormatClass, formatAvro, cfgAvroCodec, "bzip2"}, cfgAvroCodec},
		"null write":           {[]string{cfgNullValues, "write"}, cfgNullValues},
		"encryption":           {[]string{"s3.sse.kms.key.id", "k"}, "s3.sse.kms.key.id"},
		"compression":          {[]string{"s3.compression.type", "zip"}, "s3.compression.type"},
		"proxy":                {[]string{"s3.proxy.url", "http://proxy:3128"}, "s3.proxy.url"},
		"key without secret":   {[]string{cfgSecretAccessKey, ""}, cfgSecretAccessKey},
		"bad url":              {[]string{cfgStoreURL, "ftp://x"}, cfgStoreURL},
		"bytearray ext":        {[]string{cfgFormatClass, formatByteArray, cfgByteArrayExt, "bin"}, cfgByteArrayExt},
	} {
		props := s3.props(tc.overrides...)
		_, err := parseConfig(props)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one naming %s", name, err, tc.want)
			continue
		}
		conn := Plugins()[0].New().(*sinkConnector)
		if err := conn.Start(nil, props); err == nil {
			t.Errorf("%s: connector started", name)
		}
		// config/validate shows the error on the config it concerns, from
		// the ConfigDef or from the connector's own checks.
		var shown []string
		for _, cv := range append(conn.Config().Validate(props), conn.Validate(props)...) {
			if len(cv.Errors) > 0 {
				shown = append(shown, cv.Name)
			}
		}
		if !slices.Contains(shown, tc.want) {
			t.Errorf("%s: config/validate shows errors on %v, want %s", name, shown, tc.want)
		}
	}
}
