package console

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The security page: ACLs (DescribeACLs, CreateACLs, DeleteACLs), SCRAM
// users (DescribeUserSCRAMCredentials, AlterUserSCRAMCredentials) and
// client quotas (DescribeClientQuotas, AlterClientQuotas), one tab each.
// Every deletion asks first: a POST without confirm=yes answers a page
// that repeats the form with it.

// securityPageSize is how many rows one page of a tab shows.
const securityPageSize = 100

// routesSecurity registers the security page's tabs and actions.
func (c *Console) routesSecurity(mux *http.ServeMux) {
	mux.HandleFunc("GET /security", c.serveSecurityACLs)
	mux.HandleFunc("GET /security/acls", c.serveSecurityACLs)
	mux.HandleFunc("POST /security/acls/create", c.serveSecurityACLCreate)
	mux.HandleFunc("POST /security/acls/delete", c.serveSecurityACLDelete)
	mux.HandleFunc("GET /security/users", c.serveSecurityUsers)
	mux.HandleFunc("POST /security/users/upsert", c.serveSecurityUserUpsert)
	mux.HandleFunc("POST /security/users/delete", c.serveSecurityUserDelete)
	mux.HandleFunc("GET /security/quotas", c.serveSecurityQuotas)
	mux.HandleFunc("POST /security/quotas/set", c.serveSecurityQuotaSet)
	mux.HandleFunc("POST /security/quotas/remove", c.serveSecurityQuotaRemove)
}

// securityChoice is one option of a select: the wire name and its value.
type securityChoice struct {
	Name  string
	Value int8
}

// The names the forms offer, as Kafka's tools spell them. "ANY" and
// "MATCH" only filter; a binding is never created with them.
var (
	securityResourceTypes = []securityChoice{
		{"TOPIC", int8(kmsg.ACLResourceTypeTopic)}, {"GROUP", int8(kmsg.ACLResourceTypeGroup)},
		{"CLUSTER", int8(kmsg.ACLResourceTypeCluster)}, {"TRANSACTIONAL_ID", int8(kmsg.ACLResourceTypeTransactionalId)},
		{"DELEGATION_TOKEN", int8(kmsg.ACLResourceTypeDelegationToken)}, {"USER", int8(kmsg.ACLResourceTypeUser)},
	}
	securityPatternTypes = []securityChoice{
		{"LITERAL", int8(kmsg.ACLResourcePatternTypeLiteral)}, {"PREFIXED", int8(kmsg.ACLResourcePatternTypePrefixed)},
	}
	securityOperations = []securityChoice{
		{"ALL", int8(kmsg.ACLOperationAll)}, {"READ", int8(kmsg.ACLOperationRead)}, {"WRITE", int8(kmsg.ACLOperationWrite)},
		{"CREATE", int8(kmsg.ACLOperationCreate)}, {"DELETE", int8(kmsg.ACLOperationDelete)}, {"ALTER", int8(kmsg.ACLOperationAlter)},
		{"DESCRIBE", int8(kmsg.ACLOperationDescribe)}, {"CLUSTER_ACTION", int8(kmsg.ACLOperationClusterAction)},
		{"DESCRIBE_CONFIGS", int8(kmsg.ACLOperationDescribeConfigs)}, {"ALTER_CONFIGS", int8(kmsg.ACLOperationAlterConfigs)},
		{"IDEMPOTENT_WRITE", int8(kmsg.ACLOperationIdempotentWrite)}, {"CREATE_TOKENS", int8(kmsg.ACLOperationCreateTokens)},
		{"DESCRIBE_TOKENS", int8(kmsg.ACLOperationDescribeTokens)},
	}
	securityPermissions = []securityChoice{
		{"ALLOW", int8(kmsg.ACLPermissionTypeAllow)}, {"DENY", int8(kmsg.ACLPermissionTypeDeny)},
	}
)

// securityPick finds name (any case) among choices; what names a field
// for the error.
func securityPick(choices []securityChoice, what, name string) (int8, error) {
	name = strings.ToUpper(strings.TrimSpace(name))
	for _, ch := range choices {
		if ch.Name == name {
			return ch.Value, nil
		}
	}
	names := make([]string, len(choices))
	for i, ch := range choices {
		names[i] = ch.Name
	}
	if name == "" {
		return 0, badRequest("choose a %s (%s)", what, strings.Join(names, ", "))
	}
	return 0, badRequest("unknown %s %q: use one of %s", what, name, strings.Join(names, ", "))
}

