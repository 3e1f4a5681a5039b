package restproxy

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The broker and cluster config resources, and the :alter batches of all
// three config kinds (topic, broker, cluster-wide broker defaults): read
// with DescribeConfigs (with synonyms), changed with
// IncrementalAlterConfigs, as Confluent's config managers do.
//
// Cluster-wide configs are the broker resource with the empty name (the
// dynamic defaults every broker takes): DescribeConfigs answers only the
// ones set dynamically, so, as Confluent does, PUT does not check the
// name exists first (a new default could never be set otherwise); DELETE
// and the per-broker and per-topic writes do, answering 404 for a config
// the resource does not have.
func (p *Proxy) routeBrokerConfigs(mux *http.ServeMux) {
	const broker = "/v3/clusters/{cluster_id}/brokers/{broker_id}/configs"
	mux.HandleFunc("GET /v3/clusters/{cluster_id}/brokers/-/configs", p.listAllBrokersConfigs)
	mux.HandleFunc("GET "+broker, p.listBrokerConfigs)
	mux.HandleFunc("GET "+broker+"/{name}", p.getBrokerConfig)
	mux.HandleFunc("PUT "+broker+"/{name}", p.updateConfig(p.brokerConfigsOfPath, true))
	mux.HandleFunc("DELETE "+broker+"/{name}", p.resetConfig(p.brokerConfigsOfPath))
	mux.HandleFunc("POST "+broker+":alter", p.alterBrokerConfigs)

	const cluster = "/v3/clusters/{cluster_id}/broker-configs"
	mux.HandleFunc("GET "+cluster, p.listClusterConfigs)
	mux.HandleFunc("GET "+cluster+"/{name}", p.getClusterConfig)
	mux.HandleFunc("PUT "+cluster+"/{name}", p.updateConfig(p.clusterConfigsOfPath, false))
	mux.HandleFunc("DELETE "+cluster+"/{name}", p.resetConfig(p.clusterConfigsOfPath))
	mux.HandleFunc("POST "+cluster+":alter", p.alterClusterConfigs)

	mux.HandleFunc("GET /v3/clusters/{cluster_id}/topics/-/configs", p.listAllTopicsConfigs)
	mux.HandleFunc("POST /v3/clusters/{cluster_id}/topics/{topic_name}/configs:alter", p.alterTopicConfigs)
}

// configData is the spec's AbstractConfigData with the fields of its
// three kinds: topic_name (KafkaTopicConfig), broker_id
// (KafkaBrokerConfig), config_type (KafkaClusterConfig).
type configData struct {
	Kind        string              `json:"kind"`
	Metadata    resourceMetadata    `json:"metadata"`
	ClusterID   string              `json:"cluster_id"`
	TopicName   *string             `json:"topic_name,omitempty"`
	BrokerID    *int32              `json:"broker_id,omitempty"`
	ConfigType  string              `json:"config_type,omitempty"`
	Name        string              `json:"name"`
	Value       *string             `json:"value"`
	IsDefault   bool                `json:"is_default"`
	IsReadOnly  bool                `json:"is_read_only"`
	IsSensitive bool                `json:"is_sensitive"`
	Source      string              `json:"source"`
	Synonyms    []configSynonymData `json:"synonyms"`
}

// configResource is one config resource of the cluster: its Kafka type
// and name, and how its configs are named in links and messages.
type configResource struct {
	typ  kmsg.ConfigResourceType
	name string // topic name, broker ID, "" for the cluster-wide defaults
}

func brokerResource(id int32) configResource {
	return configResource{kmsg.ConfigResourceTypeBroker, strconv.Itoa(int(id))}
}

var clusterResource = configResource{kmsg.ConfigResourceTypeBroker, ""}

