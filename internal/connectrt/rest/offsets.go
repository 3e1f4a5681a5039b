package rest

import (
	"encoding/json"
	"net/http"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// A connector's offsets (KIP-875): read them, alter them, reset them. The
// herder refuses the last two unless the connector is stopped, in Kafka's
// words.
func (s *Server) routeOffsets(mux *http.ServeMux) {
	mux.HandleFunc("GET /connectors/{connector}/offsets", s.getOffsets)
	mux.HandleFunc("PATCH /connectors/{connector}/offsets", s.alterOffsets)
	mux.HandleFunc("DELETE /connectors/{connector}/offsets", s.resetOffsets)
}

func (s *Server) getOffsets(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.herderContext(r)
	defer cancel()
	offsets, err := s.cfg.Herder.Offsets(ctx, r.PathValue("connector"))
	if s.failed(w, r, nil, err) {
		return
	}
	writeJSON(w, http.StatusOK, offsets)
}

// alterOffsets answers 200 and the herder's message; a body without
// offsets is Kafka's 400.
func (s *Server) alterOffsets(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if s.failed(w, r, nil, err) {
		return
	}
	var offsets api.ConnectorOffsets
	if err := decodeBody(body, &offsets, true); s.failed(w, r, nil, err) {
		return
	}
	if len(offsets.Offsets) == 0 {
		s.failed(w, r, nil, api.BadRequest("Partitions / offsets need to be provided for an alter offsets request"))
		return
	}
	for i := range offsets.Offsets {
		o := &offsets.Offsets[i]
		o.Partition = plainNumbers(o.Partition)
		o.Offset = plainNumbers(o.Offset)
	}
	ctx, cancel := s.herderContext(r)
	defer cancel()
	msg, err := s.cfg.Herder.AlterOffsets(ctx, r.PathValue("connector"), offsets)
	if s.failed(w, r, body, err) {
		return
	}
	writeJSON(w, http.StatusOK, msg)
}

func (s *Server) resetOffsets(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.herderContext(r)
	defer cancel()
	msg, err := s.cfg.Herder.ResetOffsets(ctx, r.PathValue("connector"))
	if s.failed(w, r, nil, err) {
		return
	}
	writeJSON(w, http.StatusOK, msg)
}

// plainNumbers turns the json.Numbers of a decoded partition or offset
// into int64 (or float64 when not integral), as Jackson gives Kafka Long
// and Double: an offset past 2^53 keeps every digit.
func plainNumbers(m map[string]any) map[string]any {
	for k, v := range m {
		m[k] = plainNumber(v)
	}
	return m
}

func plainNumber(v any) any {
	switch v := v.(type) {
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n
		}
		f, _ := v.Float64()
		return f
	case map[string]any:
		return plainNumbers(v)
	case []any:
		for i := range v {
			v[i] = plainNumber(v[i])
		}
		return v
	}
	return v
}