// securityTab is the tab strip's state.
type securityTab struct {
	Tab      string // acls, users or quotas
	Done     string // the notice of the action just done
	Disabled bool   // the cluster has no authorizer (ACLs only)
}

// securityACL is one binding, as the list shows it and the delete form
// sends it back.
type securityACL struct {
	ResourceType, Name, Pattern, Principal, Host, Operation, Permission string
	Group                                                               string // the group heading this row starts, "" when it continues one
}

type securityACLsView struct {
	securityTab
	View                                                             string // "resource" or "principal"
	FPrincipal, FType, FName, FPattern                               string
	Rows                                                             []securityACL
	Pager                                                            sharedPager
	ResourceTypes, PatternTypes, Operations, Permissions, AllPattern []securityChoice
}

// serveSecurityACLs lists the ACLs the filter matches (one DescribeACLs),
// grouped by resource or by principal, a page at a time.
func (c *Console) serveSecurityACLs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := securityACLsView{securityTab: securityTab{Tab: "acls", Done: q.Get("done")}, View: q.Get("view"),
		FPrincipal: strings.TrimSpace(q.Get("principal")), FType: strings.ToUpper(q.Get("type")),
		FName: strings.TrimSpace(q.Get("name")), FPattern: strings.ToUpper(q.Get("pattern")),
		ResourceTypes: securityResourceTypes, PatternTypes: securityPatternTypes, Operations: securityOperations, Permissions: securityPermissions,
		AllPattern: append([]securityChoice{{"MATCH", int8(kmsg.ACLResourcePatternTypeMatch)}}, securityPatternTypes...)}
	if v.View != "principal" {
		v.View = "resource"
	}
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType = kmsg.ACLResourceTypeAny
	req.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	req.Operation = kmsg.ACLOperationAny
	req.PermissionType = kmsg.ACLPermissionTypeAny
	if v.FType != "" && v.FType != "ANY" {
		t, err := securityPick(securityResourceTypes, "resource type", v.FType)
		if err != nil {
			c.fail(w, r, nil, err)
			return
		}
		req.ResourceType = kmsg.ACLResourceType(t)
	}
	if v.FPattern != "" && v.FPattern != "ANY" {
		p, err := securityPick(v.AllPattern, "pattern type", v.FPattern)
		if err != nil {
			c.fail(w, r, nil, err)
			return
		}
		req.ResourcePatternType = kmsg.ACLResourcePatternType(p)
	}
	if v.FName != "" {
		req.ResourceName = &v.FName
	}
	if v.FPrincipal != "" {
		if _, err := securityPrincipal(v.FPrincipal); err != nil {
			c.fail(w, r, nil, err)
			return
		}
		req.Principal = &v.FPrincipal
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	resp, err := req.RequestWith(ctx, c.client(r))
	if err == nil {
		err = securityMsg(resp.ErrorCode, resp.ErrorMessage)
	}
	switch {
	case errors.Is(err, kerr.SecurityDisabled):
		v.Disabled = true
	case err != nil:
		c.fail(w, r, nil, err)
		return
	default:
		var all []securityACL
		for _, res := range resp.Resources {
			for _, a := range res.ACLs {
				all = append(all, securityACL{ResourceType: res.ResourceType.String(), Name: res.ResourceName,
					Pattern: res.ResourcePatternType.String(), Principal: a.Principal, Host: a.Host,
					Operation: a.Operation.String(), Permission: a.PermissionType.String()})
			}
		}
		byPrincipal := v.View == "principal"
		sort.Slice(all, func(i, j int) bool {
			a, b := securityACLKey(all[i], byPrincipal), securityACLKey(all[j], byPrincipal)
			return a < b
		})
		v.Pager = sharedRequestPage(r.URL, len(all), securityPageSize)
		rows := all[v.Pager.From:v.Pager.To]
		for i := range rows {
			g := securityACLGroup(rows[i], byPrincipal)
			if i == 0 || g != securityACLGroup(rows[i-1], byPrincipal) {
				rows[i].Group = g
			}
		}
		v.Rows = rows
	}
	c.renderSection(w, r, "security", "security", v)
}

