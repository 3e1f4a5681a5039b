package schema

// The JSON Schema compatibility rules, after Confluent's
// io.confluent.kafka.schemaregistry.json.diff (SchemaDiff and its per-type
// classes), read for behaviour. Confluent compares an "original" schema
// (the writer) with an "update" (the reader) and lists every Difference;
// those outside its strict compatible set are the incompatibilities.
//
// Confluent's comparison works on everit-json-schema's object model, where
// a schema object is one of a few classes: a schema with several kinds of
// keywords (say "type":"string" and "enum") becomes a synthetic allOf of
// one schema per kind, a "type" array an anyOf of one schema per type, and
// a schema with no "type" one schema per kind of keyword present (object,
// array, number, string keywords). jnode rebuilds that model from the
// compiled schema, so differences land on the same kinds and paths.

import (
	"fmt"
	"math/big"
	"net/url"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

type jkind int

const (
	jEmpty jkind = iota // {} or true
	jFalse
	jString
	jNumber
	jBoolean
	jNull
	jObject
	jArray
	jEnum
	jConst
	jNot
	jCombined
)

// jnode is one schema in everit's model. s is the compiled schema it
// reads its keywords from; parts of one schema object share it.
type jnode struct {
	b         *jbuilder // the builder of the schema's side, whose documents it reads
	kind      jkind
	s         *jsonschema.Schema
	integer   bool   // a number schema of type integer
	annotated bool   // carries the object's $id, title, description, default
	criterion string // allOf, anyOf or oneOf
	subs      []*jnode
	key       string // the subschema's text, to collapse duplicates
}

type jbuilder struct {
	docs  map[string]any
	cache map[*jsonschema.Schema]*jnode
	refs  map[*jsonschema.Schema]bool // refs being followed, to stop a loop of bare refs
}

func (b *jbuilder) node(s *jsonschema.Schema) *jnode {
	if s == nil {
		return nil
	}
	if n, ok := b.cache[s]; ok {
		return n
	}
	if target := bareRef(s); target != nil {
		if b.refs[s] {
			return &jnode{b: b, kind: jEmpty, s: s, annotated: true}
		}
		b.refs[s] = true
		n := b.node(target)
		delete(b.refs, s)
		b.cache[s] = n
		return n
	}
	n := &jnode{b: b, s: s, annotated: true, key: b.textKey(s)}
	b.cache[s] = n // before the parts: a recursive schema meets itself
	if s.Bool != nil {
		if *s.Bool {
			n.kind = jEmpty
		} else {
			n.kind = jFalse
		}
		return n
	}
	parts := b.parts(s)
	switch len(parts) {
	case 0:
		n.kind = jEmpty
	case 1:
		p := parts[0]
		n.kind, n.integer, n.criterion, n.subs = p.kind, p.integer, p.criterion, p.subs
		if p.s != s { // a $ref beside other keywords (2019-09 on)
			n.s = p.s
		}
	default:
		n.kind, n.criterion, n.subs = jCombined, "allOf", parts
	}
	return n
}

// bareRef is the schema a $ref leads to when the $ref stands alone (or,
// before 2019-09, when its siblings are ignored).
func bareRef(s *jsonschema.Schema) *jsonschema.Schema {
	ref := s.Ref
	if ref == nil && s.RecursiveRef != nil {
		ref = s.RecursiveRef
	}
	if ref == nil && s.DynamicRef != nil {
		ref = s.DynamicRef.Ref
	}
	if ref == nil {
		return nil
	}
	if s.DraftVersion < 2019 {
		return ref
	}
	c := *s
	c.Ref, c.RecursiveRef, c.DynamicRef = nil, nil, nil
	if len((&jbuilder{}).partsNoRef(&c)) == 0 {
		return ref
	}
	return nil
}

// parts are the schemas everit extracts from one schema object, in its
// extractors' order: enum, allOf, anyOf, oneOf, not, const, then by type.
func (b *jbuilder) parts(s *jsonschema.Schema) []*jnode {
	var out []*jnode
	if s.Ref != nil {
		out = append(out, b.node(s.Ref))
	}
	return append(out, b.partsNoRef(s)...)
}

func (b *jbuilder) partsNoRef(s *jsonschema.Schema) []*jnode {
	var out []*jnode
	if s.Enum != nil {
		out = append(out, &jnode{b: b, kind: jEnum, s: s})
	}
	for _, c := range []struct {
		name string
		subs []*jsonschema.Schema
	}{{"allOf", s.AllOf}, {"anyOf", s.AnyOf}, {"oneOf", s.OneOf}} {
		if c.subs == nil {
			continue
		}
		n := &jnode{b: b, kind: jCombined, s: s, criterion: c.name}
		if b.cache != nil {
			for _, sub := range c.subs {
				n.subs = append(n.subs, b.node(sub))
			}
		}
		out = append(out, n)
	}
	if s.Not != nil {
		out = append(out, &jnode{b: b, kind: jNot, s: s})
	}
	if s.Const != nil {
		out = append(out, &jnode{b: b, kind: jConst, s: s})
	}
	if s.Types != nil && !s.Types.IsEmpty() {
		types := s.Types.ToStrings()
		if len(types) == 1 {
			return append(out, b.typedNode(s, types[0]))
		}
		n := &jnode{b: b, kind: jCombined, s: s, criterion: "anyOf"}
		for _, t := range types {
			tn := b.typedNode(s, t)
			tn.key = b.textKey(s) + "|" + t
			n.subs = append(n.subs, tn)
		}
		return append(out, n)
	}
	if s.Items != nil || s.AdditionalItems != nil || s.MaxItems != nil || s.MinItems != nil || s.UniqueItems ||
		s.Contains != nil || s.PrefixItems != nil || s.Items2020 != nil || s.UnevaluatedItems != nil ||
		(s.DraftVersion < 2020 && b.rawHas(s, "additionalItems")) {
		out = append(out, &jnode{b: b, kind: jArray, s: s})
	}
	if s.Properties != nil || s.Required != nil || s.MinProperties != nil || s.MaxProperties != nil ||
		s.Dependencies != nil || s.DependentRequired != nil || s.DependentSchemas != nil || s.PatternProperties != nil ||
		s.AdditionalProperties != nil || s.PropertyNames != nil || s.UnevaluatedProperties != nil {
		out = append(out, &jnode{b: b, kind: jObject, s: s})
	}
	if s.Minimum != nil || s.Maximum != nil || s.ExclusiveMinimum != nil || s.ExclusiveMaximum != nil || s.MultipleOf != nil {
		out = append(out, &jnode{b: b, kind: jNumber, s: s})
	}
	if s.MinLength != nil || s.MaxLength != nil || s.Pattern != nil || s.Format != nil {
		out = append(out, &jnode{b: b, kind: jString, s: s})
	}
	return out
}

func (b *jbuilder) typedNode(s *jsonschema.Schema, t string) *jnode {
	switch t {
	case "string":
		return &jnode{b: b, kind: jString, s: s}
	case "integer":
		return &jnode{b: b, kind: jNumber, s: s, integer: true}
	case "number":
		return &jnode{b: b, kind: jNumber, s: s}
	case "boolean":
		return &jnode{b: b, kind: jBoolean, s: s}
	case "null":
		return &jnode{b: b, kind: jNull, s: s}
	case "object":
		return &jnode{b: b, kind: jObject, s: s}
	case "array":
		return &jnode{b: b, kind: jArray, s: s}
	}
	return &jnode{b: b, kind: jEmpty, s: s}
}

// raw is the schema object's JSON, found by its location in the documents
// the compiler saw.
func (b *jbuilder) raw(s *jsonschema.Schema) (any, bool) {
	u, frag, _ := strings.Cut(s.Location, "#")
	v, ok := b.docs[u]
	if !ok {
		return nil, false
	}
	if frag == "" {
		return v, true
	}
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if t, err := url.PathUnescape(tok); err == nil {
			tok = t
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			if v, ok = c[tok]; !ok {
				return nil, false
			}
		case []any:
			var i int
			if _, err := fmt.Sscan(tok, &i); err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func (b *jbuilder) rawHas(s *jsonschema.Schema, key string) bool {
	v, _ := b.raw(s)
	m, _ := v.(map[string]any)
	_, ok := m[key]
	return ok
}

func (b *jbuilder) textKey(s *jsonschema.Schema) string {
	if v, ok := b.raw(s); ok {
		return jsonKey(v)
	}
	return fmt.Sprintf("%p", s)
}

func (b *jbuilder) connectType(s *jsonschema.Schema) string {
	v, _ := b.raw(s)
	m, _ := v.(map[string]any)
	t, _ := m["connect.type"].(string)
	return t
}

func (b *jbuilder) rawString(s *jsonschema.Schema, keys ...string) *string {
	v, _ := b.raw(s)
	m, _ := v.(map[string]any)
	for _, k := range keys {
		if t, ok := m[k].(string); ok {
			return &t
		}
	}
	return nil
}

// jdiff is one of Confluent's Differences: its type name and the path,
// "#/..." as Confluent writes it.
type jdiff struct {
	Kind string
	Path string
}

type jpair struct{ o, u *jnode }

// jstate is shared by every context of one comparison: the memo of pairs
// compared (differences relative to the pair), the pairs on the stack, and
// the fixpoint's seed of pairs known incompatible.
type jstate struct {
	memo       map[jpair][]jdiff
	inProgress map[jpair]bool
	seed       map[jpair][]jdiff
	optimism   bool
}

type jctx struct {
	st    *jstate
	path  []string
	diffs []jdiff
}

func (c *jctx) sub() *jctx {
	return &jctx{st: c.st, path: append([]string(nil), c.path...)}
}

func (c *jctx) enter(p string) func() {
	c.path = append(c.path, p)
	return func() { c.path = c.path[:len(c.path)-1] }
}

func (c *jctx) pathString() string { return "#/" + strings.Join(c.path, "/") }

func (c *jctx) add(kind string) { c.diffs = append(c.diffs, jdiff{kind, c.pathString()}) }

func (c *jctx) addAt(attr, kind string) {
	defer c.enter(attr)()
	c.add(kind)
}

func (c *jctx) compatible() bool {
	for _, d := range c.diffs {
		if !jsonCompatibleChanges[d.Kind] {
			return false
		}
	}
	return true
}

// jsonDiff lists every difference from original to update, as Confluent's
// SchemaDiff.compare does, iterating to a fixpoint so that a recursive
// cycle assumed compatible is rechecked once an incompatibility is known.
func jsonDiff(original, update *jsonSchema) []jdiff {
	ob := &jbuilder{docs: original.docs, cache: map[*jsonschema.Schema]*jnode{}, refs: map[*jsonschema.Schema]bool{}}
	ub := &jbuilder{docs: update.docs, cache: map[*jsonschema.Schema]*jnode{}, refs: map[*jsonschema.Schema]bool{}}
	on, un := ob.node(original.compiled), ub.node(update.compiled)
	seed := map[jpair][]jdiff{}
	for {
		st := &jstate{memo: map[jpair][]jdiff{}, inProgress: map[jpair]bool{}, seed: seed}
		c := &jctx{st: st}
		compareJSON(c, on, un)
		incompatible := map[jpair][]jdiff{}
		for p, ds := range st.memo {
			for _, d := range ds {
				if !jsonCompatibleChanges[d.Kind] {
					incompatible[p] = ds
					break
				}
			}
		}
		if !st.optimism || len(incompatible) == len(seed) {
			return c.diffs
		}
		seed = incompatible
	}
}

func compareJSON(c *jctx, o, u *jnode) {
	switch {
	case o == nil && u == nil:
		return
	case o == nil:
		c.add("SCHEMA_ADDED")
		return
	case u == nil:
		c.add("SCHEMA_REMOVED")
		return
	}
	key := jpair{o, u}
	ds, ok := c.st.memo[key]
	if !ok {
		if c.st.inProgress[key] {
			if seeded, ok := c.st.seed[key]; ok {
				ds = seeded
			} else {
				c.st.optimism = true
				return
			}
		} else {
			c.st.inProgress[key] = true
			sub := &jctx{st: c.st}
			compareTypes(sub, o, u)
			delete(c.st.inProgress, key)
			ds = sub.diffs
			c.st.memo[key] = ds
		}
	}
	prefix := c.pathString()
	for _, d := range ds {
		p := prefix
		if len(d.Path) > 2 {
			if len(c.path) == 0 {
				p = d.Path
			} else {
				p = prefix + "/" + d.Path[2:]
			}
		}
		c.diffs = append(c.diffs, jdiff{d.Kind, p})
	}
}

func compareTypes(c *jctx, o, u *jnode) {
	if o.kind != jCombined && u.kind == jCombined {
		if len(u.subs) == 1 {
			sc := c.sub()
			compareJSON(sc, o, u.subs[0])
			if sc.compatible() {
				c.diffs = append(c.diffs, sc.diffs...)
				return
			}
		} else if u.criterion == "anyOf" || u.criterion == "oneOf" {
			for _, us := range u.subs {
				sc := c.sub()
				compareJSON(sc, o, us)
				if sc.compatible() {
					c.diffs = append(c.diffs, sc.diffs...)
					c.add("SUM_TYPE_EXTENDED")
					return
				}
			}
		}
	} else if o.kind == jCombined && u.kind != jCombined {
		if len(o.subs) == 1 {
			sc := c.sub()
			compareJSON(sc, o.subs[0], u)
			if sc.compatible() {
				c.diffs = append(c.diffs, sc.diffs...)
				return
			}
		} else if o.criterion == "allOf" {
			for _, os := range o.subs {
				sc := c.sub()
				compareJSON(sc, os, u)
				if sc.compatible() {
					c.diffs = append(c.diffs, sc.diffs...)
					c.add("PRODUCT_TYPE_NARROWED")
					return
				}
			}
		}
	}
	if o.kind != u.kind {
		if o.kind == jFalse || u.kind == jEmpty {
			return // false reads nothing; an empty schema reads anything
		}
		if o.b.connectType(o.s) == "bytes" && u.b.connectType(u.s) == "bytes" {
			return // Confluent lets connect.type bytes change its JSON type
		}
		c.add("TYPE_CHANGED")
		return
	}
	if o.annotated && u.annotated {
		compareAnnotations(c, o, u)
	}
	switch o.kind {
	case jString:
		compareString(c, o.s, u.s)
	case jNumber:
		compareNumber(c, o, u)
	case jConst:
		if jsonKey(*o.s.Const) != jsonKey(*u.s.Const) {
			c.addAt("const", "ENUM_ARRAY_CHANGED")
		}
	case jEnum:
		compareEnum(c, o.s, u.s)
	case jCombined:
		compareCombined(c, o, u)
	case jNot:
		defer c.enter("not")()
		sc := c.sub()
		// A not reads more when what it refuses shrinks: compare reversed.
		compareJSON(sc, u.b.node(u.s.Not), o.b.node(o.s.Not))
		if sc.compatible() {
			c.add("NOT_TYPE_NARROWED")
		} else {
			c.add("NOT_TYPE_EXTENDED")
		}
	case jObject:
		compareObject(c, o, u)
	case jArray:
		compareArray(c, o, u)
	}
}

func compareAnnotations(c *jctx, o, u *jnode) {
	if !eqStrPtr(o.b.rawString(o.s, "$id", "id"), u.b.rawString(u.s, "$id", "id")) {
		c.add("ID_CHANGED")
	}
	if o.s.Title != u.s.Title {
		c.add("TITLE_CHANGED")
	}
	if o.s.Description != u.s.Description {
		c.add("DESCRIPTION_CHANGED")
	}
	if (o.s.Default == nil) != (u.s.Default == nil) || (o.s.Default != nil && jsonKey(*o.s.Default) != jsonKey(*u.s.Default)) {
		c.add("DEFAULT_CHANGED")
	}
}

func eqStrPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// compareLimit classifies a limit's change: added, removed, increased or
// decreased, under the keyword's name.
func compareLimit(c *jctx, name string, o, u *big.Rat, kind string) {
	switch {
	case o == nil && u == nil:
	case o == nil:
		c.addAt(name, kind+"_ADDED")
	case u == nil:
		c.addAt(name, kind+"_REMOVED")
	case o.Cmp(u) < 0:
		c.addAt(name, kind+"_INCREASED")
	case o.Cmp(u) > 0:
		c.addAt(name, kind+"_DECREASED")
	}
}

func intRat(p *int) *big.Rat {
	if p == nil {
		return nil
	}
	return new(big.Rat).SetInt64(int64(*p))
}

func compareString(c *jctx, o, u *jsonschema.Schema) {
	compareLimit(c, "maxLength", intRat(o.MaxLength), intRat(u.MaxLength), "MAX_LENGTH")
	compareLimit(c, "minLength", intRat(o.MinLength), intRat(u.MinLength), "MIN_LENGTH")
	switch {
	case o.Pattern == nil && u.Pattern != nil:
		c.addAt("pattern", "PATTERN_ADDED")
	case o.Pattern != nil && u.Pattern == nil:
		c.addAt("pattern", "PATTERN_REMOVED")
	case o.Pattern != nil && o.Pattern.String() != u.Pattern.String():
		c.addAt("pattern", "PATTERN_CHANGED")
	}
}

func compareNumber(c *jctx, o, u *jnode) {
	compareLimit(c, "maximum", o.s.Maximum, u.s.Maximum, "MAXIMUM")
	compareLimit(c, "minimum", o.s.Minimum, u.s.Minimum, "MINIMUM")
	compareLimit(c, "exclusiveMaximum", o.s.ExclusiveMaximum, u.s.ExclusiveMaximum, "EXCLUSIVE_MAXIMUM")
	compareLimit(c, "exclusiveMinimum", o.s.ExclusiveMinimum, u.s.ExclusiveMinimum, "EXCLUSIVE_MINIMUM")
	om, um := o.s.MultipleOf, u.s.MultipleOf
	switch {
	case om == nil && um == nil:
	case om == nil:
		c.addAt("multipleOf", "MULTIPLE_OF_ADDED")
	case um == nil:
		c.addAt("multipleOf", "MULTIPLE_OF_REMOVED")
	case om.Cmp(um) == 0:
	case isMultiple(um, om):
		c.addAt("multipleOf", "MULTIPLE_OF_EXPANDED")
	case isMultiple(om, um):
		c.addAt("multipleOf", "MULTIPLE_OF_REDUCED")
	default:
		c.addAt("multipleOf", "MULTIPLE_OF_CHANGED")
	}
	if o.integer != u.integer {
		if o.integer {
			c.add("TYPE_EXTENDED")
		} else {
			c.add("TYPE_NARROWED")
		}
	}
}

// isMultiple reports whether x is a whole multiple of y.
func isMultiple(x, y *big.Rat) bool {
	if y.Sign() == 0 {
		return false
	}
	return new(big.Rat).Quo(x, y).IsInt()
}

func ratOf(n interface{ String() string }) (*big.Rat, bool) {
	return new(big.Rat).SetString(n.String())
}

func valueSet(vs []any) map[string]bool {
	m := map[string]bool{}
	for _, v := range vs {
		m[jsonKey(v)] = true
	}
	return m
}

func containsAll(a, b map[string]bool) bool {
	for k := range b {
		if !a[k] {
			return false
		}
	}
	return true
}

func compareEnum(c *jctx, o, u *jsonschema.Schema) {
	ov, uv := valueSet(o.Enum.Values), valueSet(u.Enum.Values)
	switch {
	case len(ov) == len(uv) && containsAll(ov, uv):
	case containsAll(uv, ov):
		c.addAt("enum", "ENUM_ARRAY_EXTENDED")
	case containsAll(ov, uv):
		c.addAt("enum", "ENUM_ARRAY_NARROWED")
	default:
		c.addAt("enum", "ENUM_ARRAY_CHANGED")
	}
}

func dedupe(ns []*jnode) []*jnode {
	seen := map[string]bool{}
	var out []*jnode
	for _, n := range ns {
		k := n.key
		if k == "" {
			k = fmt.Sprintf("%p", n)
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, n)
		}
	}
	return out
}

func compareCombined(c *jctx, o, u *jnode) {
	switch {
	case o.criterion == u.criterion:
	case u.criterion == "anyOf" || (len(o.subs) == 1 && len(u.subs) == 1) ||
		(len(o.subs) == 1 && u.criterion == "oneOf") || (len(u.subs) == 1 && o.criterion == "allOf"):
		c.add("COMBINED_TYPE_EXTENDED")
	default:
		c.add("COMBINED_TYPE_CHANGED")
		return
	}
	os, us := dedupe(o.subs), dedupe(u.subs)
	switch {
	case len(os) < len(us):
		if u.criterion == "allOf" {
			c.add("PRODUCT_TYPE_EXTENDED")
		} else {
			c.add("SUM_TYPE_EXTENDED")
		}
	case len(os) > len(us):
		if o.criterion == "anyOf" || o.criterion == "oneOf" {
			c.add("SUM_TYPE_NARROWED")
		} else {
			c.add("PRODUCT_TYPE_NARROWED")
		}
	}
	// Which original subschemas each update subschema reads compatibly;
	// a maximum matching must cover the smaller side.
	edges := make([][]int, len(os))
	found := map[[2]int][]jdiff{}
	for i, on := range os {
		leave := c.enter(fmt.Sprintf("%s/%d", o.criterion, i))
		for j, un := range us {
			sc := c.sub()
			compareJSON(sc, on, un)
			if sc.compatible() {
				edges[i] = append(edges[i], j)
				found[[2]int{i, j}] = sc.diffs
			}
		}
		leave()
	}
	match := maxMatching(edges, len(us))
	matched := 0
	for i, j := range match {
		if j >= 0 {
			matched++
			c.diffs = append(c.diffs, found[[2]int{i, j}]...)
		}
	}
	if matched < min(len(os), len(us)) {
		c.add("COMBINED_TYPE_SUBSCHEMAS_CHANGED")
	}
}

// maxMatching is a maximum bipartite matching (augmenting paths): for each
// left vertex, the right vertex it is matched to or -1.
func maxMatching(edges [][]int, right int) []int {
	rightTo := make([]int, right)
	for i := range rightTo {
		rightTo[i] = -1
	}
	var try func(l int, seen []bool) bool
	try = func(l int, seen []bool) bool {
		for _, r := range edges[l] {
			if seen[r] {
				continue
			}
			seen[r] = true
			if rightTo[r] < 0 || try(rightTo[r], seen) {
				rightTo[r] = l
				return true
			}
		}
		return false
	}
	for l := range edges {
		try(l, make([]bool, right))
	}
	leftTo := make([]int, len(edges))
	for i := range leftTo {
		leftTo[i] = -1
	}
	for r, l := range rightTo {
		if l >= 0 {
			leftTo[l] = r
		}
	}
	return leftTo
}

// objectModel is what an object schema says of properties it does not
// list: permits (additionalProperties is not false), the schema of
// additionalProperties, unevaluatedProperties, patternProperties.
func openObject(b *jbuilder, s *jsonschema.Schema) bool {
	if ap, ok := s.AdditionalProperties.(bool); ok && !ap {
		return false
	}
	if _, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
		return false
	}
	if len(s.PatternProperties) > 0 {
		return false
	}
	un := b.node(s.UnevaluatedProperties)
	return un == nil || un.kind == jEmpty
}

func partialObject(b *jbuilder, s *jsonschema.Schema, prop string) *jnode {
	pats := make([]jsonschema.Regexp, 0, len(s.PatternProperties))
	for re := range s.PatternProperties {
		pats = append(pats, re)
	}
	sort.Slice(pats, func(i, j int) bool { return pats[i].String() < pats[j].String() })
	for _, re := range pats {
		if re.MatchString(prop) {
			return b.node(s.PatternProperties[re])
		}
	}
	if ap, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
		return b.node(ap)
	}
	if s.AdditionalProperties == nil || s.AdditionalProperties == true {
		if un := b.node(s.UnevaluatedProperties); un != nil && un.kind != jFalse && un.kind != jEmpty {
			return un
		}
	}
	return nil
}

