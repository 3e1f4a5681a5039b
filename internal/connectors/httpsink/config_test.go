package httpsink

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every invalid config is refused with a message that names it, by the
// connector, the task and config/validate.
func TestConfigRefused(t *testing.T) {
	const u = "http://127.0.0.1:1/x"
	for _, tc := range []struct {
		name  string
		props map[string]string
		key   string
		want  string
	}{
		{"no url", map[string]string{}, "http.api.url", `Missing required configuration "http.api.url" which has no default value.`},
		{"relative url", props("/x"), "http.api.url", "Invalid value /x for configuration http.api.url: must be an absolute http or https URL"},
		{"ftp url", props("ftp://h/x"), "http.api.url", "Invalid value ftp://h/x for configuration http.api.url: must be an absolute http or https URL"},
		{"method", props(u, "request.method", "GET"), "request.method", "Invalid value GET for configuration request.method: String must be one of: POST, PUT, PATCH"},
		{"header without colon", props(u, "headers", "X-A:1|broken"), "headers", `Invalid value X-A:1|broken for configuration headers: the entry "broken" is not name:value (entries are separated by "|")`},
		{"header empty name", props(u, "headers", ":v"), "headers", `Invalid value :v for configuration headers: the entry ":v" is not name:value (entries are separated by "|")`},
		{"empty header separator", props(u, "header.separator", ""), "header.separator", "Invalid value  for configuration header.separator: String must be non-empty"},
		{"auth type", props(u, "auth.type", "DIGEST"), "auth.type", "Invalid value DIGEST for configuration auth.type: String must be one of: NONE, BASIC, OAUTH2"},
		{"oauth2", props(u, "auth.type", "OAUTH2"), "auth.type", "auth.type=OAUTH2 is not supported by Samsa's HTTP sink: send a bearer token with headers=Authorization:Bearer <token>"},
		{"basic without user", props(u, "auth.type", "BASIC"), "connection.user", "auth.type=BASIC needs connection.user"},
		{"user without basic", props(u, "connection.user", "alice"), "auth.type", "connection.user and connection.password are used only with auth.type=BASIC, and auth.type is NONE"},
		{"batch size zero", props(u, "batch.max.size", "0"), "batch.max.size", "Invalid value 0 for configuration batch.max.size: Value must be at least 1"},
		{"batch size huge", props(u, "batch.max.size", "2000000"), "batch.max.size", "Invalid value 2000000 for configuration batch.max.size: Value must be no more than 1000000"},
		{"json array of strings", props(u, "batch.json.as.array", "true"), "batch.json.as.array", "batch.json.as.array=true needs request.body.format=json"},
		{"json array with separator", props(u, "batch.json.as.array", "true", "request.body.format", "json", "batch.separator", ";"), "batch.separator", "batch.separator cannot be set with batch.json.as.array=true: the array has its own brackets and commas"},
		{"json array not boolean", props(u, "batch.json.as.array", "yes"), "batch.json.as.array", "Invalid value yes for configuration batch.json.as.array: Expected value to be either true or false"},
		{"body format", props(u, "request.body.format", "xml"), "request.body.format", "Invalid value xml for configuration request.body.format: String must be one of: string, json"},
		{"negative retries", props(u, "max.retries", "-1"), "max.retries", "Invalid value -1 for configuration max.retries: Value must be at least 0"},
		{"negative backoff", props(u, "retry.backoff.ms", "-5"), "retry.backoff.ms", "Invalid value -5 for configuration retry.backoff.ms: Value must be at least 0"},
		{"backoff policy", props(u, "retry.backoff.policy", "LINEAR"), "retry.backoff.policy", "Invalid value LINEAR for configuration retry.backoff.policy: String must be one of: CONSTANT_VALUE, EXPONENTIAL_WITH_JITTER"},
		{"retry codes", props(u, "retry.on.status.codes", "5xx"), "retry.on.status.codes", `Invalid value 5xx for configuration retry.on.status.codes: "5xx": status codes are numbers from 100 to 999`},
		{"retry range backwards", props(u, "retry.on.status.codes", "500-400"), "retry.on.status.codes", `Invalid value 500-400 for configuration retry.on.status.codes: "500-400": the range ends before it starts`},
		{"request timeout", props(u, "http.request.timeout.ms", "0"), "http.request.timeout.ms", "Invalid value 0 for configuration http.request.timeout.ms: Value must be at least 1"},
		{"connect timeout", props(u, "http.connect.timeout.ms", "x"), "http.connect.timeout.ms", "Invalid value x for configuration http.connect.timeout.ms: Not a number of type INT"},
		{"null values", props(u, "behavior.on.null.values", "drop"), "behavior.on.null.values", "Invalid value drop for configuration behavior.on.null.values: String must be one of: ignore, delete, log, fail"},
		{"on error", props(u, "behavior.on.error", "retry"), "behavior.on.error", "Invalid value retry for configuration behavior.on.error: String must be one of: fail, log, ignore"},
		{"confluent only", props(u, "batch.key.pattern", "k"), "batch.key.pattern", "batch.key.pattern is a Confluent HTTP Sink config that Samsa's HTTP sink does not support: batches are split by the URL each record resolves to"},
		{"confluent oauth2", props(u, "oauth2.token.url", "http://x"), "oauth2.token.url", "oauth2.token.url is a Confluent HTTP Sink config that Samsa's HTTP sink does not support: send a bearer token with headers=Authorization:Bearer <token>"},
		{"confluent proxy", props(u, "http.proxy.host", "p"), "http.proxy.host", "http.proxy.host is a Confluent HTTP Sink config that Samsa's HTTP sink does not support"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := NewConnector().Start(connectorCtx{}, tc.props); err == nil || err.Error() != tc.want {
				t.Errorf("connector start error = %v\nwant %q", err, tc.want)
			}
			if err := NewTask().Start(sinkCtx{}, tc.props); err == nil || err.Error() != tc.want {
				t.Errorf("task start error = %v\nwant %q", err, tc.want)
			}
			// After a value that does not parse, Kafka's validate also reports
			// the validator's view of null; that second message is Kafka's too.
			got := slices.DeleteFunc(validate(tc.props), func(e string) bool { return strings.Contains(e, ": Invalid value null for configuration ") })
			if diff := cmp.Diff([]string{tc.key + ": " + tc.want}, got); diff != "" {
				t.Errorf("validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigAccepted(t *testing.T) {
	for _, p := range []map[string]string{
		props("https://api.example.com/v1/${topic}"),
		props("http://h/x", "request.method", "patch", "auth.type", "basic", "connection.user", "u", "connection.password", ""),
		props("http://h/x", "request.body.format", "JSON", "batch.json.as.array", "true", "retry.on.status.codes", "404, 408,500-599"),
		props("http://h/x", "headers", "", "behavior.on.null.values", "DELETE", "behavior.on.error", "LOG"),
	} {
		if err := NewConnector().Start(connectorCtx{}, p); err != nil {
			t.Errorf("%v: %v", p, err)
		}
		if errs := validate(p); len(errs) > 0 {
			t.Errorf("%v: validate: %v", p, errs)
		}
	}
	if k, _ := configDef().Key("retry.on.status.codes"); !strings.Contains(*k.DefaultString(), "400-") {
		t.Errorf("retry.on.status.codes default %v", *k.DefaultString())
	}
}

// validate is config/validate's errors as the runtime makes them: the
// definition's, merged with the connector's.
func validate(props map[string]string) []string {
	var out []string
	for _, v := range append(configDef().Validate(props), NewConnector().Validate(props)...) {
		for _, e := range v.Errors {
			out = append(out, v.Name+": "+e)
		}
	}
	return out
}
