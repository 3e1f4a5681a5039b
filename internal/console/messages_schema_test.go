package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/pkg/serde"
)

var (
	msgsServingRE   = regexp.MustCompile(`samsa serving.*`)
	msgsRegistryRE  = regexp.MustCompile(`msg="schema registry serving".* listener=([0-9.:]+)`)
	msgsPlaintextRE = regexp.MustCompile(`(?:^|[^A-Z_])PLAINTEXT://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)
)

// msgsStartWithRegistry starts a broker with its Schema Registry on and
// answers the broker's address and the registry's URL.
func msgsStartWithRegistry(t *testing.T) (string, string) {
	t.Helper()
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	proc, found, err := devcluster.StartServe(sctx, bin, []string{"--override", "samsa.http.listener=",
		"--override", "samsa.schema.registry.listener=127.0.0.1:0", "--override", "samsa.rest.listener=",
		"--listeners", "PLAINTEXT://127.0.0.1:0", "--log.dirs", filepath.Join(t.TempDir(), "data")}, msgsServingRE, msgsRegistryRE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proc.Kill)
	m := msgsPlaintextRE.FindStringSubmatch(found[0][0])
	if m == nil {
		t.Fatalf("no PLAINTEXT listener in %q", found[0][0])
	}
	return m[1], "http://" + found[1][1]
}

const msgsOrderAvro = `{"type":"record","name":"Order","namespace":"com.acme","fields":[{"name":"id","type":"long"},{"name":"item","type":"string"}]}`

// TestMessagesSchemaDecode: a value in the wire format is decoded through
// the registry (Avro, labelled with its schema ID and subject), filters
// see the decoded value, the produce form encodes with a subject's
// latest schema, downloads carry the decoded JSON; an unknown schema ID
// or a registry that is down shows the hex with the reason, not an error.
func TestMessagesSchemaDecode(t *testing.T) {
	addr, regURL := msgsStartWithRegistry(t)
	tc := startConsoleOn(t, addr, Config{RegistryURL: regURL})
	msgsLongReads(t)
	reg, err := sr.NewClient(sr.URLs(regURL))
	if err != nil {
		t.Fatal(err)
	}
	ss, err := reg.CreateSchema(ctx(t), "orders-value", sr.Schema{Schema: msgsOrderAvro})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := serde.New(reg).ForSubject(ctx(t), "orders-value", -1, "")
	if err != nil {
		t.Fatal(err)
	}
	apple, err := enc.EncodeJSON([]byte(`{"id":7,"item":"apple"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tc.Admin.CreateTopic(ctx(t), 1, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	unknown := serde.AppendHeader(nil, 999)
	unknown = append(unknown, 0x02, 0x04)
	msgsProduce(t, tc, &kgo.Record{Topic: "orders", Partition: 0, Key: []byte("o7"), Value: apple},
		&kgo.Record{Topic: "orders", Partition: 0, Key: []byte("o?"), Value: unknown})

	st, body := tc.get("/topics/orders/messages")
	if st != 200 {
		t.Fatalf("status %d:\n%s", st, body)
	}
	wantContains(t, body, fmt.Sprintf("Avro · schema %d · orders-value", ss.ID), "&#34;item&#34;: &#34;apple&#34;",
		"schema id 999", "00 00 00 03 e7 02 04")
	msgsWant(t, tc, "/topics/orders/messages?expr="+url.QueryEscape(`json.item == "apple" && json.id == 7`), []string{"0/0"})
	msgsWant(t, tc, "/topics/orders/messages?value=apple", []string{"0/0"})

	// Produce through the form with the subject's latest schema.
	st, _, loc := tc.post("/topics/orders/messages/produce", url.Values{"key": {"o8"}, "value": {`{"id":8,"item":"pear"}`}, "subject": {"orders-value"}})
	if st != http.StatusSeeOther || loc != "/topics/orders/messages/0/2?done=produced" {
		t.Fatalf("produce: status %d to %q", st, loc)
	}
	rec := msgsReadOne(t, tc, "orders", 0, 2)
	text, sch, err := serde.New(reg).DecodeJSON(ctx(t), rec.Value)
	if err != nil || sch.ID != ss.ID || string(text) != `{"id":8,"item":"pear"}` {
		t.Fatalf("produced value %x: %s (schema %v): %v", rec.Value, text, sch, err)
	}
	_, body = tc.get(loc)
	wantContains(t, body, "Avro · schema", "&#34;item&#34;: &#34;pear&#34;")
	st, body, _ = tc.post("/topics/orders/messages/produce", url.Values{"value": {`{"id":"nine"}`}, "subject": {"orders-value"}})
	if st != http.StatusBadRequest || !strings.Contains(body, "does not fit") {
		t.Fatalf("a value that does not fit the schema: status %d:\n%s", st, body)
	}
	st, body, _ = tc.post("/topics/orders/messages/produce", url.Values{"value": {`{}`}, "subject": {"no-such-subject"}})
	if st != http.StatusBadRequest {
		t.Fatalf("an unknown subject: status %d:\n%s", st, body)
	}

	lines, _ := msgsDownload(t, tc, "/topics/orders/messages/download?from=oldest")
	if len(lines) != 3 || lines[0].ValueEncoding != "registry" || lines[0].ValueSchemaID != ss.ID ||
		string(lines[0].Value) != `{"id":7,"item":"apple"}` || lines[1].ValueEncoding != "base64" {
		t.Fatalf("download: %+v", lines)
	}

	// The registry down: the values show as hex with the reason.
	down := startConsoleOn(t, addr, Config{RegistryURL: msgsClosedURL(t)})
	st, body = down.get("/topics/orders/messages")
	if st != 200 {
		t.Fatalf("registry down: status %d:\n%s", st, body)
	}
	wantContains(t, body, "the Schema Registry failed", "binary")
	if strings.Contains(body, "&#34;item&#34;") {
		t.Fatalf("decoded without a registry:\n%s", body)
	}
}
