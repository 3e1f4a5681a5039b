package schemaregistry

import (
	"context"
	"strings"
)

// GlobalLevel is the registry's compatibility level.
func (r *Registry) GlobalLevel() string {
	var out string
	r.read(func(st *state) { out = levelOf(st, "\x00") })
	return out
}

// SubjectLevel is a subject's own level; with defaultToGlobal the global
// one when the subject has none.
func (r *Registry) SubjectLevel(subject string, defaultToGlobal bool) (string, error) {
	var out string
	var err error
	r.read(func(st *state) {
		if l, ok := st.configs[subject]; ok {
			out = l
		} else if defaultToGlobal {
			out = levelOf(st, subject)
		} else {
			err = errSubjectCompatNotSet(subject)
		}
	})
	return out, err
}

// SetLevel sets the level of a subject, or the global one when global.
func (r *Registry) SetLevel(ctx context.Context, subject string, global bool, level string) error {
	return r.writeOp(ctx, "Update compatibility level", func(st *state) ([]record, error) {
		if !global {
			if e := notWritable(st, subject); e != nil {
				return nil, e
			}
		}
		var subj *string
		if !global {
			subj = &subject
		}
		return []record{{storeKey{Type: keyConfig, Subject: subject, Global: global},
			&configValue{Subject: subj, CompatibilityLevel: level}}}, nil
	})
}

// DeleteLevel removes a subject's level (or resets the global one) and
// returns the level it had.
func (r *Registry) DeleteLevel(ctx context.Context, subject string, global bool) (string, error) {
	var old string
	err := r.writeOp(ctx, "Delete compatibility level", func(st *state) ([]record, error) {
		if global {
			old = levelOf(st, "\x00")
		} else {
			l, ok := st.configs[subject]
			if !ok {
				return nil, errSubjectNotFound(subject)
			}
			if e := notWritable(st, subject); e != nil {
				return nil, e
			}
			old = l
		}
		return []record{{storeKey{Type: keyConfig, Subject: subject, Global: global}, nil}}, nil
	})
	return old, err
}

// parseMode reads a mode from a request, in any case as Confluent does.
func parseMode(s string) (string, bool) {
	u := strings.ToUpper(s)
	switch u {
	case modeReadWrite, modeReadOnly, modeImport:
		return u, true
	}
	return "", false
}

// GlobalMode is the registry's mode.
func (r *Registry) GlobalMode() string {
	var out string
	r.read(func(st *state) { out = modeOf(st, "\x00") })
	return out
}

// SubjectMode is a subject's own mode; with defaultToGlobal the global
// one when the subject has none.
func (r *Registry) SubjectMode(subject string, defaultToGlobal bool) (string, error) {
	var out string
	var err error
	r.read(func(st *state) {
		if m, ok := st.modes[subject]; ok {
			out = m
		} else if defaultToGlobal {
			out = modeOf(st, subject)
		} else {
			err = errSubjectModeNotSet(subject)
		}
	})
	return out, err
}

// SetMode sets the mode of a subject, or the global one. Entering IMPORT
// needs the scope to hold no live subject (unless force): its soft-deleted
// versions are then removed for good, so that imported IDs and versions
// cannot collide with them, as Confluent does.
func (r *Registry) SetMode(ctx context.Context, subject string, global bool, mode string, force bool) error {
	return r.writeOp(ctx, "Update mode", func(st *state) ([]record, error) {
		prefix := subject
		if global {
			prefix = ""
		}
		var recs []record
		if mode == modeImport && modeOf(st, subject) != modeImport && !force {
			if len(scopeSubjects(st, prefix, global, false)) > 0 {
				return nil, errNotPermitted("Cannot import since found existing subjects")
			}
			for _, name := range scopeSubjects(st, prefix, global, true) {
				for _, v := range st.versions(name, true) {
					if len(st.referencedBy(name, v, true)) > 0 {
						return nil, errReferenceExists(schemaKeyString(name, v))
					}
					recs = append(recs, record{storeKey{Type: keySchema, Subject: name, Version: v}, nil})
				}
			}
			recs = append(recs, record{storeKey{Type: keyClearSubject, Subject: prefix}, &clearSubjectValue{Subject: prefix}})
		}
		var subj *string
		if !global {
			subj = &subject
		}
		return append(recs, record{storeKey{Type: keyMode, Subject: subject, Global: global},
			&modeValue{Subject: subj, Mode: mode}}), nil
	})
}

// scopeSubjects is every subject (global), every subject of a context
// (":.ctx:") or the one subject, with a live version or any version.
func scopeSubjects(st *state, subject string, global, deleted bool) []string {
	if global {
		return st.subjectNames(contextWildcard, deleted)
	}
	if isContextSubject(subject) {
		return st.subjectNames(subject, deleted)
	}
	if len(st.versions(subject, deleted)) > 0 {
		return []string{subject}
	}
	return nil
}

// DeleteMode removes a subject's mode, or the global one, and returns the
// mode it had ("" when it had none, which only a recursive delete
// accepts). With recursive, a context's delete (":.ctx:") removes the
// modes of its subjects too, and the global one those of the default
// context's subjects, as Confluent's recursive mode deletes.
func (r *Registry) DeleteMode(ctx context.Context, subject string, global, recursive bool) (string, error) {
	var old string
	err := r.writeOp(ctx, "Delete mode", func(st *state) ([]record, error) {
		var recs []record
		if global {
			old = modeOf(st, "\x00") // the default when none is set, as Confluent answers
			if st.globalMode != "" {
				recs = append(recs, record{storeKey{Type: keyMode, Global: true}, nil})
			}
		} else {
			m, ok := st.modes[subject]
			if !ok && !recursive {
				return nil, errSubjectNotFound(subject)
			}
			old = m
			if ok {
				recs = append(recs, record{storeKey{Type: keyMode, Subject: subject}, nil})
			}
		}
		if !recursive || (!global && !isContextSubject(subject)) {
			return recs, nil
		}
		ctxName := defaultContext
		if !global {
			ctxName = contextOf(subject)
		}
		for _, name := range sortedKeys(modeSubjects(st)) {
			if name != subject && contextOf(name) == ctxName {
				recs = append(recs, record{storeKey{Type: keyMode, Subject: name}, nil})
			}
		}
		return recs, nil
	})
	return old, err
}

// modeSubjects is the set of subjects with a mode of their own.
func modeSubjects(st *state) map[string]bool {
	out := make(map[string]bool, len(st.modes))
	for s := range st.modes {
		out[s] = true
	}
	return out
}

// CheckCompatibility checks a schema against a subject's version (or,
// with version 0, against the versions its level names), returning
// Confluent's messages: none when compatible.
func (r *Registry) CheckCompatibility(subject string, version int, req *SchemaRequest, normalize bool) ([]string, error) {
	var msgs []string
	var err error
	r.read(func(st *state) {
		var only *schemaValue
		if version != 0 {
			v, e := versionOf(st, subject, version, false)
			if e != nil {
				err = e
				return
			}
			only = v
		}
		p, _, _, e := parseRequest(st, subject, req, normalize)
		if e != nil {
			err = e
			return
		}
		msgs = r.compatMessages(st, subject, levelOf(st, subject), p, only)
	})
	return msgs, err
}
