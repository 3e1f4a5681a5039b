package schema

// Protobuf compatibility, as Confluent's protobuf diff decides it
// (io.confluent.kafka.schemaregistry.protobuf.diff: SchemaDiff,
// MessageSchemaDiff, FieldSchemaDiff, EnumSchemaDiff). The diff walks the
// writer's schema (Confluent's "original") and the reader's ("update")
// together and lists every difference, each a type and a path such as
// #/Order/3 (message Order, field number 3) or #/Order/choice/4 (field 4
// of oneof choice); the schemas are compatible when every difference is
// in Confluent's set of compatible changes.
//
// Confluent walks Wire's unlinked elements and resolves type names
// itself; here the walk goes over the linked descriptors, which resolve
// every name. What Confluent reads from elements is read the same way
// from descriptors: a field's label is "" in a oneof and for a proto3
// field without one; map fields are maps whether written map<K, V> or as
// a repeated map-entry message; the synthetic map-entry messages are not
// types of their own.

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// The difference types, Confluent's Difference.Type names.
const (
	pbPackageChanged                = "PACKAGE_CHANGED"
	pbMessageAdded                  = "MESSAGE_ADDED"
	pbMessageRemoved                = "MESSAGE_REMOVED"
	pbMessageMoved                  = "MESSAGE_MOVED"
	pbEnumAdded                     = "ENUM_ADDED"
	pbEnumRemoved                   = "ENUM_REMOVED"
	pbEnumConstAdded                = "ENUM_CONST_ADDED"
	pbEnumConstChanged              = "ENUM_CONST_CHANGED"
	pbEnumConstRemoved              = "ENUM_CONST_REMOVED"
	pbFieldAdded                    = "FIELD_ADDED"
	pbFieldRemoved                  = "FIELD_REMOVED"
	pbFieldNameChanged              = "FIELD_NAME_CHANGED"
	pbFieldKindChanged              = "FIELD_KIND_CHANGED"
	pbFieldScalarKindChanged        = "FIELD_SCALAR_KIND_CHANGED"
	pbFieldNamedTypeChanged         = "FIELD_NAMED_TYPE_CHANGED"
	pbFieldNumericLabelChanged      = "FIELD_NUMERIC_LABEL_CHANGED"
	pbFieldStringOrBytesLabelChange = "FIELD_STRING_OR_BYTES_LABEL_CHANGED"
	pbRequiredFieldAdded            = "REQUIRED_FIELD_ADDED"
	pbRequiredFieldRemoved          = "REQUIRED_FIELD_REMOVED"
	pbOneofAdded                    = "ONEOF_ADDED"
	pbOneofRemoved                  = "ONEOF_REMOVED"
	pbOneofFieldAdded               = "ONEOF_FIELD_ADDED"
	pbOneofFieldRemoved             = "ONEOF_FIELD_REMOVED"
	pbOneofFieldMovedToTopLevel     = "ONEOF_FIELD_MOVED_TO_TOP_LEVEL"
	pbMultipleFieldsMovedToOneof    = "MULTIPLE_FIELDS_MOVED_TO_ONEOF"
	pbFieldMovedToExistingOneof     = "FIELD_MOVED_TO_EXISTING_ONEOF"
)

// pbCompatibleChanges is Confluent's SchemaDiff.COMPATIBLE_CHANGES.
var pbCompatibleChanges = map[string]bool{
	pbMessageAdded: true, pbMessageMoved: true,
	pbEnumAdded: true, pbEnumRemoved: true,
	pbEnumConstAdded: true, pbEnumConstChanged: true, pbEnumConstRemoved: true,
	pbFieldAdded: true, pbFieldRemoved: true, pbFieldNameChanged: true,
	pbFieldStringOrBytesLabelChange: true,
	pbOneofAdded:                    true, pbOneofRemoved: true, pbOneofFieldAdded: true,
	pbOneofFieldMovedToTopLevel: true,
}

// pbDifference is one difference: its type and path.
type pbDifference struct {
	kind string
	path string
}

func (d pbDifference) String() string { return d.kind + " " + d.path }

