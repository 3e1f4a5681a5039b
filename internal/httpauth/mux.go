package httpauth

import "net/http"

// Unrouted tells whether mux has no route for req and, if so, the status
// the mux itself would answer: 404, or 405 with the Allow header set on w.
// The services answer those in their own error bodies rather than Go's
// plain text (Confluent's services answer JSON for every status).
func Unrouted(mux *http.ServeMux, w http.ResponseWriter, req *http.Request) (int, bool) {
	h, pattern := mux.Handler(req)
	if pattern != "" {
		return 0, false
	}
	// Let the mux's handler tell 404 from 405 (and set Allow), keeping
	// only its status.
	rec := &statusOnly{ResponseWriter: w}
	h.ServeHTTP(rec, req)
	if rec.status == 0 {
		return http.StatusNotFound, true
	}
	return rec.status, true
}

// statusOnly keeps the status and headers of a handler's answer and drops
// its body.
type statusOnly struct {
	http.ResponseWriter
	status int
}

func (s *statusOnly) WriteHeader(code int)        { s.status = code }
func (s *statusOnly) Write(p []byte) (int, error) { return len(p), nil }
