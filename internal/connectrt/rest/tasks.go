package rest

import (
	"net/http"
	"strconv"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// A connector's tasks: their configs, one task's status, a task's restart.
func (s *Server) routeTasks(mux *http.ServeMux) {
	mux.HandleFunc("GET /connectors/{connector}/tasks", s.taskConfigs)
	mux.HandleFunc("GET /connectors/{connector}/tasks/{task}/status", s.taskStatus)
	mux.HandleFunc("POST /connectors/{connector}/tasks/{task}/restart", s.restartTask)
}

func (s *Server) taskConfigs(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.herderContext(r)
	defer cancel()
	tasks, err := s.cfg.Herder.TaskConfigs(ctx, r.PathValue("connector"))
	if s.failed(w, r, nil, err) {
		return
	}
	writeJSON(w, http.StatusOK, emptyIfNil(tasks))
}

func (s *Server) taskStatus(w http.ResponseWriter, r *http.Request) {
	id, err := taskID(r)
	if s.failed(w, r, nil, err) {
		return
	}
	ctx, cancel := s.herderContext(r)
	defer cancel()
	st, err := s.cfg.Herder.TaskStatus(ctx, id)
	if s.failed(w, r, nil, err) {
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// restartTask answers 204.
func (s *Server) restartTask(w http.ResponseWriter, r *http.Request) {
	id, err := taskID(r)
	if s.failed(w, r, nil, err) {
		return
	}
	ctx, cancel := s.herderContext(r)
	defer cancel()
	if s.failed(w, r, nil, s.cfg.Herder.RestartTask(ctx, id)) {
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// taskID reads the path's task as Jersey reads an Integer path parameter:
// one that is not an int32 matches no resource, 404 "HTTP 404 Not Found".
func taskID(r *http.Request) (api.TaskID, error) {
	n, err := strconv.ParseInt(r.PathValue("task"), 10, 32)
	if err != nil {
		return api.TaskID{}, &api.Error{Status: http.StatusNotFound, Message: jerseyMessage(http.StatusNotFound)}
	}
	return api.TaskID{Connector: r.PathValue("connector"), Task: int(n)}, nil
}
