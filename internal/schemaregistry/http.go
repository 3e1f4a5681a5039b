package schemaregistry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/internal/httpauth"
)

// contentType is what every answer is sent as, as Confluent's registry
// answers by default.
const contentType = "application/vnd.schemaregistry.v1+json"

// maxBody bounds a request body: Confluent's schemas are text, and a
// registry reading an unbounded body is a registry out of memory.
const maxBody = 16 << 20

// Handler is the REST API of Confluent's Schema Registry on this registry.
// clusterID is the Kafka cluster's ID, which /v1/metadata/id answers.
func (r *Registry) Handler() http.Handler {
	mux := http.NewServeMux()
	r.routeSubjects(mux)
	r.routeSchemas(mux)
	r.routeConfig(mux)
	r.routeContexts(mux)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, struct{}{}) })
	mux.HandleFunc("GET /v1/metadata/id", r.getMetadataID)
	return withAuth(r.cfg.Auth, withErrors(mux))
}

// withErrors gives the mux's own answers (no route, wrong method)
// Confluent's error body rather than Go's plain text. Context-scoped
// paths are rewritten first (rewriteContextPath).
func withErrors(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if e := rewriteContextPath(req); e != nil {
			writeError(w, e)
			return
		}
		if code, unrouted := httpauth.Unrouted(mux, w, req); unrouted {
			writeError(w, &Error{Status: code, Code: code, Message: fmt.Sprintf("HTTP %d %s", code, http.StatusText(code))})
			return
		}
		mux.ServeHTTP(w, req)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may be gone; nothing to do about it
}

// writeError answers an operation's error; anything that is not an
// *Error is a failure of this registry, answered as Confluent answers an
// unexpected one.
func writeError(w http.ResponseWriter, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Status: http.StatusInternalServerError, Code: 500, Message: err.Error()}
	}
	writeJSON(w, e.Status, e)
}

// readBody decodes a JSON request body into v, refusing content types
// Confluent's registry refuses and fields it does not know (a field this
// registry would ignore is one a user thinks took effect).
func readBody(w http.ResponseWriter, req *http.Request, v any) *Error {
	if ct := req.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		switch {
		case err != nil:
			return &Error{http.StatusUnsupportedMediaType, codeUnsupportedMediaType, "HTTP 415 Unsupported Media Type"}
		case mt == "application/vnd.schemaregistry.v1+json", mt == "application/vnd.schemaregistry+json",
			mt == "application/json", mt == "application/octet-stream":
		default:
			return &Error{http.StatusUnsupportedMediaType, codeUnsupportedMediaType, "HTTP 415 Unsupported Media Type"}
		}
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, req.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errBadBody("Request body is empty")
		}
		return errBadBody(fmt.Sprintf("Unrecognized request body: %v", err))
	}
	if dec.More() {
		return errBadBody("Unrecognized request body: more than one JSON value")
	}
	return nil
}

// boolParam reads a true/false query parameter; anything else is refused
// rather than read as false.
func boolParam(req *http.Request, name string) (bool, *Error) {
	s := req.URL.Query().Get(name)
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, errBadBody(fmt.Sprintf("Query parameter %s=%q is not true or false", name, s))
	}
	return b, nil
}

// boolParams reads several at once, stopping at the first bad one.
func boolParams(req *http.Request, names ...string) ([]bool, *Error) {
	out := make([]bool, len(names))
	for i, n := range names {
		b, err := boolParam(req, n)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// subjectParam reads the {subject} of a path, normalized as Confluent
// does (":.:a" is "a").
func subjectParam(req *http.Request) string {
	return normalizeSubject(req.PathValue("subject"))
}

// idParam reads the {id} of a path.
func idParam(req *http.Request) (int, *Error) {
	s := req.PathValue("id")
	id, err := strconv.ParseInt(s, 10, 32)
	if err != nil || id < 0 {
		return 0, &Error{http.StatusNotFound, codeSchemaNotFound, "Schema " + s + " not found"}
	}
	return int(id), nil
}

// writeRaw answers a schema's text as it is, as the /schema endpoints do.
func writeRaw(w http.ResponseWriter, text string) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, text)
}

// formatParam reads the format parameter: "" or "default" (the stored
// text), "resolved" (an Avro schema with its references written out),
// "serialized" (a Protobuf schema's FileDescriptorProto, base64),
// "ignore_extensions" (a Protobuf schema without its custom options and
// extensions). Other formats are refused rather than answered unchanged
// (Confluent answers the stored text for a format it does not know).
func formatParam(req *http.Request) (string, *Error) {
	switch f := req.URL.Query().Get("format"); strings.ToLower(f) {
	case "", formatDefault:
		return "", nil
	case formatResolved, formatSerialized, formatIgnoreExtensions:
		return strings.ToLower(f), nil
	default:
		return "", errBadBody(fmt.Sprintf("format=%s is not supported by this registry", f))
	}
}

// withFormat answers s in the request's format.
func (r *Registry) withFormat(req *http.Request, s Schema) (Schema, error) {
	format, e := formatParam(req)
	if e != nil {
		return Schema{}, e
	}
	text, err := r.Formatted(s, format)
	if err != nil {
		return Schema{}, err
	}
	s.Schema = text
	return s, nil
}

func (r *Registry) getMetadataID(w http.ResponseWriter, req *http.Request) {
	id, err := r.store.clusterID(req.Context())
	if err != nil {
		writeError(w, errStore("Error while getting the Kafka cluster ID", err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"scope": map[string]any{
		"path":     []string{},
		"clusters": map[string]string{"kafka-cluster": id, "schema-registry-cluster": "schema-registry"},
	}})
}
