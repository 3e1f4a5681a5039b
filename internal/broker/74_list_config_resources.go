package broker

// ListConfigResources (key 74), versions 0-1: KIP-1000's
// ListClientMetricsResources, renamed and widened by KIP-1142 (Kafka 4.1).
//
// v0 lists the client metrics subscriptions (KIP-714) by name. v1 lists the
// config resources of the types the request names, or of every type it
// supports when it names none: topics (2), brokers (4) and broker loggers
// (8), one of each per broker Metadata lists to this listener, client
// metrics subscriptions (16) and groups that set a config (32). They come in Kafka's order (groups, client
// metrics, broker loggers, brokers, topics), each type's by name, where
// Kafka's follow its maps. A type outside the version's set fails the whole
// request with UNSUPPORTED_VERSION and no resources, as in Kafka's
// KafkaApis.handleListConfigResources.
//
// Authorization (authz.go): DESCRIBE_CONFIGS on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED and no resources, whatever the types.

import (
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/metadata"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ListConfigResources, min: 0, max: 1, handle: typed(handleListConfigResources)})
}

// listableConfigResources are the types v1 lists, in the order Kafka lists
// them.
var listableConfigResources = []kmsg.ConfigResourceType{
	kmsg.ConfigResourceTypeGroupConfig, kmsg.ConfigResourceTypeClientMetrics, kmsg.ConfigResourceTypeBrokerLogger,
	kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeTopic,
}

func handleListConfigResources(b *Broker, c *conn, req *kmsg.ListConfigResourcesRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ListConfigResourcesResponse)
	if !b.authorizeCluster(c, kmsg.ACLOperationDescribeConfigs) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	supported := []kmsg.ConfigResourceType{kmsg.ConfigResourceTypeClientMetrics}
	if req.Version >= 1 {
		supported = listableConfigResources
	}
	wanted := supported
	if len(req.ResourceTypes) > 0 {
		wanted = nil
		for _, t := range req.ResourceTypes {
			if !slices.Contains(supported, kmsg.ConfigResourceType(t)) {
				resp.ErrorCode = kerr.UnsupportedVersion.Code
				return resp, nil
			}
			wanted = append(wanted, kmsg.ConfigResourceType(t))
		}
	}
	img := b.meta.Load()
	if img == nil {
		img = metadata.Empty()
	}
	for _, t := range listableConfigResources {
		if !slices.Contains(wanted, t) {
			continue
		}
		for _, name := range b.configResourceNames(img, c, t) {
			r := kmsg.NewListConfigResourcesResponseConfigResource()
			r.Name, r.Type = name, int8(t)
			resp.ConfigResources = append(resp.ConfigResources, r)
		}
	}
	return resp, nil
}

// configResourceNames are the names of one type's config resources.
func (b *Broker) configResourceNames(img *metadata.Image, c *conn, t kmsg.ConfigResourceType) []string {
	switch t {
	case kmsg.ConfigResourceTypeClientMetrics:
		return img.ClientMetricsSubscriptions()
	case kmsg.ConfigResourceTypeGroupConfig:
		return img.GroupsWithConfigs()
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		var names []string
		for _, mb := range b.metadataBrokers(img, c.listener) {
			names = append(names, strconv.Itoa(int(mb.NodeID)))
		}
		return names
	case kmsg.ConfigResourceTypeTopic:
		var names []string
		for _, t := range img.Topics() {
			names = append(names, t.Name)
		}
		return names
	}
	return nil
}
