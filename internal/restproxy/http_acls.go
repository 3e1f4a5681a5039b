package restproxy

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The ACL resources: search (DescribeACLs), create one or a batch
// (CreateACLs) and delete by filter (DeleteACLs), straight over the
// Kafka protocol so a filter is sent exactly as the query gave it.
func (p *Proxy) routeACLs(mux *http.ServeMux) {
	const acls = "/v3/clusters/{cluster_id}/acls"
	mux.HandleFunc("GET "+acls, p.listACLs)
	mux.HandleFunc("POST "+acls, p.createACL)
	mux.HandleFunc("POST "+acls+":batch", p.createACLs)
	mux.HandleFunc("DELETE "+acls, p.deleteACLs)
}

// The spec's enum names in Kafka's wire order (AclResourceType,
// AclPatternType, AclOperation, AclPermission): a name's index is its
// Kafka code.
var (
	aclResourceTypes = []string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN"}
	aclPatternTypes  = []string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}
	aclOperations    = []string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
		"CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE"}
	aclPermissions = []string{"UNKNOWN", "ANY", "DENY", "ALLOW"}
)

// enumName is a Kafka code's spec name (UNKNOWN past the list).
func enumName(names []string, code int8) string {
	if code < 0 || int(code) >= len(names) {
		return "UNKNOWN"
	}
	return names[code]
}

// enumCode parses a spec name, case-insensitively as Confluent's enums
// are; an empty one is def, anything not in the list a 400.
func enumCode(names []string, field, v string, def int8) (int8, *Error) {
	if v == "" {
		return def, nil
	}
	i := slices.Index(names, strings.ToUpper(v))
	if i < 0 {
		return 0, errBadRequest("Bad Request: " + field + ": " + v + " is not one of " + strings.Join(names, ", "))
	}
	return int8(i), nil
}

// concreteEnum parses an ACL's own value (a creation's): UNKNOWN, ANY and
// an empty value name no ACL, and are 400 here, as Kafka's AclBinding
// refuses them, rather than sent to the cluster.
func concreteEnum(names []string, field, v string) (int8, *Error) {
	code, e := enumCode(names, field, v, 0)
	if e != nil {
		return 0, e
	}
	if code <= 1 {
		return 0, errBadRequest("Bad Request: " + field + ": an ACL needs a value other than UNKNOWN or ANY")
	}
	return code, nil
}

// acl is one ACL (or a filter of them) in Kafka's codes; a nil name,
// principal or host matches any.
type acl struct {
	resourceType, patternType, operation, permission int8
	name, principal, host                            *string
}

type aclData struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Self string `json:"self"`
	} `json:"metadata"`
	ClusterID    string `json:"cluster_id"`
	ResourceType string `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  string `json:"pattern_type"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission"`
}

// aclQuery is an ACL's fields as the query string that finds it, in the
// spec's parameter order, as Confluent links an ACL.
func aclQuery(d aclData) string {
	q := []string{
		"resource_type=" + d.ResourceType, "resource_name=" + url.QueryEscape(d.ResourceName),
		"pattern_type=" + d.PatternType, "principal=" + url.QueryEscape(d.Principal),
		"host=" + url.QueryEscape(d.Host), "operation=" + d.Operation, "permission=" + d.Permission,
	}
	return strings.Join(q, "&")
}

func newACLData(req *http.Request, cluster string, rt, pt int8, name, principal, host string, op, perm int8) aclData {
	d := aclData{
		Kind:         "KafkaAcl",
		ClusterID:    cluster,
		ResourceType: enumName(aclResourceTypes, rt),
		ResourceName: name,
		PatternType:  enumName(aclPatternTypes, pt),
		Principal:    principal,
		Host:         host,
		Operation:    enumName(aclOperations, op),
		Permission:   enumName(aclPermissions, perm),
	}
	d.Metadata.Self = clusterSelf(req) + "/acls?" + aclQuery(d)
	return d
}

func sortACLs(data []aclData) {
	slices.SortFunc(data, func(a, b aclData) int {
		return cmp.Or(cmp.Compare(a.ResourceType, b.ResourceType), cmp.Compare(a.ResourceName, b.ResourceName),
			cmp.Compare(a.PatternType, b.PatternType), cmp.Compare(a.Principal, b.Principal),
			cmp.Compare(a.Host, b.Host), cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Permission, b.Permission))
	})
}

