package transforms

import (
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

func TestSimpleDateFormat(t *testing.T) {
	at := time.Date(2024, 3, 5, 14, 7, 9, 45_000_000, time.UTC)
	cases := map[string]string{
		"yyyyMMdd":                      "20240305",
		"yyyy-MM-dd'T'HH:mm:ss.SSSZ":    "2024-03-05T14:07:09.045+0000",
		"yy/M/d h:mm a":                 "24/3/5 2:07 PM",
		"EEE, d MMM yyyy HH:mm:ss z":    "Tue, 5 Mar 2024 14:07:09 UTC",
		"EEEE MMMM dd G":                "Tuesday March 05 AD",
		"''yyyy'' 'o''clock' k K D u S": "'2024' o'clock 14 2 65 2 45",
		"HH:mm:ss.SSSXXX":               "14:07:09.045Z",
	}
	for pattern, want := range cases {
		f, err := newSimpleDateFormat(pattern)
		if err != nil {
			t.Fatalf("%s: %v", pattern, err)
		}
		if got := f.format(at); got != want {
			t.Fatalf("format %q = %q, want %q", pattern, got, want)
		}
	}
	for _, bad := range []string{"yyyy-MM-dd'T", "yyyy-qq", "YYYY-ww"} {
		if _, err := newSimpleDateFormat(bad); err == nil {
			t.Fatalf("pattern %q accepted", bad)
		}
	}
}

func TestSimpleDateFormatParse(t *testing.T) {
	cases := []struct {
		pattern, in string
		want        time.Time
	}{
		{"yyyyMMdd", "20240305", time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)},
		{"yyyy-MM-dd HH:mm:ss.SSS", "2024-03-05 14:07:09.045", time.Date(2024, 3, 5, 14, 7, 9, 45e6, time.UTC)},
		{"yyyy-MM-dd'T'HH:mm:ssXXX", "2024-03-05T14:07:09+02:00", time.Date(2024, 3, 5, 12, 7, 9, 0, time.UTC)},
		{"yyyy-MM-dd HH:mm Z", "2024-03-05 14:07 -0130", time.Date(2024, 3, 5, 15, 37, 0, 0, time.UTC)},
		{"dd MMM yyyy h:mm a", "5 mar 2024 12:30 AM", time.Date(2024, 3, 5, 0, 30, 0, 0, time.UTC)},
		{"dd MMMM yyyy hh a", "05 March 2024 01 PM", time.Date(2024, 3, 5, 13, 0, 0, 0, time.UTC)},
		{"HH:mm", "25:00", time.Date(1970, 1, 2, 1, 0, 0, 0, time.UTC)}, // lenient roll-over
		{"yyyy-MM-dd", "2024-03-05 trailing text", time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)},
		{"yyyy-MM-dd z", "2024-03-05 GMT+01:00", time.Date(2024, 3, 4, 23, 0, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		f, err := newSimpleDateFormat(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.parse(c.in)
		if err != nil {
			t.Fatalf("parse %q with %q: %v", c.in, c.pattern, err)
		}
		if !got.Equal(c.want) {
			t.Fatalf("parse %q with %q = %v, want %v", c.in, c.pattern, got, c.want)
		}
	}
	f, _ := newSimpleDateFormat("yyyy-MM-dd")
	for _, bad := range []string{"2024/03/05", "", "abcd-01-01"} {
		if _, err := f.parse(bad); err == nil {
			t.Fatalf("parsed %q", bad)
		}
	}
	yy, _ := newSimpleDateFormat("yy")
	got, _ := yy.parse("05")
	if got.Year() != 2005 {
		t.Fatalf("yy 05 = %d", got.Year())
	}
}

func TestTimestampConverterSchemaless(t *testing.T) {
	at := time.Date(2024, 3, 5, 14, 7, 9, 45_000_000, time.UTC)
	ms := at.UnixMilli()
	cases := []struct {
		props map[string]string
		in    any
		want  any
	}{
		{map[string]string{"target.type": "string", "format": "yyyy-MM-dd HH:mm"}, ms, "2024-03-05 14:07"},
		{map[string]string{"target.type": "unix"}, at, ms},
		{map[string]string{"target.type": "unix", "unix.precision": "seconds"}, at, ms / 1000},
		{map[string]string{"target.type": "unix", "unix.precision": "microseconds"}, at, ms * 1000},
		{map[string]string{"target.type": "unix", "unix.precision": "nanoseconds"}, "2024-03-05", time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC).UnixNano()},
		{map[string]string{"target.type": "Timestamp", "unix.precision": "seconds"}, ms / 1000, time.Date(2024, 3, 5, 14, 7, 9, 0, time.UTC)},
		{map[string]string{"target.type": "Timestamp", "unix.precision": "nanoseconds"}, at.UnixNano() + 999, at},
		{map[string]string{"target.type": "Timestamp", "unix.precision": "microseconds"}, at.UnixMicro() + 7, at},
		{map[string]string{"target.type": "Date"}, ms, time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)},
		{map[string]string{"target.type": "Time"}, ms, time.Date(1970, 1, 1, 14, 7, 9, 45e6, time.UTC)},
		{map[string]string{"target.type": "Timestamp", "format": "yyyy-MM-dd"}, "2024-03-05", time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)},
	}
	for i, c := range cases {
		if c.props["format"] == "" && c.in == "2024-03-05" {
			c.props["format"] = "yyyy-MM-dd"
		}
		tr := newTransform(t, "TimestampConverter$Value", c.props)
		out, _, err := tr.Apply(valueRecord(nil, c.in))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		wantValue(t, out.Value, c.want)
		// The same in a field of a map.
		c.props["field"] = "at"
		tr = newTransform(t, "TimestampConverter$Value", c.props)
		out = apply(t, tr, valueRecord(nil, map[string]any{"at": c.in, "other": 1}))
		wantValue(t, out.Value, map[string]any{"at": c.want, "other": 1})
	}
}

