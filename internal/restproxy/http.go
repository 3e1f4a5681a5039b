package restproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/samsa-io/samsa/internal/httpauth"
)

// contentType is what every answer is sent as: v3 speaks plain JSON.
const contentType = "application/json"

// Handler is the REST Proxy API.
func (p *Proxy) Handler() http.Handler {
	mux := http.NewServeMux()
	p.routeClusters(mux)
	p.routeBrokers(mux)
	p.routeTopics(mux)
	p.routePartitions(mux)
	p.routeConfigs(mux)
	p.routeBrokerConfigs(mux)
	p.routeReassignments(mux)
	p.routeRecords(mux)
	p.routeRecordsBatch(mux)
	p.routeGroups(mux)
	p.routeACLs(mux)
	p.routeV2Topics(mux)
	p.routeV2Produce(mux)
	p.routeV2Consumers(mux)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, struct{}{}) })
	return withErrors(mux)
}

// withErrors gives the mux's own answers (no route, wrong method)
// Confluent's error body rather than Go's plain text.
func withErrors(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
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

// writeError answers err: an *Error as it is, anything else through the
// Kafka error mapping.
func writeError(w http.ResponseWriter, err error) {
	e := kafkaError(err)
	writeJSON(w, e.Status, e)
}

// readBody decodes a JSON request body into v: only application/json is
// taken (415 otherwise, as Jersey refuses a type no resource consumes),
// a body past the limit is 413, malformed JSON and unknown fields 400 (a
// field the proxy would ignore is one a user thinks took effect).
func (p *Proxy) readBody(w http.ResponseWriter, req *http.Request, v any) *Error {
	mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return errUnsupportedMediaType()
	}
	if req.ContentLength > p.cfg.MaxBody {
		return errTooLarge(p.cfg.MaxBody)
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, req.Body, p.cfg.MaxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			return errTooLarge(p.cfg.MaxBody)
		case errors.Is(err, io.EOF):
			return errBadRequest("Bad Request: the request body is empty")
		default:
			return errBadRequest("Bad Request: " + err.Error())
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errTooLarge(p.cfg.MaxBody)
		}
		return errBadRequest("Bad Request: more than one JSON value in the body")
	}
	return nil
}

// baseURL is the v3 root as the client reached it, which the answers'
// metadata.self and related links start with, as Confluent's do (its
// UrlFactory builds them from the request's base URI).
func baseURL(req *http.Request) string {
	scheme := "http"
	if req.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + req.Host + "/v3"
}

// Resource metadata and links, the shapes every v3 answer shares.
type (
	resourceMetadata struct {
		Self         string `json:"self"`
		ResourceName string `json:"resource_name"`
	}
	collectionMetadata struct {
		Self string  `json:"self"`
		Next *string `json:"next"`
	}
	relationship struct {
		Related string `json:"related"`
	}
	list[T any] struct {
		Kind     string             `json:"kind"`
		Metadata collectionMetadata `json:"metadata"`
		Data     []T                `json:"data"`
	}
)

func newList[T any](kind, self string, data []T) list[T] {
	if data == nil {
		data = []T{} // the spec's data is an array, never null
	}
	return list[T]{Kind: kind, Metadata: collectionMetadata{Self: self}, Data: data}
}

func related(url string) relationship { return relationship{Related: url} }

// crn is a resource's Confluent Resource Name: crn:///kafka=c/topic=t...,
// built from name=value pairs.
func crn(pairs ...string) string {
	var b strings.Builder
	b.WriteString("crn://")
	for i := 0; i+1 < len(pairs); i += 2 {
		b.WriteString("/" + pairs[i] + "=" + pairs[i+1])
	}
	return b.String()
}
