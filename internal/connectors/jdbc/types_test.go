package jdbc

import (
	"math/big"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

type typeCase struct {
	column string
	typ    connect.Type
	name   string // logical type name
	scale  string
	want   any
}

func dec(unscaled int64, scale int) connect.Decimal {
	return connect.Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}
}

// Column types map to Connect schemas and values as Confluent's dialects
// map them (numeric.mapping none and best_fit; db.timezone for zoneless
// timestamps).
func TestSourceTypeMapping(t *testing.T) {
	ts := time.Date(2024, 3, 4, 5, 6, 7, 123000000, time.UTC)
	t.Run("postgres", func(t *testing.T) {
		db := startPG(t)
		db.exec(t, `CREATE TABLE types (
  id INT NOT NULL, i2 SMALLINT, i8 BIGINT, f4 REAL, f8 DOUBLE PRECISION,
  n NUMERIC(10,2), n0 NUMERIC(5,0), nfree NUMERIC, b BOOLEAN, s TEXT, vc VARCHAR(10),
  by BYTEA, d DATE, tm TIME, tsz TIMESTAMPTZ, tsl TIMESTAMP, u UUID, j JSONB, arr INT[])`,
			`INSERT INTO types VALUES (1, -2, 9000000000, 1.5, 2.25, 1234.56, 12345, 0.125, true, 'text', 'vc',
  '\x0102ff', '2024-03-04', '05:06:07.123', '2024-03-04 05:06:07.123+00', '2024-03-04 00:06:07.123',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"a": 1}', '{1,2}')`)
		cases := []typeCase{
			{"id", connect.Int32, "", "", int32(1)},
			{"i2", connect.Int16, "", "", int16(-2)},
			{"i8", connect.Int64, "", "", int64(9000000000)},
			{"f4", connect.Float32, "", "", float32(1.5)},
			{"f8", connect.Float64, "", "", 2.25},
			{"n", connect.Bytes, connect.DecimalName, "2", dec(123456, 2)},
			{"n0", connect.Bytes, connect.DecimalName, "0", dec(12345, 0)},
			{"nfree", connect.String, "", "", "0.125"},
			{"b", connect.Boolean, "", "", true},
			{"s", connect.String, "", "", "text"},
			{"vc", connect.String, "", "", "vc"},
			{"by", connect.Bytes, "", "", []byte{1, 2, 0xff}},
			{"d", connect.Int32, connect.DateName, "", time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC)},
			{"tm", connect.Int32, connect.TimeName, "", time.Date(1970, 1, 1, 5, 6, 7, 123000000, time.UTC)},
			{"tsz", connect.Int64, connect.TimestampName, "", ts},
			// db.timezone America/New_York: 00:06 there is 05:06 UTC.
			{"tsl", connect.Int64, connect.TimestampName, "", ts},
			{"u", connect.String, "", "", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
			{"j", connect.String, "", "", `{"a": 1}`},
		}
		checkTypes(t, db, "none", cases, "arr")

		best := []typeCase{
			{"n", connect.Float64, "", "", 1234.56},
			{"n0", connect.Int32, "", "", int32(12345)},
			{"nfree", connect.Float64, "", "", 0.125},
		}
		checkTypes(t, db, "best_fit", best, "arr")
	})
	t.Run("sqlite", func(t *testing.T) {
		db := startSQLite(t)
		db.exec(t, `CREATE TABLE types (
  id INTEGER NOT NULL, i2 SMALLINT, i8 BIGINT, f8 DOUBLE, r REAL,
  n NUMERIC(10,2), n0 DECIMAL(5,0), b BOOLEAN, s TEXT, vc VARCHAR(10),
  by BLOB, d DATE, tm TIME, tsl TIMESTAMP, dt DATETIME, untyped)`,
			`INSERT INTO types VALUES (1, -2, 9000000000, 2.25, 1.5, 1234.56, 12345, 1, 'text', 'vc',
  x'0102ff', '2024-03-04', '05:06:07.123', '2024-03-04 00:06:07.123', '2024-03-04T00:06:07.123', 42)`)
		cases := []typeCase{
			{"id", connect.Int64, "", "", int64(1)},
			{"i2", connect.Int16, "", "", int16(-2)},
			{"i8", connect.Int64, "", "", int64(9000000000)},
			{"f8", connect.Float64, "", "", 2.25},
			{"r", connect.Float64, "", "", 1.5},
			{"n", connect.Bytes, connect.DecimalName, "2", dec(123456, 2)},
			{"n0", connect.Bytes, connect.DecimalName, "0", dec(12345, 0)},
			{"b", connect.Boolean, "", "", true},
			{"s", connect.String, "", "", "text"},
			{"vc", connect.String, "", "", "vc"},
			{"by", connect.Bytes, "", "", []byte{1, 2, 0xff}},
			{"d", connect.Int32, connect.DateName, "", time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC)},
			{"tm", connect.Int32, connect.TimeName, "", time.Date(1970, 1, 1, 5, 6, 7, 123000000, time.UTC)},
			{"tsl", connect.Int64, connect.TimestampName, "", ts},
			{"dt", connect.Int64, connect.TimestampName, "", ts},
			{"untyped", connect.Int64, "", "", int64(42)},
		}
		checkTypes(t, db, "none", cases, "")
	})
}

func checkTypes(t *testing.T, db *testDB, numericMapping string, cases []typeCase, leftOut string) {
	t.Helper()
	cfg := props(cfgConnectionURL, db.url, cfgMode, modeBulk, cfgTopicPrefix, "", cfgPollInterval, "50",
		cfgNumericMapping, numericMapping, cfgDBTimezone, "America/New_York")
	if db.kind == sqlite {
		cfg[cfgDBTimezone] = "America/New_York"
	}
	_, _, tasks := startSource(t, cfg, 1, newOffsetStore())
	recs := pollN(t, tasks[0], 1, 0)
	schema := recs[0].ValueSchema
	for _, c := range cases {
		f, ok := schema.Field(c.column)
		if !ok {
			t.Errorf("%s: no field", c.column)
			continue
		}
		if f.Schema.Type != c.typ || f.Schema.Name != c.name || f.Schema.Parameters[connect.DecimalScale] != c.scale {
			t.Errorf("%s: schema %v %v, want %s %s scale %q", c.column, f.Schema, f.Schema.Parameters, c.typ, c.name, c.scale)
		}
		if got := field(t, recs[0], c.column); !connect.ValuesEqual(got, c.want) {
			t.Errorf("%s: value %#v (%T), want %#v", c.column, got, got, c.want)
		}
	}
	if id, _ := schema.Field("id"); id.Schema.Optional {
		t.Errorf("NOT NULL id is optional")
	}
	if i2, _ := schema.Field("i2"); !i2.Schema.Optional {
		t.Errorf("nullable i2 is required")
	}
	if leftOut != "" {
		if _, ok := schema.Field(leftOut); ok {
			t.Errorf("column %s of an unsupported type was not left out", leftOut)
		}
	}
}
