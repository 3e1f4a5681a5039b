package metadata

import (
	"errors"
	"maps"
	"testing"
)

// TestClientQuotaEntities: the image keeps a named entity, the type's
// default and an empty name apart; the last key removed takes the entity
// with it; an entity emptied and set again in one batch comes back.
func TestClientQuotaEntities(t *testing.T) {
	named := QuotaEntity{ClientID: QuotaNamed("app")}
	empty := QuotaEntity{ClientID: QuotaNamed("")}
	dflt := QuotaEntity{ClientID: QuotaDefault()}
	img, err := Empty().Apply(
		ClientQuotaRecord{Entity: named.Data(), Key: QuotaProducerByteRate, Value: 1},
		ClientQuotaRecord{Entity: empty.Data(), Key: QuotaProducerByteRate, Value: 2},
		ClientQuotaRecord{Entity: dflt.Data(), Key: QuotaProducerByteRate, Value: 3},
		ClientQuotaRecord{Entity: dflt.Data(), Key: QuotaConsumerByteRate, Value: 4},
	)
	if err != nil {
		t.Fatal(err)
	}
	for e, want := range map[QuotaEntity]map[string]float64{
		named: {QuotaProducerByteRate: 1},
		empty: {QuotaProducerByteRate: 2},
		dflt:  {QuotaProducerByteRate: 3, QuotaConsumerByteRate: 4},
	} {
		if got, ok := img.ClientQuota(e); !ok || !maps.Equal(got, want) {
			t.Errorf("%s: %v, %v; want %v", e, got, ok, want)
		}
	}
	if _, ok := img.ClientQuota(QuotaEntity{User: QuotaNamed("app")}); ok {
		t.Error("user app has the quotas of client-id app")
	}

	next, err := img.Apply(
		ClientQuotaRecord{Entity: named.Data(), Key: QuotaProducerByteRate, Remove: true},
		ClientQuotaRecord{Entity: empty.Data(), Key: QuotaProducerByteRate, Remove: true},
		ClientQuotaRecord{Entity: empty.Data(), Key: QuotaRequestPercentage, Value: 5},
	)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := next.ClientQuota(named); ok || len(next.ClientQuotas()) != 2 {
		t.Errorf("entity without values kept: %v", next.ClientQuotas())
	}
	if got, _ := next.ClientQuota(empty); !maps.Equal(got, map[string]float64{QuotaRequestPercentage: 5}) {
		t.Errorf("the empty client ID's quotas: %v", got)
	}
	if got, _ := img.ClientQuota(empty); !maps.Equal(got, map[string]float64{QuotaProducerByteRate: 2}) {
		t.Errorf("the batch changed the previous image: %v", got)
	}
}

func TestQuotaEntityFromData(t *testing.T) {
	alice, app := "alice", "app"
	cases := []struct {
		name string
		data []QuotaEntityData
		want QuotaEntity
		err  bool
	}{
		{"user", []QuotaEntityData{{EntityType: "user", EntityName: &alice}}, QuotaEntity{User: QuotaNamed("alice")}, false},
		{"client-id then default user", []QuotaEntityData{{EntityType: "client-id", EntityName: &app}, {EntityType: "user"}},
			QuotaEntity{User: QuotaDefault(), ClientID: QuotaNamed("app")}, false},
		{"default ip", []QuotaEntityData{{EntityType: "ip"}}, QuotaEntity{IP: QuotaDefault()}, false},
		{"empty", nil, QuotaEntity{}, true},
		{"ip with user", []QuotaEntityData{{EntityType: "ip"}, {EntityType: "user"}}, QuotaEntity{}, true},
		{"user twice", []QuotaEntityData{{EntityType: "user"}, {EntityType: "user", EntityName: &alice}}, QuotaEntity{}, true},
		{"unknown type", []QuotaEntityData{{EntityType: "group"}}, QuotaEntity{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := QuotaEntityFromData(c.data)
			if c.err != (err != nil) || got != c.want {
				t.Fatalf("got %v, %v; want %v (error %v)", got, err, c.want, c.err)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v is not ErrInvalid", err)
			}
			if err == nil {
				back, err := QuotaEntityFromData(got.Data())
				if err != nil || back != got {
					t.Errorf("Data round trip: %v, %v", back, err)
				}
			}
		})
	}
}

// TestQuotaKeyTypes pins Kafka's QuotaConfig: four keys for users and
// client IDs, one for IPs, each with its type.
func TestQuotaKeyTypes(t *testing.T) {
	user, ip := QuotaEntity{User: QuotaDefault()}, QuotaEntity{IP: QuotaDefault()}
	cases := []struct {
		key    string
		entity QuotaEntity
		want   QuotaKeyType
	}{
		{QuotaProducerByteRate, user, QuotaLong},
		{QuotaConsumerByteRate, user, QuotaLong},
		{QuotaRequestPercentage, user, QuotaDouble},
		{QuotaControllerMutationRate, user, QuotaDouble},
		{QuotaConnectionCreationRate, ip, QuotaInt},
		{QuotaConnectionCreationRate, user, 0},
		{QuotaProducerByteRate, ip, 0},
		{"bogus", user, 0},
	}
	for _, c := range cases {
		got, ok := QuotaKeyTypeOf(c.key, c.entity)
		if got != c.want || ok != (c.want != 0) {
			t.Errorf("QuotaKeyTypeOf(%s, %s) = %v, %v; want %v", c.key, c.entity, got, ok, c.want)
		}
	}
}
