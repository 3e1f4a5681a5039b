package broker

// DescribeClientQuotas (key 48), versions 0-1 (KIP-546; v1 is flexible).
//
// Lists the client quotas of the broker's current metadata image, as
// Kafka's ClientQuotasImage.describe: each filter component names an
// entity type (user, client-id, ip) and matches EXACT (match names the
// entity), DEFAULT (the type's default entity) or ANY (2: any entity of
// the type, its default included); an entity matches when it has every
// component's type with a matching name, and, with strict, no other type.
// No components match every entity, or none with strict. A filter with an
// empty type, a type twice, a match string where the match type takes
// none (or none where EXACT needs one), an unknown match type, or ip
// beside user or client-id is INVALID_REQUEST; an unknown type is
// UNSUPPORTED_VERSION, each with Kafka's message and no entries.
//
// Entries are sorted (metadata.QuotaEntity.Compare) and their values by
// key, where Kafka's follow its hash maps; an entity's parts are listed
// client-id before user, the order Kafka's map gives them. DESCRIBE_CONFIGS
// on the cluster is needed, else CLUSTER_AUTHORIZATION_FAILED (Kafka's
// KafkaApis.handleDescribeClientQuotasRequest). Any broker answers from its
// own image; a change forwarded through it is in that image once the
// forwarding answered.

import (
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/metadata"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DescribeClientQuotas, min: 0, max: 1, handle: typed(handleDescribeClientQuotas)})
}

// Match types of a DescribeClientQuotas filter component.
const (
	quotaMatchExact   kmsg.QuotasMatchType = 0
	quotaMatchDefault kmsg.QuotasMatchType = 1
	quotaMatchAny     kmsg.QuotasMatchType = 2
)

func handleDescribeClientQuotas(b *Broker, c *conn, req *kmsg.DescribeClientQuotasRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	if !b.authorizeCluster(c, kmsg.ACLOperationDescribeConfigs) {
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
		return resp, nil
	}
	filter, err := newQuotaFilter(req)
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = err.err.Code, kmsg.StringPtr(err.msg)
		return resp, nil
	}
	img := b.meta.Load()
	if img == nil {
		img = metadata.Empty()
	}
	quotas := img.ClientQuotas()
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	for _, e := range slices.SortedFunc(maps.Keys(quotas), metadata.QuotaEntity.Compare) {
		if filter.matches(e) {
			resp.Entries = append(resp.Entries, describedQuota(e, quotas[e]))
		}
	}
	return resp, nil
}

// quotaFilter is a DescribeClientQuotas filter: per entity type, the name
// an EXACT or DEFAULT component wants, or any name.
type quotaFilter struct {
	components map[string]quotaMatch
	strict     bool
}

type quotaMatch struct {
	any  bool
	name metadata.QuotaName // the default, or a name; unused with any
}

// quotaFilterError is a filter Kafka refuses, with its code and message.
type quotaFilterError struct {
	err *kerr.Error
	msg string
}

// newQuotaFilter checks a request's filter in Kafka's order: per
// component its type, then its match, then the combination.
func newQuotaFilter(req *kmsg.DescribeClientQuotasRequest) (quotaFilter, *quotaFilterError) {
	f := quotaFilter{components: map[string]quotaMatch{}, strict: req.Strict}
	invalid := func(format string, args ...any) (quotaFilter, *quotaFilterError) {
		return quotaFilter{}, &quotaFilterError{kerr.InvalidRequest, fmt.Sprintf(format, args...)}
	}
	for _, comp := range req.Components {
		typ := comp.EntityType
		if typ == "" {
			return invalid("Invalid empty entity type.")
		}
		if _, twice := f.components[typ]; twice {
			return invalid("Entity type %s cannot appear more than once in the filter.", typ)
		}
		if typ != metadata.QuotaEntityUser && typ != metadata.QuotaEntityClientID && typ != metadata.QuotaEntityIP {
			return quotaFilter{}, &quotaFilterError{kerr.UnsupportedVersion, "Unsupported entity type " + typ}
		}
		switch comp.MatchType {
		case quotaMatchExact:
			if comp.Match == nil {
				return invalid("Request specified MATCH_TYPE_EXACT, but set match string to null.")
			}
			f.components[typ] = quotaMatch{name: metadata.QuotaNamed(*comp.Match)}
		case quotaMatchDefault:
			if comp.Match != nil {
				return invalid("Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
			}
			f.components[typ] = quotaMatch{name: metadata.QuotaDefault()}
		case quotaMatchAny:
			if comp.Match != nil {
				return invalid("Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.")
			}
			f.components[typ] = quotaMatch{any: true}
		default:
			return invalid("Unknown match type %d", comp.MatchType)
		}
	}
	_, ip := f.components[metadata.QuotaEntityIP]
	_, user := f.components[metadata.QuotaEntityUser]
	_, client := f.components[metadata.QuotaEntityClientID]
	if ip && (user || client) {
		return invalid("Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.")
	}
	return f, nil
}

// matches is Kafka's ClientQuotasImage.matches.
func (f quotaFilter) matches(e metadata.QuotaEntity) bool {
	parts := map[string]metadata.QuotaName{
		metadata.QuotaEntityUser: e.User, metadata.QuotaEntityClientID: e.ClientID, metadata.QuotaEntityIP: e.IP,
	}
	if f.strict {
		n := 0
		for _, p := range parts {
			if p.Set {
				n++
			}
		}
		if n != len(f.components) {
			return false
		}
	}
	for typ, m := range f.components {
		p := parts[typ]
		if !p.Set || !m.any && p != m.name {
			return false
		}
	}
	return true
}

// describedQuota is one entry of the response.
func describedQuota(e metadata.QuotaEntity, values map[string]float64) kmsg.DescribeClientQuotasResponseEntry {
	entry := kmsg.NewDescribeClientQuotasResponseEntry()
	for _, p := range quotaEntityParts(e) {
		ee := kmsg.NewDescribeClientQuotasResponseEntryEntity()
		ee.Type, ee.Name = p.typ, p.name
		entry.Entity = append(entry.Entity, ee)
	}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		v := kmsg.NewDescribeClientQuotasResponseEntryValue()
		v.Key, v.Value = k, values[k]
		entry.Values = append(entry.Values, v)
	}
	return entry
}

// quotaEntityPart is one part of an entity as the wire has it: a nil name
// is the default.
type quotaEntityPart struct {
	typ  string
	name *string
}

// quotaEntityParts lists an entity's parts in the order Kafka's HashMap
// of them iterates: ip, client-id, user (an ip is never with the others).
func quotaEntityParts(e metadata.QuotaEntity) []quotaEntityPart {
	var out []quotaEntityPart
	for _, p := range []struct {
		typ  string
		name metadata.QuotaName
	}{{metadata.QuotaEntityIP, e.IP}, {metadata.QuotaEntityClientID, e.ClientID}, {metadata.QuotaEntityUser, e.User}} {
		if !p.name.Set {
			continue
		}
		part := quotaEntityPart{typ: p.typ}
		if !p.name.Default {
			part.name = kmsg.StringPtr(p.name.Name)
		}
		out = append(out, part)
	}
	return out
}