func (r configResource) data(clusterSelf, cluster string, c kmsg.DescribeConfigsResponseResourceConfig) configData {
	var d configData
	switch {
	case r.typ == kmsg.ConfigResourceTypeTopic:
		topic := r.name
		d.Kind, d.TopicName = "KafkaTopicConfig", &topic
		d.Metadata = resourceMetadata{Self: clusterSelf + "/topics/" + topic + "/configs/" + c.Name,
			ResourceName: crn("kafka", cluster, "topic", topic, "config", c.Name)}
	case r.name == "":
		d.Kind, d.ConfigType = "KafkaClusterConfig", "BROKER"
		d.Metadata = resourceMetadata{Self: clusterSelf + "/broker-configs/" + c.Name,
			ResourceName: crn("kafka", cluster, "broker-config", c.Name)}
	default:
		id, _ := strconv.ParseInt(r.name, 10, 32) // the name was made from an int32
		b := int32(id)
		d.Kind, d.BrokerID = "KafkaBrokerConfig", &b
		d.Metadata = resourceMetadata{Self: clusterSelf + "/brokers/" + r.name + "/configs/" + c.Name,
			ResourceName: crn("kafka", cluster, "broker", r.name, "config", c.Name)}
	}
	d.ClusterID, d.Name, d.Value = cluster, c.Name, c.Value
	d.IsDefault = c.IsDefault || c.Source == kmsg.ConfigSourceDefaultConfig
	d.IsReadOnly, d.IsSensitive, d.Source = c.ReadOnly, c.IsSensitive, c.Source.String()
	d.Synonyms = []configSynonymData{}
	for _, s := range c.ConfigSynonyms {
		d.Synonyms = append(d.Synonyms, configSynonymData{Name: s.Name, Value: s.Value, Source: s.Source.String()})
	}
	return d
}

// notFound is Confluent's message for a config the resource lacks.
func (r configResource) notFound(name, cluster string) *Error {
	switch {
	case r.typ == kmsg.ConfigResourceTypeTopic:
		return errConfigNotFound(name, r.name, cluster)
	case r.name == "":
		return errNotFound(fmt.Sprintf("Config %s cannot be found for cluster %s.", name, cluster))
	default:
		return errNotFound(fmt.Sprintf("Config %s cannot be found for broker %s in cluster %s.", name, r.name, cluster))
	}
}

