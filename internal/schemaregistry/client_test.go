package schemaregistry

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
)

// TestFranzGoClient drives the registry with franz-go's pkg/sr, a real
// client of Confluent's API: register, look up, check and refuse.
func TestFranzGoClient(t *testing.T) {
	b := startBroker(t)
	_, srv := startRegistry(t, b, "_schemas")
	cl, err := sr.NewClient(sr.URLs(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	created, err := cl.CreateSchema(ctx, "orders-value", sr.Schema{Schema: s1})
	if err != nil {
		t.Fatal(err)
	}
	if created.ID != 1 || created.Version != 1 || created.Subject != "orders-value" {
		t.Fatalf("created %+v", created)
	}
	byID, err := cl.SchemaByID(ctx, created.ID)
	if err != nil || byID.Schema != s1 || byID.Type != sr.TypeAvro {
		t.Fatalf("by id: %+v %v", byID, err)
	}
	found, err := cl.LookupSchema(ctx, "orders-value", sr.Schema{Schema: s1})
	if err != nil || found.ID != 1 || found.Version != 1 {
		t.Fatalf("lookup: %+v %v", found, err)
	}

	ok, err := cl.CheckCompatibility(ctx, "orders-value", -1, sr.Schema{Schema: s2})
	if err != nil || !ok.Is {
		t.Fatalf("s2 against latest: %+v %v", ok, err)
	}
	if _, err := cl.CreateSchema(ctx, "orders-value", sr.Schema{Schema: s2}); err != nil {
		t.Fatal(err)
	}
	bad, err := cl.CheckCompatibility(sr.WithParams(ctx, sr.Verbose), "orders-value", -1, sr.Schema{Schema: s3})
	if err != nil || bad.Is || len(bad.Messages) == 0 {
		t.Fatalf("s3 against latest: %+v %v", bad, err)
	}
	_, err = cl.CreateSchema(ctx, "orders-value", sr.Schema{Schema: s3})
	var re *sr.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 409 || re.ErrorCode != 409 {
		t.Fatalf("registering s3: %v", err)
	}

	if _, err := cl.SchemaByID(ctx, 42); !errors.As(err, &re) || re.ErrorCode != 40403 {
		t.Fatalf("unknown id: %v", err)
	}
	subjects, err := cl.Subjects(ctx)
	if err != nil || !slices.Equal(subjects, []string{"orders-value"}) {
		t.Fatalf("subjects %v %v", subjects, err)
	}
	// JSON Schema through the same paths: its type is stored and answered.
	j1 := `{"type":"object","properties":{"a":{"type":"integer"}}}`
	j2 := `{"type":"object","properties":{"a":{"type":"string"}}}`
	js, err := cl.CreateSchema(ctx, "events-value", sr.Schema{Schema: j1, Type: sr.TypeJSON})
	if err != nil || js.ID != 3 || js.Type != sr.TypeJSON {
		t.Fatalf("JSON schema: %+v %v", js, err)
	}
	if got, err := cl.SchemaByID(ctx, js.ID); err != nil || got.Type != sr.TypeJSON {
		t.Fatalf("JSON schema by id: %+v %v", got, err)
	}
	if res, err := cl.CheckCompatibility(ctx, "events-value", -1, sr.Schema{Schema: j2, Type: sr.TypeJSON}); err != nil || res.Is {
		t.Fatalf("a changed property type checked compatible: %+v %v", res, err)
	}
	if res, err := cl.CheckCompatibility(ctx, "events-value", -1, sr.Schema{Schema: s1}); err != nil || res.Is {
		t.Fatalf("an Avro schema checked compatible with a JSON one: %+v %v", res, err)
	}

	set := cl.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatNone}, "orders-value")
	if len(set) != 1 || set[0].Err != nil {
		t.Fatalf("set compatibility: %+v", set)
	}
	if _, err := cl.CreateSchema(ctx, "orders-value", sr.Schema{Schema: s3}); err != nil {
		t.Fatalf("s3 under NONE: %v", err)
	}
}

