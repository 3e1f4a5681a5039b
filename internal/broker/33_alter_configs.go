package broker

// AlterConfigs (key 33), versions 0-2.
//
// The legacy config API: each resource's dynamic configs are replaced by
// the request's set as a whole, so a config left out goes back to its
// default (clients that want to change one config use
// IncrementalAlterConfigs, KIP-339). Topic resources (type 2) set a topic's
// overrides; broker resources (type 4) set one broker's dynamic configs by
// node ID, or with the name "" the cluster-wide defaults (KIP-226); client
// metrics resources (type 16, KIP-714) set a subscription's metrics,
// interval.ms and match, and an empty set deletes it; group resources (type
// 32, KIP-848) set a group's configs (internal/config's Group catalog,
// group_configs.go), and an empty set deletes them. The
// controller checks every resource and commits the valid ones in one
// metadata batch; the broker applies the image before it answers, so a
// DescribeConfigs or a produce right after sees the new values.
// validateOnly runs every check and commits nothing.
//
// Errors per resource: UNKNOWN_TOPIC_OR_PARTITION for a missing topic;
// INVALID_REQUEST for a resource given twice, a null value, or a broker
// config that may not be set at that level (read-only, or per-broker set as
// a cluster default); INVALID_CONFIG for an unknown name or a bad value,
// or confluent.key/value.schema.validation=true on a broker without a
// schema registry (schema_validation.go).
// Client metrics are checked as Kafka's ClientMetricsConfigs does: an empty
// subscription name, an unknown config or an interval.ms outside 100 ms to
// an hour is INVALID_REQUEST, a value of the wrong type, a list item given
// twice or a bad match pattern INVALID_CONFIG. Group configs are checked as
// Kafka's GroupConfig.validate does (config.ValidateGroup): an empty group
// ID is INVALID_REQUEST ("Default group resources are not allowed."); an
// unknown name ("Unknown group config name: x"), a bad value, a value
// outside the broker's bounds of it or a session timeout not above its
// heartbeat interval is INVALID_CONFIG. A
// config named twice in one resource takes its last value, as in Kafka.
// Versions 1-2 only change throttling and add flexible encoding.
//
// Authorization (authz.go), as Kafka's configsAuthorizationApiError:
// ALTER_CONFIGS on the cluster for a broker, broker logger or client
// metrics resource (else CLUSTER_AUTHORIZATION_FAILED), on the topic for a
// topic (TOPIC_AUTHORIZATION_FAILED), on the group for a group
// (GROUP_AUTHORIZATION_FAILED). A resource given twice is INVALID_REQUEST
// before any check. The checks run on the broker the client reached,
// before it forwards what they allowed.
//
// Not here: broker loggers (type 8) are INVALID_REQUEST; a resource type
// Kafka does not know is
// UNSUPPORTED_VERSION, as in Kafka. No AlterConfigPolicy, or password
// encryption of sensitive broker configs.

import (
	"fmt"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.AlterConfigs, min: 0, max: 2, handle: typed(handleAlterConfigs)})
}

func handleAlterConfigs(b *Broker, c *conn, req *kmsg.AlterConfigsRequest) (kmsg.Response, error) {
	kept, refused := authorizeConfigResources(b, c, kmsg.ACLOperationAlterConfigs, req.Resources,
		func(r kmsg.AlterConfigsRequestResource) (kmsg.ConfigResourceType, string) {
			return r.ResourceType, r.ResourceName
		})
	allowed := req
	if refused != nil {
		cp := *req
		cp.Resources, allowed = kept, &cp
	}
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	if len(kept) > 0 || len(req.Resources) == 0 {
		r, err := b.forwardOr(c, allowed, func() kmsg.Response { return b.alterConfigsHere(allowed) })
		if err != nil {
			return nil, err
		}
		resp = r.(*kmsg.AlterConfigsResponse)
	}
	if refused != nil {
		resp.Resources = mergeDenied(len(req.Resources), func(i int) (kmsg.AlterConfigsResponseResource, bool) {
			rr := kmsg.NewAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorCode = req.Resources[i].ResourceType, req.Resources[i].ResourceName, refused[i]
			return rr, refused[i] != 0
		}, resp.Resources)
	}
	return resp, nil
}

// authorizeConfigResources keeps the config resources the principal may
// do op on (DESCRIBE_CONFIGS or ALTER_CONFIGS), and gives the error of
// each one it may not (nil when none): Kafka's
// configsAuthorizationApiError. A resource given twice, and a type Kafka
// does not know, are kept for the handler to refuse, as Kafka refuses
// them before it authorizes.
func authorizeConfigResources[T any](b *Broker, c *conn, op kmsg.ACLOperation, resources []T, key func(T) (kmsg.ConfigResourceType, string)) ([]T, []int16) {
	if b.authorizer() == nil {
		return resources, nil
	}
	type resourceKey struct {
		t    kmsg.ConfigResourceType
		name string
	}
	count := map[resourceKey]int{}
	for _, r := range resources {
		t, name := key(r)
		count[resourceKey{t, name}]++
	}
	refused := make([]int16, len(resources))
	i := 0
	kept, denied := filterDenied(resources, func(r T) bool {
		t, name := key(r)
		if count[resourceKey{t, name}] == 1 {
			refused[i] = b.configResourceRefusal(c, op, t, name)
		}
		i++
		return refused[i-1] == 0
	})
	if denied == nil {
		return resources, nil
	}
	return kept, refused
}

