package schemaregistry

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// state is the registry as the records of the store build it, and nothing
// else: every instance that has applied the same records holds the same
// state. It does no I/O and takes no lock; Registry guards it.
type state struct {
	// subjects maps a subject to its versions, soft-deleted ones included
	// (hard-deleted ones are gone).
	subjects map[string]map[int]*schemaValue
	// configs and modes are the subject-level settings; the global ones
	// sit in globalConfig and globalMode ("" when unset).
	configs      map[string]string
	modes        map[string]string
	globalConfig string
	globalMode   string
	// ids maps an ID of a context to the versions that carry it; an ID
	// whose last version is hard-deleted is gone.
	ids map[contextID]map[subjectVersion]struct{}
	// idByContent finds the ID of a schema already registered in a
	// context, by the context, type, stored text and references
	// (contentKey).
	idByContent map[string]int
	// maxID is the largest ID ever seen in the store, by context: the
	// next one is maxID+1, as Confluent's primary counts.
	maxID map[string]int
	// contexts are the contexts other than the default one that the
	// store's CONTEXT records name (Confluent lists those, not the
	// contexts of the subjects).
	contexts map[string]bool
}

// contextID is an ID within its context.
type contextID struct {
	ctx string
	id  int
}

type subjectVersion struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

func newState() *state {
	return &state{
		subjects:    map[string]map[int]*schemaValue{},
		configs:     map[string]string{},
		modes:       map[string]string{},
		ids:         map[contextID]map[subjectVersion]struct{}{},
		idByContent: map[string]int{},
		maxID:       map[string]int{},
		contexts:    map[string]bool{},
	}
}

// contentKey identifies a schema for the one-ID-per-schema rule: the same
// text, type and references get the same ID in every subject of a
// context.
func contentKey(ctx, schemaType, text string, refs []Reference) string {
	if schemaType == "" {
		schemaType = "AVRO"
	}
	r, _ := json.Marshal(refs) // plain structs always marshal
	return ctx + "\x00" + schemaType + "\x00" + text + "\x00" + string(r)
}

// contentKeyOf is a stored version's contentKey.
func contentKeyOf(v *schemaValue) string {
	return contentKey(contextOf(v.Subject), v.SchemaType, v.Schema, v.References)
}

// apply applies one record of the store. A record it cannot read is
// skipped with an error for the log: the store is shared, and one bad
// record must not stop every instance from starting.
func (s *state) apply(rawKey, rawValue []byte) error {
	k, err := parseKey(rawKey)
	if err != nil {
		return err
	}
	switch k.Type {
	case keySchema:
		return s.applySchema(k, rawValue)
	case keyConfig:
		return s.applyConfig(k, rawValue)
	case keyMode:
		return s.applyMode(k, rawValue)
	case keyDeleteSubject:
		if rawValue == nil {
			return nil
		}
		var v deleteSubjectValue
		if err := json.Unmarshal(rawValue, &v); err != nil {
			return fmt.Errorf("schemaregistry: delete-subject value: %w", err)
		}
		for version, sv := range s.subjects[v.Subject] {
			if version <= v.Version {
				sv.Deleted = true
			}
		}
	case keyContext:
		if k.Context == "" || k.Context == defaultContext {
			return nil
		}
		if rawValue == nil {
			delete(s.contexts, k.Context)
		} else {
			s.contexts[k.Context] = true
		}
	case keyClearSubject:
		if rawValue == nil {
			return nil
		}
		var v clearSubjectValue
		if err := json.Unmarshal(rawValue, &v); err != nil {
			return fmt.Errorf("schemaregistry: clear-subject value: %w", err)
		}
		for subject, versions := range s.subjects {
			if strings.HasPrefix(subject, v.Subject) {
				for version := range versions {
					s.removeVersion(subject, version)
				}
			}
		}
	}
	// NOOP and kinds this registry does not know (Confluent's
	// associations, encryption keys) change nothing here.
	return nil
}

func (s *state) applySchema(k storeKey, rawValue []byte) error {
	if rawValue == nil {
		s.removeVersion(k.Subject, k.Version)
		return nil
	}
	var v schemaValue
	if err := json.Unmarshal(rawValue, &v); err != nil {
		return fmt.Errorf("schemaregistry: schema value of %s/%d: %w", k.Subject, k.Version, err)
	}
	if v.ID < 0 {
		return fmt.Errorf("schemaregistry: schema value of %s/%d: id %d", k.Subject, k.Version, v.ID)
	}
	// The key is the truth: a value that names another subject or version
	// would make two keys claim one slot.
	v.Subject, v.Version = k.Subject, k.Version
	s.removeVersion(k.Subject, k.Version)
	versions := s.subjects[k.Subject]
	if versions == nil {
		versions = map[int]*schemaValue{}
		s.subjects[k.Subject] = versions
	}
	versions[k.Version] = &v
	sv := subjectVersion{k.Subject, k.Version}
	ctx := contextOf(k.Subject)
	cid := contextID{ctx, v.ID}
	if s.ids[cid] == nil {
		s.ids[cid] = map[subjectVersion]struct{}{}
	}
	s.ids[cid][sv] = struct{}{}
	s.idByContent[contentKeyOf(&v)] = v.ID
	s.maxID[ctx] = max(s.maxID[ctx], v.ID)
	return nil
}