func canReadProtobuf(reader, writer Schema) []Incompatibility {
	r, ok1 := reader.(*protobufSchema)
	w, ok2 := writer.(*protobufSchema)
	if !ok1 || !ok2 {
		return []Incompatibility{{Kind: "TYPE_MISMATCH", Path: "#/", Message: "not Protobuf schemas"}}
	}
	var out []Incompatibility
	for _, d := range protobufDiff(w, r) {
		if pbCompatibleChanges[d.kind] {
			continue
		}
		out = append(out, Incompatibility{Kind: d.kind, Path: d.path, Message: protobufDescription(d.kind, d.path, "reader", "writer")})
	}
	return out
}

// ProtobufDifference renders a Protobuf incompatibility as Confluent's
// registry does in its error messages and verbose compatibility answers
// (its Difference.toString, formatted with the roles): the reader and
// writer named "new" and "old" for a BACKWARD check, the reverse for
// FORWARD.
func ProtobufDifference(inc Incompatibility, readerRole, writerRole string) string {
	return fmt.Sprintf(`{errorType:"%s", description:"%s"}`, inc.Kind, protobufDescription(inc.Kind, inc.Path, readerRole, writerRole))
}

// protobufDescription is Confluent's description of an incompatible
// difference; reader is the schema Confluent calls the update, writer the
// original.
func protobufDescription(kind, path, reader, writer string) string {
	switch kind {
	case pbPackageChanged:
		return fmt.Sprintf("The package at '%s' in the %s schema does not match the package in the %s schema", path, reader, writer)
	case pbMessageRemoved:
		return fmt.Sprintf("The %s schema is missing a MESSAGE type at path '%s' in the %s schema", reader, path, writer)
	case pbFieldKindChanged:
		return fmt.Sprintf("The type of a field at path '%s' in the %s schema does not match the %s schema", path, reader, writer)
	case pbFieldScalarKindChanged:
		return fmt.Sprintf("The kind of a SCALAR field at path '%s' in the %s schema does not match its kind in the %s schema", path, reader, writer)
	case pbFieldNamedTypeChanged:
		return fmt.Sprintf("The type of a MESSAGE field at path '%s' in the %s schema does not match its type in the %s schema", path, reader, writer)
	case pbFieldNumericLabelChanged:
		return fmt.Sprintf("The label for a NUMERIC field at path '%s' in the %s schema does not match its label in the %s schema", path, reader, writer)
	case pbRequiredFieldAdded:
		// Confluent's text has the double space.
		return fmt.Sprintf("A required field  at path '%s' in the %s schema is missing in the %s schema", path, reader, writer)
	case pbRequiredFieldRemoved:
		return fmt.Sprintf("The %s schema is missing a required field at path: '%s' in the %s schema", reader, path, writer)
	case pbOneofFieldRemoved:
		return fmt.Sprintf("The %s schema is missing a oneof field at path '%s' in the %s schema", reader, path, writer)
	case pbOneofFieldMovedToTopLevel:
		return fmt.Sprintf("The oneof field at path '%s' in the %s schema was moved out of its oneof to a top-level field in the %s schema", path, reader, writer)
	case pbMultipleFieldsMovedToOneof:
		return fmt.Sprintf("Multiple fields in the oneof at path '%s' in the %s schema are outside a oneof in the %s schema", path, reader, writer)
	case pbFieldMovedToExistingOneof:
		return fmt.Sprintf("A field in the oneof at path '%s' in the %s schema is outside an existing oneof in the %s schema", path, reader, writer)
	}
	return ""
}

// protobufDiff lists the differences from original to update, as
// Confluent's SchemaDiff.compare.
func protobufDiff(original, update *protobufSchema) []pbDifference {
	d := &pbDiffer{
		origRefs:   refsByName(original.refs),
		updRefs:    refsByName(update.refs),
		inProgress: map[protoreflect.MessageDescriptor]bool{},
	}
	o, u := original.file, update.file
	if o.Package() != u.Package() {
		d.add(pbPackageChanged)
	}
	d.compareTypes(o.Messages(), o.Enums(), u.Messages(), u.Enums())
	return d.diffs
}