// configResourceRefusal is the error of a config resource the principal
// may not do op on, 0 when it may.
func (b *Broker) configResourceRefusal(c *conn, op kmsg.ACLOperation, t kmsg.ConfigResourceType, name string) int16 {
	switch t {
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger, kmsg.ConfigResourceTypeClientMetrics:
		if !b.authorizeCluster(c, op) {
			return kerr.ClusterAuthorizationFailed.Code
		}
	case kmsg.ConfigResourceTypeTopic:
		if !b.authorize(c, op, kmsg.ACLResourceTypeTopic, name) {
			return kerr.TopicAuthorizationFailed.Code
		}
	case kmsg.ConfigResourceTypeGroupConfig:
		if !b.authorize(c, op, kmsg.ACLResourceTypeGroup, name) {
			return kerr.GroupAuthorizationFailed.Code
		}
	}
	return 0
}

// alterConfigsHere alters the request's configs through this node's
// controller.
func (b *Broker) alterConfigsHere(req *kmsg.AlterConfigsRequest) *kmsg.AlterConfigsResponse {
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	local := make([]*itemError, len(req.Resources))
	var want []controller.AlterConfigsResource
	for i, r := range req.Resources {
		ar, ierr := alterConfigsResource(r)
		for _, cfg := range r.Configs {
			if ierr == nil && r.ResourceType == kmsg.ConfigResourceTypeTopic {
				ierr = b.schemaValidationRefusal(cfg.Name, cfg.Value)
			}
		}
		if ierr != nil {
			local[i] = ierr
			continue
		}
		want = append(want, ar)
	}
	var results []controller.AlterConfigsResult
	if len(want) > 0 {
		results = b.ctrl.AlterConfigs(b.tasks.Context(), want, req.ValidateOnly)
		if !req.ValidateOnly {
			b.catchUpMetadata()
		}
	}
	for i, r := range req.Resources {
		code, msg := alterConfigsOutcome(local[i], &results)
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode, rr.ErrorMessage = r.ResourceType, r.ResourceName, code, msg
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

func alterConfigsResource(r kmsg.AlterConfigsRequestResource) (controller.AlterConfigsResource, *itemError) {
	typ, ierr := configResourceType(r.ResourceType)
	if ierr != nil {
		return controller.AlterConfigsResource{}, ierr
	}
	ar := controller.AlterConfigsResource{Type: typ, Name: r.ResourceName, Configs: make(map[string]*string, len(r.Configs))}
	for _, cfg := range r.Configs {
		ar.Configs[cfg.Name] = cfg.Value
	}
	return ar, nil
}

// configResourceType maps the resource types whose configs live in the
// metadata: topics, brokers, client metrics subscriptions and groups. Broker
// loggers, which the legacy API cannot set, are INVALID_REQUEST; a type
// Kafka does not know is UNSUPPORTED_VERSION, as Kafka answers it.
func configResourceType(t kmsg.ConfigResourceType) (metadata.ResourceType, *itemError) {
	switch t {
	case kmsg.ConfigResourceTypeTopic:
		return metadata.ResourceTopic, nil
	case kmsg.ConfigResourceTypeBroker:
		return metadata.ResourceBroker, nil
	case kmsg.ConfigResourceTypeClientMetrics:
		return metadata.ResourceClientMetrics, nil
	case kmsg.ConfigResourceTypeGroupConfig:
		return metadata.ResourceGroup, nil
	case kmsg.ConfigResourceTypeBrokerLogger:
		return 0, &itemError{kerr.InvalidRequest.Code, fmt.Sprintf("Unsupported resource type %s.", t)}
	}
	return 0, &itemError{kerr.UnsupportedVersion.Code, fmt.Sprintf("Unknown resource type %d.", t)}
}

// alterConfigsOutcome is one resource's error: the broker's own, or the
// next of the controller's results, which are in the order of the
// resources handed to it.
func alterConfigsOutcome(local *itemError, results *[]controller.AlterConfigsResult) (int16, *string) {
	if local != nil {
		return local.code, kmsg.StringPtr(local.msg)
	}
	r := (*results)[0]
	*results = (*results)[1:]
	if r.ErrorMessage == "" {
		return r.ErrorCode, nil
	}
	return r.ErrorCode, kmsg.StringPtr(r.ErrorMessage)
}