// describeConfigs reads several resources' configs in one request, each
// sorted by name; a resource the cluster answers an error for fails all,
// except a topic of several gone since they were listed, which has none.
func (p *Proxy) describeConfigs(ctx context.Context, resources []configResource) ([][]kmsg.DescribeConfigsResponseResourceConfig, error) {
	r := kmsg.NewPtrDescribeConfigsRequest()
	for _, cr := range resources {
		res := kmsg.NewDescribeConfigsRequestResource()
		res.ResourceType, res.ResourceName = cr.typ, cr.name
		r.Resources = append(r.Resources, res)
	}
	r.IncludeSynonyms = true
	resp, err := r.RequestWith(ctx, p.kafka(ctx).client)
	if err != nil {
		return nil, err
	}
	out := make([][]kmsg.DescribeConfigsResponseResourceConfig, len(resources))
	for i, cr := range resources {
		idx := slices.IndexFunc(resp.Resources, func(r kmsg.DescribeConfigsResponseResource) bool {
			return r.ResourceType == cr.typ && r.ResourceName == cr.name
		})
		if idx < 0 {
			return nil, fmt.Errorf("restproxy: describe configs: %v %q not answered", cr.typ, cr.name)
		}
		res := resp.Resources[idx]
		if len(resources) > 1 && res.ErrorCode == kerr.UnknownTopicOrPartition.Code {
			continue // a topic of a listing deleted since it was listed
		}
		if err := kerr.ErrorForCode(res.ErrorCode); err != nil {
			return nil, withDetail(err, deref(res.ErrorMessage))
		}
		configs := res.Configs
		slices.SortFunc(configs, func(a, b kmsg.DescribeConfigsResponseResourceConfig) int { return strings.Compare(a.Name, b.Name) })
		out[i] = configs
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// brokerOfPath checks the path's {broker_id} names a broker of the
// cluster (404 "Broker X cannot be found." otherwise, as Confluent).
func (p *Proxy) brokerOfPath(ctx context.Context, req *http.Request) (string, int32, error) {
	md, err := p.clusterMetadata(ctx, req)
	if err != nil {
		return "", 0, err
	}
	raw := req.PathValue("broker_id")
	id, perr := strconv.ParseInt(raw, 10, 32)
	if perr == nil {
		if slices.Contains(md.Brokers.NodeIDs(), int32(id)) {
			return md.Cluster, int32(id), nil
		}
	}
	return "", 0, errNotFound(fmt.Sprintf("Broker %s cannot be found.", raw))
}

// resourceOfPath is the config resource a request's path names, checked.
type resourceOfPath func(ctx context.Context, req *http.Request) (cluster string, r configResource, err error)

func (p *Proxy) brokerConfigsOfPath(ctx context.Context, req *http.Request) (string, configResource, error) {
	cluster, id, err := p.brokerOfPath(ctx, req)
	return cluster, brokerResource(id), err
}

func (p *Proxy) clusterConfigsOfPath(ctx context.Context, req *http.Request) (string, configResource, error) {
	md, err := p.clusterMetadata(ctx, req)
	return md.Cluster, clusterResource, err
}

func (p *Proxy) topicConfigsOfPath(ctx context.Context, req *http.Request) (string, configResource, error) {
	md, err := p.clusterMetadata(ctx, req)
	return md.Cluster, configResource{kmsg.ConfigResourceTypeTopic, req.PathValue("topic_name")}, err
}

// listConfigs answers one resource's configs as a list of kind listKind.
func (p *Proxy) listConfigs(w http.ResponseWriter, req *http.Request, of resourceOfPath, listKind, self string) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	cluster, r, err := of(ctx, req)
	var configs [][]kmsg.DescribeConfigsResponseResourceConfig
	if err == nil {
		configs, err = p.describeConfigs(ctx, []configResource{r})
	}
	if err != nil {
		writeError(w, err)
		return
	}
	cs := clusterSelf(req)
	data := make([]configData, 0, len(configs[0]))
	for _, c := range configs[0] {
		data = append(data, r.data(cs, cluster, c))
	}
	writeJSON(w, http.StatusOK, newList(listKind, cs+self, data))
}

func (p *Proxy) getConfig(w http.ResponseWriter, req *http.Request, of resourceOfPath) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	cluster, r, err := of(ctx, req)
	var configs [][]kmsg.DescribeConfigsResponseResourceConfig
	if err == nil {
		configs, err = p.describeConfigs(ctx, []configResource{r})
	}
	if err != nil {
		writeError(w, err)
		return
	}
	name := req.PathValue("name")
	for _, c := range configs[0] {
		if c.Name == name {
			writeJSON(w, http.StatusOK, r.data(clusterSelf(req), cluster, c))
			return
		}
	}
	writeError(w, r.notFound(name, cluster))
}

func (p *Proxy) listBrokerConfigs(w http.ResponseWriter, req *http.Request) {
	p.listConfigs(w, req, p.brokerConfigsOfPath, "KafkaBrokerConfigList", "/brokers/"+req.PathValue("broker_id")+"/configs")
}

func (p *Proxy) getBrokerConfig(w http.ResponseWriter, req *http.Request) {
	p.getConfig(w, req, p.brokerConfigsOfPath)
}

func (p *Proxy) listClusterConfigs(w http.ResponseWriter, req *http.Request) {
	p.listConfigs(w, req, p.clusterConfigsOfPath, "KafkaClusterConfigList", "/broker-configs")
}

func (p *Proxy) getClusterConfig(w http.ResponseWriter, req *http.Request) {
	p.getConfig(w, req, p.clusterConfigsOfPath)
}

