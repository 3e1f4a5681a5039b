package rest

import (
	"net/http"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// A connector's active topics (KIP-558), behind topic.tracking.enable and
// topic.tracking.allow.reset.
func (s *Server) routeTopics(mux *http.ServeMux) {
	mux.HandleFunc("GET /connectors/{connector}/topics", s.activeTopics)
	mux.HandleFunc("PUT /connectors/{connector}/topics/reset", s.resetActiveTopics)
}

// activeTopicsInfo is Kafka's ActiveTopicsInfo as the resource answers it,
// under the connector's name: {"c":{"topics":[...]}}.
type activeTopicsInfo struct {
	Topics []string `json:"topics"`
}

var (
	errTrackingDisabled      = &api.Error{Status: http.StatusForbidden, Message: "Topic tracking is disabled."}
	errTrackingResetDisabled = &api.Error{Status: http.StatusForbidden, Message: "Topic tracking reset is disabled."}
)

func (s *Server) activeTopics(w http.ResponseWriter, r *http.Request) {
	if s.cfg.TopicTrackingDisabled {
		writeError(w, errTrackingDisabled)
		return
	}
	name := r.PathValue("connector")
	ctx, cancel := s.herderContext(r)
	defer cancel()
	topics, err := s.cfg.Herder.ActiveTopics(ctx, name)
	if s.failed(w, r, nil, err) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]activeTopicsInfo{name: {Topics: emptyIfNil(topics)}})
}

// resetActiveTopics answers 202.
func (s *Server) resetActiveTopics(w http.ResponseWriter, r *http.Request) {
	switch {
	case s.cfg.TopicTrackingDisabled:
		writeError(w, errTrackingDisabled)
		return
	case s.cfg.TopicTrackingResetDisabled:
		writeError(w, errTrackingResetDisabled)
		return
	}
	ctx, cancel := s.herderContext(r)
	defer cancel()
	if s.failed(w, r, nil, s.cfg.Herder.ResetActiveTopics(ctx, r.PathValue("connector"))) {
		return
	}
	w.WriteHeader(http.StatusAccepted)
}
