package controller

import (
	"context"
	"math"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/metadata"
)

// QuotaEntityPart is one entry of a client quota entity as
// AlterClientQuotas names it: an entity type and a name, nil for the
// type's default.
type QuotaEntityPart struct {
	Type string
	Name *string
}

// QuotaOp sets a quota key to Value, or removes it.
type QuotaOp struct {
	Key    string
	Value  float64
	Remove bool
}

// QuotaAlteration is one entry of AlterClientQuotas: an entity and the
// changes to its quotas.
type QuotaAlteration struct {
	Entity []QuotaEntityPart
	Ops    []QuotaOp
}

// QuotaResult is one entity's outcome. Entity is the entity as Kafka
// echoes it: each type once (the last name given for it), in the order
// Kafka's HashMap lists them.
type QuotaResult struct {
	Entity       []QuotaEntityPart
	ErrorCode    int16
	ErrorMessage string
}

// ipLookupTimeout bounds the resolution of an ip entity that is a host
// name, which Kafka accepts when it resolves.
const ipLookupTimeout = 5 * time.Second

// AlterClientQuotas sets and removes client quotas, as Kafka's
// ClientQuotaControlManager.alterClientQuotas: one result per distinct
// entity, in the order entities first appear, and every valid change in
// one committed batch (none with validateOnly, which answers the same).
// Every refusal is INVALID_REQUEST with Kafka's message: an empty entity,
// an unknown entity type, an empty name, an ip with a user or client-id,
// an ip that is neither an IP address nor a host name that resolves, a key
// the entity cannot have, a value not above 0, a whole-number key's value
// that is fractional or too large, an entity named twice in the request
// (its first entry's changes still commit, as in Kafka). An entity naming
// a type twice keeps the last name, as Kafka's map of the request does.
// More than 10000 records fail the whole request with POLICY_VIOLATION,
// as Kafka's MAX_RECORDS_PER_USER_OP. A remove of a key the entity does
// not have writes nothing and succeeds.
func (c *Controller) AlterClientQuotas(ctx context.Context, alts []QuotaAlteration, validateOnly bool) []QuotaResult {
	if len(alts) == 0 {
		return nil
	}
	// Names are resolved before the write lock: a slow DNS server must not
	// hold up every other metadata write.
	resolvable := c.resolveQuotaIPs(ctx, alts)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.checkWritableLocked(); err != nil {
		return failAllQuotas(planQuotaEntities(alts), proposeFailure(err))
	}
	recs, results := planClientQuotas(c.Image(), alts, func(ip string) bool { return resolvable[ip] })
	switch {
	case len(recs) > maxRecordsPerUserOp:
		return failAllQuotas(results, fail(kerr.PolicyViolation, "Unable to perform excessively large batch operation."))
	case validateOnly || len(recs) == 0:
		return results
	}
	if err := c.proposeLocked(ctx, recs); err != nil {
		return failAllQuotas(results, proposeFailure(err))
	}
	c.log.Info("client quotas altered", "records", len(recs))
	return results
}

// maxRecordsPerUserOp caps the records one request may write, as Kafka's
// QuorumController.MAX_RECORDS_PER_USER_OP.
const maxRecordsPerUserOp = 10000

func failAllQuotas(results []QuotaResult, f *failure) []QuotaResult {
	for i := range results {
		results[i].ErrorCode, results[i].ErrorMessage = f.code(), f.message()
	}
	return results
}

// resolveQuotaIPs reports, for each ip entity name of the request that is
// not an IP address, whether it resolves, as Kafka's
// InetAddress.getByName decides (ClientQuotaControlManager.isValidIpEntity).
func (c *Controller) resolveQuotaIPs(ctx context.Context, alts []QuotaAlteration) map[string]bool {
	lookup := c.cfg.LookupHost
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	out := map[string]bool{}
	for _, a := range alts {
		for _, p := range a.Entity {
			if p.Type != metadata.QuotaEntityIP || p.Name == nil || *p.Name == "" || isIPLiteral(*p.Name) {
				continue
			}
			if _, done := out[*p.Name]; done {
				continue
			}
			lctx, cancel := context.WithTimeout(ctx, ipLookupTimeout)
			addrs, err := lookup(lctx, *p.Name)
			cancel()
			out[*p.Name] = err == nil && len(addrs) > 0
		}
	}
	return out
}

// isIPLiteral reports whether s is an IPv4 or IPv6 address, the latter
// with or without brackets, as Java parses it without a lookup.
func isIPLiteral(s string) bool {
	if inner, ok := strings.CutPrefix(s, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		if a, err := netip.ParseAddr(inner); ok && err == nil && a.Is6() {
			return true
		}
		return false
	}
	_, err := netip.ParseAddr(s)
	return err == nil
}

