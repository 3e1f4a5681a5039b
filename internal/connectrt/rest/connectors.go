package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// The connectors resource: the list (with ?expand=status and
// ?expand=info), creation, a connector's info and config (GET, PUT, and
// KIP-477's PATCH), deletion.
func (s *Server) routeConnectors(mux *http.ServeMux) {
	mux.HandleFunc("GET /connectors", s.listConnectors)
	mux.HandleFunc("POST /connectors", s.createConnector)
	mux.HandleFunc("GET /connectors/{connector}", s.getConnector)
	mux.HandleFunc("DELETE /connectors/{connector}", s.deleteConnector)
	mux.HandleFunc("GET /connectors/{connector}/config", s.getConnectorConfig)
	mux.HandleFunc("PUT /connectors/{connector}/config", s.putConnectorConfig)
	mux.HandleFunc("PATCH /connectors/{connector}/config", s.patchConnectorConfig)
}

// nameConfig is ConnectorConfig.NAME_CONFIG.
const nameConfig = "name"

// listConnectors answers the names, or with any expand parameter (even an
// empty one, as Kafka checks only that it is there) an object of each
// connector's expansions: "status", "info", others ignored. A connector
// deleted meanwhile (404) is left out, as Kafka does.
func (s *Server) listConnectors(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.herderContext(r)
	defer cancel()
	names, err := s.cfg.Herder.Connectors(ctx)
	if s.failed(w, r, nil, err) {
		return
	}
	names = slices.Sorted(slices.Values(names))
	expand, ok := r.URL.Query()["expand"]
	if !ok {
		writeJSON(w, http.StatusOK, emptyIfNil(names))
		return
	}
	out := make(map[string]map[string]any, len(names))
	for _, name := range names {
		one, err := s.expandConnector(r, name, expand)
		if isNotFound(err) {
			continue
		}
		if s.failed(w, r, nil, err) {
			return
		}
		out[name] = one
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) expandConnector(r *http.Request, name string, expand []string) (map[string]any, error) {
	ctx, cancel := s.herderContext(r)
	defer cancel()
	one := map[string]any{}
	for _, e := range expand {
		switch e {
		case "status":
			st, err := s.cfg.Herder.ConnectorStatus(ctx, name)
			if err != nil {
				return nil, err
			}
			one["status"] = st
		case "info":
			info, err := s.cfg.Herder.ConnectorInfo(ctx, name)
			if err != nil {
				return nil, err
			}
			one["info"] = info
		default:
			s.log.Info("ignoring unknown expansion type", "expand", e)
		}
	}
	return one, nil
}

// createConnectorRequest is Kafka's CreateConnectorRequest; Jackson
// refuses fields it does not know, and so does this.
type createConnectorRequest struct {
	Name         *string                    `json:"name"`
	Config       map[string]json.RawMessage `json:"config"`
	InitialState *string                    `json:"initial_state"`
}

// createConnector is POST /connectors: 201 and the connector's info, 409
// when it exists. The name is trimmed and put in the config, or must
// match the config's.
func (s *Server) createConnector(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if s.failed(w, r, nil, err) {
		return
	}
	var req createConnectorRequest
	if err := decodeBody(body, &req, true); s.failed(w, r, nil, err) {
		return
	}
	name := ""
	if req.Name != nil {
		name = strings.TrimSpace(*req.Name)
	}
	config, err := connectorConfig(req.Config)
	if s.failed(w, r, nil, err) {
		return
	}
	initial, err := initialState(req.InitialState)
	if s.failed(w, r, nil, err) {
		return
	}
	if err := checkAndPutName(name, config); s.failed(w, r, nil, err) {
		return
	}
	ctx, cancel := s.herderContext(r)
	defer cancel()
	info, _, err := s.cfg.Herder.PutConnectorConfig(ctx, name, config, false, initial)
	if s.failed(w, r, body, err) {
		return
	}
	w.Header().Set("Location", location(r, name))
	writeJSON(w, http.StatusCreated, info)
}

func (s *Server) getConnector(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.herderContext(r)
	defer cancel()
	info, err := s.cfg.Herder.ConnectorInfo(ctx, r.PathValue("connector"))
	if s.failed(w, r, nil, err) {
		return
	}
	writeJSON(w, http.StatusOK, info)
}

func (s *Server) deleteConnector(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.herderContext(r)
	defer cancel()
	err := s.cfg.Herder.DeleteConnector(ctx, r.PathValue("connector"))
	if s.failed(w, r, nil, err) {
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) getConnectorConfig(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.herderContext(r)
	defer cancel()
	config, err := s.cfg.Herder.ConnectorConfig(ctx, r.PathValue("connector"))
	if s.failed(w, r, nil, err) {
		return
	}
	writeJSON(w, http.StatusOK, emptyMapIfNil(config))
}

// readConfig reads a request body that is a connector config (an object
// of strings), answering the error itself when it is not.
func (s *Server) readConfig(w http.ResponseWriter, r *http.Request) ([]byte, map[string]string, bool) {
	body, err := s.readBody(w, r)
	if s.failed(w, r, nil, err) {
		return nil, nil, false
	}
	var raw map[string]json.RawMessage
	if err := decodeBody(body, &raw, false); s.failed(w, r, nil, err) {
		return nil, nil, false
	}
	config, err := connectorConfig(raw)
	if s.failed(w, r, nil, err) {
		return nil, nil, false
	}
	return body, config, true
}

// putConnectorConfig creates (201) or replaces (200) a connector.
func (s *Server) putConnectorConfig(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("connector")
	body, config, ok := s.readConfig(w, r)
	if !ok {
		return
	}
	if err := checkAndPutName(name, config); s.failed(w, r, nil, err) {
		return
	}
	ctx, cancel := s.herderContext(r)
	defer cancel()
	info, created, err := s.cfg.Herder.PutConnectorConfig(ctx, name, config, true, "")
	if s.failed(w, r, body, err) {
		return
	}
	status := http.StatusOK
	if created {
		w.Header().Set("Location", location(r, name))
		status = http.StatusCreated
	}
	writeJSON(w, status, info)
}

// patchConnectorConfig merges the body into the config (KIP-477): a null
// value removes its key. Kafka checks no name here; the herder does.
func (s *Server) patchConnectorConfig(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if s.failed(w, r, nil, err) {
		return
	}
	var raw map[string]json.RawMessage
	if err := decodeBody(body, &raw, false); s.failed(w, r, nil, err) {
		return
	}
	if raw == nil {
		s.failed(w, r, nil, errNullBody)
		return
	}
	patch := make(map[string]*string, len(raw))
	for k, v := range raw {
		str, isNull, err := configString(k, v)
		if s.failed(w, r, nil, err) {
			return
		}
		if !isNull {
			patch[k] = &str
		} else {
			patch[k] = nil
		}
	}
	ctx, cancel := s.herderContext(r)
	defer cancel()
	info, err := s.cfg.Herder.PatchConnectorConfig(ctx, r.PathValue("connector"), patch)
	if s.failed(w, r, body, err) {
		return
	}
	writeJSON(w, http.StatusOK, info)
}

// errNullBody answers a JSON null where Kafka's resource method needs an
// object: Kafka fails with a NullPointerException, a 500.
var errNullBody = &api.Error{Status: http.StatusInternalServerError, Message: "The request body is null; a JSON object is required"}

// connectorConfig reads a config object as Jackson reads a
// Map<String,String>: strings as they are, numbers and booleans as their
// JSON text, objects and arrays refused (500, as Jackson's mapping
// error). A null value drops its key: a map of strings has no null, and a
// null config value is an unset one to every connector config.
func connectorConfig(raw map[string]json.RawMessage) (map[string]string, error) {
	if raw == nil {
		return nil, errNullBody
	}
	config := make(map[string]string, len(raw))
	for k, v := range raw {
		str, isNull, err := configString(k, v)
		if err != nil {
			return nil, err
		}
		if !isNull {
			config[k] = str
		}
	}
	return config, nil
}

func configString(key string, v json.RawMessage) (string, bool, error) {
	t := strings.TrimSpace(string(v))
	switch {
	case t == "null":
		return "", true, nil
	case strings.HasPrefix(t, `"`):
		var str string
		if err := json.Unmarshal(v, &str); err != nil {
			return "", false, &api.Error{Status: http.StatusInternalServerError, Message: "Cannot parse the request body: " + err.Error()}
		}
		return str, false, nil
	case strings.HasPrefix(t, "{"), strings.HasPrefix(t, "["):
		return "", false, &api.Error{Status: http.StatusInternalServerError,
			Message: fmt.Sprintf("Cannot parse the request body: the value of %q must be a string, not %s", key, jsonKind(t))}
	default: // a number, true or false
		return t, false, nil
	}
}

func jsonKind(t string) string {
	if strings.HasPrefix(t, "{") {
		return "an object"
	}
	return "an array"
}

// initialState reads initial_state as Jackson reads Kafka's InitialState
// enum: its constants exactly, an absent or null one the herder's default
// (RUNNING), anything else a mapping error (500).
func initialState(v *string) (api.TargetState, error) {
	if v == nil {
		return "", nil
	}
	switch st := api.TargetState(*v); st {
	case api.TargetRunning, api.TargetPaused, api.TargetStopped:
		return st, nil
	}
	return "", &api.Error{Status: http.StatusInternalServerError,
		Message: fmt.Sprintf("Cannot parse the request body: initial_state %q is not one of RUNNING, PAUSED, STOPPED", *v)}
}

// checkAndPutName is Kafka's checkAndPutConnectorConfigName: a name in the
// config must be the connector's; without one, the connector's is put in.
func checkAndPutName(name string, config map[string]string) error {
	included, ok := config[nameConfig]
	if !ok {
		config[nameConfig] = name
		return nil
	}
	if included != name {
		return api.BadRequest("Connector name configuration (%s) doesn't match connector name in the URL (%s)", included, name)
	}
	return nil
}

// location is the Location of a created connector, absolute as Jersey
// builds it from the request's base URI.
func location(r *http.Request, name string) string {
	return baseURL(r) + "/connectors/" + url.PathEscape(name)
}

// baseURL is this worker as the client reached it.
func baseURL(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

func isNotFound(err error) bool {
	var e *api.Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

func emptyIfNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func emptyMapIfNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
