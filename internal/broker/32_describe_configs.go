package broker

// DescribeConfigs (key 32), versions 0-4.
//
// Topic resources: every topic config (or the named ones) with its
// effective value and source, resolved from the topic's overrides over the
// broker's dynamic and static configs over Kafka's defaults
// (internal/config). Broker resources: this node's ID describes the whole
// effective broker config; "" describes the cluster-wide dynamic defaults
// only, each as it was set (a unit synonym as itself, a default this
// broker overrides too) with only its DYNAMIC_DEFAULT_BROKER_CONFIG
// synonym, as Kafka's ConfigHelper does. Client metrics resources (type
// 16, KIP-714): a subscription's metrics, interval.ms and match, each with
// its value (source CLIENT_METRICS_CONFIG) or default (DEFAULT_CONFIG), for
// a subscription that does not exist too (KAFKA-17516). Synonyms (v1+,
// KIP-226) list every place a value is set, most precedent first: for a
// topic config its override, then the broker config it falls back to
// (log.retention.ms and its unit synonyms) per broker, as cluster default,
// static and default. Sensitive values are null. Types and
// documentation come from v3. An unknown config name is left out, as in
// Kafka.
//
// Errors: a missing topic is UNKNOWN_TOPIC_OR_PARTITION; another broker's
// ID is INVALID_REQUEST (the request belongs to that broker); a client
// metrics subscription without a name is INVALID_REQUEST. Broker loggers
// (type 8, KIP-412): this broker's loggers and their levels (loggers.go),
// source DYNAMIC_BROKER_LOGGER_CONFIG; another broker's ID or "" is
// INVALID_REQUEST. Groups (32, KIP-848): every group config with the value
// the group runs with (group_configs.go): its own (source GROUP_CONFIG,
// DYNAMIC_GROUP_CONFIG in Kafka's admin client) or the broker config it
// falls back to, with that config's source; synonyms list the group's
// value, then the broker config's as for a topic, or the group default for
// a config no broker config backs. A group that does not exist describes
// too, as in Kafka; an empty group ID is INVALID_REQUEST.
//
// Authorization (authz.go), before the resource's existence is checked:
// DESCRIBE_CONFIGS on the cluster for a broker or client metrics (else
// CLUSTER_AUTHORIZATION_FAILED), on the topic for a topic
// (TOPIC_AUTHORIZATION_FAILED), on the group for a group
// (GROUP_AUTHORIZATION_FAILED), as Kafka's KafkaApis.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DescribeConfigs, min: 0, max: 4, handle: typed(handleDescribeConfigs)})
}

const (
	resourceTopic  = 2
	resourceBroker = 4
)

