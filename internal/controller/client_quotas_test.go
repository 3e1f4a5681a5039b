package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/metadata"
)

func qp(typ, name string) QuotaEntityPart { return QuotaEntityPart{Type: typ, Name: &name} }

func qdefault(typ string) QuotaEntityPart { return QuotaEntityPart{Type: typ} }

func qset(key string, v float64) QuotaOp { return QuotaOp{Key: key, Value: v} }

func qremove(key string) QuotaOp { return QuotaOp{Key: key, Remove: true} }

func alter(ops []QuotaOp, entity ...QuotaEntityPart) QuotaAlteration {
	return QuotaAlteration{Entity: entity, Ops: ops}
}

func ops(o ...QuotaOp) []QuotaOp { return o }

// formatQuotaResults prints results one a line: the entity as Kafka
// echoes it, then ok or the error and its message.
func formatQuotaResults(res []QuotaResult) []string {
	var out []string
	for _, r := range res {
		var parts []string
		for _, p := range r.Entity {
			name := "<default>"
			if p.Name != nil {
				name = strconv.Quote(*p.Name)
			}
			parts = append(parts, p.Type+"="+name)
		}
		line := strings.Join(parts, " ") + ": ok"
		if r.ErrorCode != 0 {
			line = strings.Join(parts, " ") + ": " + kerr.ErrorForCode(r.ErrorCode).(*kerr.Error).Message + " " + r.ErrorMessage
		}
		out = append(out, line)
	}
	return out
}

func formatQuotaRecords(recs []metadata.Record) []string {
	var out []string
	for _, r := range recs {
		q := r.(metadata.ClientQuotaRecord)
		e, err := metadata.QuotaEntityFromData(q.Entity)
		if err != nil {
			out = append(out, "bad entity: "+err.Error())
			continue
		}
		if q.Remove {
			out = append(out, fmt.Sprintf("remove %s %s", e, q.Key))
		} else {
			out = append(out, fmt.Sprintf("set %s %s=%v", e, q.Key, q.Value))
		}
	}
	return out
}