func refsByName(refs []Ref) map[string]Ref {
	m := make(map[string]Ref, len(refs))
	for _, r := range refs {
		m[r.Name] = r
	}
	return m
}

// pbDiffer is Confluent's diff Context: the path walked so far, the
// differences found, and the messages being compared further up the
// stack (its SchemaScope), which end the walk through recursive types.
type pbDiffer struct {
	origRefs, updRefs map[string]Ref
	path              []string
	diffs             []pbDifference
	inProgress        map[protoreflect.MessageDescriptor]bool
}

func (d *pbDiffer) add(kind string) {
	d.diffs = append(d.diffs, pbDifference{kind: kind, path: "#/" + strings.Join(d.path, "/")})
}

// at runs f with p pushed onto the path.
func (d *pbDiffer) at(p string, f func()) {
	d.path = append(d.path, p)
	f()
	d.path = d.path[:len(d.path)-1]
}

// pbTypes indexes a scope's messages (map entries and groups left out:
// Wire has no such types) and enums by name, with each message's index
// among the messages.
type pbTypes struct {
	messages map[string]protoreflect.MessageDescriptor
	index    map[string]int
	enums    map[string]protoreflect.EnumDescriptor
}

func indexTypes(ms protoreflect.MessageDescriptors, es protoreflect.EnumDescriptors) pbTypes {
	t := pbTypes{messages: map[string]protoreflect.MessageDescriptor{}, index: map[string]int{}, enums: map[string]protoreflect.EnumDescriptor{}}
	for i := 0; i < ms.Len(); i++ {
		m := ms.Get(i)
		if m.IsMapEntry() || isGroupMessage(m) {
			continue
		}
		t.index[string(m.Name())] = len(t.messages)
		t.messages[string(m.Name())] = m
	}
	for i := 0; i < es.Len(); i++ {
		t.enums[string(es.Get(i).Name())] = es.Get(i)
	}
	return t
}

// isGroupMessage reports whether m is the message of a proto2 group.
func isGroupMessage(m protoreflect.MessageDescriptor) bool {
	parent, ok := m.Parent().(protoreflect.MessageDescriptor)
	if !ok {
		return false
	}
	fs := parent.Fields()
	for i := 0; i < fs.Len(); i++ {
		if f := fs.Get(i); f.Kind() == protoreflect.GroupKind && f.Message() == m {
			return true
		}
	}
	return false
}

// unionNames lists the names of a and b, sorted: Confluent walks a
// HashSet, whose order is Java's; sorted is the same order every time.
func unionNames[V any](a, b map[string]V) []string {
	var names []string
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

func (d *pbDiffer) compareTypes(om protoreflect.MessageDescriptors, oe protoreflect.EnumDescriptors, um protoreflect.MessageDescriptors, ue protoreflect.EnumDescriptors) {
	o, u := indexTypes(om, oe), indexTypes(um, ue)
	for _, name := range unionNames(o.messages, u.messages) {
		d.at(name, func() {
			om, um := o.messages[name], u.messages[name]
			switch {
			case um == nil:
				d.add(pbMessageRemoved)
			case om == nil:
				d.add(pbMessageAdded)
			default:
				d.compareMessage(om, um)
				// Moving a message is compatible: a record's message
				// indexes refer to the schema of its own id.
				if o.index[name] != u.index[name] {
					d.add(pbMessageMoved)
				}
			}
		})
	}
	for _, name := range unionNames(o.enums, u.enums) {
		d.at(name, func() {
			oe, ue := o.enums[name], u.enums[name]
			switch {
			case ue == nil:
				d.add(pbEnumRemoved)
			case oe == nil:
				d.add(pbEnumAdded)
			default:
				d.compareEnum(oe, ue)
			}
		})
	}
}

// pbFields is a message's fields by number, with the real oneof (if
// any) each belongs to, and its oneofs by name.
type pbFields struct {
	byTag      map[int]protoreflect.FieldDescriptor
	tagToOneof map[int]string
	oneofs     map[string]protoreflect.OneofDescriptor
}

func collectFields(m protoreflect.MessageDescriptor) pbFields {
	f := pbFields{byTag: map[int]protoreflect.FieldDescriptor{}, tagToOneof: map[int]string{}, oneofs: map[string]protoreflect.OneofDescriptor{}}
	fs := m.Fields()
	for i := 0; i < fs.Len(); i++ {
		fd := fs.Get(i)
		if fd.Kind() == protoreflect.GroupKind {
			continue // Wire keeps groups apart from fields; Confluent compares no groups
		}
		tag := int(fd.Number())
		f.byTag[tag] = fd
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
			f.tagToOneof[tag] = string(o.Name())
			f.oneofs[string(o.Name())] = o
		}
	}
	return f
}

