package rest

import (
	"context"
	"errors"
	"net/http"
)

// The root resource: GET / (the worker's version and its Kafka cluster's
// ID) and GET /health (KIP-1017).
func (s *Server) routeRoot(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", s.serverInfo)
	mux.HandleFunc("GET /health", s.health)
}

func (s *Server) serverInfo(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.herderContext(r)
	defer cancel()
	info, err := s.cfg.Herder.ServerInfo(ctx)
	if s.failed(w, r, nil, err) {
		return
	}
	writeJSON(w, http.StatusOK, info)
}

// workerStatus is Kafka's WorkerStatus entity.
type workerStatus struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// The three answers of GET /health, in Kafka's words.
var (
	statusHealthy   = workerStatus{"healthy", "Worker has completed startup and is ready to handle requests."}
	statusStarting  = workerStatus{"starting", "Worker is still starting up."}
	statusUnhealthy = workerStatus{"unhealthy", "Worker was unable to handle this request and may be unable to handle other requests."}
)

// health asks the herder's loop for a no-op within the health check
// timeout: 200 when it answered, else 503 while the herder is still
// starting and 500 once it has started (its loop is stuck).
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.HealthCheckTimeout)
	defer cancel()
	err := s.cfg.Herder.HealthCheck(ctx)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, statusHealthy)
	case errors.Is(err, context.DeadlineExceeded) && !s.cfg.Herder.Ready():
		writeJSON(w, http.StatusServiceUnavailable, statusStarting)
	case errors.Is(err, context.DeadlineExceeded):
		writeJSON(w, http.StatusInternalServerError, statusUnhealthy)
	default:
		writeError(w, err)
	}
}
