package broker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/metadata"
)

// quotaPart is a kadm entity component: a name, or with name "" the
// default (tests name no entity "").
func quotaPart(typ, name string) kadm.ClientQuotaEntityComponent {
	if name == "" {
		return kadm.ClientQuotaEntityComponent{Type: typ}
	}
	return kadm.ClientQuotaEntityComponent{Type: typ, Name: &name}
}

// quotaEntry builds an alteration: ops are "key=value" to set or "-key"
// to remove.
func quotaEntry(entity kadm.ClientQuotaEntity, ops ...string) kadm.AlterClientQuotaEntry {
	e := kadm.AlterClientQuotaEntry{Entity: entity}
	for _, op := range ops {
		if key, ok := strings.CutPrefix(op, "-"); ok {
			e.Ops = append(e.Ops, kadm.AlterClientQuotaOp{Key: key, Remove: true})
			continue
		}
		key, value, _ := strings.Cut(op, "=")
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			panic(op)
		}
		e.Ops = append(e.Ops, kadm.AlterClientQuotaOp{Key: key, Value: v})
	}
	return e
}

// alteredQuotas alters quotas and returns, per entity (kadm's String),
// "ok" or the error's name and message.
func alteredQuotas(t *testing.T, adm *kadm.Client, validateOnly bool, entries ...kadm.AlterClientQuotaEntry) map[string]string {
	t.Helper()
	alter := adm.AlterClientQuotas
	if validateOnly {
		alter = adm.ValidateAlterClientQuotas
	}
	res, err := alter(t.Context(), entries)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range res {
		out[r.Entity.String()] = "ok"
		if r.Err != nil {
			out[r.Entity.String()] = r.Err.(*kerr.Error).Message + ": " + r.ErrMessage
		}
	}
	return out
}

// describedQuotas describes quotas and returns, per entity (kadm's
// String), its values as "key=value ...", or the request's error as the
// only key "error".
func describedQuotas(t *testing.T, adm *kadm.Client, strict bool, comps ...kadm.DescribeClientQuotaComponent) map[string]string {
	t.Helper()
	res, err := adm.DescribeClientQuotas(t.Context(), strict, comps)
	if em, ok := errors.AsType[*kadm.ErrAndMessage](err); ok {
		return map[string]string{"error": em.Err.(*kerr.Error).Message + ": " + em.ErrMessage}
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, q := range res {
		var values []string
		for _, v := range q.Values {
			values = append(values, v.Key+"="+strconv.FormatFloat(v.Value, 'f', -1, 64))
		}
		out[q.Entity.String()] = strings.Join(values, " ")
	}
	return out
}

func exactly(typ, name string) kadm.DescribeClientQuotaComponent {
	return kadm.DescribeClientQuotaComponent{Type: typ, MatchType: quotaMatchExact, MatchName: &name}
}

func defaultOf(typ string) kadm.DescribeClientQuotaComponent {
	return kadm.DescribeClientQuotaComponent{Type: typ, MatchType: quotaMatchDefault}
}

func anyOf(typ string) kadm.DescribeClientQuotaComponent {
	return kadm.DescribeClientQuotaComponent{Type: typ, MatchType: quotaMatchAny}
}

// allQuotaLevels sets one quota at every entity level Kafka has, each
// with a value of its own, and returns what describing everything gives.
func allQuotaLevels(t *testing.T, adm *kadm.Client) map[string]string {
	t.Helper()
	u, c := metadata.QuotaEntityUser, metadata.QuotaEntityClientID
	entries := []kadm.AlterClientQuotaEntry{
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(u, "alice"), quotaPart(c, "app")}, "producer_byte_rate=1", "request_percentage=12.5"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(u, "alice"), quotaPart(c, "")}, "producer_byte_rate=2"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(u, "alice")}, "producer_byte_rate=3", "consumer_byte_rate=30"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(u, ""), quotaPart(c, "app")}, "producer_byte_rate=4"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(u, ""), quotaPart(c, "")}, "producer_byte_rate=5"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(u, "")}, "producer_byte_rate=6", "controller_mutation_rate=0.5"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(c, "app")}, "producer_byte_rate=7"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(c, "")}, "producer_byte_rate=8"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart("ip", "10.0.0.1")}, "connection_creation_rate=9"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart("ip", "")}, "connection_creation_rate=10"),
	}
	got := alteredQuotas(t, adm, false, entries...)
	for e, r := range got {
		if r != "ok" {
			t.Fatalf("%s: %s", e, r)
		}
	}
	if len(got) != len(entries) {
		t.Fatalf("%d results for %d entities: %v", len(got), len(entries), got)
	}
	return map[string]string{
		"{client-id=app, user=alice}":           "producer_byte_rate=1 request_percentage=12.5",
		"{client-id=<default>, user=alice}":     "producer_byte_rate=2",
		"{user=alice}":                          "consumer_byte_rate=30 producer_byte_rate=3",
		"{client-id=app, user=<default>}":       "producer_byte_rate=4",
		"{client-id=<default>, user=<default>}": "producer_byte_rate=5",
		"{user=<default>}":                      "controller_mutation_rate=0.5 producer_byte_rate=6",
		"{client-id=app}":                       "producer_byte_rate=7",
		"{client-id=<default>}":                 "producer_byte_rate=8",
		"{ip=10.0.0.1}":                         "connection_creation_rate=9",
		"{ip=<default>}":                        "connection_creation_rate=10",
	}
}