// compareMessage is Confluent's MessageSchemaDiff.compare.
func (d *pbDiffer) compareMessage(o, u protoreflect.MessageDescriptor) {
	if !d.inProgress[o] {
		d.inProgress[o] = true
		d.compareFields(o, u)
		delete(d.inProgress, o)
	}
	d.compareTypes(o.Messages(), o.Enums(), u.Messages(), u.Enums())
}

func (d *pbDiffer) compareFields(o, u protoreflect.MessageDescriptor) {
	of, uf := collectFields(o), collectFields(u)
	// A oneof gone by name with none of its fields left anywhere was
	// deleted whole, which is compatible; when some survive, the ones
	// dropped are reported below.
	deleted := map[string]bool{}
	for name, oneof := range of.oneofs {
		if _, ok := uf.oneofs[name]; ok {
			continue
		}
		survives := false
		for i := 0; i < oneof.Fields().Len(); i++ {
			if _, ok := uf.byTag[int(oneof.Fields().Get(i).Number())]; ok {
				survives = true
			}
		}
		if !survives {
			deleted[name] = true
		}
	}
	d.checkNewExclusivity(u, of)
	for _, name := range unionNames(of.oneofs, uf.oneofs) {
		d.at(name, func() {
			if _, ok := uf.oneofs[name]; !ok {
				d.add(pbOneofRemoved)
			} else if _, ok := of.oneofs[name]; !ok {
				d.add(pbOneofAdded)
			}
		})
	}
	tags := make([]int, 0, len(of.byTag)+len(uf.byTag))
	for t := range of.byTag {
		tags = append(tags, t)
	}
	for t := range uf.byTag {
		if _, ok := of.byTag[t]; !ok {
			tags = append(tags, t)
		}
	}
	slices.Sort(tags)
	for _, tag := range tags {
		d.compareTag(tag, of, uf, deleted)
	}
}

// checkNewExclusivity finds fields that were independent and now share a
// oneof of the update: its fields that existed before must all come from
// one original oneof, else old data may set several of them at once.
func (d *pbDiffer) checkNewExclusivity(u protoreflect.MessageDescriptor, of pbFields) {
	oneofs := u.Oneofs()
	for i := 0; i < oneofs.Len(); i++ {
		oneof := oneofs.Get(i)
		if oneof.IsSynthetic() {
			continue
		}
		d.at(string(oneof.Name()), func() {
			groups := map[string]bool{}
			movedIn := 0
			for j := 0; j < oneof.Fields().Len(); j++ {
				tag := int(oneof.Fields().Get(j).Number())
				if name, ok := of.tagToOneof[tag]; ok {
					groups["oneof:"+name] = true
				} else if _, ok := of.byTag[tag]; ok {
					groups["field:"+strconv.Itoa(tag)] = true
					movedIn++
				}
			}
			if len(groups) > 1 {
				if movedIn > 1 {
					d.add(pbMultipleFieldsMovedToOneof)
				} else {
					d.add(pbFieldMovedToExistingOneof)
				}
			}
		})
	}
}

