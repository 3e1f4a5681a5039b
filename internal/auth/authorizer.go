package auth

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Authorizer decides what a principal may do, with the rules of Kafka's
// StandardAuthorizer (KRaft's authorizer.class.name
// org.apache.kafka.metadata.authorizer.StandardAuthorizer):
//
//   - a super user may do everything;
//   - an ACL applies to a resource by its literal name, by the wildcard
//     literal "*", or by a prefix of the name (PREFIXED);
//   - it applies to a principal by Type:Name or User:*, and to a client by
//     its address or *;
//   - any applying DENY wins over every ALLOW;
//   - an ALLOW of READ, WRITE, DELETE or ALTER also allows DESCRIBE, one
//     of ALTER_CONFIGS also allows DESCRIBE_CONFIGS, and ALL allows (or
//     denies) every operation; a DENY denies only its own operation (and
//     ALL every one), so a DENY of DESCRIBE leaves READ allowed;
//   - when no ACL at all applies to the resource, whoever asks,
//     allow.everyone.if.no.acl.found decides; when some do but none
//     allows, the answer is no.
//
// It is built from one immutable ACL set and never changes, so any number
// of connections may share it; the broker builds a new one from each
// metadata image whose ACLs changed.
//
// A nil *Authorizer is a broker without authorizer.class.name: every
// check allows everything, as Kafka does when it has no authorizer, and
// ACLs and Describe hold nothing; the ACL APIs then answer
// SECURITY_DISABLED.
type Authorizer struct {
	acls           []ACL
	superUsers     []string
	allowIfNoACLs  bool
	byResourceType [kmsg.ACLResourceTypeUser + 1]resourceIndex
}

// AuthorizerOptions are the authorizer's broker configurations.
type AuthorizerOptions struct {
	// SuperUsers is super.users: principals allowed everything whatever
	// the ACLs say. Default none.
	SuperUsers []Principal
	// AllowEveryoneIfNoACLFound is allow.everyone.if.no.acl.found: allow
	// an operation on a resource no ACL applies to. Default false (deny).
	AllowEveryoneIfNoACLFound bool
}

// resourceIndex holds the ACLs of one resource type by how their
// pattern finds a resource name, so a check reads only the ACLs that
// apply to the name instead of scanning them all.
type resourceIndex struct {
	literal  map[string][]aclEntry
	wildcard []aclEntry
	prefixed map[string][]aclEntry
	// prefixLens are the distinct lengths of the prefixed names, in
	// ascending order: a name's applying prefixes are found by one map
	// lookup per length, not per character.
	prefixLens []int
	// all is every ACL of the type, for AuthorizeAny.
	all []indexedACL
}

// aclEntry is the part of an ACL a check compares, parsed once.
type aclEntry struct {
	principalType string
	principalName string
	// validPrincipal is false for a principal without a colon, which
	// applies to no one (Kafka fails the whole check on one).
	validPrincipal bool
	host           string
	operation      kmsg.ACLOperation
	// allow: Kafka's StandardAuthorizer reads every permission but ALLOW
	// as DENY.
	allow bool
}

type indexedACL struct {
	ACL
	aclEntry
}

// NewAuthorizer builds an authorizer over acls, each distinct ACL once.
// The ACLs are expected to have passed Validate; one whose resource or
// pattern type cannot be stored applies to nothing but is still listed
// by ACLs and Describe.
func NewAuthorizer(acls []ACL, opts AuthorizerOptions) *Authorizer {
	a := &Authorizer{allowIfNoACLs: opts.AllowEveryoneIfNoACLFound}
	for _, p := range opts.SuperUsers {
		a.superUsers = append(a.superUsers, p.String())
	}
	seen := make(map[ACL]bool, len(acls))
	for _, acl := range acls {
		if seen[acl] {
			continue
		}
		seen[acl] = true
		a.acls = append(a.acls, acl)
		a.index(acl)
	}
	for i := range a.byResourceType {
		ix := &a.byResourceType[i]
		slices.Sort(ix.prefixLens)
		ix.prefixLens = slices.Compact(ix.prefixLens)
	}
	return a
}