// aclFilter reads the query's filter. required names the enum parameters
// that must be given (DELETE's); the others default to ANY, as
// Confluent's search does.
func aclFilter(q url.Values, required bool) (acl, *Error) {
	var f acl
	var e *Error
	for _, p := range []struct {
		field string
		names []string
		dst   *int8
	}{
		{"resource_type", aclResourceTypes, &f.resourceType},
		{"pattern_type", aclPatternTypes, &f.patternType},
		{"operation", aclOperations, &f.operation},
		{"permission", aclPermissions, &f.permission},
	} {
		v := q.Get(p.field)
		if required && v == "" {
			return f, errBadRequest("Bad Request: " + p.field + " is required")
		}
		if *p.dst, e = enumCode(p.names, p.field, v, 1); e != nil { // 1 is ANY
			return f, e
		}
		if *p.dst == 0 {
			// UNKNOWN matches nothing and Kafka refuses it (its admin
			// client before sending); it never reaches the cluster.
			return f, errBadRequest("Bad Request: " + p.field + ": UNKNOWN is not a value a filter can take")
		}
	}
	opt := func(k string) *string {
		if v := q.Get(k); v != "" {
			return &v
		}
		return nil
	}
	f.name, f.principal, f.host = opt("resource_name"), opt("principal"), opt("host")
	return f, nil
}

// aclError maps an ACL request's Kafka error. A broker without an
// authorizer answers SECURITY_DISABLED, which Confluent's mapper answers
// as a bad request: the request cannot work against this cluster.
func aclError(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil {
		return nil
	}
	m := err.Error()
	if msg != nil && *msg != "" {
		m = *msg
	}
	switch err {
	case kerr.SecurityDisabled, kerr.InvalidRequest, kerr.UnsupportedVersion:
		return &Error{http.StatusBadRequest, codeKafkaBadRequest, m}
	}
	return err
}

