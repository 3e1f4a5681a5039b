package pgcdc

import (
	"math/big"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

func TestTypeMapping(t *testing.T) {
	adaptive := &settings{decimalMode: "precise", timePrecision: "adaptive"}
	connectMode := &settings{decimalMode: "precise", timePrecision: "connect"}
	dec := func(u int64, s int) connect.Decimal { return connect.Decimal{Unscaled: big.NewInt(u), Scale: s} }
	numeric := func(p, s int32) int32 { return (p<<16 | (s & 0x7ff)) + 4 }
	for _, tc := range []struct {
		name   string
		s      *settings
		oid    uint32
		typmod int32
		text   string
		schema string // name, or type for unnamed schemas
		want   any
	}{
		{"bool", adaptive, oidBool, -1, "t", "BOOLEAN", true},
		{"int2", adaptive, oidInt2, -1, "-7", "INT16", int16(-7)},
		{"int4", adaptive, oidInt4, -1, "2147483647", "INT32", int32(2147483647)},
		{"int8", adaptive, oidInt8, -1, "-9223372036854775808", "INT64", int64(-9223372036854775808)},
		{"float4", adaptive, oidFloat4, -1, "1.5", "FLOAT32", float32(1.5)},
		{"float8", adaptive, oidFloat8, -1, "-0.25", "FLOAT64", -0.25},
		{"text", adaptive, oidText, -1, "héllo", "STRING", "héllo"},
		{"varchar", adaptive, oidVarchar, 14, "x", "STRING", "x"},
		{"bpchar", adaptive, oidBPChar, 9, "ab   ", "STRING", "ab   "},
		{"bytea", adaptive, oidBytea, -1, `\xdeadbeef`, "BYTES", []byte{0xde, 0xad, 0xbe, 0xef}},
		{"json", adaptive, oidJSON, -1, `{"a":1}`, dbzJSON, `{"a":1}`},
		{"jsonb", adaptive, oidJSONB, -1, `{"a": 1}`, dbzJSON, `{"a": 1}`},
		{"uuid", adaptive, oidUUID, -1, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", dbzUUID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"numeric(10,2)", adaptive, oidNumeric, numeric(10, 2), "-123.45", connect.DecimalName, dec(-12345, 2)},
		{"numeric(5,-2)", adaptive, oidNumeric, numeric(5, -2), "12300", connect.DecimalName, dec(123, -2)},
		{"numeric NaN", adaptive, oidNumeric, numeric(10, 2), "NaN", connect.DecimalName, nil},
		{"numeric double", &settings{decimalMode: "double"}, oidNumeric, numeric(10, 2), "1.25", "FLOAT64", 1.25},
		{"numeric string", &settings{decimalMode: "string"}, oidNumeric, numeric(10, 2), "1.25", "STRING", "1.25"},
		{"date adaptive", adaptive, oidDate, -1, "1970-01-11", dbzDate, int32(10)},
		{"date BC", adaptive, oidDate, -1, "0001-01-01 BC", dbzDate, int32(-719528)},
		{"date connect", connectMode, oidDate, -1, "2024-02-29", connect.DateName, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{"time(6)", adaptive, oidTime, -1, "01:02:03.000004", dbzMicroTime, int64(3723000004)},
		{"time(3)", adaptive, oidTime, 3, "01:02:03.5", dbzTime, int32(3723500)},
		{"time connect", connectMode, oidTime, -1, "00:00:01", connect.TimeName, time.Unix(1, 0).UTC()},
		{"timestamp(6)", adaptive, oidTimestamp, -1, "1970-01-01 00:00:01.000002", dbzMicroTimestamp, int64(1000002)},
		{"timestamp(0)", adaptive, oidTimestamp, 0, "1970-01-01 00:00:02", dbzTimestamp, int64(2000)},
		{"timestamp infinity", adaptive, oidTimestamp, -1, "infinity", dbzMicroTimestamp, nil},
		{"timestamp connect", connectMode, oidTimestamp, -1, "2000-01-01 00:00:00.123456", connect.TimestampName, time.Date(2000, 1, 1, 0, 0, 0, 123000000, time.UTC)},
		{"timestamptz", adaptive, oidTimestamptz, -1, "2024-01-02 03:04:05.12+05:30", dbzZonedTimestamp, "2024-01-01T21:34:05.120Z"},
		{"timestamptz whole", adaptive, oidTimestamptz, -1, "2024-01-02 03:04:05+00", dbzZonedTimestamp, "2024-01-02T03:04:05Z"},
		{"timetz", adaptive, oidTimetz, -1, "10:00:00.5+02", dbzZonedTime, "08:00:00.500Z"},
	} {
		m, ok := mapType(tc.oid, tc.typmod, tc.s)
		if !ok {
			t.Errorf("%s: not mapped", tc.name)
			continue
		}
		if got := m.schema.Name; got != tc.schema && string(m.schema.Type) != tc.schema {
			t.Errorf("%s: schema %s/%s, want %s", tc.name, m.schema.Name, m.schema.Type, tc.schema)
		}
		got, err := m.conv(tc.text)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !connect.ValuesEqual(got, tc.want) {
			t.Errorf("%s: %q = %#v, want %#v", tc.name, tc.text, got, tc.want)
		}
		if got != nil {
			if err := connect.Validate(m.schema, got); err != nil {
				t.Errorf("%s: value does not fit its schema: %v", tc.name, err)
			}
		}
	}
	if _, ok := mapType(1186 /* interval */, -1, adaptive); ok {
		t.Errorf("interval is mapped; the docs say it is left out")
	}
}

func TestVariableScaleDecimal(t *testing.T) {
	m, _ := mapType(oidNumeric, -1, &settings{decimalMode: "precise"})
	v, err := m.conv("-1.005")
	if err != nil {
		t.Fatal(err)
	}
	st := v.(*connect.Struct)
	scale, _ := st.Get("scale")
	value, _ := st.Get("value")
	// -1005 as Java's BigInteger.toByteArray: fc 13.
	if scale != int32(3) || string(value.([]byte)) != "\xfc\x13" || m.schema.Name != dbzVarDecimal {
		t.Fatalf("VariableScaleDecimal = %v %x (%s)", scale, value, m.schema.Name)
	}
	for n, want := range map[int64]string{0: "\x00", 127: "\x7f", 128: "\x00\x80", -1: "\xff", -128: "\x80", -129: "\xff\x7f"} {
		if got := string(twosComplement(big.NewInt(n))); got != want {
			t.Errorf("twosComplement(%d) = %x, want %x", n, got, want)
		}
	}
}

func FuzzConverters(f *testing.F) {
	for _, s := range []string{"1", "-1.5", "NaN", `\x00`, "2024-01-01", "12:00:00", "2024-01-01 00:00:00+00", "infinity", ""} {
		f.Add(s)
	}
	s := &settings{decimalMode: "precise", timePrecision: "adaptive"}
	oids := []uint32{oidBool, oidInt2, oidInt4, oidInt8, oidFloat4, oidFloat8, oidBytea, oidNumeric, oidDate, oidTime, oidTimestamp, oidTimestamptz, oidTimetz}
	f.Fuzz(func(t *testing.T, text string) {
		for _, oid := range oids {
			for _, typmod := range []int32{-1, 3, (10<<16 | 2) + 4} {
				m, _ := mapType(oid, typmod, s)
				v, err := m.conv(text) // must not panic
				if err == nil && v != nil {
					if verr := connect.Validate(m.schema, v); verr != nil {
						t.Fatalf("oid %d %q: %v", oid, text, verr)
					}
				}
			}
		}
	})
}