func (a *Authorizer) index(acl ACL) {
	if !storedResourceType(acl.ResourceType) {
		return
	}
	ix := &a.byResourceType[acl.ResourceType]
	e := newACLEntry(acl)
	switch {
	case acl.PatternType == kmsg.ACLResourcePatternTypeLiteral && acl.ResourceName == WildcardResource:
		ix.wildcard = append(ix.wildcard, e)
	case acl.PatternType == kmsg.ACLResourcePatternTypeLiteral:
		ix.literal = addACLEntry(ix.literal, acl.ResourceName, e)
	case acl.PatternType == kmsg.ACLResourcePatternTypePrefixed:
		ix.prefixed = addACLEntry(ix.prefixed, acl.ResourceName, e)
		ix.prefixLens = append(ix.prefixLens, len(acl.ResourceName))
	default:
		return
	}
	ix.all = append(ix.all, indexedACL{ACL: acl, aclEntry: e})
}

func addACLEntry(m map[string][]aclEntry, name string, e aclEntry) map[string][]aclEntry {
	if m == nil {
		m = make(map[string][]aclEntry)
	}
	m[name] = append(m[name], e)
	return m
}

func newACLEntry(acl ACL) aclEntry {
	t, n, ok := strings.Cut(acl.Principal, ":")
	return aclEntry{
		principalType:  t,
		principalName:  n,
		validPrincipal: ok,
		host:           acl.Host,
		operation:      acl.Operation,
		allow:          acl.Permission == kmsg.ACLPermissionTypeAllow,
	}
}

// authzQuery is one question to the authorizer, passed by pointer so the
// hot path copies nothing.
type authzQuery struct {
	principal Principal
	host      string
	operation kmsg.ACLOperation
}

// appliesToWho reports whether the entry names the principal (or every
// principal) and the client's host (or every host).
func (e *aclEntry) appliesToWho(r *authzQuery) bool {
	if !e.validPrincipal {
		return false
	}
	wildcard := e.principalType == UserType && e.principalName == "*"
	if !wildcard && (e.principalType != r.principal.Type || e.principalName != r.principal.Name) {
		return false
	}
	return e.host == WildcardHost || e.host == r.host
}

// coversOperation reports whether the entry decides the operation,
// including the operations an ALLOW implies.
func (e *aclEntry) coversOperation(op kmsg.ACLOperation) bool {
	if e.operation == kmsg.ACLOperationAll || e.operation == op {
		return true
	}
	if !e.allow {
		return false
	}
	switch op {
	case kmsg.ACLOperationDescribe:
		return impliesDescribe(e.operation)
	case kmsg.ACLOperationDescribeConfigs:
		return e.operation == kmsg.ACLOperationAlterConfigs
	}
	return false
}

func impliesDescribe(op kmsg.ACLOperation) bool {
	switch op {
	case kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationDelete, kmsg.ACLOperationAlter:
		return true
	}
	return false
}

// aclVerdict gathers what the ACLs applying to one resource say.
type aclVerdict struct {
	// resourceHasACLs: some ACL applies to the resource, whoever it
	// names; only without one does allow.everyone.if.no.acl.found count.
	resourceHasACLs bool
	allowed         bool
}

// add weighs the entries of one pattern and reports a DENY, which ends
// the check.
func (v *aclVerdict) add(es []aclEntry, r *authzQuery) (denied bool) {
	for i := range es {
		e := &es[i]
		v.resourceHasACLs = true
		if !e.appliesToWho(r) || !e.coversOperation(r.operation) {
			continue
		}
		if !e.allow {
			return true
		}
		v.allowed = true
	}
	return false
}

