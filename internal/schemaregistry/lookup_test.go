package schemaregistry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

// The record names of Confluent's RecordNameStrategy: AvroSchema.name()
// (a record's full name, null for anything else) and JsonSchema.name()
// (the title).
func TestRecordName(t *testing.T) {
	for _, c := range []struct {
		typ, text, want string
	}{
		{"", `{"type":"record","name":"Order","namespace":"com.acme","fields":[]}`, "com.acme.Order"},
		{"AVRO", `{"type":"record","name":"com.acme.Order","namespace":"org.other","fields":[]}`, "com.acme.Order"},
		{"AVRO", `{"type":"record","name":"Order","fields":[]}`, "Order"},
		{"AVRO", `{"type":"error","name":"Oops","namespace":"x","fields":[]}`, "x.Oops"},
		{"AVRO", `{"type":"enum","name":"Suit","symbols":["A"]}`, ""},
		{"AVRO", `"string"`, ""},
		{"AVRO", `["null","string"]`, ""},
		{"AVRO", `not json`, ""},
		{"JSON", `{"title":"Order","type":"object"}`, "Order"},
		{"JSON", `{"type":"object"}`, ""},
		{"JSON", `true`, ""},
		{"PROTOBUF", `syntax = "proto3"; package acme; message Order {}`, ""},
	} {
		if got := RecordName(c.typ, c.text); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.typ, c.text, got, c.want)
		}
	}
}

// The registry in process and the same registry over HTTP answer the
// broker's questions alike: an ID under its subject, not under another,
// an unknown ID, a soft-deleted version; and a registry that cannot be
// reached is an error, not an answer.
func TestIDLookups(t *testing.T) {
	b := startBroker(t)
	reg, srv := startRegistry(t, b, "_schemas")
	cl, err := sr.NewClient(sr.URLs(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	order := `{"type":"record","name":"Order","namespace":"com.acme","fields":[{"name":"a","type":"int"}]}`
	created, err := cl.CreateSchema(ctx, "orders-value", sr.Schema{Schema: order})
	if err != nil {
		t.Fatal(err)
	}
	other, err := cl.CreateSchema(ctx, "gone-value", sr.Schema{Schema: s1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.DeleteSubject(ctx, "gone-value", sr.SoftDelete); err != nil {
		t.Fatal(err)
	}
	remote, err := NewRemote([]string{srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	id := int32(created.ID)
	for name, src := range map[string]IDSource{"in process": reg, "over HTTP": remote} {
		for _, c := range []struct {
			subject string
			id      int32
			want    bool
		}{
			{"orders-value", id, true},
			{"orders-key", id, false},
			{"orders-value", 999, false},
			{"gone-value", int32(other.ID), false},
		} {
			got, err := src.Registered(ctx, c.subject, c.id)
			if err != nil || got != c.want {
				t.Errorf("%s: %s %d: %v %v, want %v", name, c.subject, c.id, got, err, c.want)
			}
		}
		if n, found, err := src.RecordName(ctx, id); err != nil || !found || n != "com.acme.Order" {
			t.Errorf("%s: record name %q %v %v", name, n, found, err)
		}
		if _, found, err := src.RecordName(ctx, 999); err != nil || found {
			t.Errorf("%s: record name of an unknown id: found %v %v", name, found, err)
		}
	}
	down, err := NewRemote([]string{"http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := down.Registered(ctx, "orders-value", id); err == nil {
		t.Error("an unreachable registry gave an answer")
	}
}

// countingSource answers "registered" for ID 1 only and counts questions.
type countingSource struct {
	asked int
	err   error
}

func (s *countingSource) Registered(_ context.Context, _ string, id int32) (bool, error) {
	s.asked++
	return id == 1, s.err
}

func (s *countingSource) RecordName(_ context.Context, id int32) (string, bool, error) {
	s.asked++
	return "n", id == 1, s.err
}

func TestCached(t *testing.T) {
	src := &countingSource{}
	c := NewCached(src, time.Minute, time.Second)
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	ctx := context.Background()
	ask := func(id int32, want bool, asked int) {
		t.Helper()
		got, err := c.Registered(ctx, "s", id)
		if err != nil || got != want || src.asked != asked {
			t.Fatalf("id %d: %v %v after %d questions, want %v after %d", id, got, err, src.asked, want, asked)
		}
	}
	ask(1, true, 1)
	ask(1, true, 1) // cached
	ask(2, false, 2)
	ask(2, false, 2) // cached briefly
	now = now.Add(2 * time.Second)
	ask(2, false, 3) // the negative answer expired
	ask(1, true, 3)  // the positive one holds
	now = now.Add(time.Minute)
	ask(1, true, 4)
	if _, found, _ := c.RecordName(ctx, 1); !found || src.asked != 5 {
		t.Fatalf("record name: %v after %d", found, src.asked)
	}
	if _, _, _ = c.RecordName(ctx, 1); src.asked != 5 {
		t.Errorf("record name not cached")
	}
	src.err = errors.New("down")
	if _, err := c.Registered(ctx, "s", 3); err == nil {
		t.Fatal("error lost")
	}
	src.err = nil
	ask(3, false, 7) // errors are not cached
}
