package serde

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
)

// The registry in these tests is Samsa's, inside a real `samsa serve`
// (samsa.schema.registry.listener), built once per test run.
func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

var registryRE = regexp.MustCompile(`msg="schema registry serving".* listener=([0-9.:]+)`)

// startRegistry runs samsa serve with its registry and returns the
// registry's URL.
func startRegistry(t *testing.T) string {
	t.Helper()
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	proc, found, err := devcluster.StartServe(ctx, bin, []string{"--override", "samsa.http.listener=", "--override", "samsa.schema.registry.listener=127.0.0.1:0",
		"--listeners", "PLAINTEXT://127.0.0.1:0", "--log.dirs", filepath.Join(t.TempDir(), "data")}, registryRE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proc.Kill)
	return "http://" + found[0][1]
}

// countingTransport counts the requests that reach the registry.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func newClient(t *testing.T, url string) (*sr.Client, *countingTransport) {
	t.Helper()
	ct := &countingTransport{}
	cl, err := sr.NewClient(sr.URLs(url), sr.HTTPClient(&http.Client{Transport: ct, Timeout: 10 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	return cl, ct
}

type order struct {
	ID     int64   `avro:"id"`
	Note   *string `avro:"note"`
	Status string  `avro:"status"`
}

const orderSchema = `{"type":"record","name":"Order","namespace":"com.acme","fields":[
 {"name":"id","type":"long"},{"name":"note","type":["null","string"],"default":null},
 {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID"]}}]}`

func TestSerdeWithRegistry(t *testing.T) {
	url := startRegistry(t)
	ctx := context.Background()
	cl, calls := newClient(t, url)

	t.Run("strategies", func(t *testing.T) {
		for _, c := range []struct {
			strategy SubjectNameStrategy
			isKey    bool
			want     string
		}{
			{TopicNameStrategy, false, "t1-value"},
			{TopicNameStrategy, true, "t1-key"},
			{RecordNameStrategy, false, "com.acme.Order"},
			{TopicRecordNameStrategy, true, "t1-com.acme.Order"},
		} {
			sd := New(cl, WithSubjectNameStrategy(c.strategy))
			enc, err := sd.ForTopic(ctx, "t1", c.isKey, Source{Text: orderSchema})
			if err != nil {
				t.Fatal(err)
			}
			if enc.Subject() != c.want {
				t.Errorf("subject %q, want %q", enc.Subject(), c.want)
			}
			got, err := cl.SubjectVersions(ctx, c.want)
			if err != nil || len(got) != 1 {
				t.Errorf("subject %q not registered: %v %v", c.want, got, err)
			}
		}
		_, err := New(cl, WithSubjectNameStrategy(RecordNameStrategy)).ForTopic(ctx, "t1", false, Source{Text: `"string"`})
		if err == nil || !strings.Contains(err.Error(), "RecordNameStrategy needs a named schema") {
			t.Errorf("RecordNameStrategy of a primitive: %v", err)
		}
	})

	t.Run("go values and caches", func(t *testing.T) {
		sd := New(cl)
		enc, err := sd.ForTopic(ctx, "t2", false, Source{Text: orderSchema})
		if err != nil {
			t.Fatal(err)
		}
		note := "n"
		payload, err := enc.Encode(order{ID: 7, Note: &note, Status: "PAID"})
		if err != nil {
			t.Fatal(err)
		}
		before := calls.n.Load()
		if _, err := sd.ForTopic(ctx, "t2", false, Source{Text: orderSchema}); err != nil {
			t.Fatal(err)
		}
		var back order
		if _, err := sd.Decode(ctx, payload, &back); err != nil {
			t.Fatal(err)
		}
		// The first decode of an ID fetches it; the registration was cached.
		if n := calls.n.Load() - before; n != 1 {
			t.Errorf("%d registry requests for a cached registration and a first decode, want 1", n)
		}
		before = calls.n.Load()
		text, _, err := sd.DecodeJSON(ctx, payload)
		if err != nil || string(text) != `{"id":7,"note":{"string":"n"},"status":"PAID"}` {
			t.Errorf("DecodeJSON: %s %v", text, err)
		}
		if n := calls.n.Load() - before; n != 0 {
			t.Errorf("%d registry requests for a cached ID", n)
		}
		if back.ID != 7 || *back.Note != "n" || back.Status != "PAID" {
			t.Errorf("decoded %+v", back)
		}
	})

	t.Run("franz-go interoperability", func(t *testing.T) {
		sd := New(cl)
		enc, err := sd.ForTopic(ctx, "t3", false, Source{Text: orderSchema})
		if err != nil {
			t.Fatal(err)
		}
		id := enc.Schema().ID
		avs := avro.MustParse(orderSchema)
		var franz sr.Serde
		franz.Register(id, order{},
			sr.EncodeFn(func(v any) ([]byte, error) { return avro.Marshal(avs, v) }),
			sr.DecodeFn(func(b []byte, v any) error { return avro.Unmarshal(avs, b, v) }))
		ours, err := enc.EncodeJSON([]byte(`{"id":5,"note":null,"status":"NEW"}`))
		if err != nil {
			t.Fatal(err)
		}
		var o order
		if err := franz.Decode(ours, &o); err != nil || o.ID != 5 || o.Note != nil || o.Status != "NEW" {
			t.Errorf("franz-go decodes ours as %+v, %v", o, err)
		}
		theirs, err := franz.Encode(order{ID: 6, Status: "PAID"})
		if err != nil {
			t.Fatal(err)
		}
		text, _, err := sd.DecodeJSON(ctx, theirs)
		if err != nil || string(text) != `{"id":6,"note":null,"status":"PAID"}` {
			t.Errorf("we decode franz-go's as %s, %v", text, err)
		}
		if string(theirs) != string(ours[:5])+string(theirs[5:]) {
			t.Errorf("headers differ: % x and % x", theirs[:5], ours[:5])
		}
	})

	t.Run("auto-register off and latest version", func(t *testing.T) {
		_, err := New(cl, AutoRegister(false)).ForTopic(ctx, "t4", false, Source{Text: orderSchema})
		if !errors.Is(err, ErrSchemaNotFound) {
			t.Fatalf("lookup of an unregistered schema: %v", err)
		}
		if _, err := cl.RegisterSchema(ctx, "t4-value", sr.Schema{Schema: `"string"`}, -1, -1); err != nil {
			t.Fatal(err)
		}
		sd := New(cl, UseLatestVersion(true), AutoRegister(false))
		enc, err := sd.ForTopic(ctx, "t4", false, Source{Text: `"long"`}) // names the subject only
		if err != nil {
			t.Fatal(err)
		}
		if enc.Schema().Text != `"string"` {
			t.Errorf("use latest took %s", enc.Schema().Text)
		}
	})

	t.Run("errors", func(t *testing.T) {
		sd := New(cl)
		_, _, err := sd.DecodeJSON(ctx, []byte{0, 0, 0, 0x7f, 0})
		if !errors.Is(err, ErrSchemaNotFound) || !strings.Contains(err.Error(), "schema id 32512") {
			t.Errorf("unknown id: %v", err)
		}
		enc, err := sd.ForTopic(ctx, "t5", false, Source{Text: orderSchema})
		if err != nil {
			t.Fatal(err)
		}
		good, _ := enc.EncodeJSON([]byte(`{"id":1,"status":"NEW"}`))
		if _, _, err := sd.DecodeJSON(ctx, good[:len(good)-1]); !errors.Is(err, ErrPayloadMismatch) {
			t.Errorf("truncated payload: %v", err)
		}
		if _, err := enc.Encode(struct{ X int }{1}); !errors.Is(err, ErrInvalidValue) {
			t.Errorf("a value of another shape: %v", err)
		}
	})

	t.Run("json schema", func(t *testing.T) {
		sd := New(cl, ValidateOnDecode(true))
		enc, err := sd.ForTopic(ctx, "t6", false, Source{Type: schema.JSON, Text: `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`})
		if err != nil {
			t.Fatal(err)
		}
		payload, err := enc.Encode(map[string]int{"n": 3})
		if err != nil || string(payload[5:]) != `{"n":3}` {
			t.Fatalf("encode: %q %v", payload, err)
		}
		var back map[string]int
		if _, err := sd.Decode(ctx, payload, &back); err != nil || back["n"] != 3 {
			t.Errorf("decode: %v %v", back, err)
		}
		if _, err := enc.Encode(map[string]string{"n": "x"}); !errors.Is(err, ErrInvalidValue) {
			t.Errorf("invalid document: %v", err)
		}
		bad := append(append([]byte{}, payload[:5]...), `{"m":1}`...)
		if _, _, err := sd.DecodeJSON(ctx, bad); !errors.Is(err, ErrPayloadMismatch) {
			t.Errorf("decode of an invalid document with validation on: %v", err)
		}
		if _, _, err := New(cl).DecodeJSON(ctx, bad); err != nil {
			t.Errorf("decode with validation off: %v", err)
		}
	})

	t.Run("protobuf", func(t *testing.T) {
		sd := New(cl)
		text := "syntax = \"proto3\";\npackage p;\nmessage A { string s = 1; }\nmessage B { message C { int32 n = 1; } C c = 1; }\n"
		enc, err := sd.ForTopic(ctx, "t7", false, Source{Type: schema.Protobuf, Text: text, Message: "p.B.C"})
		if err != nil {
			t.Fatal(err)
		}
		md := enc.msg
		m := dynamicpb.NewMessage(md)
		m.Set(md.Fields().ByName("n"), protoreflectInt(9))
		payload, err := enc.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := payload[5:8]; string(got) != "\x04\x02\x00" {
			t.Errorf("indexes of p.B.C: % x", got)
		}
		back := dynamicpb.NewMessage(md)
		if _, err := sd.Decode(ctx, payload, back); err != nil || !proto.Equal(back, m) {
			t.Errorf("decode: %v %v", back, err)
		}
		bad := append(append([]byte{}, payload[:5]...), 2, 8) // index 4: B has one nested message
		if _, _, err := sd.DecodeJSON(ctx, bad); !errors.Is(err, ErrBadMessageIndexes) {
			t.Errorf("index out of range: %v", err)
		}
	})
}

func protoreflectInt(n int32) protoreflect.Value { return protoreflect.ValueOfInt32(n) }