// Authorize reports whether principal p, connected from host, may do op
// on the resource of type rt named name (ClusterName for the cluster).
// host is the client's IP address as ACLs spell it. Kafka compares the
// strings, as Java spells them: an IPv6 address uncompressed
// (0:0:0:0:0:0:0:1) where Go's net.IP.String compresses it (::1), so the
// broker passes one canonical form and ACL hosts follow it.
// It does not allocate.
func (a *Authorizer) Authorize(p Principal, host string, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) bool {
	if a == nil || a.isSuperUser(p) {
		return true
	}
	if !storedResourceType(rt) {
		return a.allowIfNoACLs
	}
	ix := &a.byResourceType[rt]
	r := authzQuery{principal: p, host: host, operation: op}
	var v aclVerdict
	if v.add(ix.literal[name], &r) || v.addPrefixes(ix, name, &r) || v.add(ix.wildcard, &r) {
		return false
	}
	if v.allowed {
		return true
	}
	return !v.resourceHasACLs && a.allowIfNoACLs
}

// addPrefixes weighs the PREFIXED ACLs whose name starts the resource
// name, shortest first.
func (v *aclVerdict) addPrefixes(ix *resourceIndex, name string, r *authzQuery) (denied bool) {
	for _, n := range ix.prefixLens {
		if n > len(name) {
			return false
		}
		if v.add(ix.prefixed[name[:n]], r) {
			return true
		}
	}
	return false
}

// isSuperUser compares as Kafka does, the principal's Type:Name string
// against each super.users entry, without building the string.
func (a *Authorizer) isSuperUser(p Principal) bool {
	for _, s := range a.superUsers {
		if len(s) == len(p.Type)+1+len(p.Name) && s[len(p.Type)] == ':' &&
			s[:len(p.Type)] == p.Type && s[len(p.Type)+1:] == p.Name {
			return true
		}
	}
	return false
}

// hardcodedName is the resource name Kafka's authorizeByResourceType
// first checks, so that super users and allow.everyone.if.no.acl.found
// pass: Kafka's own quirk, kept so ACLs on a resource that happens to be
// named "hardcode" weigh the same.
const hardcodedName = "hardcode"

// AuthorizeAny reports whether p may do op on at least one resource of
// type rt, as Kafka's Authorizer.authorizeByResourceType does: the
// broker asks it for an idempotent producer's InitProducerId without a
// transactional id (WRITE on any TOPIC, KIP-679).
//
// Only ACLs naming op itself or ALL count (no implied operations). A
// DENY on the wildcard denies; otherwise an ALLOW on the wildcard
// allows, as does an ALLOW on a literal name with no DENY on the same
// literal name and none on a prefix of it, or an ALLOW on a prefix with
// no DENY on a prefix of that prefix. ANY or UNKNOWN for op or rt, which
// Kafka refuses with an exception, is denied.
func (a *Authorizer) AuthorizeAny(p Principal, host string, op kmsg.ACLOperation, rt kmsg.ACLResourceType) bool {
	if a == nil {
		return true
	}
	if !storedOperation(op) || !storedResourceType(rt) {
		return false
	}
	if a.Authorize(p, host, op, rt, hardcodedName) {
		return true
	}
	r := authzQuery{principal: p, host: host, operation: op}
	var s patternSets
	for i := range a.byResourceType[rt].all {
		x := &a.byResourceType[rt].all[i]
		if !x.appliesToWho(&r) || (x.operation != op && x.operation != kmsg.ACLOperationAll) {
			continue
		}
		if s.add(x.ACL) {
			return false
		}
	}
	return s.anyAllowStands()
}

// patternSets sorts the ACLs AuthorizeAny weighs by permission and
// pattern.
type patternSets struct {
	wildcardAllow bool
	allowLiteral  []string
	allowPrefixed []string
	denyLiteral   map[string]bool
	denyPrefixed  map[string]bool
}