// removeVersion forgets one version (a hard delete); its ID goes when no
// version carries it any more.
func (s *state) removeVersion(subject string, version int) {
	old := s.subjects[subject][version]
	if old == nil {
		return
	}
	delete(s.subjects[subject], version)
	if len(s.subjects[subject]) == 0 {
		delete(s.subjects, subject)
	}
	cid := contextID{contextOf(subject), old.ID}
	holders := s.ids[cid]
	delete(holders, subjectVersion{subject, version})
	if len(holders) == 0 {
		delete(s.ids, cid)
		ck := contentKeyOf(old)
		if s.idByContent[ck] == old.ID {
			delete(s.idByContent, ck)
		}
	}
}

func (s *state) applyConfig(k storeKey, rawValue []byte) error {
	level := ""
	if rawValue != nil {
		var v configValue
		if err := json.Unmarshal(rawValue, &v); err != nil {
			return fmt.Errorf("schemaregistry: config value: %w", err)
		}
		level = v.CompatibilityLevel
	}
	if k.Global {
		s.globalConfig = level
	} else if level == "" {
		delete(s.configs, k.Subject)
	} else {
		s.configs[k.Subject] = level
	}
	return nil
}

func (s *state) applyMode(k storeKey, rawValue []byte) error {
	mode := ""
	if rawValue != nil {
		var v modeValue
		if err := json.Unmarshal(rawValue, &v); err != nil {
			return fmt.Errorf("schemaregistry: mode value: %w", err)
		}
		mode = v.Mode
	}
	if k.Global {
		s.globalMode = mode
	} else if mode == "" {
		delete(s.modes, k.Subject)
	} else {
		s.modes[k.Subject] = mode
	}
	return nil
}

// versions lists a subject's version numbers in order, soft-deleted ones
// only when deleted is set.
func (s *state) versions(subject string, deleted bool) []int {
	var out []int
	for v, sv := range s.subjects[subject] {
		if deleted || !sv.Deleted {
			out = append(out, v)
		}
	}
	sort.Ints(out)
	return out
}

// latest is a subject's newest live version, or nil.
func (s *state) latest(subject string) *schemaValue {
	vs := s.versions(subject, false)
	if len(vs) == 0 {
		return nil
	}
	return s.subjects[subject][vs[len(vs)-1]]
}

// maxVersion is the largest version number a subject has used, deleted or
// not: a new version takes the next one, as in Confluent's registry.
func (s *state) maxVersion(subject string) int {
	m := 0
	for v := range s.subjects[subject] {
		m = max(m, v)
	}
	return m
}

// subjectNames lists the subjects a subjectPrefix matches
// (subjectMatcher) with at least one version (a live one unless deleted),
// by context and then by name, as Confluent orders them.
func (s *state) subjectNames(prefix string, deleted bool) []string {
	match := subjectMatcher(prefix)
	out := []string{}
	for name := range s.subjects {
		if match(name) && len(s.versions(name, deleted)) > 0 {
			out = append(out, name)
		}
	}
	sortSubjects(out)
	return out
}

// sortSubjects orders subjects by context, then by name within it.
func sortSubjects(names []string) {
	sort.Slice(names, func(i, j int) bool {
		a, b := splitSubject(names[i]), splitSubject(names[j])
		if a.ctx != b.ctx {
			return a.ctx < b.ctx
		}
		return a.name < b.name
	})
}

// inContext lists every subject of a context, deleted ones included.
func (s *state) inContext(ctx string) []string {
	var out []string
	for name := range s.subjects {
		if contextOf(name) == ctx {
			out = append(out, name)
		}
	}
	sortSubjects(out)
	return out
}

// byID is one version carrying an ID in a context (the first by subject
// and version), live ones first; nil if the ID is unknown there.
func (s *state) byID(ctx string, id int) *schemaValue {
	var best *schemaValue
	for _, sv := range s.holders(ctx, id) {
		v := s.subjects[sv.Subject][sv.Version]
		if best == nil || (best.Deleted && !v.Deleted) {
			best = v
		}
	}
	return best
}

// holders lists the versions carrying an ID in a context, sorted.
func (s *state) holders(ctx string, id int) []subjectVersion {
	cid := contextID{ctx, id}
	out := make([]subjectVersion, 0, len(s.ids[cid]))
	for sv := range s.ids[cid] {
		out = append(out, sv)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Subject != out[j].Subject {
			return out[i].Subject < out[j].Subject
		}
		return out[i].Version < out[j].Version
	})
	return out
}

// referencedBy lists the IDs of the versions that reference subject's
// version, soft-deleted referrers only when deleted is set.
func (s *state) referencedBy(subject string, version int, deleted bool) []int {
	seen := map[int]bool{}
	out := []int{}
	for _, versions := range s.subjects {
		for _, v := range versions {
			if v.Deleted && !deleted {
				continue
			}
			for _, r := range v.References {
				if qualifyReference(v.Subject, r.Subject) == subject && r.Version == version && !seen[v.ID] {
					seen[v.ID] = true
					out = append(out, v.ID)
				}
			}
		}
	}
	sort.Ints(out)
	return out
}
