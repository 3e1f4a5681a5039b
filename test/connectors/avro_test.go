package connectors

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
)

// TestTransformsAndAvroThroughTheRuntime: DatagenConnector (users) with
// transforms=InsertField,Route (InsertField$Value adds a static field,
// RegexRouter renames the topic) and value.converter AvroConverter on the
// broker's Schema Registry; a JdbcSinkConnector reads the routed topic
// back with the AvroConverter into SQLite. The topic holds Confluent's
// wire format with the registered schema (subject of the routed topic,
// the inserted field in it), and the table holds the same rows.
func TestTransformsAndAvroThroughTheRuntime(t *testing.T) {
	const n = 50
	avroValues := map[string]string{
		"value.converter":                     "io.confluent.connect.avro.AvroConverter",
		"value.converter.schema.registry.url": registry,
	}
	g := startGroup(t, "e2e-avro")
	src := map[string]string{
		"connector.class":                     "io.confluent.kafka.connect.datagen.DatagenConnector",
		"kafka.topic":                         "datagen-users",
		"quickstart":                          "users",
		"iterations":                          fmt.Sprint(n),
		"max.interval":                        "0",
		"random.seed":                         "42",
		"transforms":                          "InsertField,Route",
		"transforms.InsertField.type":         "org.apache.kafka.connect.transforms.InsertField$Value",
		"transforms.InsertField.static.field": "origin",
		"transforms.InsertField.static.value": "e2e",
		"transforms.Route.type":               "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.Route.regex":              "datagen-(.*)",
		"transforms.Route.replacement":        "routed-$1",
	}
	for k, v := range avroValues {
		src[k] = v
	}
	g.create("users-source", src)
	db := filepath.Join(t.TempDir(), "users.db")
	sink := map[string]string{
		"connector.class":   "io.confluent.connect.jdbc.JdbcSinkConnector",
		"connection.url":    "jdbc:sqlite:" + db,
		"topics":            "routed-users",
		"table.name.format": "users",
		"auto.create":       "true",
	}
	for k, v := range avroValues {
		sink[k] = v
	}
	g.create("users-sink", sink)
	g.running("users-source", 1)
	g.running("users-sink", 1)

	// The topic: Confluent's wire format (magic 0, schema ID), values
	// decoded with the schema the registry has under that ID.
	recs := readAll(t, "routed-users", 60*time.Second, func(rs []*kgo.Record) bool {
		g.failIfFailed("users-source")
		return len(rs) >= n
	})
	reg, err := sr.NewClient(sr.URLs(registry))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var fromTopic [][]string
	for _, r := range recs {
		if len(r.Value) < 5 || r.Value[0] != 0 {
			t.Fatalf("offset %d: not Confluent's wire format: %x", r.Offset, r.Value)
		}
		id := int(binary.BigEndian.Uint32(r.Value[1:5]))
		s, err := reg.SchemaByID(ctx, id)
		if err != nil {
			t.Fatalf("offset %d: schema %d: %v", r.Offset, id, err)
		}
		schema, err := avro.Parse(s.Schema)
		if err != nil {
			t.Fatalf("schema %d: %v: %s", id, err, s.Schema)
		}
		var v map[string]any
		if err := avro.Unmarshal(schema, r.Value[5:], &v); err != nil {
			t.Fatalf("offset %d: %v", r.Offset, err)
		}
		// The optional field is a ["null","string"] union, which hamba
		// decodes to the branch's value.
		if v["origin"] != "e2e" {
			t.Fatalf("offset %d: origin is %v, want the InsertField's static value e2e (schema %s)", r.Offset, v["origin"], s.Schema)
		}
		fromTopic = append(fromTopic, []string{fmt.Sprint(v["registertime"]), fmt.Sprint(v["userid"]), fmt.Sprint(v["regionid"]), fmt.Sprint(v["gender"]), "e2e"})
	}
	subjects, err := reg.Subjects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(subjects, "routed-users-value") || slices.Contains(subjects, "datagen-users-value") {
		t.Fatalf("subjects %v: want routed-users-value (the topic after RegexRouter), not datagen-users-value", subjects)
	}

	// The table: what the sink decoded with the AvroConverter.
	var fromTable [][]string
	eventually(t, 60*time.Second, "the rows in SQLite", func() (bool, string) {
		g.failIfFailed("users-sink")
		fromTable = sqliteUsers(t, db)
		return len(fromTable) >= n, fmt.Sprint(len(fromTable), " rows")
	})
	sortRows := func(rows [][]string) {
		sort.Slice(rows, func(i, j int) bool { return fmt.Sprint(rows[i]) < fmt.Sprint(rows[j]) })
	}
	sortRows(fromTopic)
	sortRows(fromTable)
	if d := cmp.Diff(fromTopic, fromTable); d != "" {
		t.Fatalf("the table differs from the topic (-topic +table):\n%s", d)
	}
	t.Logf("%d records through InsertField, RegexRouter and the AvroConverter, the same %d rows in SQLite", len(recs), len(fromTable))
}

func sqliteUsers(t *testing.T, path string) [][]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(t.Context(), `SELECT registertime, userid, regionid, gender, origin FROM users`)
	if err != nil {
		return nil // not created yet
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		var rt int64
		var u, r, g, o string
		if err := rows.Scan(&rt, &u, &r, &g, &o); err != nil {
			t.Fatal(err)
		}
		out = append(out, []string{fmt.Sprint(rt), u, r, g, o})
	}
	return out
}
