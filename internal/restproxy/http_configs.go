package restproxy

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The topic config resources: list and get with DescribeConfigs (with
// synonyms), update and reset one with IncrementalAlterConfigs. Broker and
// cluster configs, and the :alter batches, are in http_broker_configs.go.
func (p *Proxy) routeConfigs(mux *http.ServeMux) {
	const configs = "/v3/clusters/{cluster_id}/topics/{topic_name}/configs"
	mux.HandleFunc("GET "+configs, p.listTopicConfigs)
	mux.HandleFunc("GET "+configs+"/{name}", p.getTopicConfig)
	mux.HandleFunc("PUT "+configs+"/{name}", p.updateTopicConfig)
	mux.HandleFunc("DELETE "+configs+"/{name}", p.resetTopicConfig)
}

type topicConfigData struct {
	Kind        string              `json:"kind"`
	Metadata    resourceMetadata    `json:"metadata"`
	ClusterID   string              `json:"cluster_id"`
	TopicName   string              `json:"topic_name"`
	Name        string              `json:"name"`
	Value       *string             `json:"value"`
	IsDefault   bool                `json:"is_default"`
	IsReadOnly  bool                `json:"is_read_only"`
	IsSensitive bool                `json:"is_sensitive"`
	Source      string              `json:"source"`
	Synonyms    []configSynonymData `json:"synonyms"`
}

type configSynonymData struct {
	Name   string  `json:"name"`
	Value  *string `json:"value"`
	Source string  `json:"source"`
}

func newTopicConfigData(clusterSelf, cluster, topic string, c kmsg.DescribeConfigsResponseResourceConfig) topicConfigData {
	self := clusterSelf + "/topics/" + topic + "/configs/" + c.Name
	d := topicConfigData{
		Kind:        "KafkaTopicConfig",
		Metadata:    resourceMetadata{Self: self, ResourceName: crn("kafka", cluster, "topic", topic, "config", c.Name)},
		ClusterID:   cluster,
		TopicName:   topic,
		Name:        c.Name,
		Value:       c.Value,
		IsDefault:   c.IsDefault || c.Source == kmsg.ConfigSourceDefaultConfig,
		IsReadOnly:  c.ReadOnly,
		IsSensitive: c.IsSensitive,
		Source:      c.Source.String(),
		Synonyms:    []configSynonymData{},
	}
	for _, s := range c.ConfigSynonyms {
		d.Synonyms = append(d.Synonyms, configSynonymData{Name: s.Name, Value: s.Value, Source: s.Source.String()})
	}
	return d
}

// describeTopicConfigs asks the cluster for a topic's configs, with their
// synonyms (the spec's synonyms array). kadm's helper drops ReadOnly,
// which the spec's is_read_only needs, so the request is made here.
func (p *Proxy) describeTopicConfigs(ctx context.Context, topic string) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	r := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeTopic
	res.ResourceName = topic
	r.Resources = append(r.Resources, res)
	r.IncludeSynonyms = true
	resp, err := r.RequestWith(ctx, p.kafka(ctx).client)
	if err != nil {
		return nil, err
	}
	if len(resp.Resources) != 1 {
		return nil, fmt.Errorf("restproxy: describe configs of %s: %d resources answered", topic, len(resp.Resources))
	}
	if err := kerr.ErrorForCode(resp.Resources[0].ErrorCode); err != nil {
		return nil, err
	}
	configs := resp.Resources[0].Configs
	slices.SortFunc(configs, func(a, b kmsg.DescribeConfigsResponseResourceConfig) int { return strings.Compare(a.Name, b.Name) })
	return configs, nil
}

// topicConfigs checks the cluster and reads the path's topic's configs.
func (p *Proxy) topicConfigs(w http.ResponseWriter, req *http.Request) (string, []kmsg.DescribeConfigsResponseResourceConfig, bool) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	md, err := p.clusterMetadata(ctx, req)
	if err != nil {
		writeError(w, err)
		return "", nil, false
	}
	configs, err := p.describeTopicConfigs(ctx, req.PathValue("topic_name"))
	if err != nil {
		writeError(w, err)
		return "", nil, false
	}
	return md.Cluster, configs, true
}

func (p *Proxy) listTopicConfigs(w http.ResponseWriter, req *http.Request) {
	cluster, configs, ok := p.topicConfigs(w, req)
	if !ok {
		return
	}
	cs, topic := clusterSelf(req), req.PathValue("topic_name")
	data := make([]topicConfigData, 0, len(configs))
	for _, c := range configs {
		data = append(data, newTopicConfigData(cs, cluster, topic, c))
	}
	writeJSON(w, http.StatusOK, newList("KafkaTopicConfigList", cs+"/topics/"+topic+"/configs", data))
}

func (p *Proxy) getTopicConfig(w http.ResponseWriter, req *http.Request) {
	cluster, configs, ok := p.topicConfigs(w, req)
	if !ok {
		return
	}
	topic, name := req.PathValue("topic_name"), req.PathValue("name")
	for _, c := range configs {
		if c.Name == name {
			writeJSON(w, http.StatusOK, newTopicConfigData(clusterSelf(req), cluster, topic, c))
			return
		}
	}
	writeError(w, errConfigNotFound(name, topic, cluster))
}

func errConfigNotFound(name, topic, cluster string) *Error {
	return errNotFound(fmt.Sprintf("Config %s cannot be found for topic %s in cluster %s.", name, topic, cluster))
}

// updateConfigRequest is the spec's UpdateConfigRequestData.
type updateConfigRequest struct {
	Value *string `json:"value"`
}

func (p *Proxy) updateTopicConfig(w http.ResponseWriter, req *http.Request) {
	var body updateConfigRequest
	if e := p.readBody(w, req, &body); e != nil {
		writeError(w, e)
		return
	}
	p.alterTopicConfig(w, req, kadm.AlterConfig{Op: kadm.SetConfig, Name: req.PathValue("name"), Value: body.Value})
}

func (p *Proxy) resetTopicConfig(w http.ResponseWriter, req *http.Request) {
	p.alterTopicConfig(w, req, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: req.PathValue("name")})
}

// alterTopicConfig sets or resets one config; a name the topic has no
// config of is 404, as Confluent checks it exists first.
func (p *Proxy) alterTopicConfig(w http.ResponseWriter, req *http.Request, ac kadm.AlterConfig) {
	cluster, configs, ok := p.topicConfigs(w, req)
	if !ok {
		return
	}
	topic := req.PathValue("topic_name")
	if !slices.ContainsFunc(configs, func(c kmsg.DescribeConfigsResponseResourceConfig) bool { return c.Name == ac.Name }) {
		writeError(w, errConfigNotFound(ac.Name, topic, cluster))
		return
	}
	ctx, cancel := p.opContext(req)
	defer cancel()
	resps, err := p.kafka(ctx).admin.AlterTopicConfigs(ctx, []kadm.AlterConfig{ac}, topic)
	var resp kadm.AlterConfigsResponse
	if err == nil {
		resp, err = resps.On(topic, nil)
	}
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		writeError(w, withDetail(err, resp.ErrMessage))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
