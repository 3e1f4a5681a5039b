package broker

// IncrementalAlterConfigs (key 44), versions 0-1.
//
// Changes configs one by one (KIP-339): SET (0) a value, DELETE (1) an
// override so the config falls back to the next level, APPEND (2) items to
// a list config (only those not there yet) and SUBTRACT (3) items from one;
// APPEND and SUBTRACT start from the default when the config is not set
// (internal/config's ApplyIncremental). Topic resources (type 2) change a
// topic's overrides; broker resources (type 4) one broker's dynamic
// configs by node ID, or with the name "" the cluster-wide defaults
// (KIP-226); client metrics resources (type 16) a KIP-714 subscription,
// which goes when its last config is deleted; group resources (type 32) a
// group's configs, checked as AlterConfigs says (33_alter_configs.go). The controller checks every resource and commits the valid
// ones in one metadata batch; the broker applies the image before it
// answers, so a DescribeConfigs or a produce right after sees the change.
// validateOnly runs every check and commits nothing.
//
// Errors per resource: UNKNOWN_TOPIC_OR_PARTITION for a missing topic;
// INVALID_REQUEST for a resource given twice, a config named twice, an
// unknown operation, a null value for anything but DELETE, or a broker
// config that may not be set at that level;
// INVALID_CONFIG for an unknown name, a bad value, or APPEND/SUBTRACT on a
// config that is not a list (what Kafka returns, although KIP-339 says
// INVALID_REQUEST), or for SET of confluent.key/value.schema.validation
// to true on a broker without a schema registry (schema_validation.go). Client metrics subscriptions are checked as
// AlterConfigs says (33_alter_configs.go): an unknown name is
// INVALID_REQUEST there, as in Kafka. v1 only adds flexible encoding.
//
// Broker loggers (type 8, KIP-412) are this broker's log levels: the
// broker answers them itself, never forwarded, as Kafka's does
// (loggers.go); they last until it stops.
//
// Not here: a resource type Kafka does not know is UNSUPPORTED_VERSION, as
// in Kafka. No AlterConfigPolicy.
//
// Authorization is AlterConfigs' (33_alter_configs.go): ALTER_CONFIGS on
// the cluster (for brokers and client metrics), topic or group the
// resource is.

import (
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/controller"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.IncrementalAlterConfigs, min: 0, max: 1, handle: typed(handleIncrementalAlterConfigs)})
}

func handleIncrementalAlterConfigs(b *Broker, c *conn, req *kmsg.IncrementalAlterConfigsRequest) (kmsg.Response, error) {
	loggers, rest := b.alterLoggerResources(c, req)
	if loggers != nil {
		resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		if len(rest.Resources) > 0 {
			r, err := handleIncrementalAlterConfigs(b, c, rest)
			if err != nil {
				return nil, err
			}
			resp = r.(*kmsg.IncrementalAlterConfigsResponse)
		}
		resp.Resources = mergeDenied(len(req.Resources), func(i int) (kmsg.IncrementalAlterConfigsResponseResource, bool) {
			r, ok := loggers[i]
			return r, ok
		}, resp.Resources)
		return resp, nil
	}
	kept, refused := authorizeConfigResources(b, c, kmsg.ACLOperationAlterConfigs, req.Resources,
		func(r kmsg.IncrementalAlterConfigsRequestResource) (kmsg.ConfigResourceType, string) {
			return r.ResourceType, r.ResourceName
		})
	allowed := req
	if refused != nil {
		cp := *req
		cp.Resources, allowed = kept, &cp
	}
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	if len(kept) > 0 || len(req.Resources) == 0 {
		r, err := b.forwardOr(c, allowed, func() kmsg.Response { return b.incrementalAlterConfigsHere(allowed) })
		if err != nil {
			return nil, err
		}
		resp = r.(*kmsg.IncrementalAlterConfigsResponse)
	}
	if refused != nil {
		resp.Resources = mergeDenied(len(req.Resources), func(i int) (kmsg.IncrementalAlterConfigsResponseResource, bool) {
			rr := kmsg.NewIncrementalAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorCode = req.Resources[i].ResourceType, req.Resources[i].ResourceName, refused[i]
			return rr, refused[i] != 0
		}, resp.Resources)
	}
	return resp, nil
}

// incrementalAlterConfigsHere alters the request's configs through this
// node's controller.
func (b *Broker) incrementalAlterConfigsHere(req *kmsg.IncrementalAlterConfigsRequest) *kmsg.IncrementalAlterConfigsResponse {
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	local := make([]*itemError, len(req.Resources))
	var want []controller.IncrementalAlterConfigsResource
	for i, r := range req.Resources {
		typ, ierr := configResourceType(r.ResourceType)
		if ierr != nil {
			local[i] = ierr
			continue
		}
		ir := controller.IncrementalAlterConfigsResource{Type: typ, Name: r.ResourceName}
		for _, cfg := range r.Configs {
			if local[i] == nil && r.ResourceType == kmsg.ConfigResourceTypeTopic && cfg.Op == kmsg.IncrementalAlterConfigOpSet {
				local[i] = b.schemaValidationRefusal(cfg.Name, cfg.Value)
			}
			ir.Ops = append(ir.Ops, config.AlterOp{Name: cfg.Name, Op: config.OpType(cfg.Op), Value: cfg.Value})
		}
		if local[i] != nil {
			continue
		}
		want = append(want, ir)
	}
	var results []controller.AlterConfigsResult
	if len(want) > 0 {
		results = b.ctrl.IncrementalAlterConfigs(b.tasks.Context(), want, req.ValidateOnly)
		if !req.ValidateOnly {
			b.catchUpMetadata()
		}
	}
	for i, r := range req.Resources {
		code, msg := alterConfigsOutcome(local[i], &results)
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode, rr.ErrorMessage = r.ResourceType, r.ResourceName, code, msg
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}