// quotaEntity is one distinct entity of a request: its parts as Kafka's
// map of the request holds them, and its identity.
type quotaEntity struct {
	parts []QuotaEntityPart // Kafka's HashMap order
	id    string
}

// newQuotaEntity collapses a request's entity list as Kafka's
// AlterClientQuotasRequest.entries does: into a HashMap of type to name,
// sized by the list, where a type given twice keeps its last name.
func newQuotaEntity(list []QuotaEntityPart) quotaEntity {
	names := map[string]*string{}
	var types []string
	for _, p := range list {
		if _, ok := names[p.Type]; !ok {
			types = append(types, p.Type)
		}
		names[p.Type] = p.Name
	}
	var e quotaEntity
	for _, t := range javaHashOrder(types, len(list)) {
		e.parts = append(e.parts, QuotaEntityPart{Type: t, Name: names[t]})
	}
	sorted := slices.Clone(types)
	slices.Sort(sorted)
	var id strings.Builder
	for _, t := range sorted {
		id.WriteString(strconv.Quote(t))
		if n := names[t]; n != nil {
			id.WriteString("=" + strconv.Quote(*n))
		}
		id.WriteString(";")
	}
	e.id = id.String()
	return e
}

// String is the entity as Kafka's ClientQuotaEntity.toString prints it,
// which its messages embed.
func (e quotaEntity) String() string {
	var parts []string
	for _, p := range e.parts {
		name := "null"
		if p.Name != nil {
			name = *p.Name
		}
		parts = append(parts, p.Type+"="+name)
	}
	return "ClientQuotaEntity(entries={" + strings.Join(parts, ", ") + "})"
}

// planQuotaEntities lists a request's distinct entities as results
// without errors, in the order they first appear.
func planQuotaEntities(alts []QuotaAlteration) []QuotaResult {
	var out []QuotaResult
	seen := map[string]bool{}
	for _, a := range alts {
		e := newQuotaEntity(a.Entity)
		if !seen[e.id] {
			seen[e.id] = true
			out = append(out, QuotaResult{Entity: e.parts})
		}
	}
	return out
}

// planClientQuotas is ClientQuotaControlManager.alterClientQuotas on img:
// the records the valid alterations write and the result of each distinct
// entity. resolvable says whether an ip entity name that is not an IP
// address resolves.
func planClientQuotas(img *metadata.Image, alts []QuotaAlteration, resolvable func(string) bool) ([]metadata.Record, []QuotaResult) {
	results := planQuotaEntities(alts)
	index := map[string]int{}
	for i, r := range results {
		index[newQuotaEntity(r.Entity).id] = i
	}
	answered := map[string]bool{}
	set := func(e quotaEntity, f *failure) {
		answered[e.id] = true
		results[index[e.id]].ErrorCode, results[index[e.id]].ErrorMessage = f.code(), f.message()
	}
	var recs []metadata.Record
	for _, a := range alts {
		e := newQuotaEntity(a.Entity)
		values := map[string]*float64{}
		var keys []string
		for _, op := range a.Ops {
			if _, dup := values[op.Key]; dup {
				// Overwritten just below, as in Kafka: the client sees
				// the duplicate entity message.
				set(e, fail(kerr.InvalidRequest, "Duplicate quota key %s not updating quota for this entity %s", op.Key, e))
				continue
			}
			keys = append(keys, op.Key)
			values[op.Key] = nil
			if !op.Remove {
				values[op.Key] = &op.Value
			}
		}
		if answered[e.id] {
			set(e, fail(kerr.InvalidRequest, "Ignoring duplicate entity %s", e))
			continue
		}
		entityRecs, f := planQuotaEntity(img, e, javaHashOrder(keys, len(a.Ops)), values, resolvable)
		set(e, f)
		recs = append(recs, entityRecs...)
	}
	return recs, results
}

// planQuotaEntity is ClientQuotaControlManager.alterClientQuotaEntity:
// the entity's records, or why it is refused. keys are in the order Kafka
// checks them; a nil value removes the key.
func planQuotaEntity(img *metadata.Image, e quotaEntity, keys []string, values map[string]*float64, resolvable func(string) bool) ([]metadata.Record, *failure) {
	entity, f := checkQuotaEntity(e, resolvable)
	if f != nil {
		return nil, f
	}
	current, _ := img.ClientQuota(entity)
	var recs []metadata.Record
	for _, k := range keys {
		v := values[k]
		if v == nil {
			if _, ok := current[k]; ok {
				recs = append(recs, metadata.ClientQuotaRecord{Entity: entity.Data(), Key: k, Remove: true})
			}
			continue
		}
		if f := checkQuotaValue(entity, k, *v); f != nil {
			return nil, f
		}
		if old, ok := current[k]; !ok || old != *v {
			recs = append(recs, metadata.ClientQuotaRecord{Entity: entity.Data(), Key: k, Value: *v})
		}
	}
	return recs, nil
}

