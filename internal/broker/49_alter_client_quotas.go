package broker

// AlterClientQuotas (key 49), versions 0-1 (KIP-546; v1 is flexible).
//
// Sets and removes client quotas through the active controller
// (internal/controller's AlterClientQuotas, Kafka's
// ClientQuotaControlManager rules), which commits every valid change of
// the request in one metadata batch, or, with validate_only, answers the
// same and writes nothing. In a quorum a broker that is not the active
// controller forwards the request, and answers once its own image shows
// the change. One result per distinct entity, in the order entities first
// appear (Kafka's follow a hash map), each echoed as Kafka echoes it; the
// refusals are INVALID_REQUEST with Kafka's messages, or POLICY_VIOLATION
// for a request of more than 10000 records. ALTER_CONFIGS on the cluster
// is needed, else every entry gets CLUSTER_AUTHORIZATION_FAILED (Kafka's
// ControllerApis.handleAlterClientQuotas and getErrorResponse).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/metadata"
)

func init() {
	registerAPI(apiEntry{key: kmsg.AlterClientQuotas, min: 0, max: 1, handle: typed(handleAlterClientQuotas)})
}

func handleAlterClientQuotas(b *Broker, c *conn, req *kmsg.AlterClientQuotasRequest) (kmsg.Response, error) {
	if !b.authorizeCluster(c, kmsg.ACLOperationAlterConfigs) {
		// Every entry as the request lists it, as Kafka's getErrorResponse.
		resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
		for _, e := range req.Entries {
			r := kmsg.NewAlterClientQuotasResponseEntry()
			r.ErrorCode, r.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
			for _, p := range e.Entity {
				re := kmsg.NewAlterClientQuotasResponseEntryEntity()
				re.Type, re.Name = p.Type, p.Name
				r.Entity = append(r.Entity, re)
			}
			resp.Entries = append(resp.Entries, r)
		}
		return resp, nil
	}
	return b.forwardOr(c, req, func() kmsg.Response { return b.alterClientQuotas(req) })
}

func (b *Broker) alterClientQuotas(req *kmsg.AlterClientQuotasRequest) *kmsg.AlterClientQuotasResponse {
	resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	alts := make([]controller.QuotaAlteration, len(req.Entries))
	for i, e := range req.Entries {
		for _, p := range e.Entity {
			alts[i].Entity = append(alts[i].Entity, controller.QuotaEntityPart{Type: p.Type, Name: p.Name})
		}
		for _, op := range e.Ops {
			alts[i].Ops = append(alts[i].Ops, controller.QuotaOp{Key: op.Key, Value: op.Value, Remove: op.Remove})
		}
	}
	ctx, cancel := b.adminContext(0)
	defer cancel()
	results := b.ctrl.AlterClientQuotas(ctx, alts, req.ValidateOnly)
	b.catchUpMetadata()
	for _, res := range results {
		r := kmsg.NewAlterClientQuotasResponseEntry()
		r.ErrorCode, r.ErrorMessage = res.ErrorCode, optionalMessage(res.ErrorMessage)
		for _, p := range res.Entity {
			re := kmsg.NewAlterClientQuotasResponseEntryEntity()
			re.Type, re.Name = p.Type, p.Name
			r.Entity = append(r.Entity, re)
		}
		resp.Entries = append(resp.Entries, r)
	}
	return resp
}

// quotaEntityOf reads an entity as the controller does (a type named
// twice keeps its last name); ok is false for one it refuses.
func quotaEntityOf(types []string, names []*string) (metadata.QuotaEntity, bool) {
	byType := map[string]*string{}
	for i, t := range types {
		byType[t] = names[i]
	}
	var data []metadata.QuotaEntityData
	for t, n := range byType {
		if n != nil && *n == "" {
			return metadata.QuotaEntity{}, false
		}
		data = append(data, metadata.QuotaEntityData{EntityType: t, EntityName: n})
	}
	e, err := metadata.QuotaEntityFromData(data)
	return e, err == nil
}

// awaitClientQuotas is awaitForwarded for AlterClientQuotas: each entry
// the controller accepted, its sets and removes visible in the local
// image.
func (b *Broker) awaitClientQuotas(ctx context.Context, req *kmsg.AlterClientQuotasRequest, resp *kmsg.AlterClientQuotasResponse) {
	if req == nil || req.ValidateOnly {
		return
	}
	accepted := map[metadata.QuotaEntity]bool{}
	for _, r := range resp.Entries {
		var types []string
		var names []*string
		for _, p := range r.Entity {
			types, names = append(types, p.Type), append(names, p.Name)
		}
		if e, ok := quotaEntityOf(types, names); ok && r.ErrorCode == 0 {
			accepted[e] = true
		}
	}
	for _, entry := range req.Entries {
		var types []string
		var names []*string
		for _, p := range entry.Entity {
			types, names = append(types, p.Type), append(names, p.Name)
		}
		e, ok := quotaEntityOf(types, names)
		if !ok || !accepted[e] {
			continue
		}
		b.awaitImage(ctx, func() bool {
			values, _ := b.ctrl.Image().ClientQuota(e)
			for _, op := range entry.Ops {
				v, has := values[op.Key]
				if op.Remove == has || !op.Remove && v != op.Value {
					return false
				}
			}
			return true
		})
	}
}