// TestRestartKeepsIDs: a new registry on the same topic has the same
// subjects, versions and IDs, and numbers on from the largest ID.
func TestRestartKeepsIDs(t *testing.T) {
	b := startBroker(t)
	reg, srv := startRegistry(t, b, "_schemas_restart")
	steps := []apiStep{
		{method: "POST", path: "/subjects/a/versions", body: body(s1), status: 200, want: `{"id":1}`},
		{method: "POST", path: "/subjects/b/versions", body: body(s4), status: 200, want: `{"id":2}`},
		{method: "POST", path: "/subjects/a/versions", body: body(s2), status: 200, want: `{"id":3}`},
		{method: "DELETE", path: "/subjects/a/versions/2", status: 200, want: `2`},
		{method: "PUT", path: "/config/b", body: `{"compatibility":"NONE"}`, status: 200, want: `{"compatibility":"NONE"}`},
	}
	for i, s := range steps {
		if status, got, _ := do(t, srv.URL, s); status != s.status || !matches(got, s) {
			t.Fatalf("step %d: got %d %s", i, status, got)
		}
	}
	srv.Close()
	reg.Close()

	_, srv2 := startRegistry(t, b, "_schemas_restart")
	after := []apiStep{
		{method: "GET", path: "/subjects/a/versions/1", status: 200, want: version("a", 1, 1, s1)},
		{method: "GET", path: "/subjects/a/versions", status: 200, want: `[1]`},
		{method: "GET", path: "/subjects/a/versions/2?deleted=true", status: 200, want: version("a", 2, 3, s2)},
		{method: "GET", path: "/schemas/ids/2", status: 200, want: body(s4)},
		{method: "GET", path: "/config/b", status: 200, want: `{"compatibilityLevel":"NONE"}`},
		// The soft-deleted version keeps its number and its ID.
		{method: "POST", path: "/subjects/a/versions", body: body(s3), status: 409, contains: []string{`"error_code":409`}},
		{method: "POST", path: "/subjects/c/versions", body: body(inner), status: 200, want: `{"id":4}`},
		{method: "POST", path: "/subjects/a/versions", body: body(s2), status: 200, want: `{"id":3}`},
		{method: "GET", path: "/subjects/a/versions", status: 200, want: `[1,3]`},
	}
	for i, s := range after {
		if status, got, _ := do(t, srv2.URL, s); status != s.status || !matches(got, s) {
			t.Errorf("after restart, step %d: %s %s: got %d %s, want %d %s", i, s.method, s.path, status, got, s.status, s.want)
		}
	}
}

// TestStoreRecords reads the store topic as Confluent's registry would:
// its keys and values are Confluent's JSON, byte for byte where a
// compacted key must match.
func TestStoreRecords(t *testing.T) {
	b := startBroker(t)
	_, srv := startRegistry(t, b, "_schemas_records")
	for i, s := range []apiStep{
		{method: "POST", path: "/subjects/a/versions", body: body(s1), status: 200, want: `{"id":1}`},
		{method: "PUT", path: "/config", body: `{"compatibility":"FULL"}`, status: 200, want: `{"compatibility":"FULL"}`},
		{method: "PUT", path: "/mode/a", body: `{"mode":"READONLY"}`, status: 200, want: `{"mode":"READONLY"}`},
		{method: "DELETE", path: "/mode/a", status: 200, want: `{"mode":"READONLY"}`},
		{method: "DELETE", path: "/subjects/a", status: 200, want: `[1]`},
		{method: "DELETE", path: "/subjects/a?permanent=true", status: 200, want: `[1]`},
	} {
		if status, got, _ := do(t, srv.URL, s); status != s.status || !matches(got, s) {
			t.Fatalf("step %d: got %d %s", i, status, got)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"_schemas_records": {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	want := []string{
		`{"keytype":"SCHEMA","subject":"a","version":1,"magic":1} => {"subject":"a","version":1,"id":1,"schema":` + quote(s1) + `,"deleted":false}`,
		`{"keytype":"CONFIG","subject":null,"magic":0} => {"compatibilityLevel":"FULL"}`,
		`{"keytype":"MODE","subject":"a","magic":0} => {"subject":"a","mode":"READONLY"}`,
		`{"keytype":"MODE","subject":"a","magic":0} => null`,
		`{"keytype":"DELETE_SUBJECT","subject":"a","magic":0} => {"subject":"a","version":1}`,
		`{"keytype":"SCHEMA","subject":"a","version":1,"magic":1} => null`,
	}
	var got []string
	for len(got) < len(want) && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			v := "null"
			if r.Value != nil {
				v = string(r.Value)
			}
			got = append(got, string(r.Key)+" => "+v)
		})
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("store records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
