package schemaregistry

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
)

// Schema is a version of a subject as the API answers it.
type Schema struct {
	Subject    string          `json:"subject,omitempty"`
	Version    int             `json:"version,omitempty"`
	ID         int             `json:"id"`
	SchemaType string          `json:"schemaType,omitempty"`
	References []Reference     `json:"references,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	RuleSet    json.RawMessage `json:"ruleSet,omitempty"`
	Schema     string          `json:"schema"`
	Deleted    bool            `json:"deleted,omitempty"`
}

func toSchema(v *schemaValue) Schema {
	return Schema{Subject: v.Subject, Version: v.Version, ID: v.ID, SchemaType: v.SchemaType,
		References: v.References, Metadata: v.Metadata, RuleSet: v.RuleSet, Schema: v.Schema}
}

// latestVersion is how a path asks for the newest version.
const latestVersion = -1

// parseVersion reads a version of a path: "latest", -1 (the same) or
// 1..2^31-1; anything else is Confluent's 42202.
func parseVersion(s string) (int, *Error) {
	if s == "latest" {
		return latestVersion, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v == 0 || v < -1 || v > math.MaxInt32 {
		return 0, errInvalidVersion(s)
	}
	return int(v), nil
}

// Register registers a schema under a subject and returns its ID: the
// existing version's if the subject already has this schema, else a new
// version, with the ID the schema has anywhere in the registry or a new
// one. In IMPORT mode the request's ID (and version, if given) are used.
func (r *Registry) Register(ctx context.Context, subject string, req *SchemaRequest, normalize bool) (int, error) {
	var id int
	err := r.writeOp(ctx, "Register", func(st *state) ([]record, error) {
		mode := modeOf(st, subject)
		if e := notWritable(st, subject); e != nil {
			return nil, e
		}
		if req.ID > 0 && mode != modeImport {
			return nil, errNotPermitted(fmt.Sprintf("Subject %s in context %s is not in import mode", subject, contextOf(subject)))
		}
		if req.ID <= 0 && mode != modeReadWrite {
			return nil, errNotPermitted(fmt.Sprintf("Subject %s in context %s is not in read-write mode", subject, contextOf(subject)))
		}
		p, text, refs, e := parseRequest(st, subject, req, normalize)
		if e != nil {
			return nil, e
		}
		ctx := contextOf(subject)
		ck := contentKey(ctx, storedType(p), text, refs)
		// The same schema already live in the subject: its ID, no new
		// version (whatever the mode, as Confluent does).
		for _, v := range st.versions(subject, false) {
			sv := st.subjects[subject][v]
			if contentKeyOf(sv) == ck && (req.ID <= 0 || req.ID == sv.ID) {
				id = sv.ID
				return nil, nil
			}
		}
		version := st.maxVersion(subject) + 1
		if mode == modeImport {
			if existing, ok := st.idByContent[ck]; ok && existing != req.ID {
				return nil, errNotPermitted(fmt.Sprintf("Schema already registered with id %d instead of input id %d", existing, req.ID))
			}
			if other := st.byID(ctx, req.ID); other != nil && contentKeyOf(other) != ck {
				return nil, errNotPermitted(fmt.Sprintf("Overwrite new schema with id %d is not permitted.", req.ID))
			}
			if req.Version > 0 {
				if st.subjects[subject][req.Version] != nil {
					return nil, errNotPermitted(fmt.Sprintf("Overwrite new schema with version %d is not permitted.", req.Version))
				}
				version = req.Version
			}
			id = req.ID
		} else {
			if req.Version > 0 && req.Version != version {
				return nil, errInvalidSchema(fmt.Sprintf("Version %d is not one more than previous version %d", req.Version, version-1))
			}
			if msgs := r.compatMessages(st, subject, levelOf(st, subject), p, nil); len(msgs) > 0 {
				return nil, errIncompatible(subject, msgs)
			}
			var ok bool
			if id, ok = st.idByContent[ck]; !ok {
				id = st.maxID[ctx] + 1
			}
		}
		var recs []record
		if ctx != defaultContext && !st.contexts[ctx] {
			// The context's record first, as Confluent writes it: GET
			// /contexts lists the contexts these records name.
			recs = append(recs, record{storeKey{Type: keyContext, Context: ctx}, &contextValue{Tenant: defaultTenant, Context: ctx}})
		}
		return append(recs, record{storeKey{Type: keySchema, Subject: subject, Version: version}, &schemaValue{
			Subject: subject, Version: version, ID: id, SchemaType: storedType(p), References: refs,
			Metadata: req.Metadata, RuleSet: req.RuleSet, Schema: text,
		}}), nil
	})
	return id, err
}

// compatMessages checks a candidate against a subject's live versions (all
// of them for a transitive level, else the latest), or against only,
// when given; it returns Confluent's messages, empty when compatible.
func (r *Registry) compatMessages(st *state, subject, level string, candidate schema.Schema, only *schemaValue) []string {
	var previous []previousSchema
	var versions []*schemaValue
	if only != nil {
		versions = []*schemaValue{only}
	} else {
		vs := st.versions(subject, false)
		for i := len(vs) - 1; i >= 0; i-- {
			versions = append(versions, st.subjects[subject][vs[i]])
		}
	}
	for _, v := range versions {
		old, err := r.parsedOf(st, v)
		if err != nil {
			// A stored schema this build cannot parse (a format not
			// compiled in): the check cannot pass silently.
			return []string{fmt.Sprintf("{errorType:'SCHEMA_UNREADABLE', description:'The schema of version %d cannot be parsed: %v', additionalInfo:'/'}", v.Version, err)}
		}
		previous = append(previous, previousSchema{version: v.Version, text: v.Schema, parsed: old})
	}
	return checkCompatibility(level, candidate, previous)
}

// Lookup finds the version of a subject that holds a schema.
func (r *Registry) Lookup(subject string, req *SchemaRequest, normalize, deleted bool) (Schema, error) {
	var out Schema
	var err error
	r.read(func(st *state) {
		if len(st.versions(subject, deleted)) == 0 {
			err = errSubjectNotFound(subject)
			return
		}
		p, text, refs, e := parseRequest(st, subject, req, normalize)
		if e != nil {
			err = e
			return
		}
		ck := contentKey(contextOf(subject), storedType(p), text, refs)
		for _, v := range st.versions(subject, deleted) {
			sv := st.subjects[subject][v]
			if contentKeyOf(sv) == ck {
				out = toSchema(sv)
				return
			}
		}
		err = errSchemaNotFound()
	})
	return out, err
}

// Subjects lists the subjects with a live version (any, with deleted).
func (r *Registry) Subjects(prefix string, deleted bool) []string {
	var out []string
	r.read(func(st *state) { out = st.subjectNames(prefix, deleted) })
	return out
}

// Versions lists a subject's version numbers.
func (r *Registry) Versions(subject string, deleted bool) ([]int, error) {
	var out []int
	r.read(func(st *state) { out = st.versions(subject, deleted) })
	if len(out) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	return out, nil
}

// versionOf finds a subject's version (latestVersion: the newest live
// one) with Confluent's errors.
func versionOf(st *state, subject string, version int, deleted bool) (*schemaValue, *Error) {
	if len(st.versions(subject, deleted)) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	if version == latestVersion {
		vs := st.versions(subject, deleted)
		return st.subjects[subject][vs[len(vs)-1]], nil
	}
	v := st.subjects[subject][version]
	if v == nil || (v.Deleted && !deleted) {
		return nil, errVersionNotFound(version)
	}
	return v, nil
}

// Version is one version of a subject.
func (r *Registry) Version(subject string, version int, deleted bool) (Schema, error) {
	var out Schema
	var err error
	r.read(func(st *state) {
		v, e := versionOf(st, subject, version, deleted)
		if e != nil {
			err = e
			return
		}
		out = toSchema(v)
	})
	return out, err
}

// ReferencedBy lists the IDs of the live schemas that reference a version.
func (r *Registry) ReferencedBy(subject string, version int) ([]int, error) {
	var out []int
	var err error
	r.read(func(st *state) {
		v, e := versionOf(st, subject, version, false)
		if e != nil {
			err = e
			return
		}
		out = st.referencedBy(v.Subject, v.Version, false)
	})
	return out, err
}

// DeleteVersion deletes one version: softly (it stays readable with
// deleted=true and keeps its ID) or, once soft-deleted, permanently.
func (r *Registry) DeleteVersion(ctx context.Context, subject string, version int, permanent bool) (int, error) {
	var deletedVersion int
	err := r.writeOp(ctx, "Delete schema version", func(st *state) ([]record, error) {
		if e := notWritable(st, subject); e != nil {
			return nil, e
		}
		if len(st.versions(subject, true)) == 0 {
			return nil, errSubjectNotFound(subject)
		}
		var v *schemaValue
		if version == latestVersion {
			vs := st.versions(subject, permanent)
			if len(vs) == 0 {
				return nil, errSubjectNotFound(subject)
			}
			v = st.subjects[subject][vs[len(vs)-1]]
		} else if v = st.subjects[subject][version]; v == nil {
			return nil, errVersionNotFound(version)
		}
		switch {
		case !permanent && v.Deleted:
			return nil, errVersionSoftDeleted(subject, v.Version)
		case permanent && !v.Deleted:
			return nil, errVersionNotSoftDeleted(subject, v.Version)
		}
		if ids := st.referencedBy(subject, v.Version, permanent); len(ids) > 0 {
			return nil, errReferenceExists(schemaKeyString(subject, v.Version))
		}
		deletedVersion = v.Version
		key := storeKey{Type: keySchema, Subject: subject, Version: v.Version}
		if permanent {
			return []record{{key, nil}}, nil
		}
		soft := *v
		soft.Deleted = true
		return []record{{key, &soft}}, nil
	})
	return deletedVersion, err
}

// DeleteSubject deletes every version of a subject: softly, or
// permanently once all are soft-deleted (with the subject's config and
// mode, as Confluent does). It returns the versions deleted.
func (r *Registry) DeleteSubject(ctx context.Context, subject string, permanent bool) ([]int, error) {
	var deleted []int
	err := r.writeOp(ctx, "Delete subject", func(st *state) ([]record, error) {
		if e := notWritable(st, subject); e != nil {
			return nil, e
		}
		all := st.versions(subject, true)
		if len(all) == 0 {
			return nil, errSubjectNotFound(subject)
		}
		live := st.versions(subject, false)
		if !permanent && len(live) == 0 {
			return nil, errSubjectSoftDeleted(subject)
		}
		if permanent && len(live) > 0 {
			return nil, errSubjectNotSoftDeleted(subject)
		}
		targets := live
		if permanent {
			targets = all
		}
		for _, v := range targets {
			for _, id := range st.referencedBy(subject, v, permanent) {
				// A reference from the subject's own versions goes with it.
				if !holdsOnly(st, id, subject) {
					return nil, errReferenceExists(schemaKeyString(subject, v))
				}
			}
		}
		deleted = targets
		if !permanent {
			return []record{{storeKey{Type: keyDeleteSubject, Subject: subject},
				&deleteSubjectValue{Subject: subject, Version: targets[len(targets)-1]}}}, nil
		}
		var recs []record
		for i := len(targets) - 1; i >= 0; i-- { // newest first: a version may reference an older one
			recs = append(recs, record{storeKey{Type: keySchema, Subject: subject, Version: targets[i]}, nil})
		}
		if _, ok := st.modes[subject]; ok {
			recs = append(recs, record{storeKey{Type: keyMode, Subject: subject}, nil})
		}
		if _, ok := st.configs[subject]; ok {
			recs = append(recs, record{storeKey{Type: keyConfig, Subject: subject}, nil})
		}
		return recs, nil
	})
	return deleted, err
}

// holdsOnly reports whether every version carrying id is in subject.
func holdsOnly(st *state, id int, subject string) bool {
	for _, sv := range st.holders(contextOf(subject), id) {
		if sv.Subject != subject {
			return false
		}
	}
	return true
}

// schemaKeyString is Confluent's SchemaKey.toString, which its
// reference-exists message quotes.
func schemaKeyString(subject string, version int) string {
	return fmt.Sprintf("{magic=1,keytype=SCHEMA,subject=%s,version=%d}", subject, version)
}
