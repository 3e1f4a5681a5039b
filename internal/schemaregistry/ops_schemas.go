package schemaregistry

import (
	"fmt"
	"sort"
	"strings"

	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
)

// SchemaByID is the schema an ID names. With subject set, the version of
// that subject carrying the ID is preferred (Confluent's subject
// parameter, which picks the context to look in); when the subject holds
// none, the ID is still found in the default context, as Confluent's
// getSchemaKeyUsingContexts falls back to it. Clients rely on that: a
// deserializer with a reader schema passes its own subject (topic-value)
// for records written under another subject name strategy.
func (r *Registry) SchemaByID(id int, subject string) (Schema, error) {
	var out Schema
	var err error
	r.read(func(st *state) {
		v := st.byID(id)
		for _, sv := range st.holders(id) {
			if subject != "" && sv.Subject == subject {
				v = st.subjects[sv.Subject][sv.Version]
				break
			}
		}
		if v == nil {
			err = errSchemaIDNotFound(id)
			return
		}
		out = Schema{ID: v.ID, SchemaType: v.SchemaType, References: v.References, Metadata: v.Metadata, RuleSet: v.RuleSet, Schema: v.Schema}
	})
	return out, err
}

// SubjectsByID lists the subjects with a version carrying an ID.
func (r *Registry) SubjectsByID(id int, deleted bool) ([]string, error) {
	out := []string{}
	err := r.eachHolder(id, deleted, func(sv subjectVersion) {
		if len(out) == 0 || out[len(out)-1] != sv.Subject {
			out = append(out, sv.Subject)
		}
	})
	return out, err
}

// VersionsByID lists the subject-versions carrying an ID.
func (r *Registry) VersionsByID(id int, deleted bool) ([]subjectVersion, error) {
	out := []subjectVersion{}
	err := r.eachHolder(id, deleted, func(sv subjectVersion) { out = append(out, sv) })
	return out, err
}

func (r *Registry) eachHolder(id int, deleted bool, fn func(subjectVersion)) error {
	var err error
	r.read(func(st *state) {
		holders := st.holders(id)
		if len(holders) == 0 {
			err = errSchemaIDNotFound(id)
			return
		}
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
		var names []string
		for name := range st.subjects {
			if strings.HasPrefix(name, prefix) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
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
