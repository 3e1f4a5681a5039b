package schemaregistry

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Contexts are Confluent's namespaces of subjects and IDs (its
// QualifiedSubject): a subject ":.ctx:name" lives in context ".ctx", a
// plain "name" in the default context ".". Each context has its own IDs:
// the same ID may name different schemas in two contexts, and a schema
// registered in two contexts may get two IDs. Subjects are stored under
// their qualified names, as Confluent stores them, so the two registries
// read each other's contexts.

const (
	defaultContext   = "."
	contextDelimiter = ":"
	contextPrefix    = ":."
	contextWildcard  = ":*:"
	// globalContext holds the configs and modes that apply to every
	// context, below a context's own (Confluent's __GLOBAL).
	globalContext = ".__GLOBAL"
)

// qualified is a subject split into its context and its name within it.
// ctx is "*" for a wildcard prefix (":*:name").
type qualified struct {
	ctx, name string
}

// splitSubject splits a subject as Confluent's QualifiedSubject does: a
// subject starting ":." names its context up to the next ':' (all of it
// when there is none, which names the context itself).
func splitSubject(s string) qualified {
	switch {
	case strings.HasPrefix(s, contextPrefix):
		rest := s[len(contextPrefix):]
		if i := strings.Index(rest, contextDelimiter); i >= 0 {
			return qualified{ctx: s[1 : len(contextPrefix)+i], name: rest[i+1:]}
		}
		return qualified{ctx: s[1:]}
	case strings.HasPrefix(s, contextWildcard):
		return qualified{ctx: "*", name: s[len(contextWildcard):]}
	}
	return qualified{ctx: defaultContext, name: s}
}

// contextPrefixOf is how subjects of a context start: "" for the default
// context, ":.ctx:" for the others.
func contextPrefixOf(ctx string) string {
	if ctx == defaultContext {
		return ""
	}
	return contextDelimiter + ctx + contextDelimiter
}

// String is the subject as stored: its context written only when it is
// not the default one (":.:a" is "a").
func (q qualified) String() string { return contextPrefixOf(q.ctx) + q.name }

// normalizeSubject is Confluent's QualifiedSubject.normalize, applied to
// every subject a request names.
func normalizeSubject(s string) string {
	q := splitSubject(s)
	if q.ctx == "*" {
		return s
	}
	return q.String()
}

// contextOf is the context a stored subject lives in.
func contextOf(subject string) string { return splitSubject(subject).ctx }

// isContextSubject reports whether a subject names a context itself
// (":.ctx:"), whose config and mode apply to the context's subjects.
func isContextSubject(subject string) bool {
	q := splitSubject(subject)
	return q.name == "" && q.ctx != defaultContext && q.ctx != "*"
}

// normalizeContext reads a context as a path names it (".ctx", "ctx",
// ":.ctx:") into its name (".ctx"), as Confluent's
// QualifiedSubject.normalizeContext; a colon inside is refused.
func normalizeContext(s string) (string, *Error) {
	s = strings.TrimPrefix(s, contextDelimiter)
	s = strings.TrimSuffix(s, contextDelimiter)
	if strings.Contains(s, contextDelimiter) {
		return "", &Error{http.StatusBadRequest, http.StatusBadRequest, fmt.Sprintf("Context name '%s' cannot contain a colon", s)}
	}
	if !strings.HasPrefix(s, ".") {
		s = "." + s
	}
	return s, nil
}

// qualifyReference is the subject a reference of a schema in parent's
// subject names: an unqualified reference stays in the parent's context,
// as Confluent's qualifySubjectWithParent does.
func qualifyReference(parent, ref string) string {
	q := splitSubject(ref)
	if q.ctx != defaultContext || strings.HasPrefix(ref, contextPrefix) {
		return normalizeSubject(ref)
	}
	return contextPrefixOf(contextOf(parent)) + ref
}

