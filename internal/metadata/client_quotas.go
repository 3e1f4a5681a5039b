package metadata

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Client quota entity types, as Kafka's ClientQuotaEntity names them on
// the wire and in ClientQuotaRecord.
const (
	QuotaEntityUser     = "user"
	QuotaEntityClientID = "client-id"
	QuotaEntityIP       = "ip"
)

// Client quota keys, as Kafka's QuotaConfig names them. The first four
// apply to user and client-id entities, the last to ip entities only. The
// controller validates against them and the enforcement code looks them
// up by these names, so they live here, below both.
const (
	// QuotaProducerByteRate is the bytes per second a client may produce.
	QuotaProducerByteRate = "producer_byte_rate"
	// QuotaConsumerByteRate is the bytes per second a client may fetch.
	QuotaConsumerByteRate = "consumer_byte_rate"
	// QuotaRequestPercentage is the share of one request handler's time,
	// in percent, a client's requests may take.
	QuotaRequestPercentage = "request_percentage"
	// QuotaControllerMutationRate is the partitions per second a client
	// may create or delete (CreateTopics, CreatePartitions, DeleteTopics).
	QuotaControllerMutationRate = "controller_mutation_rate"
	// QuotaConnectionCreationRate is the connections per second an IP may
	// open.
	QuotaConnectionCreationRate = "connection_creation_rate"
)

// QuotaKeyType is the type Kafka's QuotaConfig gives a quota key. Values
// travel as doubles; the type decides which doubles are acceptable.
type QuotaKeyType int8

// Quota key types.
const (
	QuotaLong QuotaKeyType = iota + 1
	QuotaInt
	QuotaDouble
)

func (t QuotaKeyType) String() string {
	switch t {
	case QuotaLong:
		return "long"
	case QuotaInt:
		return "int"
	case QuotaDouble:
		return "double"
	}
	return "quota type(" + itoa(int64(t)) + ")"
}

// userClientQuotaKeys and ipQuotaKeys are QuotaConfig's
// userAndClientQuotaConfigs and ipConfigs.
var (
	userClientQuotaKeys = map[string]QuotaKeyType{
		QuotaProducerByteRate:       QuotaLong,
		QuotaConsumerByteRate:       QuotaLong,
		QuotaRequestPercentage:      QuotaDouble,
		QuotaControllerMutationRate: QuotaDouble,
	}
	ipQuotaKeys = map[string]QuotaKeyType{
		QuotaConnectionCreationRate: QuotaInt,
	}
)

// QuotaKeyTypeOf returns the type of a quota key on an entity: ip
// entities take only connection_creation_rate, user and client-id entities
// only the other four. ok is false for a key the entity cannot have.
func QuotaKeyTypeOf(key string, e QuotaEntity) (t QuotaKeyType, ok bool) {
	if e.IP.Set {
		t, ok = ipQuotaKeys[key]
	} else {
		t, ok = userClientQuotaKeys[key]
	}
	return t, ok
}

// QuotaName is one part of a quota entity: absent (Set false), the
// default entity (<default>), or a name ("" is a real name: a client with
// an empty client ID).
type QuotaName struct {
	Set, Default bool
	Name         string
}

// QuotaNamed is the part of a quota entity that names name.
func QuotaNamed(name string) QuotaName { return QuotaName{Set: true, Name: name} }

// QuotaDefault is the part of a quota entity that is its type's default.
func QuotaDefault() QuotaName { return QuotaName{Set: true, Default: true} }

func (n QuotaName) String() string {
	switch {
	case !n.Set:
		return "<absent>"
	case n.Default:
		return "<default>"
	}
	return strconv.Quote(n.Name)
}

// compare orders absent before the default before names, names by bytes.
func (n QuotaName) compare(o QuotaName) int {
	rank := func(n QuotaName) int {
		switch {
		case !n.Set:
			return 0
		case n.Default:
			return 1
		}
		return 2
	}
	return cmp.Or(cmp.Compare(rank(n), rank(o)), strings.Compare(n.Name, o.Name))
}

// data is the EntityData of one part: nil for the default.
func (n QuotaName) data(typ string) QuotaEntityData {
	d := QuotaEntityData{EntityType: typ}
	if !n.Default {
		d.EntityName = &n.Name
	}
	return d
}

// QuotaEntity is a client quota entity; comparable, a map key.
type QuotaEntity struct {
	User, ClientID, IP QuotaName
}

// Compare orders entities for listings: those of a user first (by user,
// the user alone before its client IDs), then client IDs alone, then IPs;
// within a type the default comes before names.
func (e QuotaEntity) Compare(o QuotaEntity) int {
	kind := func(e QuotaEntity) int {
		switch {
		case e.User.Set:
			return 0
		case e.ClientID.Set:
			return 1
		}
		return 2
	}
	return cmp.Or(cmp.Compare(kind(e), kind(o)), e.User.compare(o.User), e.ClientID.compare(o.ClientID), e.IP.compare(o.IP))
}