// quotaBase has alice's producer_byte_rate at 1024 and 10.0.0.1's
// connection_creation_rate at 5.
func quotaBase(t *testing.T) *metadata.Image {
	t.Helper()
	img, err := metadata.Empty().Apply(
		metadata.ClientQuotaRecord{Entity: metadata.QuotaEntity{User: metadata.QuotaNamed("alice")}.Data(), Key: metadata.QuotaProducerByteRate, Value: 1024},
		metadata.ClientQuotaRecord{Entity: metadata.QuotaEntity{IP: metadata.QuotaNamed("10.0.0.1")}.Data(), Key: metadata.QuotaConnectionCreationRate, Value: 5},
	)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// resolves is a resolver that knows one host.
func resolves(host string) bool { return host == "broker.example" }

// TestPlanClientQuotas checks each rule of Kafka's
// ClientQuotaControlManager, message for message.
func TestPlanClientQuotas(t *testing.T) {
	const (
		pbr = metadata.QuotaProducerByteRate
		cbr = metadata.QuotaConsumerByteRate
		rp  = metadata.QuotaRequestPercentage
		cmr = metadata.QuotaControllerMutationRate
		ccr = metadata.QuotaConnectionCreationRate
		u   = metadata.QuotaEntityUser
		cid = metadata.QuotaEntityClientID
		ip  = metadata.QuotaEntityIP
	)
	cases := []struct {
		name    string
		alts    []QuotaAlteration
		results []string
		records []string
	}{
		{"set, change and remove",
			[]QuotaAlteration{alter(ops(qset(cbr, 2048), qremove(pbr)), qp(u, "alice")),
				alter(ops(qset(rp, 12.5), qset(cmr, 0.5)), qdefault(u), qp(cid, "app"))},
			[]string{`user="alice": ok`, `client-id="app" user=<default>: ok`},
			[]string{`set user="alice" consumer_byte_rate=2048`, `remove user="alice" producer_byte_rate`,
				`set user=<default> client-id="app" controller_mutation_rate=0.5`, `set user=<default> client-id="app" request_percentage=12.5`}},
		{"the value it has, and removing what is not there, write nothing",
			[]QuotaAlteration{alter(ops(qset(pbr, 1024), qremove(cbr), qremove("bogus")), qp(u, "alice"))},
			[]string{`user="alice": ok`}, nil},
		{"ip entities", []QuotaAlteration{
			alter(ops(qset(ccr, 100)), qdefault(ip)),
			alter(ops(qset(ccr, 6)), qp(ip, "10.0.0.1")),
			alter(ops(qset(ccr, 7)), qp(ip, "2001:db8::1")),
			alter(ops(qset(ccr, 8)), qp(ip, "[::1]")),
			alter(ops(qset(ccr, 9)), qp(ip, "broker.example"))},
			[]string{`ip=<default>: ok`, `ip="10.0.0.1": ok`, `ip="2001:db8::1": ok`, `ip="[::1]": ok`, `ip="broker.example": ok`},
			[]string{`set ip=<default> connection_creation_rate=100`, `set ip="10.0.0.1" connection_creation_rate=6`,
				`set ip="2001:db8::1" connection_creation_rate=7`, `set ip="[::1]" connection_creation_rate=8`, `set ip="broker.example" connection_creation_rate=9`}},
		{"entities Kafka refuses", []QuotaAlteration{
			alter(ops(qset(pbr, 1))),
			alter(ops(qset(pbr, 1)), qp("group", "g")),
			alter(ops(qset(pbr, 1)), qp(u, "")),
			alter(ops(qset(pbr, 1)), qp(cid, "")),
			alter(ops(qset(ccr, 1)), qp(ip, "")),
			alter(ops(qset(pbr, 1)), qp(u, "bob"), qp(ip, "10.0.0.2")),
			alter(ops(qset(pbr, 1)), qdefault(cid), qdefault(ip)),
			alter(ops(qset(ccr, 1)), qp(ip, "not an ip")),
			alter(ops(qset(ccr, 1)), qp(ip, "300.1.1.1")),
		}, []string{
			`: INVALID_REQUEST Invalid empty client quota entity`,
			`group="g": INVALID_REQUEST Unhandled client quota entity type: group`,
			`user="": INVALID_REQUEST Empty user not supported`,
			`client-id="": INVALID_REQUEST Empty client-id not supported`,
			`ip="": INVALID_REQUEST Empty ip not supported`,
			`user="bob" ip="10.0.0.2": INVALID_REQUEST Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId`,
			`client-id=<default> ip=<default>: INVALID_REQUEST Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId`,
			`ip="not an ip": INVALID_REQUEST not an ip is not a valid IP or resolvable host.`,
			`ip="300.1.1.1": INVALID_REQUEST 300.1.1.1 is not a valid IP or resolvable host.`,
		}, nil},
		{"keys and values Kafka refuses", []QuotaAlteration{
			alter(ops(qset("bogus", 1)), qp(u, "a")),
			alter(ops(qset(ccr, 1)), qp(u, "b")),
			alter(ops(qset(pbr, 1)), qp(ip, "10.0.0.3")),
			alter(ops(qset(pbr, 0)), qp(u, "c")),
			alter(ops(qset(rp, -1.5)), qp(u, "d")),
			alter(ops(qset(cmr, math.NaN())), qp(u, "e")),
			alter(ops(qset(pbr, 1024.5)), qp(u, "f")),
			alter(ops(qset(ccr, 2.25)), qdefault(ip)),
			alter(ops(qset(cbr, 1e19)), qp(u, "g")),
			alter(ops(qset(ccr, 3e9)), qp(ip, "10.0.0.4")),
			alter(ops(qset(rp, math.Inf(1))), qp(u, "h")),
			alter(ops(qset(pbr, math.Inf(1))), qp(u, "i")),
		}, []string{
			`user="a": INVALID_REQUEST Invalid configuration key bogus`,
			`user="b": INVALID_REQUEST Invalid configuration key connection_creation_rate`,
			`ip="10.0.0.3": INVALID_REQUEST Invalid configuration key producer_byte_rate`,
			`user="c": INVALID_REQUEST Quota producer_byte_rate must be greater than 0`,
			`user="d": INVALID_REQUEST Quota request_percentage must be greater than 0`,
			`user="e": INVALID_REQUEST Quota controller_mutation_rate must be greater than 0`,
			`user="f": INVALID_REQUEST producer_byte_rate cannot be a fractional value.`,
			`ip=<default>: INVALID_REQUEST connection_creation_rate cannot be a fractional value.`,
			`user="g": INVALID_REQUEST Proposed value for consumer_byte_rate is too large for a LONG.`,
			`ip="10.0.0.4": INVALID_REQUEST Proposed value for connection_creation_rate is too large for an INT.`,
			`user="h": INVALID_REQUEST Quota request_percentage must be a finite number`,
			`user="i": INVALID_REQUEST Proposed value for producer_byte_rate is too large for a LONG.`,
		}, nil},
		{"the largest long and int, and Kafka's tolerance of 1e-6",
			[]QuotaAlteration{alter(ops(qset(pbr, math.MaxInt64), qset(cbr, 1.0000001)), qp(u, "j")),
				alter(ops(qset(ccr, math.MaxInt32)), qp(ip, "10.0.0.5"))},
			[]string{`user="j": ok`, `ip="10.0.0.5": ok`},
			[]string{`set user="j" consumer_byte_rate=1.0000001`, `set user="j" producer_byte_rate=9.223372036854776e+18`,
				`set ip="10.0.0.5" connection_creation_rate=2.147483647e+09`}},
		{"one bad key refuses the entity's other keys; other entities commit",
			[]QuotaAlteration{alter(ops(qset(cbr, 5), qset(pbr, -1)), qp(u, "k")), alter(ops(qset(pbr, 5)), qp(u, "l"))},
			[]string{`user="k": INVALID_REQUEST Quota producer_byte_rate must be greater than 0`, `user="l": ok`},
			[]string{`set user="l" producer_byte_rate=5`}},
		// Kafka checks keys in its HashMap's order: with three keys in a
		// map sized three, "bogus" comes first.
		{"several bad keys: the first in Kafka's order is reported",
			[]QuotaAlteration{alter(ops(qset(rp, -1), qset(pbr, 0.5), qset("bogus", 1)), qp(u, "m"))},
			[]string{`user="m": INVALID_REQUEST Invalid configuration key bogus`}, nil},
		{"a key twice: Kafka reports the entity as a duplicate",
			[]QuotaAlteration{alter(ops(qset(pbr, 5), qset(pbr, 6)), qp(u, "n"))},
			[]string{`user="n": INVALID_REQUEST Ignoring duplicate entity ClientQuotaEntity(entries={user=n})`}, nil},
		// The first entry's changes commit although its result is the
		// second's refusal: what Kafka does.
		{"an entity twice", []QuotaAlteration{
			alter(ops(qset(pbr, 5)), qp(u, "o"), qdefault(cid)),
			alter(ops(qset(cbr, 6)), qdefault(cid), qp(u, "o"))},
			[]string{`client-id=<default> user="o": INVALID_REQUEST Ignoring duplicate entity ClientQuotaEntity(entries={client-id=null, user=o})`},
			[]string{`set user="o" client-id=<default> producer_byte_rate=5`}},
		{"a type twice in an entity keeps the last name",
			[]QuotaAlteration{alter(ops(qset(pbr, 7)), qp(u, "p"), qp(cid, "app"), qp(u, "q"))},
			[]string{`client-id="app" user="q": ok`},
			[]string{`set user="q" client-id="app" producer_byte_rate=7`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recs, res := planClientQuotas(quotaBase(t), c.alts, resolves)
			if diff := cmp.Diff(c.results, formatQuotaResults(res)); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.records, formatQuotaRecords(recs)); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			if _, err := quotaBase(t).Apply(recs...); err != nil {
				t.Errorf("the records do not apply: %v", err)
			}
		})
	}
}