func (d *pbDiffer) compareTag(tag int, of, uf pbFields, deleted map[string]bool) {
	ofd, ufd := of.byTag[tag], uf.byTag[tag]
	oOneof, inO := of.tagToOneof[tag]
	uOneof, inU := uf.tagToOneof[tag]
	t := strconv.Itoa(tag)
	switch {
	case ufd == nil:
		if inO {
			if !deleted[oOneof] {
				d.at(oOneof, func() { d.at(t, func() { d.add(pbOneofFieldRemoved) }) })
			}
			return
		}
		d.at(t, func() {
			if ofd.Cardinality() == protoreflect.Required {
				d.add(pbRequiredFieldRemoved)
			} else {
				d.add(pbFieldRemoved)
			}
		})
	case ofd == nil:
		if inU {
			d.at(uOneof, func() { d.at(t, func() { d.add(pbOneofFieldAdded) }) })
			return
		}
		d.at(t, func() {
			if ufd.Cardinality() == protoreflect.Required {
				d.add(pbRequiredFieldAdded)
			} else {
				d.add(pbFieldAdded)
			}
		})
	default:
		if inO && !inU {
			d.at(t, func() { d.add(pbOneofFieldMovedToTopLevel) })
		}
		if inU {
			d.at(uOneof, func() { d.at(t, func() { d.compareField(ofd, ufd) }) })
		} else {
			d.at(t, func() { d.compareField(ofd, ufd) })
		}
	}
}

// compareField is Confluent's FieldSchemaDiff.compare.
func (d *pbDiffer) compareField(o, u protoreflect.FieldDescriptor) {
	if o.Name() != u.Name() {
		d.add(pbFieldNameChanged)
	}
	d.compareLabelsAndTypes(fieldLabel(o), fieldLabel(u), fieldType(o), fieldType(u))
}

// fieldLabel is the label Wire gives a field: none in a oneof, none for
// a proto3 field written without one, none for a map.
func fieldLabel(f protoreflect.FieldDescriptor) string {
	if o := f.ContainingOneof(); o != nil && !o.IsSynthetic() {
		return ""
	}
	if f.HasOptionalKeyword() && f.ParentFile().Syntax() == protoreflect.Proto3 {
		return "optional"
	}
	switch {
	case f.IsMap():
		return ""
	case f.Cardinality() == protoreflect.Repeated:
		return "repeated"
	case f.ParentFile().Syntax() != protoreflect.Proto2:
		return ""
	case f.Cardinality() == protoreflect.Required:
		return "required"
	}
	return "optional"
}

// pbFieldType is a field's type: a scalar kind, an enum, a message, or a
// map of two such.
type pbFieldType struct {
	kind       protoreflect.Kind
	message    protoreflect.MessageDescriptor
	enum       protoreflect.EnumDescriptor
	key, value *pbFieldType
}

func fieldType(f protoreflect.FieldDescriptor) pbFieldType {
	if f.IsMap() {
		k, v := fieldType(f.MapKey()), fieldType(f.MapValue())
		return pbFieldType{key: &k, value: &v}
	}
	return pbFieldType{kind: f.Kind(), message: f.Message(), enum: f.Enum()}
}

// Confluent's FieldSchemaDiff.Kind.
const (
	pbKindScalar  = "SCALAR"
	pbKindMap     = "MAP"
	pbKindMessage = "MESSAGE"
)

func (t pbFieldType) diffKind() string {
	switch {
	case t.key != nil:
		return pbKindMap
	case t.message != nil:
		return pbKindMessage
	}
	return pbKindScalar
}

// scalarKind groups the scalars whose encodings read one another, as
// Confluent's ScalarKind (after protobuf's "updating a message type").
func (t pbFieldType) scalarKind() string {
	switch t.kind {
	case protoreflect.EnumKind, protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.BoolKind:
		return "GENERAL_NUMBER"
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return "SIGNED_NUMBER"
	case protoreflect.StringKind, protoreflect.BytesKind:
		return "STRING_OR_BYTES"
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
		return "FIXED32"
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		return "FIXED64"
	case protoreflect.FloatKind:
		return "FLOAT"
	case protoreflect.DoubleKind:
		return "DOUBLE"
	}
	return "ANY"
}