// securityACLKey orders the bindings by their group, then the rest.
func securityACLKey(a securityACL, byPrincipal bool) string {
	res := a.ResourceType + "\x00" + a.Name + "\x00" + a.Pattern
	rest := a.Host + "\x00" + a.Operation + "\x00" + a.Permission
	if byPrincipal {
		return a.Principal + "\x01" + res + "\x01" + rest
	}
	return res + "\x01" + a.Principal + "\x01" + rest
}

func securityACLGroup(a securityACL, byPrincipal bool) string {
	if byPrincipal {
		return a.Principal
	}
	return a.ResourceType + " " + a.Name + " (" + a.Pattern + ")"
}

// securityPrincipal checks a principal is Type:name with both parts
// (User:alice, or User:* for everyone).
func securityPrincipal(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", badRequest("the principal is empty: write it as User:name (User:* for every user)")
	}
	typ, name, ok := strings.Cut(s, ":")
	if !ok || typ == "" || name == "" {
		return "", badRequest("principal %q is not Type:name (User:alice, or User:* for every user)", s)
	}
	return s, nil
}

// securityACLForm reads one binding from a form: every field required
// and none a filter's wildcard, so it names exactly one ACL.
func securityACLForm(r *http.Request) (securityACL, kmsg.DeleteACLsRequestFilter, error) {
	f := kmsg.NewDeleteACLsRequestFilter()
	a := securityACL{Name: strings.TrimSpace(r.PostFormValue("name")), Host: strings.TrimSpace(r.PostFormValue("host"))}
	var err error
	if a.Principal, err = securityPrincipal(r.PostFormValue("principal")); err != nil {
		return a, f, err
	}
	if a.Host == "" {
		a.Host = "*"
	}
	pick := func(choices []securityChoice, what, field string, out *string) int8 {
		if err != nil {
			return 0
		}
		var v int8
		v, err = securityPick(choices, what, r.PostFormValue(field))
		*out = strings.ToUpper(strings.TrimSpace(r.PostFormValue(field)))
		return v
	}
	rt := pick(securityResourceTypes, "resource type", "type", &a.ResourceType)
	pt := pick(securityPatternTypes, "pattern type", "pattern", &a.Pattern)
	op := pick(securityOperations, "operation", "operation", &a.Operation)
	perm := pick(securityPermissions, "permission", "permission", &a.Permission)
	if err != nil {
		return a, f, err
	}
	if kmsg.ACLResourceType(rt) == kmsg.ACLResourceTypeCluster {
		if a.Name == "" {
			a.Name = "kafka-cluster"
		}
		if a.Name != "kafka-cluster" {
			return a, f, badRequest("the CLUSTER resource is named kafka-cluster, not %q", a.Name)
		}
	}
	if a.Name == "" {
		return a, f, badRequest("the resource name is empty: name the %s (* for all)", strings.ToLower(a.ResourceType))
	}
	f.ResourceType = kmsg.ACLResourceType(rt)
	f.ResourceName = &a.Name
	f.ResourcePatternType = kmsg.ACLResourcePatternType(pt)
	f.Principal = &a.Principal
	f.Host = &a.Host
	f.Operation = kmsg.ACLOperation(op)
	f.PermissionType = kmsg.ACLPermissionType(perm)
	return a, f, nil
}

// securityKafkaErr says SECURITY_DISABLED in words and carries a
// response's message with its error.
func securityKafkaErr(err error) error {
	if errors.Is(err, kerr.SecurityDisabled) {
		return statusErr(http.StatusConflict, fmt.Errorf("this cluster has no authorizer, so it keeps no ACLs (set authorizer.class.name on the brokers): %w", err))
	}
	return err
}

// securityMsg joins a Kafka error with the message the broker sent.
func securityMsg(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil {
		return nil
	}
	if msg != nil && *msg != "" {
		err = fmt.Errorf("%w: %s", err, *msg)
	}
	return securityKafkaErr(err)
}