// listAllBrokersConfigs answers every broker's configs, by broker then
// name, in one DescribeConfigs.
func (p *Proxy) listAllBrokersConfigs(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	md, err := p.clusterMetadata(ctx, req)
	if err != nil {
		writeError(w, err)
		return
	}
	ids := md.Brokers.NodeIDs()
	slices.Sort(ids)
	resources := make([]configResource, 0, len(ids))
	for _, id := range ids {
		resources = append(resources, brokerResource(id))
	}
	p.answerConfigs(ctx, w, req, md.Cluster, resources, "KafkaBrokerConfigList", "/brokers/-/configs")
}

// listAllTopicsConfigs answers every topic's configs, by topic then name.
func (p *Proxy) listAllTopicsConfigs(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	md, err := p.kafka(ctx).admin.Metadata(fresh(ctx))
	if err == nil && md.Cluster != req.PathValue("cluster_id") {
		err = errClusterNotFound(req.PathValue("cluster_id"))
	}
	if err != nil {
		writeError(w, err)
		return
	}
	names := md.Topics.Names()
	slices.Sort(names)
	resources := make([]configResource, 0, len(names))
	for _, n := range names {
		resources = append(resources, configResource{kmsg.ConfigResourceTypeTopic, n})
	}
	p.answerConfigs(ctx, w, req, md.Cluster, resources, "KafkaTopicConfigList", "/topics/-/configs")
}

func (p *Proxy) answerConfigs(ctx context.Context, w http.ResponseWriter, req *http.Request, cluster string, resources []configResource, listKind, self string) {
	var configs [][]kmsg.DescribeConfigsResponseResourceConfig
	var err error
	if len(resources) > 0 {
		configs, err = p.describeConfigs(ctx, resources)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	cs := clusterSelf(req)
	var data []configData
	for i, r := range resources {
		for _, c := range configs[i] {
			data = append(data, r.data(cs, cluster, c))
		}
	}
	writeJSON(w, http.StatusOK, newList(listKind, cs+self, data))
}

// updateConfig is PUT of one config: the broker's (checkNames: the name
// must be one the broker has) or the cluster's (any name: a cluster
// default may be set before any broker lists it, as Confluent's PUT).
func (p *Proxy) updateConfig(of resourceOfPath, checkNames bool) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		var body updateConfigRequest
		if e := p.readBody(w, req, &body); e != nil {
			writeError(w, e)
			return
		}
		p.alterConfigs(w, req, of, alterConfigBatch{Data: []alterConfigEntry{{Name: req.PathValue("name"), Value: body.Value}}}, checkNames)
	}
}

// resetConfig is DELETE of one config; the name must be one listed.
func (p *Proxy) resetConfig(of resourceOfPath) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		p.alterConfigs(w, req, of, resetOne(req), true)
	}
}

func resetOne(req *http.Request) alterConfigBatch {
	del := "DELETE"
	return alterConfigBatch{Data: []alterConfigEntry{{Name: req.PathValue("name"), Operation: &del}}}
}

// alterConfigBatch is the spec's AlterConfigBatchRequestData.
type alterConfigBatch struct {
	Data         []alterConfigEntry `json:"data"`
	ValidateOnly bool               `json:"validate_only"`
}

type alterConfigEntry struct {
	Name      string  `json:"name"`
	Value     *string `json:"value"`
	Operation *string `json:"operation"`
}

