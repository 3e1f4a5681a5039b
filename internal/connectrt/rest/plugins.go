package rest

import (
	"net/http"
	"strings"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// The connector plugins: the list (connectors only unless
// ?connectorsOnly=false), a plugin's config definition, and validation.
func (s *Server) routePlugins(mux *http.ServeMux) {
	mux.HandleFunc("GET /connector-plugins", s.listPlugins)
	mux.HandleFunc("GET /connector-plugins/{plugin}/config", s.pluginConfig)
	mux.HandleFunc("PUT /connector-plugins/{plugin}/config/validate", s.validateConfig)
}

func (s *Server) listPlugins(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.herderContext(r)
	defer cancel()
	plugins, err := s.cfg.Herder.Plugins(ctx, jerseyBool(r, "connectorsOnly", true))
	if s.failed(w, r, nil, err) {
		return
	}
	writeJSON(w, http.StatusOK, emptyIfNil(plugins))
}

func (s *Server) pluginConfig(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.herderContext(r)
	defer cancel()
	keys, err := s.cfg.Herder.PluginConfig(ctx, r.PathValue("plugin"))
	if s.failed(w, r, nil, err) {
		return
	}
	writeJSON(w, http.StatusOK, emptyIfNil(keys))
}

// validateConfig validates a connector config. A connector.class in the
// body must name the path's plugin, by class name or alias (Kafka compares
// them without a "Connector" suffix, by suffix). The herder validates the
// body's connector.class, as Kafka's does.
func (s *Server) validateConfig(w http.ResponseWriter, r *http.Request) {
	plugin := r.PathValue("plugin")
	_, config, ok := s.readConfig(w, r)
	if !ok {
		return
	}
	if included, ok := config["connector.class"]; ok && !strings.HasSuffix(normalizedPluginName(included), normalizedPluginName(plugin)) {
		s.failed(w, r, nil, api.BadRequest("Included connector type %s does not match request type %s", included, plugin))
		return
	}
	ctx, cancel := s.herderContext(r)
	defer cancel()
	infos, err := s.cfg.Herder.ValidateConfig(ctx, plugin, config)
	if s.failed(w, r, nil, err) {
		return
	}
	writeJSON(w, http.StatusOK, infos)
}

// normalizedPluginName drops a "Connector" suffix, so that a class name
// and an alias compare: FileStreamSourceConnector and FileStreamSource.
func normalizedPluginName(name string) string {
	const suffix = "Connector"
	if len(name) > len(suffix) && strings.HasSuffix(name, suffix) {
		return name[:len(name)-len(suffix)]
	}
	return name
}
