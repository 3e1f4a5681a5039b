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

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/internal/devcluster"
)

var (
	schemasServingRE   = regexp.MustCompile(`samsa serving.*`)
	schemasPlaintextRE = regexp.MustCompile(`(?:^|[^A-Z_])PLAINTEXT://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)
	schemasRegistryRE  = regexp.MustCompile(`msg="schema registry serving".* listener=([0-9.:]+)`)
	schemasConnectRE   = regexp.MustCompile(`msg="connect worker starting".* listener=([0-9.:]+)`)
)

// schemasStartServe runs a real samsa serve with its Schema Registry
// and, when withConnect, its Connect worker, each on a port the kernel
// picks (read from the log); it answers the broker's address, the
// registry's URL, Connect's URL ("" without) and the process.
func schemasStartServe(t *testing.T, withConnect bool) (broker, registry, connect string, proc *devcluster.Serve) {
	t.Helper()
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	args := []string{"--override", "samsa.http.listener=", "--override", "samsa.rest.listener=",
		"--override", "samsa.schema.registry.listener=127.0.0.1:0",
		"--listeners", "PLAINTEXT://127.0.0.1:0", "--log.dirs", filepath.Join(t.TempDir(), "data")}
	patterns := []*regexp.Regexp{schemasServingRE, schemasRegistryRE}
	if withConnect {
		args = append(args, "--override", "samsa.connect.listener=127.0.0.1:0")
		patterns = append(patterns, schemasConnectRE)
	}
	proc, found, err := devcluster.StartServe(ctx, bin, args, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		proc.Kill()
		if t.Failed() {
			t.Logf("broker log (last lines):\n%s", proc.Tail())
		}
	})
	m := schemasPlaintextRE.FindStringSubmatch(found[0][0])
	if m == nil {
		t.Fatalf("no PLAINTEXT listener in %q", found[0][0])
	}
	broker, registry = m[1], "http://"+found[1][1]
	if withConnect {
		connect = "http://" + found[2][1]
	}
	return broker, registry, connect, proc
}

const (
	schemasOrderV1 = `{"type":"record","name":"Order","namespace":"com.acme","fields":[{"name":"id","type":"int"}]}`
	schemasOrderV2 = `{"type":"record","name":"Order","namespace":"com.acme","fields":[{"name":"id","type":"long"},{"name":"note","type":"string","default":""}]}`
	// schemasOrderBad adds a field without a default: under BACKWARD the
	// new reader cannot read old records.
	schemasOrderBad = `{"type":"record","name":"Order","namespace":"com.acme","fields":[{"name":"id","type":"long"},{"name":"note","type":"string","default":""},{"name":"qty","type":"int"}]}`
)

// TestSchemasPage drives the Schema Registry page against Samsa's own
// registry inside a real samsa serve: registering two Avro versions
// through the form (the registry then holds them), the diff page, an
// incompatible schema refused with the registry's message (and not
// registered), compatibility levels set and dropped, an invalid schema,
// and deletes.
func TestSchemasPage(t *testing.T) {
	addr, regURL, _, _ := schemasStartServe(t, false)
	tc := startConsoleOn(t, addr, Config{RegistryURL: regURL})
	reg, err := sr.NewClient(sr.URLs(regURL))
	if err != nil {
		t.Fatal(err)
	}
	const subject = "orders-value"

	t.Run("register two versions", func(t *testing.T) {
		for i, text := range []string{schemasOrderV1, schemasOrderV2} {
			st, body, loc := tc.post("/schemas/new", url.Values{"subject": {subject}, "type": {"AVRO"}, "schema": {text}, "check": {"yes"}})
			if st != http.StatusSeeOther || !strings.HasPrefix(loc, "/schemas/"+subject) {
				t.Fatalf("register v%d: status %d to %q:\n%s", i+1, st, loc, body)
			}
		}
		versions, err := reg.SubjectVersions(ctx(t), subject)
		if err != nil || len(versions) != 2 {
			t.Fatalf("registry versions %v, %v; want 2", versions, err)
		}
		latest, err := reg.SchemaByVersion(ctx(t), subject, -1)
		if err != nil || !strings.Contains(latest.Schema.Schema, `"note"`) {
			t.Fatalf("latest %+v, %v; want the note field", latest, err)
		}
		st, body := tc.get("/schemas")
		if st != 200 {
			t.Fatalf("list: %d\n%s", st, body)
		}
		wantContains(t, body, `href="/schemas/orders-value"`, "AVRO", "BACKWARD (global)")
		st, body = tc.get("/schemas/" + subject)
		if st != 200 {
			t.Fatalf("subject page: %d\n%s", st, body)
		}
		// Pretty-printed: the fields sit on lines of their own.
		wantContains(t, body, "\n      &#34;name&#34;: &#34;note&#34;,", "Diff v1 → v2")
		if st, body := tc.get("/schemas?q=ORDERS"); st != 200 || !strings.Contains(body, "orders-value") {
			t.Fatalf("search: %d\n%s", st, body)
		}
		if st, body := tc.get("/schemas?q=nomatch"); st != 200 || strings.Contains(body, `href="/schemas/orders-value"`) {
			t.Fatalf("search for nothing: %d\n%s", st, body)
		}
	})

	t.Run("diff", func(t *testing.T) {
		st, body := tc.get("/schemas/" + subject + "/diff?from=1&to=2")
		if st != 200 {
			t.Fatalf("diff: %d\n%s", st, body)
		}
		// The id field changed type (int to long, which BACKWARD allows):
		// the old line removed (-), the new one added (+), and the new
		// field's lines added; marker and colour class together.
		added := regexp.MustCompile(`(?s)<tr class="schemas-add">.{0,200}<span title="added">\+</span>.{0,120}&#34;name&#34;: &#34;note&#34;`)
		if !added.MatchString(body) {
			t.Fatalf("the diff does not show the note field added with +:\n%s", body)
		}
		removed := regexp.MustCompile(`(?s)<tr class="schemas-del">.{0,200}<span title="removed">-</span>.{0,120}&#34;type&#34;: &#34;int&#34;`)
		if !removed.MatchString(body) {
			t.Fatalf("the diff does not show id's old type removed with -:\n%s", body)
		}
		if !regexp.MustCompile(`(?s)<tr class="schemas-add">.{0,200}<span title="added">\+</span>.{0,120}&#34;type&#34;: &#34;long&#34;`).MatchString(body) {
			t.Fatalf("the diff does not show id's new type added with +:\n%s", body)
		}
		wantContains(t, body, "lines added (+)", "lines removed (−)")
		if st, body := tc.get("/schemas/" + subject + "/diff?from=x&to=2"); st != http.StatusBadRequest {
			t.Fatalf("diff from=x: %d, want 400\n%s", st, body)
		}
		if st, body := tc.get("/schemas/" + subject + "/diff?from=1&to=9"); st != http.StatusNotFound {
			t.Fatalf("diff to a missing version: %d, want 404\n%s", st, body)
		}
	})

	t.Run("incompatible refused", func(t *testing.T) {
		for _, check := range []string{"yes", ""} {
			st, body, _ := tc.post("/schemas/new", url.Values{"subject": {subject}, "type": {"AVRO"}, "schema": {schemasOrderBad}, "check": {check}})
			if st != http.StatusConflict {
				t.Fatalf("check=%q: status %d, want 409:\n%s", check, st, body)
			}
			// The registry's own message, and the user's input kept.
			wantContains(t, body, `id="schemas-error"`, "qty", `value="orders-value"`)
			if check == "yes" {
				// The check's own answer: its verdict and the registry's messages.
				wantContains(t, body, "not compatible with the subject&#39;s latest version", "<li>{errorType:&#39;READER_FIELD_MISSING_DEFAULT_VALUE&#39;")
			}
			if !strings.Contains(body, "&#34;name&#34;:&#34;qty&#34;") {
				t.Fatalf("the form lost the schema typed:\n%s", body)
			}
		}
		versions, err := reg.SubjectVersions(ctx(t), subject)
		if err != nil || len(versions) != 2 {
			t.Fatalf("after the refusal the registry has %v, %v; want 2 versions", versions, err)
		}
	})

	t.Run("invalid schema", func(t *testing.T) {
		st, body, _ := tc.post("/schemas/new", url.Values{"subject": {"other-value"}, "type": {"AVRO"}, "schema": {`{"type":"recordd"}`}, "check": {"yes"}})
		if st != http.StatusUnprocessableEntity {
			t.Fatalf("invalid schema: status %d, want 422:\n%s", st, body)
		}
		wantContains(t, body, "the registry refused the schema", "recordd")
		if st, body, _ := tc.post("/schemas/new", url.Values{"subject": {""}, "type": {"AVRO"}, "schema": {schemasOrderV1}}); st != http.StatusBadRequest || !strings.Contains(body, "subject is required") {
			t.Fatalf("no subject: %d\n%s", st, body)
		}
		if st, body, _ := tc.post("/schemas/new", url.Values{"subject": {"x"}, "type": {"XML"}, "schema": {"<a/>"}}); st != http.StatusBadRequest {
			t.Fatalf("type XML: %d\n%s", st, body)
		}
		if subs, err := reg.Subjects(ctx(t)); err != nil || len(subs) != 1 {
			t.Fatalf("subjects %v, %v; want only %s", subs, err, subject)
		}
	})

	t.Run("compatibility", func(t *testing.T) {
		// NONE for the subject: the schema refused above now registers.
		st, body, loc := tc.post("/schemas/"+subject+"/config", url.Values{"compatibility": {"NONE"}})
		if st != http.StatusSeeOther {
			t.Fatalf("set NONE: %d %q\n%s", st, loc, body)
		}
		if res := reg.Compatibility(ctx(t), subject); res[0].Err != nil || res[0].Level != sr.CompatNone {
			t.Fatalf("subject level %+v, want NONE", res)
		}
		_, body = tc.get(loc)
		wantContains(t, body, "compatibility set to NONE", `<option value="NONE" selected>`)
		if st, body, _ := tc.post("/schemas/new", url.Values{"subject": {subject}, "type": {"AVRO"}, "schema": {schemasOrderBad}, "check": {"yes"}}); st != http.StatusSeeOther {
			t.Fatalf("register under NONE: %d\n%s", st, body)
		}
		// Dropping the override: the global level applies again.
		if st, body, _ := tc.post("/schemas/"+subject+"/config", url.Values{"compatibility": {""}}); st != http.StatusSeeOther {
			t.Fatalf("drop the override: %d\n%s", st, body)
		}
		if res := reg.Compatibility(ctx(t), subject); res[0].Err == nil {
			t.Fatalf("the subject still has a level: %+v", res[0])
		}
		// The global level.
		if st, body, _ := tc.post("/schemas/config", url.Values{"compatibility": {"FULL"}}); st != http.StatusSeeOther {
			t.Fatalf("set global FULL: %d\n%s", st, body)
		}
		if res := reg.Compatibility(ctx(t)); res[0].Err != nil || res[0].Level != sr.CompatFull {
			t.Fatalf("global level %+v, want FULL", res)
		}
		_, body = tc.get("/schemas")
		wantContains(t, body, "FULL (global)")
		if st, body, _ := tc.post("/schemas/config", url.Values{"compatibility": {"SOMETIMES"}}); st != http.StatusBadRequest {
			t.Fatalf("global SOMETIMES: %d\n%s", st, body)
		}
		if res := reg.Compatibility(ctx(t)); res[0].Level != sr.CompatFull {
			t.Fatalf("a refused level changed the global one: %+v", res)
		}
	})

	t.Run("delete", func(t *testing.T) {
		if st, body, _ := tc.post("/schemas/"+subject+"/versions/1/delete", nil); st != http.StatusBadRequest {
			t.Fatalf("delete without confirmation: %d\n%s", st, body)
		}
		if st, body, _ := tc.post("/schemas/"+subject+"/versions/1/delete", url.Values{"confirm": {"yes"}}); st != http.StatusSeeOther {
			t.Fatalf("delete v1: %d\n%s", st, body)
		}
		versions, err := reg.SubjectVersions(ctx(t), subject)
		if err != nil || fmt.Sprint(versions) != "[2 3]" {
			t.Fatalf("after deleting v1: %v, %v", versions, err)
		}
		if st, body, _ := tc.post("/schemas/"+subject+"/delete", url.Values{"confirm": {"orders"}}); st != http.StatusBadRequest {
			t.Fatalf("delete with a wrong confirmation: %d\n%s", st, body)
		}
		if st, body, _ := tc.post("/schemas/"+subject+"/delete", url.Values{"confirm": {subject}}); st != http.StatusSeeOther {
			t.Fatalf("delete the subject: %d\n%s", st, body)
		}
		if subs, err := reg.Subjects(ctx(t)); err != nil || len(subs) != 0 {
			t.Fatalf("subjects after the delete: %v, %v", subs, err)
		}
		if st, body := tc.get("/schemas/" + subject); st != http.StatusNotFound {
			t.Fatalf("a deleted subject's page: %d, want 404\n%s", st, body)
		}
	})
}