// add files one ACL and reports a DENY on the wildcard, which denies.
func (s *patternSets) add(acl ACL) (wildcardDeny bool) {
	literal := acl.PatternType == kmsg.ACLResourcePatternTypeLiteral
	switch acl.Permission {
	case kmsg.ACLPermissionTypeDeny:
		if literal && acl.ResourceName == WildcardResource {
			return true
		}
		if literal {
			s.denyLiteral = addPatternName(s.denyLiteral, acl.ResourceName)
		} else {
			s.denyPrefixed = addPatternName(s.denyPrefixed, acl.ResourceName)
		}
	case kmsg.ACLPermissionTypeAllow:
		switch {
		case literal && acl.ResourceName == WildcardResource:
			s.wildcardAllow = true
		case literal:
			s.allowLiteral = append(s.allowLiteral, acl.ResourceName)
		default:
			s.allowPrefixed = append(s.allowPrefixed, acl.ResourceName)
		}
	}
	return false
}

func addPatternName(m map[string]bool, name string) map[string]bool {
	if m == nil {
		m = make(map[string]bool)
	}
	m[name] = true
	return m
}

// anyAllowStands reports whether some ALLOW is not overruled by a DENY
// on the same literal name or on a (non-empty) prefix of its name.
func (s *patternSets) anyAllowStands() bool {
	if s.wildcardAllow {
		return true
	}
	for _, name := range s.allowLiteral {
		if !s.denyLiteral[name] && !s.deniedByPrefix(name) {
			return true
		}
	}
	for _, name := range s.allowPrefixed {
		if !s.deniedByPrefix(name) {
			return true
		}
	}
	return false
}

func (s *patternSets) deniedByPrefix(name string) bool {
	for n := 1; n <= len(name); n++ {
		if s.denyPrefixed[name[:n]] {
			return true
		}
	}
	return false
}

// AuthorizedOperations is KIP-430's bitfield of which of ops p may do on
// the resource: bit n is set for the operation with code n. The broker
// passes SupportedOperations(rt), as Kafka does; a nil Authorizer allows
// all of them.
func (a *Authorizer) AuthorizedOperations(p Principal, host string, rt kmsg.ACLResourceType, name string, ops []kmsg.ACLOperation) int32 {
	var bits int32
	for _, op := range ops {
		if op < 0 || op > 31 {
			continue
		}
		if a.Authorize(p, host, op, rt, name) {
			bits |= 1 << op
		}
	}
	return bits
}

// SupportedOperations are the operations an ACL may name for a resource
// type, which KIP-430's authorized-operations fields report on (Kafka's
// AclEntry.supportedOperations). nil for ANY and unknown types.
func SupportedOperations(rt kmsg.ACLResourceType) []kmsg.ACLOperation {
	switch rt {
	case kmsg.ACLResourceTypeTopic:
		return []kmsg.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate,
			kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete, kmsg.ACLOperationAlter,
			kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs}
	case kmsg.ACLResourceTypeGroup:
		return []kmsg.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete,
			kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs}
	case kmsg.ACLResourceTypeCluster:
		return []kmsg.ACLOperation{kmsg.ACLOperationCreate, kmsg.ACLOperationClusterAction,
			kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationIdempotentWrite,
			kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe}
	case kmsg.ACLResourceTypeTransactionalId:
		return []kmsg.ACLOperation{kmsg.ACLOperationDescribe, kmsg.ACLOperationWrite}
	case kmsg.ACLResourceTypeDelegationToken:
		return []kmsg.ACLOperation{kmsg.ACLOperationDescribe}
	case kmsg.ACLResourceTypeUser:
		return []kmsg.ACLOperation{kmsg.ACLOperationCreateTokens, kmsg.ACLOperationDescribeTokens}
	}
	return nil
}

// ACLs returns every ACL the authorizer holds, in the order given.
func (a *Authorizer) ACLs() []ACL {
	if a == nil {
		return nil
	}
	return slices.Clone(a.acls)
}

// Describe returns the ACLs the filter selects, for DescribeAcls and to
// find what a DeleteAcls filter deletes.
func (a *Authorizer) Describe(f ACLFilter) []ACL {
	if a == nil {
		return nil
	}
	var out []ACL
	for _, acl := range a.acls {
		if f.Matches(acl) {
			out = append(out, acl)
		}
	}
	return out
}