func TestTimestampConverterWithSchema(t *testing.T) {
	in := build("ev", "at", connect.Int64Schema, "day", &connect.Schema{Type: connect.String, Optional: true})
	tr := newTransform(t, "TimestampConverter$Value", map[string]string{"field": "at", "target.type": "Timestamp"})
	ms := ts.UnixMilli()
	out := apply(t, tr, valueRecord(in, structOf(in, "at", ms)))
	want := build("ev", "at", connect.TimestampSchema(), "day", &connect.Schema{Type: connect.String, Optional: true})
	wantSchema(t, out.ValueSchema, want)
	wantValue(t, get(t, out.Value, "at"), ts)

	toString := newTransform(t, "TimestampConverter$Value", map[string]string{"field": "day", "target.type": "Date", "format": "dd.MM.yyyy"})
	out = apply(t, toString, valueRecord(in, structOf(in, "at", ms, "day", "05.03.2024")))
	wantSchema(t, out.ValueSchema.Fields[1].Schema, optional(connect.DateSchema()))
	wantValue(t, get(t, out.Value, "day"), time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC))
	// An optional field's null stays null.
	out = apply(t, toString, valueRecord(in, structOf(in, "at", ms)))
	wantValue(t, get(t, out.Value, "day"), nil)

	whole := newTransform(t, "TimestampConverter$Key", map[string]string{"target.type": "unix", "unix.precision": "seconds"})
	out = apply(t, whole, keyRecord(optional(connect.TimestampSchema()), ts))
	wantSchema(t, out.KeySchema, connect.OptionalInt64)
	wantValue(t, out.Key, ms/1000)

	_, _, err := whole.Apply(keyRecord(connect.Int32Schema, int32(1)))
	wantErr(t, err, "Schema Schema{INT32} does not correspond to a known timestamp type format")
	bad := newTransform(t, "TimestampConverter$Value", map[string]string{"target.type": "Date", "format": "yyyy-MM-dd"})
	_, _, err = bad.Apply(valueRecord(connect.StringSchema, "nope"))
	wantErr(t, err, "Could not parse timestamp: value (nope) does not match pattern (yyyy-MM-dd)")
	_, _, err = bad.Apply(valueRecord(nil, int32(5)))
	wantErr(t, err, "TimestampConverter does not support class java.lang.Integer objects as timestamps")
}

func TestTimestampConverterConfig(t *testing.T) {
	for props, msg := range map[*map[string]string]string{
		{"target.type": "string"}: "TimestampConverter requires format option to be specified when using string timestamps",
		{"target.type": "date"}:   "Invalid value date for configuration target.type: String must be one of: string, unix, Date, Time, Timestamp",
		{}:                        `Missing required configuration "target.type" which has no default value.`,
		{"target.type": "unix", "unix.precision": "ms"}: "Invalid value ms for configuration unix.precision",
		{"target.type": "string", "format": "yyyy-qq"}:  "TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: yyyy-qq",
	} {
		_, err := configure("TimestampConverter$Value", *props)
		wantErr(t, err, msg)
	}
}

func TestTimestampRouter(t *testing.T) {
	tr := newTransform(t, "TimestampRouter", map[string]string{})
	wantValue(t, apply(t, tr, valueRecord(nil, 1)).Topic, "orders-20240305")
	custom := newTransform(t, "org.apache.kafka.connect.transforms.TimestampRouter", map[string]string{
		"topic.format": "${timestamp}_${topic}_${topic}", "timestamp.format": "yyyy.MM.dd-HH",
	})
	wantValue(t, apply(t, custom, valueRecord(nil, 1)).Topic, "2024.03.05-14_orders_orders")
	r := valueRecord(nil, 1)
	r.Timestamp = time.Time{}
	_, _, err := tr.Apply(r)
	wantErr(t, err, "Timestamp missing on record")
}
