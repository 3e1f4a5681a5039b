package broker

// AlterConfigs (key 33), versions 0-2.
//
// The legacy config API: each resource's dynamic configs are replaced by
// the request's set as a whole, so a config left out goes back to its
// default (clients that want to change one config use
// IncrementalAlterConfigs, KIP-339). Topic resources (type 2) set a topic's
// overrides; broker resources (type 4) set one broker's dynamic configs by
// node ID, or with the name "" the cluster-wide defaults (KIP-226). The
// controller checks every resource and commits the valid ones in one
// metadata batch; the broker applies the image before it answers, so a
// DescribeConfigs or a produce right after sees the new values.
// validateOnly runs every check and commits nothing.
//
// Errors per resource: UNKNOWN_TOPIC_OR_PARTITION for a missing topic;
// INVALID_REQUEST for a resource given twice, a null value, or a broker
// config that may not be set at that level (read-only, or per-broker set as
// a cluster default); INVALID_CONFIG for an unknown name or a bad value. A
// config named twice in one resource takes its last value, as in Kafka.
// Versions 1-2 only change throttling and add flexible encoding.
//
// Not here: broker loggers (type 8), client metrics (16) and group (32)
// resources are INVALID_REQUEST; a resource type Kafka does not know is
// UNSUPPORTED_VERSION, as in Kafka. No AlterConfigPolicy, ACLs, or
// password encryption of sensitive broker configs.

import (
	"fmt"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.AlterConfigs, min: 0, max: 2, handle: typed(handleAlterConfigs), forward: true})
}

func handleAlterConfigs(b *Broker, c *conn, req *kmsg.AlterConfigsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	local := make([]*itemError, len(req.Resources))
	var want []controller.AlterConfigsResource
	for i, r := range req.Resources {
		ar, ierr := alterConfigsResource(r)
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
	return resp, nil
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
// metadata. The other types Kafka knows are refused as INVALID_REQUEST; a
// type Kafka does not know is UNSUPPORTED_VERSION, as Kafka answers it.
func configResourceType(t kmsg.ConfigResourceType) (metadata.ResourceType, *itemError) {
	switch t {
	case kmsg.ConfigResourceTypeTopic:
		return metadata.ResourceTopic, nil
	case kmsg.ConfigResourceTypeBroker:
		return metadata.ResourceBroker, nil
	case kmsg.ConfigResourceTypeBrokerLogger, kmsg.ConfigResourceTypeClientMetrics, kmsg.ConfigResourceTypeGroupConfig:
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
