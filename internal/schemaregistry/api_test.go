package schemaregistry

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Avro schemas of the API tests: s2 adds a field with a default to s1
// (BACKWARD compatible), s3 adds one without (not BACKWARD compatible
// with s2), s4 is another record.
const (
	s1    = `{"type":"record","name":"r","fields":[{"name":"a","type":"int"}]}`
	s2    = `{"type":"record","name":"r","fields":[{"name":"a","type":"int"},{"name":"b","type":"string","default":"x"}]}`
	s3    = `{"type":"record","name":"r","fields":[{"name":"a","type":"int"},{"name":"b","type":"string","default":"x"},{"name":"c","type":"long"}]}`
	s4    = `{"type":"record","name":"other","fields":[{"name":"z","type":"string"}]}`
	inner = `{"type":"record","name":"inner","fields":[{"name":"x","type":"int"}]}`
	outer = `{"type":"record","name":"outer","fields":[{"name":"i","type":"inner"}]}`
)

// body is a register, lookup or compatibility request.
func body(schema string, extra ...any) string {
	m := map[string]any{"schema": schema}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// version is a GET /subjects/{s}/versions/{v} answer.
func version(subject string, v, id int, schema string) string {
	b, _ := json.Marshal(map[string]any{"subject": subject, "version": v, "id": id, "schema": schema})
	return string(b)
}

func errBody(code int, msg string) string {
	b, _ := json.Marshal(map[string]any{"error_code": code, "message": msg})
	return string(b)
}

// apiStep is one request and its expected answer: want is compared as
// JSON when it is JSON, else as text; contains lists parts of the body
// when the whole is too long to spell.
type apiStep struct {
	method, path, body string
	contentType        string // application/vnd.schemaregistry.v1+json when empty
	status             int
	want               string
	contains           []string
}

// TestAPI walks Confluent's API reference endpoint by endpoint, each
// success and each error case, in one registry whose state the steps
// build up in order.
func TestAPI(t *testing.T) {
	b := startBroker(t)
	_, srv := startRegistry(t, b, "_schemas")
	notFound := func(s string) string { return errBody(40401, "Subject '"+s+"' not found.") }
	steps := []apiStep{
		// Root, types, contexts, defaults.
		{method: "GET", path: "/", status: 200, want: `{}`},
		{method: "GET", path: "/schemas/types", status: 200, want: `["JSON","PROTOBUF","AVRO"]`},
		{method: "GET", path: "/contexts", status: 200, want: `["."]`},
		{method: "GET", path: "/v1/metadata/id", status: 200, contains: []string{`"kafka-cluster":"`, `"schema-registry-cluster":"schema-registry"`}},
		{method: "GET", path: "/subjects", status: 200, want: `[]`},
		{method: "GET", path: "/config", status: 200, want: `{"compatibilityLevel":"BACKWARD"}`},
		{method: "GET", path: "/mode", status: 200, want: `{"mode":"READWRITE"}`},

		// Registration: one ID per schema, across subjects.
		{method: "POST", path: "/subjects/a/versions", body: body(s1), status: 200, want: `{"id":1}`},
		{method: "POST", path: "/subjects/a/versions", body: body(s1), status: 200, want: `{"id":1}`},
		{method: "POST", path: "/subjects/b/versions", body: body(s1), contentType: "application/json", status: 200, want: `{"id":1}`},
		{method: "POST", path: "/subjects/a/versions", body: body(s2), contentType: "application/vnd.schemaregistry+json", status: 200, want: `{"id":2}`},
		{method: "POST", path: "/subjects/a/versions", body: body(s3), status: 409, contains: []string{
			`"error_code":409`,
			`Schema being registered is incompatible with an earlier schema for subject \"a\", details: [{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE'`,
			`{oldSchemaVersion: 2}, {oldSchema: '` + strings.ReplaceAll(s2, `"`, `\"`) + `'}, {validateFields: 'false', compatibility: 'BACKWARD'}]`,
		}},
		{method: "POST", path: "/subjects/a/versions", body: body(`{"type":"recordx"}`), status: 422, contains: []string{`"error_code":42201`, "recordx"}},
		{method: "POST", path: "/subjects/a/versions", body: body(s1, "schemaType", "XML"), status: 422, contains: []string{`"error_code":42201`, "XML"}},
		{method: "POST", path: "/subjects/a/versions", body: `{"schema":`, status: 422, contains: []string{`"error_code":422`}},
		{method: "POST", path: "/subjects/a/versions", body: `{"schema":"x","bogus":1}`, status: 422, contains: []string{`"error_code":422`, "bogus"}},
		{method: "POST", path: "/subjects/a/versions", body: body(s1), contentType: "text/plain", status: 415, want: errBody(415, "HTTP 415 Unsupported Media Type")},
		{method: "POST", path: "/subjects/a/versions?normalize=maybe", body: body(s1), status: 422, contains: []string{`normalize`}},

		// Subjects and versions.
		{method: "GET", path: "/subjects", status: 200, want: `["a","b"]`},
		{method: "GET", path: "/subjects?subjectPrefix=a", status: 200, want: `["a"]`},
		{method: "GET", path: "/subjects/a/versions", status: 200, want: `[1,2]`},
		{method: "GET", path: "/subjects/nope/versions", status: 404, want: notFound("nope")},
		{method: "GET", path: "/subjects/a/versions/1", status: 200, want: version("a", 1, 1, s1)},
		{method: "GET", path: "/subjects/a/versions/latest", status: 200, want: version("a", 2, 2, s2)},
		{method: "GET", path: "/subjects/a/versions/-1", status: 200, want: version("a", 2, 2, s2)},
		{method: "GET", path: "/subjects/a/versions/9", status: 404, want: errBody(40402, "Version 9 not found.")},
		{method: "GET", path: "/subjects/nope/versions/1", status: 404, want: notFound("nope")},
		{method: "GET", path: "/subjects/a/versions/abc", status: 422, want: errBody(42202, `The specified version 'abc' is not a valid version id. Allowed values are between [1, 2^31-1] and the string "latest"`)},
		{method: "GET", path: "/subjects/a/versions/0", status: 422, contains: []string{`"error_code":42202`}},
		{method: "GET", path: "/subjects/a/versions/2147483648", status: 422, contains: []string{`"error_code":42202`}},
		{method: "GET", path: "/subjects/a/versions/1/schema", status: 200, want: s1},
		{method: "GET", path: "/subjects/a/versions/1/referencedby", status: 200, want: `[]`},

		// Lookup.
		{method: "POST", path: "/subjects/a", body: body(s2), status: 200, want: version("a", 2, 2, s2)},
		{method: "POST", path: "/subjects/a", body: body(s3), status: 404, want: errBody(40403, "Schema not found")},
		{method: "POST", path: "/subjects/nope", body: body(s1), status: 404, want: notFound("nope")},

		// Schemas by ID and the list.
		{method: "GET", path: "/schemas/ids/1", status: 200, want: body(s1)},
		{method: "GET", path: "/schemas/ids/1/schema", status: 200, want: s1},
		{method: "GET", path: "/schemas/ids/1/subjects", status: 200, want: `["a","b"]`},
		{method: "GET", path: "/schemas/ids/1/versions", status: 200, want: `[{"subject":"a","version":1},{"subject":"b","version":1}]`},
		{method: "GET", path: "/schemas/ids/99", status: 404, want: errBody(40403, "Schema 99 not found")},
		{method: "GET", path: "/schemas/ids/99/subjects", status: 404, want: errBody(40403, "Schema 99 not found")},
		{method: "GET", path: "/schemas/ids/1?subject=b", status: 200, want: body(s1)},
		// A subject that does not carry the ID: Confluent tries the other
		// contexts, then answers the default context's schema.
		{method: "GET", path: "/schemas/ids/1?subject=nope", status: 200, want: body(s1)},
		{method: "GET", path: "/schemas/ids/99?subject=nope", status: 404, want: errBody(40403, "Schema 99 not found")},
		{method: "GET", path: "/schemas/ids/99?subject=b", status: 404, want: errBody(40403, "Schema 99 not found")},
		{method: "GET", path: "/schemas/ids/1?format=resolved", status: 200, want: body(s1)},
		{method: "GET", path: "/schemas/ids/1?format=ignore_extensions", status: 422, want: errBody(422, "format=ignore_extensions is not supported for AVRO schemas")},
		{method: "GET", path: "/schemas/ids/1?format=bogus", status: 422, want: errBody(422, "format=bogus is not supported by this registry")},
		{method: "GET", path: "/schemas?latestOnly=true", status: 200, want: "[" + version("a", 2, 2, s2) + "," + version("b", 1, 1, s1) + "]"},
		{method: "GET", path: "/schemas?subjectPrefix=b", status: 200, want: "[" + version("b", 1, 1, s1) + "]"},

		// Paging: offset and limit; a limit that is not positive or above
		// the endpoint's largest (1000 for schema lists) is the default.
		{method: "GET", path: "/subjects?offset=1", status: 200, want: `["b"]`},
		{method: "GET", path: "/subjects?limit=1", status: 200, want: `["a"]`},
		{method: "GET", path: "/subjects?limit=0", status: 200, want: `["a","b"]`},
		{method: "GET", path: "/subjects?limit=-1&offset=0", status: 200, want: `["a","b"]`},
		{method: "GET", path: "/subjects?offset=5", status: 200, want: `[]`},
		{method: "GET", path: "/subjects?offset=x", status: 404, want: errBody(404, "HTTP 404 Not Found")},
		{method: "GET", path: "/subjects?limit=1.5", status: 404, want: errBody(404, "HTTP 404 Not Found")},
		{method: "GET", path: "/subjects?offset=-1", status: 422, want: errBody(422, "Query parameter offset=-1 is negative")},
		{method: "GET", path: "/subjects/a/versions?offset=1&limit=1", status: 200, want: `[2]`},
		{method: "GET", path: "/subjects/a/versions?limit=1", status: 200, want: `[1]`},
		{method: "GET", path: "/schemas?offset=1&limit=1", status: 200, want: "[" + version("a", 2, 2, s2) + "]"},
		{method: "GET", path: "/schemas?limit=5000&offset=2", status: 200, want: "[" + version("b", 1, 1, s1) + "]"},
		{method: "GET", path: "/schemas/ids/1/subjects?offset=1", status: 200, want: `["b"]`},
		{method: "GET", path: "/schemas/ids/1/versions?limit=1", status: 200, want: `[{"subject":"a","version":1}]`},
		{method: "GET", path: "/subjects/a/versions/1/referencedby?offset=3", status: 200, want: `[]`},

		// Compatibility levels.
		{method: "PUT", path: "/config/a", body: `{"compatibility":"forward"}`, status: 200, want: `{"compatibility":"FORWARD"}`},
		{method: "GET", path: "/config/a", status: 200, want: `{"compatibilityLevel":"FORWARD"}`},
		{method: "GET", path: "/config/b", status: 404, want: errBody(40408, "Subject 'b' does not have subject-level compatibility configured")},
		{method: "GET", path: "/config/b?defaultToGlobal=true", status: 200, want: `{"compatibilityLevel":"BACKWARD"}`},
		{method: "PUT", path: "/config", body: `{"compatibility":"bogus"}`, status: 422, want: errBody(42203, "Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive")},
		{method: "PUT", path: "/config", body: `{"compatibility":"FULL_TRANSITIVE"}`, status: 200, want: `{"compatibility":"FULL_TRANSITIVE"}`},
		{method: "GET", path: "/config", status: 200, want: `{"compatibilityLevel":"FULL_TRANSITIVE"}`},
		{method: "GET", path: "/config/b?defaultToGlobal=true", status: 200, want: `{"compatibilityLevel":"FULL_TRANSITIVE"}`},
		{method: "DELETE", path: "/config", status: 200, want: `{"compatibilityLevel":"FULL_TRANSITIVE"}`},
		{method: "GET", path: "/config", status: 200, want: `{"compatibilityLevel":"BACKWARD"}`},
		{method: "DELETE", path: "/config/a", status: 200, want: `{"compatibilityLevel":"FORWARD"}`},
		{method: "DELETE", path: "/config/a", status: 404, want: notFound("a")},

		// Compatibility checks.
		{method: "POST", path: "/compatibility/subjects/a/versions/latest", body: body(s3), status: 200, want: `{"is_compatible":false}`},
		{method: "POST", path: "/compatibility/subjects/a/versions/latest?verbose=true", body: body(s3), status: 200, contains: []string{
			`"is_compatible":false`, `"messages":["{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE'`, `{oldSchemaVersion: 2}`}},
		{method: "POST", path: "/compatibility/subjects/a/versions/1", body: body(s2), status: 200, want: `{"is_compatible":true}`},
		{method: "POST", path: "/compatibility/subjects/a/versions/1?verbose=true", body: body(s2), status: 200, want: `{"is_compatible":true,"messages":[]}`},
		{method: "POST", path: "/compatibility/subjects/a/versions", body: body(s3), status: 200, want: `{"is_compatible":false}`},
		{method: "POST", path: "/compatibility/subjects/nope/versions/latest", body: body(s1), status: 404, want: notFound("nope")},
		{method: "POST", path: "/compatibility/subjects/a/versions/7", body: body(s1), status: 404, want: errBody(40402, "Version 7 not found.")},
		{method: "POST", path: "/compatibility/subjects/a/versions/x", body: body(s1), status: 422, contains: []string{`"error_code":42202`}},

		// Modes.
		{method: "PUT", path: "/mode/a", body: `{"mode":"READONLY"}`, status: 200, want: `{"mode":"READONLY"}`},
		{method: "GET", path: "/mode/a", status: 200, want: `{"mode":"READONLY"}`},
		{method: "POST", path: "/subjects/a/versions", body: body(s2), status: 422, want: errBody(42205, "Subject a in context . is in read-only mode")},
		{method: "DELETE", path: "/subjects/a", status: 422, want: errBody(42205, "Subject a in context . is in read-only mode")},
		{method: "GET", path: "/mode/b", status: 404, want: errBody(40409, "Subject 'b' does not have subject-level mode configured")},
		{method: "GET", path: "/mode/b?defaultToGlobal=true", status: 200, want: `{"mode":"READWRITE"}`},
		{method: "PUT", path: "/mode", body: `{"mode":"WRITEONLY"}`, status: 422, want: errBody(42204, "Invalid mode. Valid values are READWRITE, READONLY and IMPORT.")},
		{method: "DELETE", path: "/mode/a", status: 200, want: `{"mode":"READONLY"}`},
		{method: "DELETE", path: "/mode/a", status: 404, want: notFound("a")},

		// IMPORT: explicit IDs and versions; the next ID follows the largest.
		{method: "PUT", path: "/mode", body: `{"mode":"IMPORT"}`, status: 422, want: errBody(42205, "Cannot import since found existing subjects")},
		{method: "PUT", path: "/mode/imp", body: `{"mode":"IMPORT"}`, status: 200, want: `{"mode":"IMPORT"}`},
		{method: "POST", path: "/subjects/imp/versions", body: body(s3, "id", 50, "version", 3), status: 200, want: `{"id":50}`},
		{method: "GET", path: "/subjects/imp/versions/3", status: 200, want: version("imp", 3, 50, s3)},
		{method: "POST", path: "/subjects/imp/versions", body: body(s4, "id", 50), status: 422, want: errBody(42205, "Overwrite new schema with id 50 is not permitted.")},
		{method: "POST", path: "/subjects/imp/versions", body: body(s4), status: 422, want: errBody(42205, "Subject imp in context . is not in read-write mode")},
		{method: "POST", path: "/subjects/a/versions", body: body(s4, "id", 60), status: 422, want: errBody(42205, "Subject a in context . is not in import mode")},
		{method: "PUT", path: "/mode/imp", body: `{"mode":"READWRITE"}`, status: 200, want: `{"mode":"READWRITE"}`},
		{method: "POST", path: "/subjects/c/versions", body: body(s4), status: 200, want: `{"id":51}`},

		// Soft and hard deletes of versions.
		{method: "DELETE", path: "/subjects/a/versions/1", status: 200, want: `1`},
		{method: "DELETE", path: "/subjects/a/versions/1", status: 404, want: errBody(40406, "Subject 'a' Version 1 was soft deleted.Set permanent=true to delete permanently")},
		{method: "GET", path: "/subjects/a/versions", status: 200, want: `[2]`},
		{method: "GET", path: "/subjects/a/versions?deleted=true", status: 200, want: `[1,2]`},
		{method: "GET", path: "/subjects/a/versions/1", status: 404, want: errBody(40402, "Version 1 not found.")},
		{method: "GET", path: "/subjects/a/versions/1?deleted=true", status: 200, want: version("a", 1, 1, s1)},
		{method: "DELETE", path: "/subjects/a/versions/2?permanent=true", status: 404, want: errBody(40407, "Subject 'a' Version 2 was not deleted first before being permanently deleted")},
		{method: "DELETE", path: "/subjects/a/versions/1?permanent=true", status: 200, want: `1`},
		{method: "GET", path: "/subjects/a/versions?deleted=true", status: 200, want: `[2]`},
		{method: "DELETE", path: "/subjects/a/versions/5", status: 404, want: errBody(40402, "Version 5 not found.")},

		// Soft and hard deletes of subjects; an ID goes with its last version.
		{method: "DELETE", path: "/subjects/b?permanent=true", status: 404, want: errBody(40405, "Subject 'b' was not deleted first before being permanently deleted")},
		{method: "DELETE", path: "/subjects/b", status: 200, want: `[1]`},
		{method: "DELETE", path: "/subjects/b", status: 404, want: errBody(40404, "Subject 'b' was soft deleted.Set permanent=true to delete permanently")},
		{method: "GET", path: "/subjects", status: 200, want: `["a","c","imp"]`},
		{method: "GET", path: "/subjects?deleted=true", status: 200, want: `["a","b","c","imp"]`},
		{method: "GET", path: "/schemas/ids/1/subjects", status: 200, want: `[]`},
		{method: "GET", path: "/schemas/ids/1/subjects?deleted=true", status: 200, want: `["b"]`},
		{method: "DELETE", path: "/subjects/b?permanent=true", status: 200, want: `[1]`},
		{method: "GET", path: "/subjects?deleted=true", status: 200, want: `["a","c","imp"]`},
		{method: "GET", path: "/schemas/ids/1", status: 404, want: errBody(40403, "Schema 1 not found")},
		{method: "DELETE", path: "/subjects/nope", status: 404, want: notFound("nope")},

		// References: the referenced version cannot go while used.
		{method: "POST", path: "/subjects/inner/versions", body: body(inner), status: 200, want: `{"id":52}`},
		{method: "POST", path: "/subjects/outer/versions", body: body(outer, "references", []Reference{{Name: "inner", Subject: "inner", Version: 1}}), status: 200, want: `{"id":53}`},
		{method: "GET", path: "/subjects/outer/versions/1", status: 200, contains: []string{`"references":[{"name":"inner","subject":"inner","version":1}]`}},
		{method: "GET", path: "/schemas/ids/53", status: 200, contains: []string{`"references":[{"name":"inner","subject":"inner","version":1}]`}},
		{method: "GET", path: "/schemas/ids/53/schema?format=resolved", status: 200, want: `{"type":"record","name":"outer","fields":[{"name":"i","type":` + inner + `}]}`},
		{method: "GET", path: "/subjects/outer/versions/1/schema?format=resolved", status: 200, want: `{"type":"record","name":"outer","fields":[{"name":"i","type":` + inner + `}]}`},
		{method: "GET", path: "/subjects/inner/versions/1/referencedby", status: 200, want: `[53]`},
		{method: "DELETE", path: "/subjects/inner", status: 422, want: errBody(42206, "One or more references exist to the schema {magic=1,keytype=SCHEMA,subject=inner,version=1}.")},
		{method: "POST", path: "/subjects/outer2/versions", body: body(outer, "references", []Reference{{Name: "inner", Subject: "inner", Version: 9}}), status: 422, contains: []string{`"error_code":42201`}},

		// Metadata and rule sets pass through.
		{method: "POST", path: "/subjects/meta/versions", body: body(s1, "metadata", map[string]any{"properties": map[string]string{"owner": "x"}}), status: 200, want: `{"id":54}`},
		{method: "GET", path: "/subjects/meta/versions/1", status: 200, contains: []string{`"metadata":{"properties":{"owner":"x"}}`}},

		// Contexts: qualified subjects, IDs of their own, the context paths
		// rewritten as Confluent's ContextFilter does.
		{method: "POST", path: "/subjects/:.ctx:a/versions", body: body(s4), status: 200, want: `{"id":1}`},
		{method: "POST", path: "/contexts/.ctx/subjects/b/versions", body: body(s1), status: 200, want: `{"id":2}`},
		{method: "POST", path: "/subjects/:.ctx:inner/versions", body: body(inner), status: 200, want: `{"id":3}`},
		{method: "POST", path: "/contexts/ctx/subjects/outer/versions", body: body(outer, "references", []Reference{{Name: "inner", Subject: "inner", Version: 1}}), status: 200, want: `{"id":4}`},
		{method: "GET", path: "/subjects/:.ctx:inner/versions/1/referencedby", status: 200, want: `[4]`},
		{method: "GET", path: "/subjects/inner/versions/1/referencedby", status: 200, want: `[53]`},
		{method: "GET", path: "/contexts", status: 200, want: `[".",".ctx"]`},
		{method: "GET", path: "/contexts?contextPrefix=.c", status: 200, want: `[".ctx"]`},
		{method: "GET", path: "/contexts?offset=1", status: 200, want: `[".ctx"]`},
		{method: "GET", path: "/contexts?limit=1", status: 200, want: `["."]`},
		{method: "GET", path: "/subjects", status: 200, want: `["a","c","imp","inner","meta","outer",":.ctx:a",":.ctx:b",":.ctx:inner",":.ctx:outer"]`},
		{method: "GET", path: "/subjects?subjectPrefix=i", status: 200, want: `["imp","inner"]`},
		{method: "GET", path: "/subjects?subjectPrefix=:.ctx:", status: 200, want: `[":.ctx:a",":.ctx:b",":.ctx:inner",":.ctx:outer"]`},
		{method: "GET", path: "/subjects?subjectPrefix=:*:o", status: 200, want: `["outer",":.ctx:outer"]`},
		{method: "GET", path: "/contexts/.ctx/subjects?subjectPrefix=i", status: 200, want: `[":.ctx:inner"]`},
		{method: "GET", path: "/subjects/:.:c/versions", status: 200, want: `[1]`},
		{method: "GET", path: "/contexts/.ctx/subjects/a/versions/1", status: 200, want: version(":.ctx:a", 1, 1, s4)},
		{method: "GET", path: "/schemas/ids/1?subject=:.ctx:", status: 200, want: body(s4)},
		{method: "GET", path: "/contexts/.ctx/schemas/ids/2", status: 200, want: body(s1)},
		{method: "GET", path: "/schemas/ids/2", status: 200, want: body(s2)},
		{method: "GET", path: "/schemas/ids/1?subject=a", status: 200, want: body(s4)}, // found in .ctx under its name
		{method: "GET", path: "/schemas/ids/2/versions?subject=:.ctx:b", status: 200, want: `[{"subject":":.ctx:b","version":1}]`},
		{method: "GET", path: "/schemas/ids/1/subjects?subject=:.ctx:", status: 200, want: `[":.ctx:a"]`},
		{method: "GET", path: "/schemas?subjectPrefix=:.ctx:a", status: 200, want: "[" + version(":.ctx:a", 1, 1, s4) + "]"},
		{method: "GET", path: "/contexts/a:b/subjects", status: 400, want: errBody(400, "Context name 'a:b' cannot contain a colon")},
		// A context's config and mode apply to its subjects, not to the
		// default context's; the global ones do not reach into .ctx.
		{method: "PUT", path: "/contexts/.ctx/config", body: `{"compatibility":"FULL"}`, status: 200, want: `{"compatibility":"FULL"}`},
		{method: "GET", path: "/config/:.ctx:", status: 200, want: `{"compatibilityLevel":"FULL"}`},
		{method: "GET", path: "/config/:.ctx:a?defaultToGlobal=true", status: 200, want: `{"compatibilityLevel":"FULL"}`},
		{method: "GET", path: "/config/a?defaultToGlobal=true", status: 200, want: `{"compatibilityLevel":"BACKWARD"}`},
		{method: "PUT", path: "/mode/:.ctx:", body: `{"mode":"READONLY"}`, status: 200, want: `{"mode":"READONLY"}`},
		{method: "PUT", path: "/mode/:.ctx:b", body: `{"mode":"READWRITE"}`, status: 200, want: `{"mode":"READWRITE"}`},
		{method: "POST", path: "/subjects/:.ctx:a/versions", body: body(s1), status: 422, want: errBody(42205, "Subject :.ctx:a in context .ctx is in read-only mode")},
		{method: "GET", path: "/mode/c?defaultToGlobal=true", status: 200, want: `{"mode":"READWRITE"}`},
		{method: "DELETE", path: "/mode/:.ctx:?recursive=true", status: 200, want: `{"mode":"READONLY"}`},
		{method: "GET", path: "/mode/:.ctx:b", status: 404, want: errBody(40409, "Subject ':.ctx:b' does not have subject-level mode configured")},
		{method: "DELETE", path: "/mode/:.ctx:?recursive=true", status: 200, want: `{"mode":null}`},
		// A context goes only once empty.
		{method: "DELETE", path: "/contexts/.ctx", status: 422, want: errBody(42211, "The specified context ':.ctx:' is not empty.")},
		{method: "DELETE", path: "/contexts/.ctx/subjects/outer", status: 200, want: `[1]`},
		{method: "DELETE", path: "/subjects/:.ctx:outer?permanent=true", status: 200, want: `[1]`},
		{method: "DELETE", path: "/subjects/:.ctx:inner", status: 200, want: `[1]`},
		{method: "DELETE", path: "/subjects/:.ctx:inner?permanent=true", status: 200, want: `[1]`},
		{method: "DELETE", path: "/subjects/:.ctx:a", status: 200, want: `[1]`},
		{method: "DELETE", path: "/subjects/:.ctx:b", status: 200, want: `[1]`},
		{method: "DELETE", path: "/contexts/.ctx", status: 422, want: errBody(42211, "The specified context ':.ctx:' is not empty.")},
		{method: "DELETE", path: "/subjects/:.ctx:a?permanent=true", status: 200, want: `[1]`},
		{method: "DELETE", path: "/subjects/:.ctx:b?permanent=true", status: 200, want: `[1]`},
		{method: "DELETE", path: "/contexts/.ctx", status: 204},
		{method: "GET", path: "/contexts", status: 200, want: `["."]`},
		{method: "DELETE", path: "/contexts/.never", status: 204},
		{method: "DELETE", path: "/contexts/a:b", status: 400, want: errBody(400, "Context name 'a:b' cannot contain a colon")},
		{method: "GET", path: "/contexts/.ctx", status: 405, want: errBody(405, "HTTP 405 Method Not Allowed")},
		{method: "GET", path: "/contexts?limit=x", status: 404, want: errBody(404, "HTTP 404 Not Found")},

		// The global mode: deleting it answers the mode it had (the
		// default when none was set) and reverts to READWRITE.
		{method: "PUT", path: "/mode", body: `{"mode":"READONLY"}`, status: 200, want: `{"mode":"READONLY"}`},
		{method: "DELETE", path: "/mode", status: 200, want: `{"mode":"READONLY"}`},
		{method: "GET", path: "/mode", status: 200, want: `{"mode":"READWRITE"}`},
		{method: "DELETE", path: "/mode", status: 200, want: `{"mode":"READWRITE"}`},
		{method: "PUT", path: "/mode/c", body: `{"mode":"READONLY"}`, status: 200, want: `{"mode":"READONLY"}`},
		{method: "DELETE", path: "/mode?recursive=true", status: 200, want: `{"mode":"READWRITE"}`},
		{method: "GET", path: "/mode/c", status: 404, want: errBody(40409, "Subject 'c' does not have subject-level mode configured")},

		// The mux's own answers in Confluent's body.
		{method: "GET", path: "/nothing", status: 404, want: errBody(404, "HTTP 404 Not Found")},
		{method: "PATCH", path: "/subjects", status: 405, want: errBody(405, "HTTP 405 Method Not Allowed")},
	}
	for i, s := range steps {
		status, got, ct := do(t, srv.URL, s)
		if status != s.status || !matches(got, s) {
			t.Errorf("step %d: %s %s: got %d %s\nwant %d %s %q", i, s.method, s.path, status, got, s.status, s.want, s.contains)
		}
		if ct != contentType && status != http.StatusNoContent {
			t.Errorf("step %d: %s %s: content type %q", i, s.method, s.path, ct)
		}
	}
}

func do(t *testing.T, base string, s apiStep) (int, string, string) {
	t.Helper()
	var rd io.Reader
	if s.body != "" {
		rd = strings.NewReader(s.body)
	}
	req, err := http.NewRequestWithContext(t.Context(), s.method, base+s.path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if s.body != "" {
		ct := s.contentType
		if ct == "" {
			ct = "application/vnd.schemaregistry.v1+json"
		}
		req.Header.Set("Content-Type", ct)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(raw)), resp.Header.Get("Content-Type")
}

func matches(got string, s apiStep) bool {
	for _, c := range s.contains {
		if !strings.Contains(got, c) {
			return false
		}
	}
	if s.want == "" {
		return len(s.contains) > 0 || (s.status == http.StatusNoContent && got == "")
	}
	var a, b any
	if json.Unmarshal([]byte(got), &a) == nil && json.Unmarshal([]byte(s.want), &b) == nil {
		ga, _ := json.Marshal(a)
		gb, _ := json.Marshal(b)
		return bytes.Equal(ga, gb)
	}
	return got == s.want
}