func (p *Proxy) listACLs(w http.ResponseWriter, req *http.Request) {
	f, e := aclFilter(req.URL.Query(), false)
	if e != nil {
		writeError(w, e)
		return
	}
	ctx, cancel := p.opContext(req)
	defer cancel()
	md, err := p.clusterMetadata(ctx, req)
	if err != nil {
		writeError(w, err)
		return
	}
	r := kmsg.NewPtrDescribeACLsRequest()
	r.ResourceType, r.ResourceName, r.ResourcePatternType = kmsg.ACLResourceType(f.resourceType), f.name, kmsg.ACLResourcePatternType(f.patternType)
	r.Principal, r.Host = f.principal, f.host
	r.Operation, r.PermissionType = kmsg.ACLOperation(f.operation), kmsg.ACLPermissionType(f.permission)
	resp, err := r.RequestWith(ctx, p.kafka(ctx).client)
	if err == nil {
		err = aclError(resp.ErrorCode, resp.ErrorMessage)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	var data []aclData
	for _, res := range resp.Resources {
		for _, a := range res.ACLs {
			data = append(data, newACLData(req, md.Cluster, int8(res.ResourceType), int8(res.ResourcePatternType), res.ResourceName,
				a.Principal, a.Host, int8(a.Operation), int8(a.PermissionType)))
		}
	}
	sortACLs(data)
	self := clusterSelf(req) + "/acls"
	if req.URL.RawQuery != "" {
		self += "?" + req.URL.RawQuery
	}
	writeJSON(w, http.StatusOK, newList("KafkaAclList", self, data))
}

// createACLRequest is the spec's CreateAclRequestData: every field is
// required.
type createACLRequest struct {
	ResourceType *string `json:"resource_type"`
	ResourceName *string `json:"resource_name"`
	PatternType  *string `json:"pattern_type"`
	Principal    *string `json:"principal"`
	Host         *string `json:"host"`
	Operation    *string `json:"operation"`
	Permission   *string `json:"permission"`
}

func (c createACLRequest) creation() (kmsg.CreateACLsRequestCreation, *Error) {
	cr := kmsg.NewCreateACLsRequestCreation()
	for _, f := range []struct {
		name string
		v    *string
	}{
		{"resource_type", c.ResourceType}, {"resource_name", c.ResourceName}, {"pattern_type", c.PatternType},
		{"principal", c.Principal}, {"host", c.Host}, {"operation", c.Operation}, {"permission", c.Permission},
	} {
		if f.v == nil {
			return cr, errBadRequest("Bad Request: " + f.name + " is required")
		}
	}
	rt, e := concreteEnum(aclResourceTypes, "resource_type", *c.ResourceType)
	if e != nil {
		return cr, e
	}
	pt, e := concreteEnum(aclPatternTypes, "pattern_type", *c.PatternType)
	if e != nil {
		return cr, e
	}
	if pt == 2 { // MATCH is a filter's, not an ACL's
		return cr, errBadRequest("Bad Request: pattern_type: an ACL is LITERAL or PREFIXED, not MATCH")
	}
	op, e := concreteEnum(aclOperations, "operation", *c.Operation)
	if e != nil {
		return cr, e
	}
	perm, e := concreteEnum(aclPermissions, "permission", *c.Permission)
	if e != nil {
		return cr, e
	}
	cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = kmsg.ACLResourceType(rt), *c.ResourceName, kmsg.ACLResourcePatternType(pt)
	cr.Principal, cr.Host = *c.Principal, *c.Host
	cr.Operation, cr.PermissionType = kmsg.ACLOperation(op), kmsg.ACLPermissionType(perm)
	return cr, nil
}

func (p *Proxy) createACL(w http.ResponseWriter, req *http.Request) {
	var body createACLRequest
	if e := p.readBody(w, req, &body); e != nil {
		writeError(w, e)
		return
	}
	p.create(w, req, []createACLRequest{body})
}

func (p *Proxy) createACLs(w http.ResponseWriter, req *http.Request) {
	var body struct {
		Data []createACLRequest `json:"data"`
	}
	if e := p.readBody(w, req, &body); e != nil {
		writeError(w, e)
		return
	}
	if len(body.Data) == 0 {
		writeError(w, errBadRequest("Bad Request: data must name at least one ACL"))
		return
	}
	p.create(w, req, body.Data)
}

// create sends the creations in one CreateACLs request and answers 201
// with no body, as Confluent does; the first failed creation's error
// otherwise (Kafka may have made the others).
func (p *Proxy) create(w http.ResponseWriter, req *http.Request, acls []createACLRequest) {
	r := kmsg.NewPtrCreateACLsRequest()
	for _, a := range acls {
		cr, e := a.creation()
		if e != nil {
			writeError(w, e)
			return
		}
		r.Creations = append(r.Creations, cr)
	}
	ctx, cancel := p.opContext(req)
	defer cancel()
	if _, err := p.clusterMetadata(ctx, req); err != nil {
		writeError(w, err)
		return
	}
	resp, err := r.RequestWith(ctx, p.kafka(ctx).client)
	if err == nil {
		for _, res := range resp.Results {
			if err = aclError(res.ErrorCode, res.ErrorMessage); err != nil {
				break
			}
		}
	}
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusCreated)
}

// deleteACLs deletes what the filter matches and answers those ACLs.
func (p *Proxy) deleteACLs(w http.ResponseWriter, req *http.Request) {
	f, e := aclFilter(req.URL.Query(), true)
	if e != nil {
		writeError(w, e)
		return
	}
	ctx, cancel := p.opContext(req)
	defer cancel()
	md, err := p.clusterMetadata(ctx, req)
	if err != nil {
		writeError(w, err)
		return
	}
	r := kmsg.NewPtrDeleteACLsRequest()
	df := kmsg.NewDeleteACLsRequestFilter()
	df.ResourceType, df.ResourceName, df.ResourcePatternType = kmsg.ACLResourceType(f.resourceType), f.name, kmsg.ACLResourcePatternType(f.patternType)
	df.Principal, df.Host = f.principal, f.host
	df.Operation, df.PermissionType = kmsg.ACLOperation(f.operation), kmsg.ACLPermissionType(f.permission)
	r.Filters = append(r.Filters, df)
	resp, err := r.RequestWith(ctx, p.kafka(ctx).client)
	data := []aclData{}
	if err == nil {
		for _, res := range resp.Results {
			if err = aclError(res.ErrorCode, res.ErrorMessage); err != nil {
				break
			}
			for _, m := range res.MatchingACLs {
				data = append(data, newACLData(req, md.Cluster, int8(m.ResourceType), int8(m.ResourcePatternType), m.ResourceName,
					m.Principal, m.Host, int8(m.Operation), int8(m.PermissionType)))
			}
		}
	}
	if err != nil {
		writeError(w, err)
		return
	}
	sortACLs(data)
	writeJSON(w, http.StatusOK, struct {
		Data []aclData `json:"data"`
	}{data})
}
