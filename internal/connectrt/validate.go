package connectrt

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// PluginConfig is a connector plugin's own definition (GET
// /connector-plugins/{p}/config).
func (w *Worker) PluginConfig(ctx context.Context, plugin string) ([]api.ConfigKeyInfo, error) {
	pl, err := w.plugins.connector(plugin)
	if err != nil {
		return nil, api.NotFound("Unknown plugin %s.", plugin)
	}
	out := []api.ConfigKeyInfo{}
	for _, k := range pl.New().Config().Keys() {
		out = append(out, keyInfo(k))
	}
	// Kafka 4 shows the runtime's connector configs after the plugin's own,
	// with no worker's converters as defaults.
	def := sourceConnectorDef(defContext{version: pl.Version})
	if pl.Type == connect.PluginSink {
		def = sinkConnectorDef(defContext{version: pl.Version})
	}
	for _, k := range def.Keys() {
		out = append(out, keyInfo(k))
	}
	return out, nil
}

// ValidateConfig is Kafka's config/validate: the runtime's connector
// configs, the transforms' and predicates', then the connector's own, each
// with its value and errors.
func (w *Worker) ValidateConfig(ctx context.Context, plugin string, cfg map[string]string) (api.ConfigInfos, error) {
	pl, err := w.plugins.connector(plugin)
	if err != nil {
		return api.ConfigInfos{}, api.BadRequest("%s", err.Error())
	}
	conn := pl.New()
	base := w.connectorDef(pl)
	name := strings.TrimSpace(cfg["connector.class"])
	if name == "" {
		name = plugin
	}
	out := api.ConfigInfos{Name: name, Groups: []string{}, Configs: []api.ConfigInfo{}}
	add := func(def *connect.ConfigDef, values []connect.ConfigValue) {
		byName := map[string]connect.ConfigValue{}
		for _, v := range values {
			byName[v.Name] = v
		}
		for _, k := range def.Keys() {
			if k.Group != "" && !slices.Contains(out.Groups, k.Group) {
				out.Groups = append(out.Groups, k.Group)
			}
			v := byName[k.Name]
			out.ErrorCount += len(v.Errors)
			out.Configs = append(out.Configs, api.ConfigInfo{Definition: keyInfo(k), Value: valueInfo(k.Name, v)})
		}
	}
	baseValues := base.Validate(cfg)
	if pl.Type == connect.PluginSink {
		baseValues = sinkTopicsCheck(cfg, baseValues)
	} else {
		baseValues = topicCreationCheck(cfg, baseValues)
	}
	add(base, baseValues)
	if w.plugins.ChainConfig != nil {
		chainDef, err := w.plugins.ChainConfig(cfg)
		if err != nil {
			for i := range out.Configs {
				if n := out.Configs[i].Definition.Name; n == "transforms" || n == "predicates" {
					out.Configs[i].Value.Errors = append(out.Configs[i].Value.Errors, err.Error())
					out.ErrorCount++
					break
				}
			}
		} else if chainDef != nil {
			add(chainDef, chainDef.Validate(cfg))
		}
	}
	def := conn.Config()
	values := def.Validate(cfg)
	if v, ok := conn.(connect.ConnectorValidator); ok {
		values = mergeValues(values, v.Validate(maps.Clone(cfg)))
	}
	add(def, values)
	return out, nil
}

// connectorDef is the runtime's definition for a plugin's connectors, with
// this worker's converters and versions as config/validate shows them.
func (w *Worker) connectorDef(pl connect.Plugin) *connect.ConfigDef {
	dc := defContext{version: pl.Version, keyConverter: w.cfg.KeyConverter, valueConverter: w.cfg.ValueConverter, headerConverter: w.cfg.HeaderConverter}
	for _, o := range w.plugins.Others {
		switch o.Type {
		case string(connect.PluginConverter):
			dc.converters = append(dc.converters, o.Class)
			dc.converterVersion = o.Version
		case string(connect.PluginHeaderConverter):
			dc.headerConverters = append(dc.headerConverters, o.Class)
		}
	}
	slices.Sort(dc.converters)
	slices.Sort(dc.headerConverters)
	if pl.Type == connect.PluginSink {
		return sinkConnectorDef(dc)
	}
	return sourceConnectorDef(dc)
}

// sinkTopicsCheck adds Kafka's topics/topics.regex rule to the values.
func sinkTopicsCheck(cfg map[string]string, values []connect.ConfigValue) []connect.ConfigValue {
	if _, err := parseConnectorConfig(withDefaults(cfg), true); err != nil {
		for i := range values {
			if values[i].Name == "topics" || values[i].Name == "topics.regex" {
				if len(values[i].Errors) == 0 && isTopicsRule(err) {
					values[i].Errors = append(values[i].Errors, err.Error())
				}
			}
		}
	}
	return values
}

// topicCreationCheck reports KIP-158 settings that cannot work.
func topicCreationCheck(cfg map[string]string, values []connect.ConfigValue) []connect.ConfigValue {
	groups, _ := connect.ParseValue(connect.TypeList, cfg["topic.creation.groups"])
	if _, err := parseTopicCreation(cfg, groups.([]string)); err != nil {
		for i := range values {
			if values[i].Name == "topic.creation.groups" {
				values[i].Errors = append(values[i].Errors, err.Error())
			}
		}
	}
	return values
}

func isTopicsRule(err error) bool {
	s := err.Error()
	return len(s) > 12 && (s[:12] == "Must configu" || s[:12] == "The DLQ topi")
}

// withDefaults fills name and class so the topics rule can be checked alone.
func withDefaults(cfg map[string]string) map[string]string {
	c := maps.Clone(cfg)
	if c["name"] == "" {
		c["name"] = "x"
	}
	if c["connector.class"] == "" {
		c["connector.class"] = "x"
	}
	return c
}

func mergeValues(a, b []connect.ConfigValue) []connect.ConfigValue {
	for _, v := range b {
		found := false
		for i := range a {
			if a[i].Name == v.Name {
				a[i].Errors = append(a[i].Errors, v.Errors...)
				if len(v.RecommendedValues) > 0 {
					a[i].RecommendedValues = v.RecommendedValues
				}
				a[i].Visible = v.Visible
				found = true
			}
		}
		if !found {
			a = append(a, v)
		}
	}
	return a
}

func keyInfo(k connect.ConfigKey) api.ConfigKeyInfo {
	info := api.ConfigKeyInfo{Name: k.Name, Type: string(k.Type), Required: k.Required(), DefaultValue: k.DefaultString(),
		Importance: string(k.Importance), Documentation: k.Documentation, OrderInGroup: k.OrderInGroup, Width: string(k.Width),
		DisplayName: k.DisplayName, Dependents: append([]string{}, k.Dependents...)}
	if k.Group != "" {
		g := k.Group
		info.Group = &g
	} else {
		info.OrderInGroup = -1
	}
	return info
}

func valueInfo(name string, v connect.ConfigValue) api.ConfigValueInfo {
	info := api.ConfigValueInfo{Name: name, RecommendedValues: append([]string{}, v.RecommendedValues...), Errors: append([]string{}, v.Errors...), Visible: true}
	if v.Name != "" {
		info.Visible = v.Visible
	}
	if v.Value != nil {
		s, ok := v.Value.(string)
		if !ok {
			s = connect.FormatValue("", v.Value)
		}
		info.Value = &s
	}
	return info
}