// ops checks the batch and makes its IncrementalAlterConfigs entries:
// operation SET (the default) or DELETE, any case, as Confluent parses
// it; a name given twice is refused (Kafka would refuse the request with
// a less clear message).
func (b alterConfigBatch) ops() ([]kmsg.IncrementalAlterConfigsRequestResourceConfig, *Error) {
	if b.Data == nil {
		return nil, errBadRequest("Bad Request: data is required")
	}
	seen := map[string]bool{}
	out := make([]kmsg.IncrementalAlterConfigsRequestResourceConfig, 0, len(b.Data))
	for _, e := range b.Data {
		if e.Name == "" {
			return nil, errBadRequest("Bad Request: a config without a name")
		}
		if seen[e.Name] {
			return nil, errBadRequest(fmt.Sprintf("Bad Request: config %s given twice", e.Name))
		}
		seen[e.Name] = true
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = e.Name, e.Value
		op := "SET"
		if e.Operation != nil {
			op = strings.ToUpper(*e.Operation)
		}
		switch op {
		case "SET":
			c.Op = kmsg.IncrementalAlterConfigOpSet
		case "DELETE":
			c.Op, c.Value = kmsg.IncrementalAlterConfigOpDelete, nil
		default:
			return nil, errBadRequest(fmt.Sprintf("Bad Request: operation %q is not SET or DELETE", *e.Operation))
		}
		out = append(out, c)
	}
	return out, nil
}

func (p *Proxy) alterBrokerConfigs(w http.ResponseWriter, req *http.Request) {
	p.alterConfigsBatch(w, req, p.brokerConfigsOfPath, true)
}

func (p *Proxy) alterClusterConfigs(w http.ResponseWriter, req *http.Request) {
	p.alterConfigsBatch(w, req, p.clusterConfigsOfPath, false)
}

func (p *Proxy) alterTopicConfigs(w http.ResponseWriter, req *http.Request) {
	p.alterConfigsBatch(w, req, p.topicConfigsOfPath, true)
}

func (p *Proxy) alterConfigsBatch(w http.ResponseWriter, req *http.Request, of resourceOfPath, checkNames bool) {
	var body alterConfigBatch
	if e := p.readBody(w, req, &body); e != nil {
		writeError(w, e)
		return
	}
	p.alterConfigs(w, req, of, body, checkNames)
}

// alterConfigs applies a batch to the path's resource in one
// IncrementalAlterConfigs (atomic per resource, as Kafka applies it);
// with checkNames, a name the resource has no config of is 404 first,
// as Confluent's safe alter checks.
func (p *Proxy) alterConfigs(w http.ResponseWriter, req *http.Request, of resourceOfPath, body alterConfigBatch, checkNames bool) {
	ops, e := body.ops()
	if e != nil {
		writeError(w, e)
		return
	}
	ctx, cancel := p.opContext(req)
	defer cancel()
	cluster, r, err := of(ctx, req)
	if err == nil && checkNames {
		err = p.checkConfigNames(ctx, cluster, r, ops)
	}
	if err == nil {
		err = p.incrementalAlter(ctx, r, ops, body.ValidateOnly)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (p *Proxy) checkConfigNames(ctx context.Context, cluster string, r configResource, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) error {
	configs, err := p.describeConfigs(ctx, []configResource{r})
	if err != nil {
		return err
	}
	for _, op := range ops {
		if !slices.ContainsFunc(configs[0], func(c kmsg.DescribeConfigsResponseResourceConfig) bool { return c.Name == op.Name }) {
			return r.notFound(op.Name, cluster)
		}
	}
	return nil
}

func (p *Proxy) incrementalAlter(ctx context.Context, r configResource, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig, validateOnly bool) error {
	ar := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ar.ValidateOnly = validateOnly
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName, res.Configs = r.typ, r.name, ops
	ar.Resources = append(ar.Resources, res)
	resp, err := ar.RequestWith(ctx, p.kafka(ctx).client)
	if err != nil {
		return err
	}
	if len(resp.Resources) != 1 {
		return fmt.Errorf("restproxy: incremental alter configs of %q: %d resources answered", r.name, len(resp.Resources))
	}
	if err := kerr.ErrorForCode(resp.Resources[0].ErrorCode); err != nil {
		return withDetail(err, deref(resp.Resources[0].ErrorMessage))
	}
	return nil
}