// only keeps the entries of m named.
func only(m map[string]string, keys ...string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

// TestClientQuotasWithKadm: quotas at every entity level round-trip
// through AlterClientQuotas and DescribeClientQuotas with kadm, each
// filter selects what Kafka's would, validate_only changes nothing, every
// refusal has Kafka's error and message, and the quotas survive a
// restart.
func TestClientQuotasWithKadm(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerWith(t, Config{LogDir: dir})
	adm, _ := adminClient(t, b)
	u, c, ip := metadata.QuotaEntityUser, metadata.QuotaEntityClientID, metadata.QuotaEntityIP
	if got := describedQuotas(t, adm, false); len(got) != 0 {
		t.Fatalf("a new broker has quotas: %v", got)
	}
	all := allQuotaLevels(t, adm)
	if diff := cmp.Diff(all, describedQuotas(t, adm, false)); diff != "" {
		t.Fatalf("describe everything (-want +got):\n%s", diff)
	}

	filters := []struct {
		name   string
		strict bool
		comps  []kadm.DescribeClientQuotaComponent
		want   []string
	}{
		{"exact user, strict", true, []kadm.DescribeClientQuotaComponent{exactly(u, "alice")}, []string{"{user=alice}"}},
		{"exact user", false, []kadm.DescribeClientQuotaComponent{exactly(u, "alice")},
			[]string{"{user=alice}", "{client-id=app, user=alice}", "{client-id=<default>, user=alice}"}},
		{"default user, strict", true, []kadm.DescribeClientQuotaComponent{defaultOf(u)}, []string{"{user=<default>}"}},
		{"default user", false, []kadm.DescribeClientQuotaComponent{defaultOf(u)},
			[]string{"{user=<default>}", "{client-id=app, user=<default>}", "{client-id=<default>, user=<default>}"}},
		{"any user, strict", true, []kadm.DescribeClientQuotaComponent{anyOf(u)}, []string{"{user=alice}", "{user=<default>}"}},
		{"any client-id", false, []kadm.DescribeClientQuotaComponent{anyOf(c)},
			[]string{"{client-id=app, user=alice}", "{client-id=<default>, user=alice}", "{client-id=app, user=<default>}",
				"{client-id=<default>, user=<default>}", "{client-id=app}", "{client-id=<default>}"}},
		{"exact user and default client-id", true, []kadm.DescribeClientQuotaComponent{exactly(u, "alice"), defaultOf(c)},
			[]string{"{client-id=<default>, user=alice}"}},
		{"any user and exact client-id", true, []kadm.DescribeClientQuotaComponent{anyOf(u), exactly(c, "app")},
			[]string{"{client-id=app, user=alice}", "{client-id=app, user=<default>}"}},
		{"exact client-id, strict", true, []kadm.DescribeClientQuotaComponent{exactly(c, "app")}, []string{"{client-id=app}"}},
		{"default ip", true, []kadm.DescribeClientQuotaComponent{defaultOf(ip)}, []string{"{ip=<default>}"}},
		{"any ip", false, []kadm.DescribeClientQuotaComponent{anyOf(ip)}, []string{"{ip=10.0.0.1}", "{ip=<default>}"}},
		{"exact ip", true, []kadm.DescribeClientQuotaComponent{exactly(ip, "10.0.0.1")}, []string{"{ip=10.0.0.1}"}},
		{"a user with no quotas", false, []kadm.DescribeClientQuotaComponent{exactly(u, "bob")}, nil},
		{"nothing, strict", true, nil, nil},
	}
	for _, f := range filters {
		if diff := cmp.Diff(only(all, f.want...), describedQuotas(t, adm, f.strict, f.comps...)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", f.name, diff)
		}
	}

	// Filters Kafka refuses.
	bad := []struct {
		comps []kadm.DescribeClientQuotaComponent
		want  string
	}{
		{[]kadm.DescribeClientQuotaComponent{anyOf(u), exactly(u, "alice")},
			"INVALID_REQUEST: Entity type user cannot appear more than once in the filter."},
		{[]kadm.DescribeClientQuotaComponent{anyOf(ip), defaultOf(u)},
			"INVALID_REQUEST: Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component."},
		{[]kadm.DescribeClientQuotaComponent{anyOf("group")}, "UNSUPPORTED_VERSION: Unsupported entity type group"},
		{[]kadm.DescribeClientQuotaComponent{anyOf("")}, "INVALID_REQUEST: Invalid empty entity type."},
		{[]kadm.DescribeClientQuotaComponent{{Type: u, MatchType: quotaMatchExact}},
			"INVALID_REQUEST: Request specified MATCH_TYPE_EXACT, but set match string to null."},
		{[]kadm.DescribeClientQuotaComponent{{Type: u, MatchType: quotaMatchDefault, MatchName: kmsg.StringPtr("alice")}},
			"INVALID_REQUEST: Request specified MATCH_TYPE_DEFAULT, but also specified a match string."},
		{[]kadm.DescribeClientQuotaComponent{{Type: u, MatchType: quotaMatchAny, MatchName: kmsg.StringPtr("alice")}},
			"INVALID_REQUEST: Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."},
		{[]kadm.DescribeClientQuotaComponent{{Type: u, MatchType: 3}}, "INVALID_REQUEST: Unknown match type 3"},
	}
	for _, f := range bad {
		if diff := cmp.Diff(map[string]string{"error": f.want}, describedQuotas(t, adm, false, f.comps...)); diff != "" {
			t.Errorf("%v (-want +got):\n%s", f.comps, diff)
		}
	}

	// Changes and removals; validate_only first, which answers the same
	// and changes nothing.
	change := []kadm.AlterClientQuotaEntry{
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(u, "alice")}, "-consumer_byte_rate", "producer_byte_rate=33", "-request_percentage"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(c, "")}, "-producer_byte_rate"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(ip, "10.0.0.1")}, "connection_creation_rate=90"),
	}
	wantChange := map[string]string{"{user=alice}": "ok", "{client-id=<default>}": "ok", "{ip=10.0.0.1}": "ok"}
	if diff := cmp.Diff(wantChange, alteredQuotas(t, adm, true, change...)); diff != "" {
		t.Errorf("validate only (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(all, describedQuotas(t, adm, false)); diff != "" {
		t.Fatalf("validate_only changed the quotas (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantChange, alteredQuotas(t, adm, false, change...)); diff != "" {
		t.Errorf("alter (-want +got):\n%s", diff)
	}
	all["{user=alice}"] = "producer_byte_rate=33"
	delete(all, "{client-id=<default>}")
	all["{ip=10.0.0.1}"] = "connection_creation_rate=90"
	if diff := cmp.Diff(all, describedQuotas(t, adm, false)); diff != "" {
		t.Errorf("after the change (-want +got):\n%s", diff)
	}

	// Each refusal, per entity, beside a valid change that commits.
	refusals := []kadm.AlterClientQuotaEntry{
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(u, "carol")}, "producer_byte_rate=1024.5"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(u, "dave")}, "producer_byte_rate=0"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(u, "erin")}, "connection_creation_rate=5"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(u, "frank")}, "bogus=5"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(u, "grace"), quotaPart(ip, "10.0.0.2")}, "producer_byte_rate=5"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(ip, "not an ip address")}, "connection_creation_rate=5"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(ip, "10.0.0.3")}, "connection_creation_rate=3000000000"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart("group", "g")}, "producer_byte_rate=5"),
		quotaEntry(kadm.ClientQuotaEntity{{Type: u, Name: kmsg.StringPtr("")}}, "producer_byte_rate=5"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(u, "heidi")}, "producer_byte_rate=5", "producer_byte_rate=6"),
		quotaEntry(kadm.ClientQuotaEntity{quotaPart(u, "ivan")}, "consumer_byte_rate=4096"),
	}
	if diff := cmp.Diff(map[string]string{
		"{user=carol}":              "INVALID_REQUEST: producer_byte_rate cannot be a fractional value.",
		"{user=dave}":               "INVALID_REQUEST: Quota producer_byte_rate must be greater than 0",
		"{user=erin}":               "INVALID_REQUEST: Invalid configuration key connection_creation_rate",
		"{user=frank}":              "INVALID_REQUEST: Invalid configuration key bogus",
		"{user=grace, ip=10.0.0.2}": "INVALID_REQUEST: Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId",
		"{ip=not an ip address}":    "INVALID_REQUEST: not an ip address is not a valid IP or resolvable host.",
		"{ip=10.0.0.3}":             "INVALID_REQUEST: Proposed value for connection_creation_rate is too large for an INT.",
		"{group=g}":                 "INVALID_REQUEST: Unhandled client quota entity type: group",
		"{user=}":                   "INVALID_REQUEST: Empty user not supported",
		"{user=heidi}":              "INVALID_REQUEST: Ignoring duplicate entity ClientQuotaEntity(entries={user=heidi})",
		"{user=ivan}":               "ok",
	}, alteredQuotas(t, adm, false, refusals...)); diff != "" {
		t.Errorf("refusals (-want +got):\n%s", diff)
	}
	all["{user=ivan}"] = "consumer_byte_rate=4096"
	if diff := cmp.Diff(all, describedQuotas(t, adm, false)); diff != "" {
		t.Errorf("after the refusals (-want +got):\n%s", diff)
	}

	// The quotas are in the metadata log.
	b = restartBroker(t, b, dir)
	adm, _ = adminClient(t, b)
	if diff := cmp.Diff(all, describedQuotas(t, adm, false)); diff != "" {
		t.Errorf("after restart (-want +got):\n%s", diff)
	}
}

