package schemaregistry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
)

// The record names of Confluent's RecordNameStrategy: AvroSchema.name()
// (a record's full name, null for anything else), JsonSchema.name() (the
// title), and for Protobuf ProtobufSchema.toMessageName of the record's
// message indexes, which count the messages the text declares (not map
// entries).
func TestRecordName(t *testing.T) {
	for _, c := range []struct {
		typ, text string
		indexes   []int // PROTOBUF
		want      string
	}{
		{"", `{"type":"record","name":"Order","namespace":"com.acme","fields":[]}`, nil, "com.acme.Order"},
		{"AVRO", `{"type":"record","name":"com.acme.Order","namespace":"org.other","fields":[]}`, nil, "com.acme.Order"},
		{"AVRO", `{"type":"record","name":"Order","fields":[]}`, nil, "Order"},
		{"AVRO", `{"type":"error","name":"Oops","namespace":"x","fields":[]}`, nil, "x.Oops"},
		{"AVRO", `{"type":"enum","name":"Suit","symbols":["A"]}`, nil, ""},
		{"AVRO", `"string"`, nil, ""},
		{"AVRO", `["null","string"]`, nil, ""},
		{"AVRO", `not json`, nil, ""},
		{"JSON", `{"title":"Order","type":"object"}`, nil, "Order"},
		{"JSON", `{"type":"object"}`, nil, ""},
		{"JSON", `true`, nil, ""},
		{"PROTOBUF", pbOrders, []int{0}, "acme.Order"},
		{"PROTOBUF", pbOrders, []int{}, "acme.Order"}, // Confluent's default, the first message
		{"PROTOBUF", pbOrders, []int{0, 0}, "acme.Order.Line"},
		{"PROTOBUF", pbOrders, []int{1}, "acme.Refund"},
		{"PROTOBUF", pbOrders, []int{1, 0}, "acme.Refund.Reason"}, // after a map field's entry
		{"PROTOBUF", pbOrders, []int{2}, ""},
		{"PROTOBUF", pbOrders, []int{1, 1}, ""},
		{"PROTOBUF", pbOrders, []int{0, 0, 0}, ""},
		{"PROTOBUF", `syntax = "proto3"; message Top {}`, []int{0}, "Top"}, // no package
		{"PROTOBUF", `syntax = "proto3"; package acme; enum E { Z = 0; }`, []int{0}, ""},
	} {
		var name, why string
		if c.typ == "PROTOBUF" {
			p, err := schema.Parse(schema.Protobuf, c.text, nil)
			if err != nil {
				t.Fatal(err)
			}
			name, why = ProtobufRecordName(p, c.indexes)
			if _, whyText := RecordName(c.typ, c.text); whyText == "" {
				t.Errorf("%s: a record name without message indexes", c.text)
			}
		} else {
			name, why = RecordName(c.typ, c.text)
		}
		if name != c.want || (name == "") == (why == "") {
			t.Errorf("%s %s %v: %q (why %q), want %q", c.typ, c.text, c.indexes, name, why, c.want)
		}
	}
}

