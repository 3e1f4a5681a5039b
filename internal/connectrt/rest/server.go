package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/internal/connectrt/api"
	"github.com/samsa-io/samsa/internal/httpauth"
)

// Kafka's defaults: ConnectResource.DEFAULT_REST_REQUEST_TIMEOUT_MS and
// DEFAULT_HEALTH_CHECK_TIMEOUT_MS.
const (
	DefaultRequestTimeout     = 90 * time.Second
	DefaultHealthCheckTimeout = 10 * time.Second
	// DefaultMaxBody bounds a request body; Kafka has no bound of its own,
	// but a worker must not read an endless body into memory.
	DefaultMaxBody = 16 << 20
)

// Config is what the REST server needs. Herder and Loggers are required.
type Config struct {
	Herder api.Herder
	// Loggers are the worker's loggers behind /admin/loggers.
	Loggers Loggers
	// RequestTimeout bounds each herder call (Kafka's 90 s by default);
	// past it the request answers 500 "Request timed out".
	RequestTimeout time.Duration
	// HealthCheckTimeout bounds GET /health's herder round trip (10 s).
	HealthCheckTimeout time.Duration
	// TopicTrackingDisabled is topic.tracking.enable=false: the topics
	// endpoints answer 403 (KIP-558).
	TopicTrackingDisabled bool
	// TopicTrackingResetDisabled is topic.tracking.allow.reset=false.
	TopicTrackingResetDisabled bool
	// Client sends requests forwarded to the leader; nil is a client whose
	// timeout is RequestTimeout.
	Client *http.Client
	// MaxBody bounds a request body (DefaultMaxBody); past it 413.
	MaxBody int64
	// Logger gets a component=connect-rest attribute.
	Logger *slog.Logger
}

// Server is the REST API of one worker.
type Server struct {
	cfg     Config
	log     *slog.Logger
	handler http.Handler
}

// New checks cfg, fills its defaults and builds the routes.
func New(cfg Config) (*Server, error) {
	if cfg.Herder == nil {
		return nil, errors.New("connect rest: no herder")
	}
	if cfg.Loggers == nil {
		return nil, errors.New("connect rest: no loggers")
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.HealthCheckTimeout <= 0 {
		cfg.HealthCheckTimeout = DefaultHealthCheckTimeout
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: cfg.RequestTimeout}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{cfg: cfg, log: cfg.Logger.With("component", "connect-rest")}
	mux := http.NewServeMux()
	s.routeRoot(mux)
	s.routeConnectors(mux)
	s.routeConnectorState(mux)
	s.routeTasks(mux)
	s.routeOffsets(mux)
	s.routeTopics(mux)
	s.routePlugins(mux)
	s.routeLoggers(mux)
	s.handler = withKafkaRouting(mux)
	return s, nil
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// withKafkaRouting gives the mux's own answers (no route, wrong method)
// the bodies Jersey gives them, {"error_code":404,"message":"HTTP 404 Not
// Found"}, and takes a path with a trailing slash as the path without it,
// as Jersey does (GET /connectors/ lists the connectors).
func withKafkaRouting(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
			r = r.Clone(r.Context())
			r.URL.Path = strings.TrimSuffix(p, "/")
			r.URL.RawPath = strings.TrimSuffix(r.URL.RawPath, "/")
		}
		if code, unrouted := httpauth.Unrouted(mux, w, r); unrouted {
			writeError(w, &api.Error{Status: code, Message: jerseyMessage(code)})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// jerseyMessage is the message of Jersey's own errors: "HTTP 404 Not Found".
func jerseyMessage(code int) string {
	return "HTTP " + strconv.Itoa(code) + " " + http.StatusText(code)
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may be gone; nothing to do about it
}

// herderContext is the context a herder call runs under: the request's,
// bounded by the request timeout.
func (s *Server) herderContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
}

// readBody reads a request body that Kafka reads as JSON: only
// application/json is taken (Jersey answers 415 otherwise), a body past
// MaxBody is 413. The bytes are kept: a request forwarded to the leader
// carries them unchanged.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, &api.Error{Status: http.StatusUnsupportedMediaType, Message: jerseyMessage(http.StatusUnsupportedMediaType)}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, &api.Error{Status: http.StatusRequestEntityTooLarge, Message: jerseyMessage(http.StatusRequestEntityTooLarge)}
		}
		return nil, &api.Error{Status: http.StatusBadRequest, Message: "Error reading the request body: " + err.Error()}
	}
	return body, nil
}

// decodeBody decodes a JSON body into v. Jackson's mapping errors are 500s
// in Kafka (no exception mapper turns them into 400), and so are they
// here, with our own words for what was wrong.
func decodeBody(body []byte, v any, strict bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return &api.Error{Status: http.StatusInternalServerError, Message: "The request body is empty; a JSON value is required"}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return &api.Error{Status: http.StatusInternalServerError, Message: "Cannot parse the request body: " + err.Error()}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &api.Error{Status: http.StatusInternalServerError, Message: "Cannot parse the request body: more than one JSON value"}
	}
	return nil
}

// jerseyBool reads a Boolean query parameter as Jersey does
// (Boolean.valueOf): "true" in any case is true, anything else false, an
// absent one def.
func jerseyBool(r *http.Request, name string, def bool) bool {
	v, ok := r.URL.Query()[name]
	if !ok || len(v) == 0 {
		return def
	}
	return strings.EqualFold(v[0], "true")
}