// TestClientQuotasWireForms: what kadm does not show: the response
// entity lists client-id before user as Kafka's map does; an entry naming
// an entity Kafka's way twice answers once; an empty request answers
// nothing; v0 and v1 both work.
func TestClientQuotasWireForms(t *testing.T) {
	b := startBroker(t)
	cl := newFranz(t, b.Addr())
	for _, version := range []int16{0, 1} {
		name := fmt.Sprintf("v%d", version)
		areq := kmsg.NewPtrAlterClientQuotasRequest()
		areq.Version = version
		areq.Entries = []kmsg.AlterClientQuotasRequestEntry{
			{Entity: []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: &name}, {Type: "client-id"}},
				Ops: []kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 100}}},
			{Entity: []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "client-id"}, {Type: "user", Name: &name}},
				Ops: []kmsg.AlterClientQuotasRequestEntryOp{{Key: "consumer_byte_rate", Value: 200}}},
		}
		aresp, err := areq.RequestWith(t.Context(), cl)
		if err != nil {
			t.Fatal(err)
		}
		if len(aresp.Entries) != 1 || aresp.Entries[0].ErrorCode != kerr.InvalidRequest.Code ||
			len(aresp.Entries[0].Entity) != 2 || aresp.Entries[0].Entity[0].Type != "client-id" ||
			*aresp.Entries[0].ErrorMessage != "Ignoring duplicate entity ClientQuotaEntity(entries={client-id=null, user="+name+"})" {
			t.Errorf("%s: one entity twice: %+v", name, aresp.Entries)
		}
		// Kafka commits the first entry regardless; so does Samsa.
		dreq := kmsg.NewPtrDescribeClientQuotasRequest()
		dreq.Version = version
		dreq.Components = []kmsg.DescribeClientQuotasRequestComponent{{EntityType: "user", Match: &name}}
		dresp, err := dreq.RequestWith(t.Context(), cl)
		if err != nil {
			t.Fatal(err)
		}
		if len(dresp.Entries) != 1 || len(dresp.Entries[0].Entity) != 2 || dresp.Entries[0].Entity[0].Type != "client-id" ||
			dresp.Entries[0].Entity[0].Name != nil || *dresp.Entries[0].Entity[1].Name != name ||
			len(dresp.Entries[0].Values) != 1 || dresp.Entries[0].Values[0].Value != 100 {
			t.Errorf("%s: describe: %+v", name, dresp.Entries)
		}
		// A filter that matches nothing answers an empty list, not null.
		dreq.Components[0].Match = kmsg.StringPtr("nobody")
		if dresp, err = dreq.RequestWith(t.Context(), cl); err != nil || dresp.Entries == nil || len(dresp.Entries) != 0 {
			t.Errorf("%s: describe nobody: %+v, %v", name, dresp, err)
		}
	}
	empty := kmsg.NewPtrAlterClientQuotasRequest()
	if resp, err := empty.RequestWith(t.Context(), cl); err != nil || len(resp.Entries) != 0 {
		t.Errorf("empty alter: %+v, %v", resp, err)
	}
}

