package serde

import (
	"context"
	"encoding/binary"
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
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/samsa-io/samsa/internal/devcluster"
	pkgserde "github.com/samsa-io/samsa/pkg/serde"
)

// The registry in these tests is Samsa's, inside a real `samsa serve`
// (cmd/samsa built once per test run), as pkg/serde's tests run it.
func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

var registryRE = regexp.MustCompile(`msg="schema registry serving".* listener=([0-9.:]+)`)

// countingTransport counts the requests that reach the registry.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func startRegistry(t *testing.T) (*sr.Client, *countingTransport) {
	t.Helper()
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	proc, found, err := devcluster.StartServe(ctx, bin, []string{"--override", "samsa.http.listener=", "--override", "samsa.schema.registry.listener=127.0.0.1:0",
		"--override", "samsa.rest.listener=", "--listeners", "PLAINTEXT://127.0.0.1:0", "--log.dirs", filepath.Join(t.TempDir(), "data")}, registryRE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proc.Kill)
	ct := &countingTransport{}
	cl, err := sr.NewClient(sr.URLs("http://"+found[0][1]), sr.HTTPClient(&http.Client{Transport: ct, Timeout: 10 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	return cl, ct
}

type order struct {
	ID   int64  `avro:"id" json:"id"`
	Item string `avro:"item" json:"item"`
}

const orderAvro = `{"type":"record","name":"Order","namespace":"com.acme","fields":[{"name":"id","type":"long"},{"name":"item","type":"string"}]}`

const orderJSONSchema = `{"title":"Order","type":"object","properties":{"id":{"type":"integer"},"item":{"type":"string"}},"required":["id","item"]}`

// The Protobuf schema of a generated type the module already has.
const timestampProto = "syntax = \"proto3\";\npackage google.protobuf;\nmessage Timestamp { int64 seconds = 1; int32 nanos = 2; }\n"

// wireHeader reads Confluent's header: magic byte 0, then the schema ID.
func wireHeader(t *testing.T, b []byte) int {
	t.Helper()
	if len(b) < 5 || b[0] != 0 {
		t.Fatalf("not Confluent's wire format: % x", b)
	}
	return int(binary.BigEndian.Uint32(b[1:5]))
}

// registered is the ID of the latest schema under subject.
func registered(t *testing.T, cl *sr.Client, subject string) int {
	t.Helper()
	ss, err := cl.SchemaByVersion(context.Background(), subject, -1)
	if err != nil {
		t.Fatalf("subject %q: %v", subject, err)
	}
	return ss.ID
}

func TestRegistrySerdes(t *testing.T) {
	cl, calls := startRegistry(t)
	reg := pkgserde.New(cl)

	t.Run("avro", func(t *testing.T) {
		s := Avro[order](reg, orderAvro, false)
		b, err := s.Serialize("orders", order{ID: 7, Item: "tea"})
		if err != nil {
			t.Fatal(err)
		}
		if id := wireHeader(t, b); id != registered(t, cl, "orders-value") {
			t.Errorf("written with schema %d, not the one of orders-value", id)
		}
		// The body is plain Avro binary: read it with hamba/avro alone.
		var direct order
		if err := avro.Unmarshal(avro.MustParse(orderAvro), b[5:], &direct); err != nil || direct != (order{7, "tea"}) {
			t.Errorf("Avro body read as %+v %v", direct, err)
		}
		back, err := s.Deserialize("orders", b)
		if err != nil || back != (order{7, "tea"}) {
			t.Errorf("read back %+v %v", back, err)
		}
		// The topic's encoder and the ID's schema are kept: no more requests.
		before := calls.n.Load()
		for i := range 50 {
			b, err := s.Serialize("orders", order{ID: int64(i)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Deserialize("orders", b); err != nil {
				t.Fatal(err)
			}
		}
		if n := calls.n.Load() - before; n != 0 {
			t.Errorf("%d registry requests for 50 records of a known topic", n)
		}
		k := Avro[order](reg, orderAvro, true)
		kb, err := k.Serialize("orders", order{ID: 1})
		if err != nil {
			t.Fatal(err)
		}
		if id := wireHeader(t, kb); id != registered(t, cl, "orders-key") {
			t.Errorf("key written with schema %d, not the one of orders-key", id)
		}
	})

	t.Run("use latest version", func(t *testing.T) {
		ctx := context.Background()
		latestID, err := cl.RegisterSchema(ctx, "latest-value", sr.Schema{Schema: orderAvro}, -1, -1)
		if err != nil {
			t.Fatal(err)
		}
		// Confluent's use.latest.version keeps the latest it found (its
		// cache TTL is forever by default); so does the topic's encoder.
		s := Avro[order](pkgserde.New(cl, pkgserde.UseLatestVersion(true), pkgserde.AutoRegister(false)), `"string"`, false)
		b, err := s.Serialize("latest", order{ID: 1})
		if err != nil {
			t.Fatal(err)
		}
		if id := wireHeader(t, b); id != latestID {
			t.Errorf("written with schema %d, the latest is %d", id, latestID)
		}
		before := calls.n.Load()
		for range 20 {
			if _, err := s.Serialize("latest", order{ID: 2}); err != nil {
				t.Fatal(err)
			}
		}
		if n := calls.n.Load() - before; n != 0 {
			t.Errorf("%d registry requests for 20 records of a known topic", n)
		}
	})

	t.Run("json schema", func(t *testing.T) {
		s := JSONSchema[order](reg, orderJSONSchema, false)
		b, err := s.Serialize("orders-js", order{ID: 3, Item: "milk"})
		if err != nil {
			t.Fatal(err)
		}
		if id := wireHeader(t, b); id != registered(t, cl, "orders-js-value") {
			t.Errorf("written with schema %d", id)
		}
		if string(b[5:]) != `{"id":3,"item":"milk"}` {
			t.Errorf("body %s", b[5:])
		}
		back, err := s.Deserialize("orders-js", b)
		if err != nil || back != (order{3, "milk"}) {
			t.Errorf("read back %+v %v", back, err)
		}
		// A value the schema refuses is not written.
		bad := JSONSchema[map[string]any](reg, orderJSONSchema, false)
		if _, err := bad.Serialize("orders-js", map[string]any{"id": "x"}); !errors.Is(err, pkgserde.ErrInvalidValue) {
			t.Errorf("invalid value: %v", err)
		}
	})

	t.Run("protobuf", func(t *testing.T) {
		s := Protobuf[*timestamppb.Timestamp](reg, timestampProto, true)
		in := &timestamppb.Timestamp{Seconds: 1700000000, Nanos: 5}
		b, err := s.Serialize("ticks", in)
		if err != nil {
			t.Fatal(err)
		}
		if id := wireHeader(t, b); id != registered(t, cl, "ticks-key") {
			t.Errorf("written with schema %d", id)
		}
		// Message indexes [0] are written as the single byte 0, then the message.
		body, _ := proto.Marshal(in)
		if b[5] != 0 || string(b[6:]) != string(body) {
			t.Errorf("after the header: % x, want 00 % x", b[5:], body)
		}
		back, err := s.Deserialize("ticks", b)
		if err != nil || !proto.Equal(back, in) {
			t.Errorf("read back %v %v", back, err)
		}
		// A dynamic message type cannot make its own messages: an error, no panic.
		dyn := Protobuf[*dynamicpb.Message](reg, timestampProto, false)
		if _, err := dyn.Deserialize("ticks", b); err == nil || !strings.Contains(err.Error(), "generated message type") {
			t.Errorf("dynamicpb: %v", err)
		}
	})

	t.Run("invalid data", func(t *testing.T) {
		s := Avro[order](reg, orderAvro, false)
		good, err := s.Serialize("orders", order{ID: 1, Item: "x"})
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string][]byte{
			"empty":      {},
			"short":      {0, 0, 0},
			"magic byte": append([]byte{1}, good[1:]...),
			"truncated":  good[:len(good)-1],
		} {
			if _, err := s.Deserialize("orders", data); !errors.Is(err, ErrInvalidData) {
				t.Errorf("%s: %v, want ErrInvalidData", name, err)
			}
		}
		unknown := append([]byte{0, 0, 0, 0x7f, 0}, good[5:]...)
		if _, err := s.Deserialize("orders", unknown); !errors.Is(err, pkgserde.ErrSchemaNotFound) || errors.Is(err, ErrInvalidData) {
			t.Errorf("unknown schema ID: %v", err)
		}
		if _, err := Avro[order](reg, `{"type":"nope"}`, false).Serialize("orders", order{}); err == nil {
			t.Error("an invalid schema serialized")
		}
		if _, err := Avro[order](nil, orderAvro, false).Serialize("orders", order{}); err == nil {
			t.Error("no registry serialized")
		}
	})
}