// serveSecurityACLCreate creates one ACL (CreateACLs).
func (c *Console) serveSecurityACLCreate(w http.ResponseWriter, r *http.Request) {
	a, f, err := securityACLForm(r)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	req := kmsg.NewPtrCreateACLsRequest()
	cr := kmsg.NewCreateACLsRequestCreation()
	cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = f.ResourceType, *f.ResourceName, f.ResourcePatternType
	cr.Principal, cr.Host, cr.Operation, cr.PermissionType = *f.Principal, *f.Host, f.Operation, f.PermissionType
	req.Creations = append(req.Creations, cr)
	ctx, cancel := c.ctx(r)
	defer cancel()
	resp, err := req.RequestWith(ctx, c.client(r))
	if err == nil && len(resp.Results) != 1 {
		err = fmt.Errorf("the broker answered %d results for one ACL", len(resp.Results))
	}
	if err == nil {
		err = securityMsg(resp.Results[0].ErrorCode, resp.Results[0].ErrorMessage)
	}
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	http.Redirect(w, r, "/security/acls?done="+urlQueryEscape(fmt.Sprintf("Created: %s %s %s on %s %s (%s) from %s",
		a.Principal, a.Permission, a.Operation, a.ResourceType, a.Name, a.Pattern, a.Host)), http.StatusSeeOther)
}

// securityConfirmView is a deletion's question: the form again, with
// confirm=yes.
type securityConfirmView struct {
	securityTab
	Action string
	Box    sharedConfirm
}

// securityConfirm answers the confirmation page of a deletion unless
// the form carries confirm=yes; it reports whether to go on.
func (c *Console) securityConfirm(w http.ResponseWriter, r *http.Request, tab, question, back string, fields ...string) bool {
	if r.PostFormValue("confirm") == "yes" {
		return true
	}
	v := securityConfirmView{securityTab: securityTab{Tab: tab}, Action: r.URL.Path, Box: sharedConfirm{Question: question,
		Fields: sharedFormFields(r, fields...), Yes: "Yes, delete", Back: back, BackLabel: "Cancel"}}
	c.renderSection(w, r, "security_confirm", "security", v)
	return false
}

// serveSecurityACLDelete deletes exactly one ACL (DeleteACLs with a
// filter naming every field), after a confirmation.
func (c *Console) serveSecurityACLDelete(w http.ResponseWriter, r *http.Request) {
	a, f, err := securityACLForm(r)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	desc := fmt.Sprintf("%s %s %s on %s %s (%s) from %s", a.Principal, a.Permission, a.Operation, a.ResourceType, a.Name, a.Pattern, a.Host)
	if !c.securityConfirm(w, r, "acls", "Delete the ACL "+desc+"?", "/security/acls",
		"principal", "host", "type", "name", "pattern", "operation", "permission") {
		return
	}
	req := kmsg.NewPtrDeleteACLsRequest()
	req.Filters = append(req.Filters, f)
	ctx, cancel := c.ctx(r)
	defer cancel()
	resp, err := req.RequestWith(ctx, c.client(r))
	if err == nil && len(resp.Results) != 1 {
		err = fmt.Errorf("the broker answered %d results for one filter", len(resp.Results))
	}
	n := 0
	if err == nil {
		res := resp.Results[0]
		err = securityMsg(res.ErrorCode, res.ErrorMessage)
		for _, m := range res.MatchingACLs {
			if err == nil {
				err = securityMsg(m.ErrorCode, m.ErrorMessage)
			}
			n++
		}
	}
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	done := "Deleted: " + desc
	if n == 0 {
		done = "No such ACL (already deleted?): " + desc
	}
	http.Redirect(w, r, "/security/acls?done="+urlQueryEscape(done), http.StatusSeeOther)
}

func init() {
	registerFuncs(template.FuncMap{"securityTabs": securityTabsHTML})
}

// securityTabsHTML is the tab strip of the security page, tab lit.
func securityTabsHTML(tab string) template.HTML {
	var b strings.Builder
	b.WriteString(`<ul class="tabs" id="security-tabs">`)
	for _, t := range [][3]string{{"acls", "/security/acls", "ACLs"}, {"users", "/security/users", "SCRAM users"}, {"quotas", "/security/quotas", "Client quotas"}} {
		cur := ""
		if t[0] == tab {
			cur = ` aria-current="page"`
		}
		fmt.Fprintf(&b, `<li><a href="%s"%s>%s</a></li>`, t[1], cur, t[2])
	}
	b.WriteString(`</ul>`)
	return template.HTML(b.String()) // constant links and labels only
}
