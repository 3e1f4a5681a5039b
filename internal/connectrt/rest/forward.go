package rest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// failed answers err when there is one and says whether it did. A
// *api.NotLeaderError is not answered but forwarded: the request goes to
// the leader with its method, path, query and body (and its Authorization
// header), as Kafka's HerderRequestHandler sends it.
func (s *Server) failed(w http.ResponseWriter, r *http.Request, body []byte, err error) bool {
	if err == nil {
		return false
	}
	if nl, ok := api.IsNotLeader(err); ok {
		s.forward(w, r, body, nl)
		return true
	}
	writeError(w, err)
	return true
}

// forward sends the request to the leader and relays its answer. The
// forward query parameter counts the hops as Kafka's does: a request from
// a user (no parameter) goes on with forward=true, which may itself be
// forwarded once more with forward=false; one that arrives with
// forward=false and still finds no leader answers 409, since two hops
// should always reach it and a third means the group is rebalancing.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, body []byte, nl *api.NotLeaderError) {
	q := r.URL.Query()
	next := "true"
	if v, ok := q["forward"]; ok && len(v) > 0 {
		if !strings.EqualFold(v[0], "true") {
			s.log.Error("request failed: no leader within two hops between workers", "method", r.Method, "path", r.URL.Path)
			writeError(w, api.Conflict("%s", msgTooManyHops))
			return
		}
		next = "false"
	}
	if nl.LeaderURL == "" {
		writeError(w, api.Conflict("%s", msgNoLeaderURL))
		return
	}
	q.Set("forward", next)
	target := strings.TrimRight(nl.LeaderURL, "/") + r.URL.EscapedPath() + "?" + q.Encode()
	s.log.Debug("forwarding request", "method", r.Method, "url", target)
	resp, err := s.send(r, target, body)
	if err != nil {
		writeError(w, &api.Error{Status: http.StatusInternalServerError, Message: msgForwardIOErr + err.Error()})
		return
	}
	defer resp.Body.Close()
	relay(w, r, resp, strings.TrimRight(nl.LeaderURL, "/"))
}

// send makes the forwarded request under the request timeout.
func (s *Server) send(r *http.Request, target string, body []byte) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	req, err := http.NewRequestWithContext(ctx, r.Method, target, bytes.NewReader(body))
	if err != nil {
		cancel()
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// relay answers the leader's status, body and Content-Type as they are:
// Kafka rebuilds the same answer from them (the entity, or the leader's
// error_code and message). A created connector's Location names this
// worker, as Kafka's (built from this request's base URI).
func relay(w http.ResponseWriter, r *http.Request, resp *http.Response, leaderURL string) {
	if v := resp.Header.Get("Content-Type"); v != "" {
		w.Header().Set("Content-Type", v)
	}
	if v := resp.Header.Get("Location"); strings.HasPrefix(v, leaderURL+"/") {
		w.Header().Set("Location", baseURL(r)+strings.TrimPrefix(v, leaderURL))
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body) // the client may be gone; nothing to do about it
}

// cancelOnClose ends a forwarded request's context once its body is read.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