// pbOrders declares two top-level messages, each with a nested one;
// Refund's map field makes an entry message before Reason.
const pbOrders = `syntax = "proto3";
package acme;
message Order { string id = 1; message Line { string sku = 1; } repeated Line lines = 2; }
message Refund { map<string, int32> amounts = 1; message Reason { string text = 1; } Reason reason = 2; }
`

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
	// A Protobuf schema that imports another: parsing it for its message
	// names needs the reference, which the HTTP path fetches too.
	if _, err := cl.CreateSchema(ctx, "money.proto", sr.Schema{Type: sr.TypeProtobuf,
		Schema: `syntax = "proto3"; package acme.common; message Money { int64 units = 1; }`}); err != nil {
		t.Fatal(err)
	}
	pb, err := cl.CreateSchema(ctx, "orders-pb-value", sr.Schema{Type: sr.TypeProtobuf,
		Schema:     strings.Replace(pbOrders, "package acme;", `package acme; import "money.proto";`, 1) + "message Total { acme.common.Money m = 1; }\n",
		References: []sr.SchemaReference{{Name: "money.proto", Subject: "money.proto", Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	pbID := int32(pb.ID)
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
		if n, why, err := src.RecordName(ctx, id, nil); err != nil || n != "com.acme.Order" || why != "" {
			t.Errorf("%s: record name %q %q %v", name, n, why, err)
		}
		if n, why, err := src.RecordName(ctx, 999, nil); err != nil || n != "" || why == "" {
			t.Errorf("%s: record name of an unknown id: %q %q %v", name, n, why, err)
		}
		for _, c := range []struct {
			id   int32
			want string
		}{{id, "AVRO"}, {pbID, "PROTOBUF"}, {999, ""}} {
			typ, found, err := src.SchemaType(ctx, c.id)
			if err != nil || typ != c.want && found || found != (c.want != "") {
				t.Errorf("%s: type of %d: %q %v %v, want %q", name, c.id, typ, found, err, c.want)
			}
		}
		for _, c := range []struct {
			id      int32
			indexes []int
			want    string // "": none, with a reason containing why
			why     string
		}{
			{pbID, []int{0}, "acme.Order", ""},
			{pbID, []int{0, 0}, "acme.Order.Line", ""},
			{pbID, []int{1, 0}, "acme.Refund.Reason", ""},
			{pbID, []int{2}, "acme.Total", ""},
			{pbID, []int{3}, "", "the file declares 3 messages, no index 3"},
			{pbID, []int{1, 1}, "", "message acme.Refund declares 1 messages, no index 1"},
			{pbID, nil, "", "message indexes"},
			{999, []int{0}, "", "no schema has the ID"},
		} {
			n, why, err := src.RecordName(ctx, c.id, c.indexes)
			if err != nil || n != c.want || !strings.Contains(why, c.why) || (n == "") == (why == "") {
				t.Errorf("%s: record name of %d %v: %q (why %q) %v, want %q (why with %q)", name, c.id, c.indexes, n, why, err, c.want, c.why)
			}
		}
		if ok, err := src.Registered(ctx, "orders-pb-value", pbID); err != nil || !ok {
			t.Errorf("%s: Protobuf ID not registered: %v %v", name, ok, err)
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

func (s *countingSource) SchemaType(_ context.Context, id int32) (string, bool, error) {
	s.asked++
	return "PROTOBUF", id == 1, s.err
}

// RecordName names message [0] of ID 1 only.
func (s *countingSource) RecordName(_ context.Context, id int32, indexes []int) (string, string, error) {
	s.asked++
	if id == 1 && len(indexes) == 1 && indexes[0] == 0 {
		return "n", "", s.err
	}
	return "", "none", s.err
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
	if n, _, _ := c.RecordName(ctx, 1, []int{0}); n != "n" || src.asked != 5 {
		t.Fatalf("record name: %q after %d", n, src.asked)
	}
	if n, _, _ := c.RecordName(ctx, 1, []int{0}); n != "n" || src.asked != 5 {
		t.Errorf("record name not cached")
	}
	if n, why, _ := c.RecordName(ctx, 1, []int{1}); n != "" || why != "none" || src.asked != 6 {
		t.Errorf("other indexes answered from the cache: %q %q after %d", n, why, src.asked)
	}
	if _, _, _ = c.RecordName(ctx, 1, nil); src.asked != 7 {
		t.Errorf("no indexes answered from the cache of others")
	}
	if typ, found, _ := c.SchemaType(ctx, 1); typ != "PROTOBUF" || !found || src.asked != 8 {
		t.Errorf("schema type: %q %v after %d", typ, found, src.asked)
	}
	if _, _, _ = c.SchemaType(ctx, 1); src.asked != 8 {
		t.Errorf("schema type not cached")
	}
	now = now.Add(2 * time.Second)
	if _, _, _ = c.RecordName(ctx, 1, []int{1}); src.asked != 9 {
		t.Errorf("an answer without a name kept beyond the negative TTL")
	}
	src.err = errors.New("down")
	if _, err := c.Registered(ctx, "s", 3); err == nil {
		t.Fatal("error lost")
	}
	src.err = nil
	ask(3, false, 11) // errors are not cached
}
