package cli

import (
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

func TestParseSchemaSpec(t *testing.T) {
	for _, c := range []struct {
		in   string
		want schemaSpec
		err  bool
	}{
		{"order.avsc", schemaSpec{kind: specFile, path: "order.avsc"}, false},
		{"id:7", schemaSpec{kind: specID, id: 7}, false},
		{"id:0", schemaSpec{}, true},
		{"id:x", schemaSpec{}, true},
		{"subject:orders-value", schemaSpec{kind: specSubject, subject: "orders-value", version: -1}, false},
		{"subject:orders-value:3", schemaSpec{kind: specSubject, subject: "orders-value", version: 3}, false},
		{"subject:orders-value:latest", schemaSpec{kind: specSubject, subject: "orders-value", version: -1}, false},
		{"subject:a:b", schemaSpec{kind: specSubject, subject: "a:b", version: -1}, false}, // b is no version: part of the name
		{"subject:", schemaSpec{}, true},
		{"", schemaSpec{}, true},
	} {
		got, err := parseSchemaSpec("--value-schema", c.in)
		if (err != nil) != c.err || (err == nil && got != c.want) {
			t.Errorf("%q: %+v, %v", c.in, got, err)
		}
	}
}

func TestParseReferences(t *testing.T) {
	refs, err := parseReferences([]string{"com.acme.Address=address-value:2", "other.proto=a:b:1"})
	if err != nil || len(refs) != 2 || refs[0].Name != "com.acme.Address" || refs[0].Subject != "address-value" || refs[0].Version != 2 ||
		refs[1].Subject != "a:b" || refs[1].Version != 1 {
		t.Errorf("%+v %v", refs, err)
	}
	for _, bad := range []string{"x", "x=s", "x=s:0", "=s:1", "x=:1", "x=s:01"} {
		if _, err := parseReferences([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestSchemaFlagsRefused: schema flags that would do nothing are errors,
// and an unreachable registry is named.
func TestSchemaFlagsRefused(t *testing.T) {
	c := newTestCluster(t, kfake.SeedTopics(1, "t"))
	c.fails("--registry-url applies only when keys or values use a schema", "produce", "t", "--registry-url", "http://127.0.0.1:1")
	c.fails("--registry-url applies only when keys or values use a schema", "consume", "t", "--registry-url", "http://127.0.0.1:1")
	c.fails("--value-schema-type and --value-schema-message need --value-schema", "produce", "t", "--value-schema-type", "JSON")
	c.fails("--key-schema needs --key-separator", "produce", "t", "--key-schema", "id:1")
	c.fails(`invalid --value-format "avro": want raw or schema`, "consume", "t", "--value-format", "avro")
	c.fails("--value-format raw contradicts --value-schema", "consume", "t", "--value-format", "raw", "--value-schema", "id:1")
	c.fails(`invalid --registry-url "127.0.0.1:8081"`, "produce", "t", "--value-schema", "id:1", "--registry-url", "127.0.0.1:8081")
	c.fails(`invalid --subject-name-strategy "Nope"`, "produce", "t", "--value-schema", "id:1", "--subject-name-strategy", "Nope")
	c.fails("--value-schema-type applies to a schema file, not id:N", "produce", "t", "--value-schema", "id:1", "--value-schema-type", "AVRO",
		"--registry-url", closedURL(t))
	closed := closedURL(t)
	c.fails("--value-schema: cannot reach the schema registry at "+closed+": connection refused", "produce", "t", "--value-schema", "id:1", "--registry-url", closed)
}

// closedURL is a loopback URL nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}