// TestSchemasRegistryDown: a registry that does not answer is a 502
// page naming it; without a registry configured the page is a 404.
func TestSchemasRegistryDown(t *testing.T) {
	addr, regURL, _, proc := schemasStartServe(t, false)
	tc := startConsoleOn(t, addr, Config{RegistryURL: regURL})
	if st, body := tc.get("/schemas"); st != 200 {
		t.Fatalf("registry up: %d\n%s", st, body)
	}
	// A registry on a port nobody listens on.
	down := startConsoleOn(t, addr, Config{RegistryURL: "http://127.0.0.1:1"})
	st, body := down.get("/schemas")
	if st != http.StatusBadGateway {
		t.Fatalf("registry down: %d, want 502\n%s", st, body)
	}
	wantContains(t, body, "the Schema Registry at http://127.0.0.1:1 cannot be reached")
	proc.Kill()
	if st, body := tc.get("/schemas/x"); st != http.StatusBadGateway || !strings.Contains(body, "cannot be reached") {
		t.Fatalf("registry killed: %d\n%s", st, body)
	}
	none := startConsoleOn(t, addr, Config{})
	if st, body := none.get("/schemas"); st != http.StatusNotFound || strings.Contains(body, `href="/schemas"`) {
		t.Fatalf("no registry: %d\n%s", st, body)
	}
}