// checkQuotaEntity is Kafka's validateEntity, then
// configKeysForEntityType's check of the combination.
func checkQuotaEntity(e quotaEntity, resolvable func(string) bool) (metadata.QuotaEntity, *failure) {
	var out metadata.QuotaEntity
	if len(e.parts) == 0 {
		return out, fail(kerr.InvalidRequest, "Invalid empty client quota entity")
	}
	for _, p := range e.parts {
		var part *metadata.QuotaName
		switch p.Type {
		case metadata.QuotaEntityUser:
			part = &out.User
		case metadata.QuotaEntityClientID:
			part = &out.ClientID
		case metadata.QuotaEntityIP:
			part = &out.IP
		default:
			return out, fail(kerr.InvalidRequest, "Unhandled client quota entity type: %s", p.Type)
		}
		*part = metadata.QuotaDefault()
		if p.Name != nil {
			if *p.Name == "" {
				return out, fail(kerr.InvalidRequest, "Empty %s not supported", p.Type)
			}
			*part = metadata.QuotaNamed(*p.Name)
		}
	}
	if out.IP.Set {
		switch {
		case out.User.Set || out.ClientID.Set:
			// Kafka's message lacks the space between "should" and "not".
			return out, fail(kerr.InvalidRequest, "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId")
		case !out.IP.Default && !isIPLiteral(out.IP.Name) && !resolvable(out.IP.Name):
			return out, fail(kerr.InvalidRequest, "%s is not a valid IP or resolvable host.", out.IP.Name)
		}
	}
	return out, nil
}

// checkQuotaValue is Kafka's validateQuotaKeyValue: the key must be one
// the entity can have, the value above 0, and a whole number not past
// Java's bounds for a long or int key. A value within 1e-6 of a whole
// number counts as whole, as in Kafka. Kafka takes NaN and, for double
// keys, infinity; the metadata log cannot hold them, so they are refused.
func checkQuotaValue(e metadata.QuotaEntity, key string, v float64) *failure {
	typ, ok := metadata.QuotaKeyTypeOf(key, e)
	switch {
	case !ok:
		return fail(kerr.InvalidRequest, "Invalid configuration key %s", key)
	case !(v > 0):
		return fail(kerr.InvalidRequest, "Quota %s must be greater than 0", key)
	}
	switch typ {
	case metadata.QuotaLong:
		if v > math.MaxInt64 {
			return fail(kerr.InvalidRequest, "Proposed value for %s is too large for a LONG.", key)
		}
	case metadata.QuotaInt:
		if v > math.MaxInt32 {
			return fail(kerr.InvalidRequest, "Proposed value for %s is too large for an INT.", key)
		}
	default:
		if math.IsInf(v, 0) {
			return fail(kerr.InvalidRequest, "Quota %s must be a finite number", key)
		}
		return nil
	}
	if math.Abs(math.Mod(v, 1)) > 1e-6 {
		return fail(kerr.InvalidRequest, "%s cannot be a fractional value.", key)
	}
	return nil
}

// javaHashOrder lists distinct keys, given in insertion order, in the
// order a java.util.HashMap built with new HashMap<>(initialCapacity)
// iterates them: by bucket (the spread String.hashCode masked by the
// table size the puts grew it to), then insertion order. Kafka checks an
// entity's parts and an entry's keys in this order, which decides the
// error a request with several faults gets and how an entity is echoed.
func javaHashOrder(keys []string, initialCapacity int) []string {
	capacity := 1
	for capacity < initialCapacity {
		capacity <<= 1
	}
	threshold := capacity * 3 / 4
	for size := 1; size <= len(keys); size++ {
		if size > threshold {
			if capacity >= 16 {
				threshold <<= 1
			} else {
				threshold = capacity * 2 * 3 / 4
			}
			capacity <<= 1
		}
	}
	bucket := func(s string) uint32 {
		var h uint32
		for _, u := range utf16.Encode([]rune(s)) {
			h = 31*h + uint32(u)
		}
		return (h ^ h>>16) & uint32(capacity-1)
	}
	out := slices.Clone(keys)
	slices.SortStableFunc(out, func(a, b string) int { return int(bucket(a)) - int(bucket(b)) })
	return out
}
