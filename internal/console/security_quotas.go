package console

import (
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Client quotas: each entity (a user, a client ID, both, or an IP; each
// possibly the default) with its rates.

// securityQuotaKeys are the quotas Kafka knows, in the table's order.
var securityQuotaKeys = []string{"producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate", "connection_creation_rate"}

// securityQuotaEntityTypes are the entity types, as the forms' fields
// name them: the value field, the "default" checkbox field, the label.
var securityQuotaEntityTypes = []struct{ Type, Field, Default string }{
	{"user", "user", "user_default"},
	{"client-id", "client_id", "client_id_default"},
	{"ip", "ip", "ip_default"},
}

type securityQuota struct {
	Entity string            // user=alice, client-id=<default>, ...
	Fields [][2]string       // the entity as form fields, for the remove form
	Values map[string]string // by key, formatted
	Keys   []string          // the keys it sets, for the remove form
}

type securityQuotasView struct {
	securityTab
	Quotas []securityQuota
	Keys   []string
	Pager  sharedPager
}

// serveSecurityQuotas lists every client quota (one DescribeClientQuotas
// matching every entity).
func (c *Console) serveSecurityQuotas(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := securityQuotasView{securityTab: securityTab{Tab: "quotas", Done: q.Get("done")}, Keys: securityQuotaKeys}
	ctx, cancel := c.ctx(r)
	defer cancel()
	described, err := c.admin(r).DescribeClientQuotas(ctx, false, nil)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	all := make([]securityQuota, 0, len(described))
	for _, d := range described {
		sq := securityQuota{Values: map[string]string{}}
		ent := make([]string, 0, len(d.Entity))
		comps := append(kadm.ClientQuotaEntity(nil), d.Entity...)
		sort.Slice(comps, func(i, j int) bool { return comps[i].Type < comps[j].Type })
		for _, e := range comps {
			ent = append(ent, e.String())
			for _, et := range securityQuotaEntityTypes {
				if et.Type != e.Type {
					continue
				}
				if e.Name == nil {
					sq.Fields = append(sq.Fields, [2]string{et.Default, "on"})
				} else {
					sq.Fields = append(sq.Fields, [2]string{et.Field, *e.Name})
				}
			}
		}
		sq.Entity = strings.Join(ent, ", ")
		for _, val := range d.Values {
			sq.Values[val.Key] = strconv.FormatFloat(val.Value, 'f', -1, 64)
			sq.Keys = append(sq.Keys, val.Key)
		}
		sort.Strings(sq.Keys)
		all = append(all, sq)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Entity < all[j].Entity })
	v.Pager = sharedRequestPage(r.URL, len(all), securityPageSize)
	v.Quotas = all[v.Pager.From:v.Pager.To]
	c.renderSection(w, r, "security_quotas", "security", v)
}

// securityQuotaEntity reads the entity of a form: a user and/or a client
// ID, or an IP, each named or the default.
func securityQuotaEntity(r *http.Request) (kadm.ClientQuotaEntity, string, error) {
	var ent kadm.ClientQuotaEntity
	var words []string
	for _, et := range securityQuotaEntityTypes {
		name := strings.TrimSpace(r.PostFormValue(et.Field))
		def := r.PostFormValue(et.Default) != ""
		switch {
		case def && name != "":
			return nil, "", badRequest("%s: give a name or tick the default, not both", et.Type)
		case def:
			ent = append(ent, kadm.ClientQuotaEntityComponent{Type: et.Type})
			words = append(words, et.Type+"=<default>")
		case name != "":
			ent = append(ent, kadm.ClientQuotaEntityComponent{Type: et.Type, Name: &name})
			words = append(words, et.Type+"="+name)
		}
	}
	if len(ent) == 0 {
		return nil, "", badRequest("name the entity: a user, a client ID, both, or an IP (or tick a default)")
	}
	for _, e := range ent {
		if e.Type == "ip" && len(ent) > 1 {
			return nil, "", badRequest("an IP quota stands alone: it cannot be combined with a user or a client ID")
		}
	}
	return ent, strings.Join(words, ", "), nil
}

// securityQuotaAlter runs one AlterClientQuotas and answers its error.
func (c *Console) securityQuotaAlter(r *http.Request, ent kadm.ClientQuotaEntity, ops []kadm.AlterClientQuotaOp) error {
	ctx, cancel := c.ctx(r)
	defer cancel()
	res, err := c.admin(r).AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: ent, Ops: ops}})
	if err != nil {
		return err
	}
	for _, a := range res {
		if a.Err != nil {
			return securityAnswerErr(a.Err, a.ErrMessage)
		}
	}
	return nil
}