// TestJavaHashOrder pins javaHashOrder to what java.util.HashMap (OpenJDK
// 17 and 21) iterates for the same keys and initial capacity.
func TestJavaHashOrder(t *testing.T) {
	cases := []struct {
		keys     string
		capacity int
		want     string
	}{
		{"user,client-id", 2, "client-id,user"},
		{"client-id,user", 4, "client-id,user"},
		{"user,client-id,ip", 3, "client-id,user,ip"},
		{"ip,user", 2, "user,ip"},
		{"user,foo", 2, "user,foo"},
		{"producer_byte_rate,consumer_byte_rate,request_percentage,controller_mutation_rate", 4,
			"producer_byte_rate,consumer_byte_rate,controller_mutation_rate,request_percentage"},
		{"request_percentage,producer_byte_rate,bogus", 3, "bogus,request_percentage,producer_byte_rate"},
		{"request_percentage,producer_byte_rate,bogus", 5, "bogus,producer_byte_rate,request_percentage"},
		{"request_percentage,producer_byte_rate,bogus", 0, "bogus,request_percentage,producer_byte_rate"},
		{"a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t", 20, "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t"},
		{"connection_creation_rate,producer_byte_rate,controller_mutation_rate,x,y,zz", 6,
			"connection_creation_rate,x,zz,y,producer_byte_rate,controller_mutation_rate"},
	}
	for _, c := range cases {
		got := strings.Join(javaHashOrder(strings.Split(c.keys, ","), c.capacity), ",")
		if got != c.want {
			t.Errorf("javaHashOrder(%s, %d) = %s, want %s", c.keys, c.capacity, got, c.want)
		}
	}
}