// String is the entity as its parts, e.g. user="alice" client-id=<default>.
func (e QuotaEntity) String() string {
	var parts []string
	for _, p := range e.parts() {
		parts = append(parts, p.typ+"="+p.name.String())
	}
	if len(parts) == 0 {
		return "<empty entity>"
	}
	return strings.Join(parts, " ")
}

type quotaPart struct {
	typ  string
	name QuotaName
}

// parts are the entity's set parts, user first.
func (e QuotaEntity) parts() []quotaPart {
	var out []quotaPart
	for _, p := range []quotaPart{{QuotaEntityUser, e.User}, {QuotaEntityClientID, e.ClientID}, {QuotaEntityIP, e.IP}} {
		if p.name.Set {
			out = append(out, p)
		}
	}
	return out
}

// Data is the entity as a ClientQuotaRecord lists it.
func (e QuotaEntity) Data() []QuotaEntityData {
	var out []QuotaEntityData
	for _, p := range e.parts() {
		out = append(out, p.name.data(p.typ))
	}
	return out
}

// Valid reports whether Kafka allows the entity: a user, a client ID, a
// user and a client ID, or an IP alone.
func (e QuotaEntity) Valid() bool {
	if e.IP.Set {
		return !e.User.Set && !e.ClientID.Set
	}
	return e.User.Set || e.ClientID.Set
}

// QuotaEntityFromData reads a record's entity list. Each type may appear
// once, and the entity must be Valid.
func QuotaEntityFromData(data []QuotaEntityData) (QuotaEntity, error) {
	var e QuotaEntity
	for _, d := range data {
		var part *QuotaName
		switch d.EntityType {
		case QuotaEntityUser:
			part = &e.User
		case QuotaEntityClientID:
			part = &e.ClientID
		case QuotaEntityIP:
			part = &e.IP
		default:
			return QuotaEntity{}, invalid("client quota entity type %q", d.EntityType)
		}
		if part.Set {
			return QuotaEntity{}, invalid("client quota entity names %s twice", d.EntityType)
		}
		*part = QuotaDefault()
		if d.EntityName != nil {
			*part = QuotaNamed(*d.EntityName)
		}
	}
	if !e.Valid() {
		return QuotaEntity{}, invalid("client quota entity %s: want a user, a client-id, both, or an ip alone", e)
	}
	return e, nil
}

// ClientQuotas returns every entity with at least one quota value, and
// its values by key. The maps are the image's: callers must not modify
// them.
func (img *Image) ClientQuotas() map[QuotaEntity]map[string]float64 { return img.quotas }

// ClientQuota returns the quota values of one entity, by key; the map is
// the image's and must not be modified. ok is false when the entity has
// none.
func (img *Image) ClientQuota(e QuotaEntity) (map[string]float64, bool) {
	q, ok := img.quotas[e]
	return q, ok
}

// sortedQuotaEntities lists the entities with quotas in Compare's order.
func (img *Image) sortedQuotaEntities() []QuotaEntity {
	return slices.SortedFunc(maps.Keys(img.quotas), QuotaEntity.Compare)
}

// setClientQuota sets or removes one quota value. The key and value are
// not judged (the controller did, by Kafka's rules), except that the
// value must be finite: a snapshot could not write it otherwise.
func (b *builder) setClientQuota(r ClientQuotaRecord) error {
	e, err := QuotaEntityFromData(r.Entity)
	switch {
	case err != nil:
		return err
	case r.Key == "":
		return invalid("client quota of %s with an empty key", e)
	case !r.Remove && (math.IsNaN(r.Value) || math.IsInf(r.Value, 0)):
		return invalid("client quota %s of %s is %v", r.Key, e, r.Value)
	}
	inner := b.img.quotas[e]
	if r.Remove {
		if _, ok := inner[r.Key]; !ok {
			return invalid("remove of unknown client quota %s of %s", r.Key, e)
		}
	}
	if !b.quotasOwned {
		b.img.quotas = maps.Clone(b.img.quotas)
		if b.img.quotas == nil {
			b.img.quotas = map[QuotaEntity]map[string]float64{}
		}
		b.ownedQuotas = map[QuotaEntity]bool{}
		b.quotasOwned = true
	}
	// An entity this batch emptied is gone from the map: it needs a new
	// inner map even though the batch owned the old one.
	if !b.ownedQuotas[e] || inner == nil {
		inner = maps.Clone(inner)
		if inner == nil {
			inner = map[string]float64{}
		}
		b.ownedQuotas[e] = true
	}
	if r.Remove {
		delete(inner, r.Key)
	} else {
		inner[r.Key] = r.Value
	}
	if len(inner) == 0 {
		delete(b.img.quotas, e)
	} else {
		b.img.quotas[e] = inner
	}
	return nil
}

// quotaRecords are the records that set every quota of img, by entity
// (Compare's order), then key.
func (img *Image) quotaRecords() []Record {
	var out []Record
	for _, e := range img.sortedQuotaEntities() {
		values := img.quotas[e]
		for _, k := range slices.Sorted(maps.Keys(values)) {
			out = append(out, ClientQuotaRecord{Entity: e.Data(), Key: k, Value: values[k]})
		}
	}
	return out
}