func handleDescribeConfigs(b *Broker, c *conn, req *kmsg.DescribeConfigsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	img := b.meta.Load()
	if img == nil {
		img = metadata.Empty()
	}
	for _, r := range req.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		if code := b.configResourceRefusal(c, kmsg.ACLOperationDescribeConfigs, r.ResourceType, r.ResourceName); code != 0 {
			rr.ErrorCode, rr.ErrorMessage = code, kmsg.StringPtr(kerr.ErrorForCode(code).(*kerr.Error).Description)
			resp.Resources = append(resp.Resources, rr)
			continue
		}
		descs, code, msg := b.describeResource(img, r)
		rr.ErrorCode = code
		if msg != "" {
			rr.ErrorMessage = kmsg.StringPtr(msg)
		}
		for _, d := range descs {
			rr.Configs = append(rr.Configs, describeEntry(req, d))
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

func (b *Broker) describeResource(img *metadata.Image, r kmsg.DescribeConfigsRequestResource) ([]config.Description, int16, string) {
	var v config.Values
	switch kmsg.ConfigResourceType(r.ResourceType) {
	case resourceTopic:
		if _, ok := img.Topic(r.ResourceName); !ok {
			return nil, kerr.UnknownTopicOrPartition.Code, fmt.Sprintf("topic %q does not exist", r.ResourceName)
		}
		var err error
		if v, err = b.topicConfig(img, r.ResourceName); err != nil {
			return nil, kerr.InvalidConfig.Code, err.Error()
		}
	case resourceBroker:
		if r.ResourceName == "" {
			return b.describeClusterDefaults(img, r.ConfigNames), 0, ""
		}
		if id, err := strconv.Atoi(r.ResourceName); err != nil || int32(id) != b.cfg.NodeID {
			return nil, kerr.InvalidRequest.Code, fmt.Sprintf("broker %q is not this broker (%d)", r.ResourceName, b.cfg.NodeID)
		}
		v = b.brokerConfig(img)
	case kmsg.ConfigResourceTypeClientMetrics:
		if r.ResourceName == "" {
			return nil, kerr.InvalidRequest.Code, "Client metrics subscription name must not be empty"
		}
		return config.DescribeClientMetrics(img.ClientMetricsConfig(r.ResourceName), r.ConfigNames), 0, ""
	case kmsg.ConfigResourceTypeBrokerLogger:
		return b.describeLoggers(r.ResourceName, r.ConfigNames)
	case kmsg.ConfigResourceTypeGroupConfig:
		if r.ResourceName == "" {
			return nil, kerr.InvalidRequest.Code, "Group name must not be empty"
		}
		v = b.groupConfigIn(img, r.ResourceName)
	default:
		return nil, kerr.InvalidRequest.Code, fmt.Sprintf("resource type %d is not supported", r.ResourceType)
	}
	return describeNames(v, r.ConfigNames), 0, ""
}

// describeNames describes every config, or only the named ones that exist.
func describeNames(v config.Values, names []string) []config.Description {
	if names == nil {
		return v.DescribeAll()
	}
	var out []config.Description
	for _, n := range names {
		if d, err := v.Describe(n); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// describeClusterDefaults lists the cluster-wide dynamic defaults as they
// were set, as Kafka's ConfigHelper describes the default broker resource:
// each name set (a unit synonym such as log.retention.hours as itself),
// its value as given, source DYNAMIC_DEFAULT_BROKER_CONFIG whatever this
// broker's own dynamic configs override, and only the synonyms of that
// source.
func (b *Broker) describeClusterDefaults(img *metadata.Image, names []string) []config.Description {
	set := img.BrokerConfig("")
	bc := b.brokerConfig(img)
	var out []config.Description
	for _, name := range slices.Sorted(maps.Keys(set)) {
		if names != nil && !slices.Contains(names, name) {
			continue
		}
		d, err := bc.Describe(name)
		if err != nil {
			continue // a name dropped from the catalog since it was set
		}
		d.Source, d.Value = config.SourceDynamicDefaultBroker, nil
		if !d.Sensitive {
			d.Value = kmsg.StringPtr(set[name])
		}
		d.Synonyms = slices.DeleteFunc(d.Synonyms, func(s config.Synonym) bool { return s.Source != config.SourceDynamicDefaultBroker })
		out = append(out, d)
	}
	return out
}

func describeEntry(req *kmsg.DescribeConfigsRequest, d config.Description) kmsg.DescribeConfigsResponseResourceConfig {
	e := kmsg.NewDescribeConfigsResponseResourceConfig()
	e.Name, e.Value, e.ReadOnly, e.IsSensitive = d.Name, d.Value, d.ReadOnly, d.Sensitive
	e.Source = kmsg.ConfigSource(d.Source)
	e.IsDefault = d.Source == config.SourceDefault
	e.ConfigType = kmsg.ConfigType(d.Type)
	if req.IncludeDocumentation {
		e.Documentation = kmsg.StringPtr(d.Doc)
	}
	if req.IncludeSynonyms {
		for _, s := range d.Synonyms {
			syn := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			syn.Name, syn.Value, syn.Source = s.Name, s.Value, kmsg.ConfigSource(s.Source)
			e.ConfigSynonyms = append(e.ConfigSynonyms, syn)
		}
	}
	return e
}