// TestAlterClientQuotas: through Raft, valid changes commit in one batch
// with the refusals beside them; validate_only answers the same and writes
// nothing; the quotas survive a restart from a snapshot.
func TestAlterClientQuotas(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	var lookups []string
	cfg.LookupHost = func(_ context.Context, host string) ([]string, error) {
		lookups = append(lookups, host)
		if host == "broker.example" {
			return []string{"192.0.2.1"}, nil
		}
		return nil, errors.New("no such host")
	}
	c, err := Open(ctx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	req := []QuotaAlteration{
		alter(ops(qset(metadata.QuotaProducerByteRate, 1048576), qset(metadata.QuotaRequestPercentage, 25)), qp("user", "alice")),
		alter(ops(qset(metadata.QuotaConsumerByteRate, 1024)), qdefault("user"), qdefault("client-id")),
		alter(ops(qset(metadata.QuotaConnectionCreationRate, 10)), qp("ip", "broker.example")),
		alter(ops(qset(metadata.QuotaConnectionCreationRate, 10)), qp("ip", "nowhere.invalid")),
		alter(ops(qset(metadata.QuotaProducerByteRate, -1)), qp("user", "bob")),
	}
	want := []string{`user="alice": ok`, `client-id=<default> user=<default>: ok`, `ip="broker.example": ok`,
		`ip="nowhere.invalid": INVALID_REQUEST nowhere.invalid is not a valid IP or resolvable host.`,
		`user="bob": INVALID_REQUEST Quota producer_byte_rate must be greater than 0`}
	before := c.Image()
	if diff := cmp.Diff(want, formatQuotaResults(c.AlterClientQuotas(ctx(t), req, true))); diff != "" {
		t.Errorf("validate only (-want +got):\n%s", diff)
	}
	if c.Image() != before || len(c.Image().ClientQuotas()) != 0 {
		t.Fatal("validate_only wrote")
	}
	if diff := cmp.Diff(want, formatQuotaResults(c.AlterClientQuotas(ctx(t), req, false))); diff != "" {
		t.Errorf("alter (-want +got):\n%s", diff)
	}
	// One batch: the three valid entities' four records moved the image
	// by one Raft entry.
	if got := c.Image().Offset() - before.Offset(); got != 1 {
		t.Errorf("the alteration took %d Raft entries, want 1", got)
	}
	wantQuotas := map[metadata.QuotaEntity]map[string]float64{
		{User: metadata.QuotaNamed("alice")}:                               {metadata.QuotaProducerByteRate: 1048576, metadata.QuotaRequestPercentage: 25},
		{User: metadata.QuotaDefault(), ClientID: metadata.QuotaDefault()}: {metadata.QuotaConsumerByteRate: 1024},
		{IP: metadata.QuotaNamed("broker.example")}:                        {metadata.QuotaConnectionCreationRate: 10},
	}
	if diff := cmp.Diff(wantQuotas, c.Image().ClientQuotas()); diff != "" {
		t.Fatalf("image (-want +got):\n%s", diff)
	}
	if !strings.Contains(strings.Join(lookups, ","), "nowhere.invalid") || strings.Contains(strings.Join(lookups, ","), "alice") {
		t.Errorf("looked up %v", lookups)
	}

	// A request that changes nothing writes nothing.
	same := c.Image()
	if diff := cmp.Diff([]string{`user="alice": ok`}, formatQuotaResults(c.AlterClientQuotas(ctx(t),
		[]QuotaAlteration{alter(ops(qset(metadata.QuotaProducerByteRate, 1048576), qremove(metadata.QuotaConsumerByteRate)), qp("user", "alice"))}, false))); diff != "" {
		t.Errorf("no-op (-want +got):\n%s", diff)
	}
	if c.Image() != same {
		t.Error("a request that changes nothing wrote")
	}

	if err := c.raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = open(t, testConfig(dir))
	if diff := cmp.Diff(wantQuotas, c.Image().ClientQuotas()); diff != "" {
		t.Errorf("after restart (-want +got):\n%s", diff)
	}
	if !maps.Equal(c.Image().ClientQuotas()[metadata.QuotaEntity{User: metadata.QuotaNamed("alice")}], wantQuotas[metadata.QuotaEntity{User: metadata.QuotaNamed("alice")}]) {
		t.Error("alice's quotas lost in the restart")
	}
}

// TestAlterClientQuotasTooManyRecords: past Kafka's 10000 records the
// whole request is refused, validate_only or not.
func TestAlterClientQuotasTooManyRecords(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	var req []QuotaAlteration
	for i := range 5001 {
		req = append(req, alter(ops(qset(metadata.QuotaProducerByteRate, 1), qset(metadata.QuotaConsumerByteRate, 1)), qp("user", strconv.Itoa(i))))
	}
	for _, validateOnly := range []bool{true, false} {
		res := c.AlterClientQuotas(ctx(t), req, validateOnly)
		if len(res) != 5001 || res[0].ErrorCode != kerr.PolicyViolation.Code || res[5000].ErrorMessage != "Unable to perform excessively large batch operation." {
			t.Fatalf("validate only %v: %d results, first %+v", validateOnly, len(res), res[0])
		}
	}
	if len(c.Image().ClientQuotas()) != 0 {
		t.Error("the refused request wrote")
	}
	if res := c.AlterClientQuotas(ctx(t), req[:5000], false); res[4999].ErrorCode != 0 || len(c.Image().ClientQuotas()) != 5000 {
		t.Errorf("10000 records: %+v, %d entities", res[4999], len(c.Image().ClientQuotas()))
	}
}