// serveSecurityQuotaSet sets one quota of an entity (AlterClientQuotas).
func (c *Console) serveSecurityQuotaSet(w http.ResponseWriter, r *http.Request) {
	ent, desc, err := securityQuotaEntity(r)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	key := r.PostFormValue("key")
	if !securityKnownQuota(key) {
		c.fail(w, r, nil, badRequest("unknown quota %q: use one of %s", key, strings.Join(securityQuotaKeys, ", ")))
		return
	}
	if key == "connection_creation_rate" && (len(ent) != 1 || ent[0].Type != "ip") {
		c.fail(w, r, nil, badRequest("connection_creation_rate applies to an IP only"))
		return
	}
	if key != "connection_creation_rate" && ent[0].Type == "ip" {
		c.fail(w, r, nil, badRequest("an IP takes connection_creation_rate only, not %s", key))
		return
	}
	s := strings.TrimSpace(r.PostFormValue("value"))
	val, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || math.IsNaN(val) || math.IsInf(val, 0):
		c.fail(w, r, nil, badRequest("quota value %q is not a number", s))
		return
	case val < 0:
		c.fail(w, r, nil, badRequest("quota value %s is negative: a rate is 0 or more", s))
		return
	case key == "request_percentage" && val == 0:
		// Kafka refuses a zero request percentage; say so before it does.
		c.fail(w, r, nil, badRequest("request_percentage must be above 0"))
		return
	case (key == "producer_byte_rate" || key == "consumer_byte_rate") && val != math.Trunc(val):
		c.fail(w, r, nil, badRequest("%s is a whole number of bytes per second, not %s", key, s))
		return
	}
	if err := c.securityQuotaAlter(r, ent, []kadm.AlterClientQuotaOp{{Key: key, Value: val}}); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	http.Redirect(w, r, "/security/quotas?done="+urlQueryEscape(fmt.Sprintf("Set %s=%s for %s", key, s, desc)), http.StatusSeeOther)
}

func securityKnownQuota(key string) bool {
	for _, k := range securityQuotaKeys {
		if k == key {
			return true
		}
	}
	return false
}

// serveSecurityQuotaRemove removes the named quotas of an entity (every
// key field the form has), after a confirmation.
func (c *Console) serveSecurityQuotaRemove(w http.ResponseWriter, r *http.Request) {
	ent, desc, err := securityQuotaEntity(r)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	keys := r.PostForm["key"]
	if len(keys) == 0 {
		c.fail(w, r, nil, badRequest("name a quota to remove"))
		return
	}
	var ops []kadm.AlterClientQuotaOp
	for _, k := range keys {
		if !securityKnownQuota(k) {
			c.fail(w, r, nil, badRequest("unknown quota %q: use one of %s", k, strings.Join(securityQuotaKeys, ", ")))
			return
		}
		ops = append(ops, kadm.AlterClientQuotaOp{Key: k, Remove: true})
	}
	fields := []string{"key"}
	for _, et := range securityQuotaEntityTypes {
		fields = append(fields, et.Field, et.Default)
	}
	if !c.securityConfirm(w, r, "quotas", fmt.Sprintf("Remove %s of %s?", strings.Join(keys, ", "), desc), "/security/quotas", fields...) {
		return
	}
	if err := c.securityQuotaAlter(r, ent, ops); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	http.Redirect(w, r, "/security/quotas?done="+urlQueryEscape(fmt.Sprintf("Removed %s of %s", strings.Join(keys, ", "), desc)), http.StatusSeeOther)
}