func sortedKeys[V any](ms ...map[string]V) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

func has(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func compareObject(c *jctx, on, un *jnode) {
	o, u, ob, ub := on.s, un.s, on.b, un.b
	// required
	leave := c.enter("required")
	for _, k := range sortedKeys(o.Properties) {
		up, ok := u.Properties[k]
		if !ok {
			continue
		}
		or, ur := has(o.Required, k), has(u.Required, k)
		switch {
		case or && !ur:
			c.addAt(k, "REQUIRED_ATTRIBUTE_REMOVED")
		case !or && ur && up.Default != nil:
			c.addAt(k, "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED")
		case !or && ur:
			c.addAt(k, "REQUIRED_ATTRIBUTE_ADDED")
		}
	}
	leave()
	// properties
	leave = c.enter("properties")
	for _, k := range sortedKeys(o.Properties, u.Properties) {
		leaveProp := c.enter(k)
		os, us := ob.node(o.Properties[k]), ub.node(u.Properties[k])
		switch {
		case us == nil:
			switch partial := partialObject(ub, u, k); {
			case openObject(ub, u):
				c.add("PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL")
			case partial != nil:
				sc := c.sub()
				compareJSON(sc, os, partial)
				c.diffs = append(c.diffs, sc.diffs...)
				if sc.compatible() {
					c.add("PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
				} else {
					c.add("PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
				}
			case os.kind == jFalse:
				c.add("PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL")
			default:
				c.add("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL")
			}
		case os == nil:
			required, withDefault := has(u.Required, k), u.Properties[k].Default != nil
			if openObject(ob, o) {
				switch {
				case us.kind == jEmpty:
					c.add("PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL")
				case required && withDefault:
					c.add("REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL")
				case required:
					c.add("REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL")
				default:
					c.add("OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL")
				}
				break
			}
			if partial := partialObject(ob, o, k); partial != nil {
				sc := c.sub()
				compareJSON(sc, partial, us)
				c.diffs = append(c.diffs, sc.diffs...)
				if sc.compatible() {
					c.add("PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
				} else {
					c.add("PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
				}
			}
			switch {
			case required && withDefault:
				c.add("REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL")
			case required:
				c.add("REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL")
			default:
				c.add("OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL")
			}
		default:
			compareJSON(c, os, us)
		}
		leaveProp()
	}
	leave()
	compareDependencies(c, on, un)
	compareAdditional(c, "additionalProperties", "ADDITIONAL_PROPERTIES", on, un, o.AdditionalProperties, u.AdditionalProperties)
	compareUnevaluated(c, "unevaluatedProperties", "UNEVALUATED_PROPERTIES", ob.node(o.UnevaluatedProperties), ub.node(u.UnevaluatedProperties))
	compareLimit(c, "maxProperties", intRat(o.MaxProperties), intRat(u.MaxProperties), "MAX_PROPERTIES")
	compareLimit(c, "minProperties", intRat(o.MinProperties), intRat(u.MinProperties), "MIN_PROPERTIES")
}

func dependencies(s *jsonschema.Schema) (arrays map[string][]string, schemas map[string]*jsonschema.Schema) {
	arrays, schemas = map[string][]string{}, map[string]*jsonschema.Schema{}
	for k, v := range s.Dependencies {
		switch v := v.(type) {
		case []string:
			arrays[k] = v
		case *jsonschema.Schema:
			schemas[k] = v
		}
	}
	for k, v := range s.DependentRequired {
		arrays[k] = v
	}
	for k, v := range s.DependentSchemas {
		schemas[k] = v
	}
	return arrays, schemas
}

func compareDependencies(c *jctx, on, un *jnode) {
	defer c.enter("dependencies")()
	oa, os := dependencies(on.s)
	ua, us := dependencies(un.s)
	for _, k := range sortedKeys(oa, ua) {
		ov, oin := oa[k]
		uv, uin := ua[k]
		oset, uset := map[string]bool{}, map[string]bool{}
		for _, p := range ov {
			oset[p] = true
		}
		for _, p := range uv {
			uset[p] = true
		}
		switch {
		case !uin:
			c.addAt(k, "DEPENDENCY_ARRAY_REMOVED")
		case !oin:
			c.addAt(k, "DEPENDENCY_ARRAY_ADDED")
		case len(oset) == len(uset) && containsAll(oset, uset):
		case containsAll(uset, oset):
			c.addAt(k, "DEPENDENCY_ARRAY_EXTENDED")
		case containsAll(oset, uset):
			c.addAt(k, "DEPENDENCY_ARRAY_NARROWED")
		default:
			c.addAt(k, "DEPENDENCY_ARRAY_CHANGED")
		}
	}
	for _, k := range sortedKeys(os, us) {
		switch {
		case us[k] == nil:
			c.addAt(k, "DEPENDENCY_SCHEMA_REMOVED")
		case os[k] == nil:
			c.addAt(k, "DEPENDENCY_SCHEMA_ADDED")
		default:
			leave := c.enter(k)
			compareJSON(c, on.b.node(os[k]), un.b.node(us[k]))
			leave()
		}
	}
}

// compareAdditional compares additionalProperties or additionalItems: nil
// or true permit anything, false nothing, a schema what it allows.
func compareAdditional(c *jctx, name, kind string, on, un *jnode, o, u any) {
	defer c.enter(name)()
	permits := func(v any) bool { b, ok := v.(bool); return !ok || b }
	schemaOf := func(v any) *jsonschema.Schema { s, _ := v.(*jsonschema.Schema); return s }
	switch op, up, os, us := permits(o), permits(u), schemaOf(o), schemaOf(u); {
	case op != up && up:
		c.add(kind + "_ADDED")
	case op != up:
		c.add(kind + "_REMOVED")
	case os == nil && us != nil:
		c.add(kind + "_NARROWED")
	case us == nil && os != nil:
		c.add(kind + "_EXTENDED")
	default:
		compareJSON(c, on.b.node(os), un.b.node(us))
	}
}

func compareUnevaluated(c *jctx, name, kind string, on, un *jnode) {
	if on == nil && un == nil {
		return
	}
	defer c.enter(name)()
	isFalse := func(n *jnode) bool { return n != nil && n.kind == jFalse }
	isEmpty := func(n *jnode) bool { return n != nil && n.kind == jEmpty }
	switch {
	case on == nil && isFalse(un):
		c.add(kind + "_REMOVED")
	case on == nil:
		c.add(kind + "_NARROWED")
	case un == nil && isFalse(on):
		c.add(kind + "_ADDED")
	case un == nil:
		c.add(kind + "_EXTENDED")
	case isFalse(on) && !isFalse(un):
		c.add(kind + "_ADDED")
	case !isFalse(on) && isFalse(un):
		c.add(kind + "_REMOVED")
	case isEmpty(on) && !isEmpty(un):
		c.add(kind + "_NARROWED")
	case !isEmpty(on) && isEmpty(un):
		c.add(kind + "_EXTENDED")
	default:
		compareJSON(c, on, un)
	}
}

// arrayModel reads an array schema in everit's terms: one schema for all
// items, or a list per position with additional items after it.
type arrayModel struct {
	all        *jsonschema.Schema
	list       []*jsonschema.Schema
	additional any // nil, bool or *jsonschema.Schema
}

func arrayOf(b *jbuilder, s *jsonschema.Schema) arrayModel {
	var m arrayModel
	switch it := s.Items.(type) {
	case *jsonschema.Schema:
		m.all = it
	case []*jsonschema.Schema:
		m.list = it
	}
	m.additional = s.AdditionalItems
	if s.PrefixItems != nil {
		m.list = s.PrefixItems
		if s.Items2020 != nil {
			m.additional = boolOrSchema(s.Items2020)
		}
	} else if s.Items2020 != nil && s.Items2020.Bool != nil {
		// Confluent reads a boolean items as additional items.
		m.additional = *s.Items2020.Bool
	} else if s.Items2020 != nil {
		m.all = s.Items2020
	}
	if m.additional == nil && s.DraftVersion < 2020 {
		// The compiler drops additionalItems without an items list, as
		// the spec lets it; everit keeps a boolean one, so read the text.
		if v, ok := b.raw(s); ok {
			if m, _ := v.(map[string]any); m != nil {
				if ai, ok := m["additionalItems"].(bool); ok {
					return arrayModel{all: arrayOf2(s), additional: ai}
				}
			}
		}
	}
	return m
}

func arrayOf2(s *jsonschema.Schema) *jsonschema.Schema {
	it, _ := s.Items.(*jsonschema.Schema)
	return it
}

func boolOrSchema(s *jsonschema.Schema) any {
	if s.Bool != nil {
		return *s.Bool
	}
	return s
}

func openArray(b *jbuilder, s *jsonschema.Schema) bool {
	m := arrayOf(b, s)
	if v, ok := m.additional.(bool); ok && !v {
		return false
	}
	if _, ok := m.additional.(*jsonschema.Schema); ok {
		return false
	}
	un := b.node(s.UnevaluatedItems)
	return un == nil || un.kind == jEmpty
}

func partialArray(b *jbuilder, s *jsonschema.Schema) *jnode {
	m := arrayOf(b, s)
	if as, ok := m.additional.(*jsonschema.Schema); ok {
		return b.node(as)
	}
	if m.additional == nil || m.additional == true {
		if un := b.node(s.UnevaluatedItems); un != nil && un.kind != jFalse && un.kind != jEmpty {
			return un
		}
	}
	return nil
}

func compareArray(c *jctx, on, un *jnode) {
	o, u, ob, ub := on.s, un.s, on.b, un.b
	om, um := arrayOf(ob, o), arrayOf(ub, u)
	leave := c.enter("items")
	compareJSON(c, ob.node(om.all), ub.node(um.all))
	leave()
	for i := 0; i < max(len(om.list), len(um.list)); i++ {
		leave := c.enter(fmt.Sprintf("items/%d", i))
		switch {
		case i < len(om.list) && i < len(um.list):
			compareJSON(c, ob.node(om.list[i]), ub.node(um.list[i]))
		case i < len(om.list):
			os := ob.node(om.list[i])
			switch partial := partialArray(ub, u); {
			case openArray(ub, u):
				c.add("ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL")
			case partial != nil:
				sc := c.sub()
				compareJSON(sc, os, partial)
				c.diffs = append(c.diffs, sc.diffs...)
				if sc.compatible() {
					c.add("ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
				} else {
					c.add("ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
				}
			case os.kind == jFalse:
				c.add("ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL")
			default:
				c.add("ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL")
			}
		default:
			us := ub.node(um.list[i])
			switch partial := partialArray(ob, o); {
			case openArray(ob, o) && us.kind == jEmpty:
				c.add("ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL")
			case openArray(ob, o):
				c.add("ITEM_ADDED_TO_OPEN_CONTENT_MODEL")
			case partial != nil:
				sc := c.sub()
				compareJSON(sc, partial, us)
				c.diffs = append(c.diffs, sc.diffs...)
				if sc.compatible() {
					c.add("ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
				} else {
					c.add("ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
				}
			default:
				c.add("ITEM_ADDED_TO_CLOSED_CONTENT_MODEL")
			}
		}
		leave()
	}
	compareAdditionalItems(c, on, un, om.additional, um.additional)
	compareUnevaluated(c, "unevaluatedItems", "UNEVALUATED_ITEMS", ob.node(o.UnevaluatedItems), ub.node(u.UnevaluatedItems))
	compareLimit(c, "maxItems", intRat(o.MaxItems), intRat(u.MaxItems), "MAX_ITEMS")
	compareLimit(c, "minItems", intRat(o.MinItems), intRat(u.MinItems), "MIN_ITEMS")
	if o.UniqueItems != u.UniqueItems {
		if o.UniqueItems {
			c.addAt("uniqueItems", "UNIQUE_ITEMS_REMOVED")
		} else {
			c.addAt("uniqueItems", "UNIQUE_ITEMS_ADDED")
		}
	}
	compareLimit(c, "maxContains", intRat(o.MaxContains), intRat(u.MaxContains), "MAX_CONTAINS")
	compareLimit(c, "minContains", intRat(o.MinContains), intRat(u.MinContains), "MIN_CONTAINS")
}

// compareAdditionalItems is compareAdditional with additionalItems' sense:
// Confluent names losing the permission REMOVED and gaining it ADDED.
func compareAdditionalItems(c *jctx, on, un *jnode, o, u any) {
	defer c.enter("additionalItems")()
	permits := func(v any) bool { b, ok := v.(bool); return !ok || b }
	schemaOf := func(v any) *jsonschema.Schema { s, _ := v.(*jsonschema.Schema); return s }
	switch op, up, os, us := permits(o), permits(u), schemaOf(o), schemaOf(u); {
	case op != up && op:
		c.add("ADDITIONAL_ITEMS_REMOVED")
	case op != up:
		c.add("ADDITIONAL_ITEMS_ADDED")
	case os == nil && us != nil:
		c.add("ADDITIONAL_ITEMS_NARROWED")
	case us == nil && os != nil:
		c.add("ADDITIONAL_ITEMS_EXTENDED")
	default:
		compareJSON(c, on.b.node(os), un.b.node(us))
	}
}