// TestClusterAlterClientQuotasThroughAnyBroker: on three nodes,
// AlterClientQuotas sent to a broker that is not the active controller is
// forwarded, applied, answered once that broker's image has it, and seen
// by every broker's DescribeClientQuotas; validate_only there writes
// nothing anywhere.
func TestClusterAlterClientQuotasThroughAnyBroker(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	active := c.activeController()
	var via *clusterNode
	for _, n := range c.nodes {
		if n != active {
			via = n
			break
		}
	}
	cl := newFranz(t, via.get().Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	send := func(validateOnly bool, value float64) *kmsg.AlterClientQuotasResponse {
		req := kmsg.NewPtrAlterClientQuotasRequest()
		req.ValidateOnly = validateOnly
		req.Entries = []kmsg.AlterClientQuotasRequestEntry{
			{Entity: []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: kmsg.StringPtr("alice")}},
				Ops: []kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: value}}},
			{Entity: []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "ip"}},
				Ops: []kmsg.AlterClientQuotasRequestEntryOp{{Key: "connection_creation_rate", Value: -1}}},
		}
		resp, err := cl.SeedBrokers()[0].Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		r := resp.(*kmsg.AlterClientQuotasResponse)
		if len(r.Entries) != 2 || r.Entries[0].ErrorCode != 0 || r.Entries[1].ErrorCode != kerr.InvalidRequest.Code {
			t.Fatalf("alter through broker %d: %+v", via.id, r.Entries)
		}
		return r
	}
	alice := metadata.QuotaEntity{User: metadata.QuotaNamed("alice")}
	send(true, 1024)
	for _, n := range c.nodes {
		if len(n.get().ctrl.Image().ClientQuotas()) != 0 {
			t.Fatalf("validate_only wrote, as broker %d sees", n.id)
		}
	}
	send(false, 1024)
	if q, _ := via.get().meta.Load().ClientQuota(alice); q[metadata.QuotaProducerByteRate] != 1024 {
		t.Fatalf("broker %d answered before its image had the quota: %v", via.id, q)
	}
	for _, n := range c.nodes {
		b := n.get()
		awaitApplied(ctx, b, func(img *metadata.Image) bool {
			q, _ := img.ClientQuota(alice)
			return q[metadata.QuotaProducerByteRate] == 1024
		})
		adm := kadm.NewClient(newFranz(t, b.Addr()))
		got, err := adm.DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{exactly("user", "alice")})
		if err != nil || len(got) != 1 || len(got[0].Values) != 1 || got[0].Values[0].Value != 1024 {
			t.Errorf("broker %d describes %+v, %v", n.id, got, err)
		}
		if keys := slices.Collect(maps.Keys(b.meta.Load().ClientQuotas())); len(keys) != 1 {
			t.Errorf("broker %d has quotas of %v", n.id, keys)
		}
	}
}