func (d *pbDiffer) compareLabelsAndTypes(ol, ul string, o, u pbFieldType) {
	if o.diffKind() != u.diffKind() {
		d.add(pbFieldKindChanged)
		return
	}
	switch o.diffKind() {
	case pbKindScalar:
		d.compareScalars(ol, ul, o, u)
	case pbKindMessage:
		d.compareMessageTypes(o.message, u.message)
	case pbKindMap:
		d.compareLabelsAndTypes("", "", *o.key, *u.key)
		d.compareLabelsAndTypes("", "", *o.value, *u.value)
	}
}

func (d *pbDiffer) compareScalars(ol, ul string, o, u pbFieldType) {
	ok, uk := o.scalarKind(), u.scalarKind()
	if ok != uk {
		d.add(pbFieldScalarKindChanged)
		return
	}
	if ol == "" || ul == "" || ol == ul {
		return
	}
	switch ok {
	case "STRING_OR_BYTES":
		d.add(pbFieldStringOrBytesLabelChange)
	case "GENERAL_NUMBER", "SIGNED_NUMBER", "FIXED32", "FIXED64", "FLOAT", "DOUBLE":
		d.add(pbFieldNumericLabelChanged)
	}
}

// localName is a type's name within its package.
func localName(m protoreflect.MessageDescriptor) string {
	full := string(m.FullName())
	if pkg := string(m.ParentFile().Package()); pkg != "" {
		return strings.TrimPrefix(full, pkg+".")
	}
	return full
}

// pbTypeRef is where a type comes from, as Confluent's TypeElementInfo
// reference: the schema itself (subject "", version -1), a reference, or
// nothing known (a built-in import).
type pbTypeRef struct {
	subject string
	version int
}

func (d *pbDiffer) typeRef(m protoreflect.MessageDescriptor, original bool) *pbTypeRef {
	path := m.ParentFile().Path()
	if path == protobufMainFile {
		return &pbTypeRef{version: -1}
	}
	refs := d.updRefs
	if original {
		refs = d.origRefs
	}
	if r, ok := refs[path]; ok {
		return &pbTypeRef{subject: r.Subject, version: r.Version}
	}
	return nil
}

// compareMessageTypes compares two message-typed fields' types: by their
// names within their packages, and, when those match but the types come
// from different places (another reference subject or version), by their
// contents, walked from the type's own path.
func (d *pbDiffer) compareMessageTypes(o, u protoreflect.MessageDescriptor) {
	ol, ul := localName(o), localName(u)
	if ol != ul {
		d.add(pbFieldNamedTypeChanged)
		return
	}
	or, ur := d.typeRef(o, true), d.typeRef(u, false)
	if or != nil && ur != nil && *or == *ur {
		return
	}
	sub := &pbDiffer{origRefs: d.origRefs, updRefs: d.updRefs, inProgress: d.inProgress, path: strings.Split(ol, ".")}
	sub.compareMessage(o, u)
	d.diffs = append(d.diffs, sub.diffs...)
	for _, sd := range sub.diffs {
		if !pbCompatibleChanges[sd.kind] {
			d.add(pbFieldNamedTypeChanged)
			return
		}
	}
}

// compareEnum is Confluent's EnumSchemaDiff.compare: constants by number.
func (d *pbDiffer) compareEnum(o, u protoreflect.EnumDescriptor) {
	byTag := func(e protoreflect.EnumDescriptor) map[int]string {
		m := map[int]string{}
		for i := 0; i < e.Values().Len(); i++ {
			v := e.Values().Get(i)
			m[int(v.Number())] = string(v.Name())
		}
		return m
	}
	om, um := byTag(o), byTag(u)
	var tags []int
	for t := range om {
		tags = append(tags, t)
	}
	for t := range um {
		if _, ok := om[t]; !ok {
			tags = append(tags, t)
		}
	}
	slices.Sort(tags)
	for _, tag := range tags {
		d.at(strconv.Itoa(tag), func() {
			on, inO := om[tag]
			un, inU := um[tag]
			switch {
			case !inU:
				d.add(pbEnumConstRemoved)
			case !inO:
				d.add(pbEnumConstAdded)
			case on != un:
				d.add(pbEnumConstChanged)
			}
		})
	}
}
