package schemaregistry

import (
	"fmt"
	"sort"

	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
)

// lookupID finds the version an ID and a subject parameter name, as
// Confluent's getSchemaKeyUsingContexts: the subject's context is where
// the ID is looked up (the default one without a subject); a subject
// that names one must carry the ID, else an unqualified subject is tried
// in every context, and then any version in the default context does.
func (st *state) lookupID(id int, subject string) *schemaValue {
	q := splitSubject(normalizeSubject(subject))
	if q.ctx == "*" {
		q.ctx = defaultContext
	}
	if q.name == "" {
		return st.byID(q.ctx, id)
	}
	if v := st.holderIn(q.ctx, id, q.String()); v != nil || q.ctx != defaultContext {
		return v
	}
	for _, ctx := range sortedKeys(st.contexts) {
		if v := st.holderIn(ctx, id, contextPrefixOf(ctx)+q.name); v != nil {
			return v
		}
	}
	return st.byID(defaultContext, id)
}

// holderIn is subject's version carrying id in ctx, or nil.
func (st *state) holderIn(ctx string, id int, subject string) *schemaValue {
	for _, sv := range st.holders(ctx, id) {
		if sv.Subject == subject {
			return st.subjects[sv.Subject][sv.Version]
		}
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SchemaByID is the schema an ID names, in the context the subject
// parameter picks (lookupID).
func (r *Registry) SchemaByID(id int, subject string) (Schema, error) {
	var out Schema
	var err error
	r.read(func(st *state) {
		v := st.lookupID(id, subject)
		if v == nil {
			err = errSchemaIDNotFound(id)
			return
		}
		out = Schema{ID: v.ID, SchemaType: v.SchemaType, References: v.References, Metadata: v.Metadata, RuleSet: v.RuleSet, Schema: v.Schema}
	})
	return out, err
}

// SubjectsByID lists the subjects with a version carrying an ID, in the
// context the subject parameter picks.
func (r *Registry) SubjectsByID(id int, subject string, deleted bool) ([]string, error) {
	out := []string{}
	err := r.eachHolder(id, subject, deleted, func(sv subjectVersion) {
		if len(out) == 0 || out[len(out)-1] != sv.Subject {
			out = append(out, sv.Subject)
		}
	})
	return out, err
}

// VersionsByID lists the subject-versions carrying an ID, in the context
// the subject parameter picks.
func (r *Registry) VersionsByID(id int, subject string, deleted bool) ([]subjectVersion, error) {
	out := []subjectVersion{}
	err := r.eachHolder(id, subject, deleted, func(sv subjectVersion) { out = append(out, sv) })
	return out, err
}

func (r *Registry) eachHolder(id int, subject string, deleted bool, fn func(subjectVersion)) error {
	var err error
	r.read(func(st *state) {
		v := st.lookupID(id, subject)
		if v == nil {
			err = errSchemaIDNotFound(id)
			return
		}
		holders := st.holders(contextOf(v.Subject), id)
		for _, sv := range holders {
			if deleted || !st.subjects[sv.Subject][sv.Version].Deleted {
				fn(sv)
			}
		}
	})
	return err
}

// Schemas lists versions of the subjects under a prefix, in subject and
// version order: all of them, or the latest of each subject.
func (r *Registry) Schemas(prefix string, deleted, latestOnly bool) []Schema {
	out := []Schema{}
	r.read(func(st *state) {
		match := subjectMatcher(prefix)
		var names []string
		for name := range st.subjects {
			if match(name) {
				names = append(names, name)
			}
		}
		sortSubjects(names)
		for _, name := range names {
			vs := st.versions(name, deleted)
			if latestOnly && len(vs) > 0 {
				vs = vs[len(vs)-1:]
			}
			for _, v := range vs {
				out = append(out, toSchema(st.subjects[name][v]))
			}
		}
	})
	return out
}

// The format parameter's values, as Confluent's formattedString names
// them.
const (
	formatDefault          = "default"
	formatResolved         = "resolved"
	formatSerialized       = "serialized"
	formatIgnoreExtensions = "ignore_extensions"
)

// Formatted is s's text in a format formatParam accepted: the stored text
// for the default; for an Avro schema's resolved format the text with its
// references' named types written out (Java's Schema.toString); for a
// Protobuf schema's serialized format base64 of its FileDescriptorProto
// (what Confluent's serializers fetch), for its ignore_extensions format
// the text without custom options and extensions.
func (r *Registry) Formatted(s Schema, format string) (string, error) {
	if format == "" {
		return s.Schema, nil
	}
	var p schema.Schema
	var err error
	r.read(func(st *state) {
		p, err = r.parsedOf(st, &schemaValue{SchemaType: s.SchemaType, Schema: s.Schema, References: s.References})
	})
	if err != nil {
		return "", err
	}
	switch format {
	case formatSerialized:
		if ser, ok := schema.ProtobufSerialized(p); ok {
			return ser, nil
		}
	case formatIgnoreExtensions:
		if text, ok := schema.ProtobufWithoutExtensions(p); ok {
			return text, nil
		}
	case formatResolved:
		text, ok, err := schema.AvroResolved(p)
		if err != nil {
			return "", errInvalidSchema(err.Error())
		}
		if ok {
			return text, nil
		}
	}
	return "", errBadBody(fmt.Sprintf("format=%s is not supported for %s schemas", format, p.Type()))
}