// subjectMatcher reads a subjectPrefix parameter: a plain prefix matches
// the default context's subjects; ":.ctx:p" the subjects of .ctx starting
// with p; ":.ct" (no closing colon) every subject of the contexts starting
// with .ct; ":*:p" the subjects starting with p in every context (":*:",
// every subject), as Confluent's key ranges do.
func subjectMatcher(prefix string) func(subject string) bool {
	p := splitSubject(prefix)
	closed := p.ctx == defaultContext || strings.Contains(strings.TrimPrefix(prefix, contextPrefix), contextDelimiter)
	return func(subject string) bool {
		s := splitSubject(subject)
		switch {
		case p.ctx == "*":
			return strings.HasPrefix(s.name, p.name)
		case closed:
			return s.ctx == p.ctx && strings.HasPrefix(s.name, p.name)
		default:
			return strings.HasPrefix(s.ctx, p.ctx)
		}
	}
}

// rewriteContextPath turns Confluent's context-scoped paths into the
// plain ones with qualified subjects, as its ContextFilter does before
// routing: /contexts/.ctx/subjects/s/... is /subjects/:.ctx:s/...,
// /contexts/.ctx/config is /config/:.ctx:, and the subjectPrefix and
// subject parameters of the listings and /schemas/ids get the context. A
// subject already qualified keeps its own context. /contexts/.ctx alone
// (DELETE) becomes /contexts/:.ctx:.
func rewriteContextPath(req *http.Request) *Error {
	segs := strings.Split(strings.TrimPrefix(req.URL.EscapedPath(), "/"), "/")
	if len(segs) < 2 || segs[0] != "contexts" || segs[1] == "" {
		return nil
	}
	rawCtx, err := url.PathUnescape(segs[1])
	if err != nil {
		return &Error{http.StatusBadRequest, http.StatusBadRequest, err.Error()}
	}
	ctx, e := normalizeContext(rawCtx)
	if e != nil {
		return e
	}
	prefix := contextPrefixOf(ctx)
	rest := segs[2:]
	if len(rest) > 0 && rest[len(rest)-1] == "" {
		rest = rest[:len(rest)-1]
	}
	if len(rest) == 0 {
		if ctx == defaultContext {
			return setPath(req, nil)
		}
		return setPath(req, []string{"contexts", url.PathEscape(prefix)})
	}
	out := make([]string, 0, len(rest)+1)
	configOrMode := rest[0] == "config" || rest[0] == "mode"
	for i := 0; i < len(rest); i++ {
		out = append(out, rest[i])
		if rest[i] != "subjects" && (i != 0 || !configOrMode) {
			continue
		}
		if i+1 == len(rest) {
			if configOrMode && i == 0 && prefix != "" {
				out = append(out, url.PathEscape(prefix))
			}
			break
		}
		i++
		s, err := url.PathUnescape(rest[i])
		if err != nil {
			return &Error{http.StatusBadRequest, http.StatusBadRequest, err.Error()}
		}
		if !qualifiedOrWildcard(s) {
			s = prefix + s
		}
		out = append(out, url.PathEscape(s))
	}
	q := req.URL.Query()
	switch path := strings.Join(rest, "/"); {
	case strings.HasPrefix(path, "schemas/ids"):
		if s := q.Get("subject"); !qualifiedOrWildcard(s) {
			q.Set("subject", prefix+s)
		}
	case path == "schemas" || path == "subjects":
		if s := q.Get("subjectPrefix"); !qualifiedOrWildcard(s) {
			q.Set("subjectPrefix", prefix+s)
		}
	}
	req.URL.RawQuery = q.Encode()
	return setPath(req, out)
}

func qualifiedOrWildcard(s string) bool {
	return strings.HasPrefix(s, contextPrefix) || strings.HasPrefix(s, contextWildcard)
}

// setPath points req at the path of escaped segments.
func setPath(req *http.Request, segs []string) *Error {
	raw := "/" + strings.Join(segs, "/")
	p, err := url.PathUnescape(raw)
	if err != nil {
		return &Error{http.StatusBadRequest, http.StatusBadRequest, err.Error()}
	}
	req.URL.Path, req.URL.RawPath = p, raw
	req.RequestURI = req.URL.RequestURI()
	return nil
}