// awaitApplied waits until cond holds on the image b has applied, or
// ctx ends.
func awaitApplied(ctx context.Context, b *Broker, cond func(*metadata.Image) bool) {
	for {
		applied := b.imageApplied.Wait()
		if img := b.meta.Load(); img != nil && cond(img) {
			return
		}
		select {
		case <-applied:
		case <-ctx.Done():
			return
		}
	}
}

// TestClientQuotasWithJavaAdmin is TestClientQuotasWithKadm's round trip
// through the Java Admin (test/compat/java's AuthzProbe, its alter-quotas
// and describe-quotas probes), when SAMSA_AUTHZ_JAVA names the command
// that starts it (see e2e_authz_matrix_clients_test.go).
func TestClientQuotasWithJavaAdmin(t *testing.T) {
	command := strings.Fields(os.Getenv("SAMSA_AUTHZ_JAVA"))
	if len(command) == 0 {
		t.Skip("SAMSA_AUTHZ_JAVA is not set (make compat sets it)")
	}
	e := newAuthzEnv(t, nil)
	java := startAgent(t, "java", command, e.addr)
	run := func(probe string, args ...string) string {
		t.Helper()
		code, detail := java.probe(t, "admin", probe, args)
		if code != 0 {
			return codeName(code) + " " + detail
		}
		return detail
	}
	entries := [][2]string{
		{"user=alice,client-id=app", "producer_byte_rate=1 request_percentage=12.5"},
		{"user=alice,client-id=", "producer_byte_rate=2"},
		{"user=alice", "producer_byte_rate=3 consumer_byte_rate=30"},
		{"user=,client-id=app", "producer_byte_rate=4"},
		{"user=,client-id=", "producer_byte_rate=5"},
		{"user=", "producer_byte_rate=6 controller_mutation_rate=0.5"},
		{"client-id=app", "producer_byte_rate=7"},
		{"client-id=", "producer_byte_rate=8"},
		{"ip=10.0.0.1", "connection_creation_rate=9"},
		{"ip=", "connection_creation_rate=10"},
	}
	args := []string{"alter"}
	for _, en := range entries {
		args = append(args, en[0], en[1])
	}
	got := run("alter-quotas", args...)
	if strings.Count(got, "=> ok") != len(entries) {
		t.Fatalf("alter every level: %s", got)
	}
	all := map[string]string{
		"user=alice,client-id=app":           "producer_byte_rate=1 request_percentage=12.5",
		"user=alice,client-id=<default>":     "producer_byte_rate=2",
		"user=alice":                         "consumer_byte_rate=30 producer_byte_rate=3",
		"user=<default>,client-id=app":       "producer_byte_rate=4",
		"user=<default>,client-id=<default>": "producer_byte_rate=5",
		"user=<default>":                     "controller_mutation_rate=0.5 producer_byte_rate=6",
		"client-id=app":                      "producer_byte_rate=7",
		"client-id=<default>":                "producer_byte_rate=8",
		"ip=10.0.0.1":                        "connection_creation_rate=9",
		"ip=<default>":                       "connection_creation_rate=10",
	}
	javaForm := func(m map[string]string, keys ...string) string {
		if keys == nil {
			keys = slices.Collect(maps.Keys(m))
		}
		var lines []string
		for _, k := range keys {
			lines = append(lines, k+" => "+m[k])
		}
		slices.Sort(lines)
		return strings.Join(lines, " | ")
	}
	if got := run("describe-quotas", "loose"); got != javaForm(all) {
		t.Fatalf("describe everything:\n got %s\nwant %s", got, javaForm(all))
	}
	for _, f := range []struct {
		args []string
		want []string
	}{
		{[]string{"strict", "user:exact:alice"}, []string{"user=alice"}},
		{[]string{"loose", "user:exact:alice"}, []string{"user=alice", "user=alice,client-id=app", "user=alice,client-id=<default>"}},
		{[]string{"strict", "user:default"}, []string{"user=<default>"}},
		{[]string{"strict", "user:any"}, []string{"user=alice", "user=<default>"}},
		{[]string{"strict", "user:any", "client-id:exact:app"}, []string{"user=alice,client-id=app", "user=<default>,client-id=app"}},
		{[]string{"loose", "ip:any"}, []string{"ip=10.0.0.1", "ip=<default>"}},
		{[]string{"strict"}, []string{}},
	} {
		if got, want := run("describe-quotas", f.args...), javaForm(all, f.want...); got != want {
			t.Errorf("describe %v:\n got %s\nwant %s", f.args, got, want)
		}
	}
	if got := run("describe-quotas", "loose", "ip:any", "user:default"); !strings.HasPrefix(got, "INVALID_REQUEST InvalidRequestException: Invalid entity filter component combination") {
		t.Errorf("ip with user: %s", got)
	}
	if got := run("describe-quotas", "loose", "group:any"); got != "UNSUPPORTED_VERSION UnsupportedVersionException: Unsupported entity type group" {
		t.Errorf("unknown type: %s", got)
	}

	change := []string{"user=alice", "-consumer_byte_rate producer_byte_rate=33", "client-id=", "-producer_byte_rate"}
	if got := run("alter-quotas", append([]string{"validate"}, change...)...); got != "user=alice => ok | client-id=<default> => ok" {
		t.Errorf("validate only: %s", got)
	}
	if got := run("describe-quotas", "loose"); got != javaForm(all) {
		t.Errorf("validate_only changed the quotas:\n got %s\nwant %s", got, javaForm(all))
	}
	if got := run("alter-quotas", append([]string{"alter"}, change...)...); got != "user=alice => ok | client-id=<default> => ok" {
		t.Errorf("alter: %s", got)
	}
	all["user=alice"] = "producer_byte_rate=33"
	delete(all, "client-id=<default>")
	if got := run("describe-quotas", "loose"); got != javaForm(all) {
		t.Errorf("after the change:\n got %s\nwant %s", got, javaForm(all))
	}

	refused := run("alter-quotas", "alter",
		"user=carol", "producer_byte_rate=1024.5",
		"user=dave", "producer_byte_rate=0",
		"user=erin", "connection_creation_rate=5",
		"user=grace,ip=10.0.0.2", "producer_byte_rate=5",
		"ip=not an ip address", "connection_creation_rate=5",
		"group=g", "producer_byte_rate=5",
		"user=ivan", "consumer_byte_rate=4096")
	want := strings.Join([]string{
		"user=carol => InvalidRequestException: producer_byte_rate cannot be a fractional value.",
		"user=dave => InvalidRequestException: Quota producer_byte_rate must be greater than 0",
		"user=erin => InvalidRequestException: Invalid configuration key connection_creation_rate",
		"user=grace,ip=10.0.0.2 => InvalidRequestException: Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId",
		"ip=not an ip address => InvalidRequestException: not an ip address is not a valid IP or resolvable host.",
		"group=g => InvalidRequestException: Unhandled client quota entity type: group",
		"user=ivan => ok",
	}, " | ")
	if refused != want {
		t.Errorf("refusals:\n got %s\nwant %s", refused, want)
	}
	all["user=ivan"] = "consumer_byte_rate=4096"
	if got := run("describe-quotas", "loose"); got != javaForm(all) {
		t.Errorf("after the refusals:\n got %s\nwant %s", got, javaForm(all))
	}
}
