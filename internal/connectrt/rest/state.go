package rest

import (
	"net/http"
)

// A connector's state: its status, restarts (KIP-745), and target states
// (pause, resume, and KIP-875's stop).
func (s *Server) routeConnectorState(mux *http.ServeMux) {
	mux.HandleFunc("GET /connectors/{connector}/status", s.connectorStatus)
	mux.HandleFunc("POST /connectors/{connector}/restart", s.restartConnector)
	mux.HandleFunc("PUT /connectors/{connector}/pause", s.pauseConnector)
	mux.HandleFunc("PUT /connectors/{connector}/resume", s.resumeConnector)
	mux.HandleFunc("PUT /connectors/{connector}/stop", s.stopConnector)
}

func (s *Server) connectorStatus(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.herderContext(r)
	defer cancel()
	st, err := s.cfg.Herder.ConnectorStatus(ctx, r.PathValue("connector"))
	if s.failed(w, r, nil, err) {
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// restartConnector: a plain restart (neither flag true) restarts the
// connector alone and answers 204, as before KIP-745; with includeTasks
// or onlyFailed the herder answers the status after the request, 202.
func (s *Server) restartConnector(w http.ResponseWriter, r *http.Request) {
	includeTasks := jerseyBool(r, "includeTasks", false)
	onlyFailed := jerseyBool(r, "onlyFailed", false)
	ctx, cancel := s.herderContext(r)
	defer cancel()
	st, err := s.cfg.Herder.RestartConnector(ctx, r.PathValue("connector"), includeTasks, onlyFailed)
	if s.failed(w, r, nil, err) {
		return
	}
	if st == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, http.StatusAccepted, st)
}

// pauseConnector, resumeConnector: 202, idempotent.
func (s *Server) pauseConnector(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.herderContext(r)
	defer cancel()
	if s.failed(w, r, nil, s.cfg.Herder.PauseConnector(ctx, r.PathValue("connector"))) {
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (s *Server) resumeConnector(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.herderContext(r)
	defer cancel()
	if s.failed(w, r, nil, s.cfg.Herder.ResumeConnector(ctx, r.PathValue("connector"))) {
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// stopConnector answers 204: Kafka's resource method returns nothing
// (pause and resume answer 202).
func (s *Server) stopConnector(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.herderContext(r)
	defer cancel()
	if s.failed(w, r, nil, s.cfg.Herder.StopConnector(ctx, r.PathValue("connector"))) {
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
