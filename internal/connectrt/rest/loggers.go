package rest

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// Loggers are a worker's named loggers and their levels (KIP-495), which
// /admin/loggers reads and sets; LevelVars is the one over slog.
type Loggers interface {
	// Levels is every logger with a level, and "root".
	Levels() map[string]LoggerLevel
	// Level is one logger's level; false when no such logger exists.
	Level(name string) (LoggerLevel, bool)
	// SetLevel sets the level of namespace and every logger under it
	// ("root": every logger) and answers the names of the loggers whose
	// level it changed, sorted.
	SetLevel(namespace string, level slog.Level) []string
}

// ClusterLoggers is what a herder implements to take KIP-976's
// scope=cluster: the level written to the config topic for every worker
// to apply. A herder without it answers such a request 501.
type ClusterLoggers interface {
	SetClusterLoggerLevel(ctx context.Context, namespace, level string) error
}

// LoggerLevel is Kafka's LoggerLevel entity: the level's name and when this
// worker last set it (Unix milliseconds), null when never.
type LoggerLevel struct {
	Level        string `json:"level"`
	LastModified *int64 `json:"last_modified"`
}

func (s *Server) routeLoggers(mux *http.ServeMux) {
	mux.HandleFunc("GET /admin/loggers", s.listLoggers)
	mux.HandleFunc("GET /admin/loggers/{logger}", s.getLogger)
	mux.HandleFunc("PUT /admin/loggers/{logger}", s.setLoggerLevel)
}

func (s *Server) listLoggers(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.cfg.Loggers.Levels())
}

func (s *Server) getLogger(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("logger")
	level, ok := s.cfg.Loggers.Level(name)
	if !ok {
		writeError(w, api.NotFound("Logger %s not found.", name))
		return
	}
	writeJSON(w, http.StatusOK, level)
}

// setLoggerLevel is PUT /admin/loggers/{logger} {"level":"DEBUG"}: at
// scope=worker (the default; Kafka takes an unknown scope as worker too)
// 200 and the loggers changed; at scope=cluster 204 once the herder has
// taken it.
func (s *Server) setLoggerLevel(w http.ResponseWriter, r *http.Request) {
	namespace := r.PathValue("logger")
	body, err := s.readBody(w, r)
	if s.failed(w, r, nil, err) {
		return
	}
	var req map[string]json.RawMessage
	if err := decodeBody(body, &req, false); s.failed(w, r, nil, err) {
		return
	}
	raw, ok := req["level"]
	if !ok || strings.TrimSpace(string(raw)) == "null" {
		writeError(w, api.BadRequest("Desired 'level' parameter was not specified in request."))
		return
	}
	levelName, _, err := configString("level", raw)
	if s.failed(w, r, nil, err) {
		return
	}
	level, ok := ParseLevel(levelName)
	if !ok {
		writeError(w, api.NotFound("invalid log level '%s'.", levelName))
		return
	}
	scope := r.URL.Query().Get("scope")
	if strings.EqualFold(scope, "cluster") {
		s.setClusterLevel(w, r, namespace, levelName)
		return
	}
	if scope != "" && !strings.EqualFold(scope, "worker") {
		s.log.Warn("invalid scope in a request to set a logger's level; using worker", "scope", scope)
	}
	writeJSON(w, http.StatusOK, emptyIfNil(s.cfg.Loggers.SetLevel(namespace, level)))
}

func (s *Server) setClusterLevel(w http.ResponseWriter, r *http.Request, namespace, level string) {
	cl, ok := s.cfg.Herder.(ClusterLoggers)
	if !ok {
		writeError(w, &api.Error{Status: http.StatusNotImplemented,
			Message: "This worker cannot set logger levels across the cluster (scope=cluster); set them on each worker (scope=worker)"})
		return
	}
	ctx, cancel := s.herderContext(r)
	defer cancel()
	if s.failed(w, r, nil, cl.SetClusterLoggerLevel(ctx, namespace, strings.ToUpper(level))) {
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
