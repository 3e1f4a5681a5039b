package schemaregistry

// What broker-side schema ID validation asks (docs/DESIGN-schemaregistry.md
// "Broker-side validation"): is an ID registered under a subject, what
// type is the schema behind an ID, and what record name does it have (for
// Protobuf, that of the message the record's message indexes name). The
// broker declares the
// interface (broker.SchemaIDs); cmd/samsa hands it a Registry running in
// the same process, or a Remote registry reached over HTTP, each behind a
// Cached layer.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/samsa-io/samsa/internal/schemaregistry/msgindex"
	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
	"github.com/samsa-io/samsa/pkg/serde"
)

// Registered reports whether id is the ID of a live (not soft-deleted)
// version of subject. A miss is checked again once the store has been
// read to its end, so that a schema another instance registered a moment
// ago is found; an error means the store could not be reached.
func (r *Registry) Registered(ctx context.Context, subject string, id int32) (bool, error) {
	if ok := r.registeredNow(subject, int(id)); ok {
		return true, nil
	}
	if err := r.store.catchUp(ctx); err != nil {
		return false, err
	}
	return r.registeredNow(subject, int(id)), nil
}

func (r *Registry) registeredNow(subject string, id int) bool {
	var ok bool
	r.read(func(st *state) {
		for _, sv := range st.holders(defaultContext, id) {
			if sv.Subject == subject && !st.subjects[sv.Subject][sv.Version].Deleted {
				ok = true
				return
			}
		}
	})
	return ok
}

// SchemaType is the type of the schema with this ID (AVRO when the
// stored version names none); found is false when no version carries the
// ID, also once the store has been read to its end.
func (r *Registry) SchemaType(ctx context.Context, id int32) (string, bool, error) {
	if typ, ok := r.schemaTypeNow(int(id)); ok {
		return typ, true, nil
	}
	if err := r.store.catchUp(ctx); err != nil {
		return "", false, err
	}
	typ, ok := r.schemaTypeNow(int(id))
	return typ, ok, nil
}

func (r *Registry) schemaTypeNow(id int) (string, bool) {
	var v *schemaValue
	r.read(func(st *state) { v = st.byID(defaultContext, id) })
	if v == nil {
		return "", false
	}
	return v.schemaTypeOrAvro(), true
}

// RecordName is the record name of the schema with this ID (see
// RecordName; for Protobuf, ProtobufRecordName of the message indexes);
// why says why when there is none, "no schema has the ID" once the
// store has been read to its end.
func (r *Registry) RecordName(ctx context.Context, id int32, indexes []int) (name, why string, err error) {
	if name, why, ok := r.recordNameNow(int(id), indexes); ok {
		return name, why, nil
	}
	if err := r.store.catchUp(ctx); err != nil {
		return "", "", err
	}
	if name, why, ok := r.recordNameNow(int(id), indexes); ok {
		return name, why, nil
	}
	return "", noSchemaWithID, nil
}

const noSchemaWithID = "no schema has the ID"

func (r *Registry) recordNameNow(id int, indexes []int) (name, why string, found bool) {
	r.read(func(st *state) {
		v := st.byID(defaultContext, id)
		if v == nil {
			return
		}
		found = true
		if v.schemaTypeOrAvro() != string(schema.Protobuf) || indexes == nil {
			name, why = RecordName(v.schemaTypeOrAvro(), v.Schema)
			return
		}
		p, err := r.parsedOf(st, v)
		if err != nil {
			why = "the Protobuf schema cannot be parsed: " + err.Error()
			return
		}
		name, why = ProtobufRecordName(p, indexes)
	})
	return name, why, found
}

// RecordName is the name Confluent's RecordNameStrategy gives a schema's
// subject: an Avro record's full name (namespace.name), a JSON Schema's
// title. Any other Avro schema, or a JSON Schema without a title, has
// none, and that strategy refuses it (Confluent's serializers throw
// "must only be a record schema"): name is "" and why says so. A
// Protobuf schema's name depends on a record's message indexes
// (ProtobufRecordName).
func RecordName(schemaType, text string) (name, why string) {
	switch schemaType {
	case "", "AVRO":
		var s struct {
			Type      any    `json:"type"`
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		}
		if json.Unmarshal([]byte(text), &s) != nil || (s.Type != "record" && s.Type != "error") || s.Name == "" {
			return "", "an Avro schema has one only when it is a record"
		}
		if strings.Contains(s.Name, ".") || s.Namespace == "" {
			return s.Name, ""
		}
		return s.Namespace + "." + s.Name, ""
	case "JSON":
		var s struct {
			Title string `json:"title"`
		}
		if json.Unmarshal([]byte(text), &s) != nil || s.Title == "" {
			return "", "a JSON Schema has one only when it has a title"
		}
		return s.Title, ""
	case "PROTOBUF":
		return "", "a Protobuf schema's record name is that of the message a record's message indexes name"
	}
	return "", "a schema of type " + schemaType + " has none"
}

// ProtobufRecordName is the record name of a record of the Protobuf
// schema p: the full name of the message its message indexes name
// (Confluent's ProtobufSchema.toMessageName, which its deserializer names
// the subject after). why says so when they name none.
func ProtobufRecordName(p schema.Schema, indexes []int) (name, why string) {
	f, ok := p.(interface {
		FileDescriptor() protoreflect.FileDescriptor
	})
	if !ok {
		return "", "a " + string(p.Type()) + " schema has no message indexes"
	}
	md, err := msgindex.Message(f.FileDescriptor(), indexes)
	if err != nil {
		return "", err.Error()
	}
	return string(md.FullName()), ""
}

// Remote asks a registry over HTTP (Confluent's API, through franz-go's
// pkg/sr): any registry, Samsa's or Confluent's.
type Remote struct {
	cl *sr.Client
	// serde fetches, parses and keeps Protobuf schemas with their
	// references, for their message names.
	serde *serde.Serde
}

// NewRemote is a client of the registry at urls (tried in turn, as
// Confluent's clients do).
func NewRemote(urls []string) (*Remote, error) {
	if len(urls) == 0 {
		return nil, errors.New("schemaregistry: no registry URL")
	}
	cl, err := sr.NewClient(sr.URLs(urls...), sr.UserAgent("samsa-broker"))
	if err != nil {
		return nil, fmt.Errorf("schemaregistry: %w", err)
	}
	return &Remote{cl: cl, serde: serde.New(cl)}, nil
}

// Registered asks GET /schemas/ids/{id}/versions, which lists the live
// versions carrying the ID (40403 when none).
func (rm *Remote) Registered(ctx context.Context, subject string, id int32) (bool, error) {
	versions, err := rm.cl.SchemaVersionsByID(ctx, int(id))
	if notFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, v := range versions {
		if v.Subject == subject {
			return true, nil
		}
	}
	return false, nil
}

// SchemaType asks GET /schemas/ids/{id}.
func (rm *Remote) SchemaType(ctx context.Context, id int32) (string, bool, error) {
	s, err := rm.cl.SchemaByID(ctx, int(id))
	if notFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return s.Type.String(), true, nil
}

// RecordName asks GET /schemas/ids/{id}; for a Protobuf schema, its
// references too, to parse it (once: the parsed schema is kept).
func (rm *Remote) RecordName(ctx context.Context, id int32, indexes []int) (name, why string, err error) {
	s, err := rm.cl.SchemaByID(ctx, int(id))
	if notFound(err) {
		return "", noSchemaWithID, nil
	}
	if err != nil {
		return "", "", err
	}
	if s.Type == sr.TypeProtobuf && indexes != nil {
		return rm.protobufRecordName(ctx, id, indexes)
	}
	name, why = RecordName(s.Type.String(), s.Schema)
	return name, why, nil
}

func (rm *Remote) protobufRecordName(ctx context.Context, id int32, indexes []int) (name, why string, err error) {
	s, err := rm.serde.SchemaByID(ctx, int(id))
	switch {
	case errors.Is(err, serde.ErrSchemaNotFound):
		return "", err.Error(), nil // a reference of its schema
	case errors.Is(err, schema.ErrInvalid):
		return "", "the Protobuf schema cannot be parsed: " + err.Error(), nil
	case err != nil:
		return "", "", err
	}
	name, err = s.MessageName(indexes)
	if err != nil {
		return "", err.Error(), nil
	}
	return name, "", nil
}

// notFound is the registry's answer that no schema has the ID: a
// verdict, not a failure.
func notFound(err error) bool {
	var re *sr.ResponseError
	return errors.As(err, &re) && re.ErrorCode == 40403 // Confluent's "schema not found"
}

// IDSource is what Cached wraps: a Registry or a Remote.
type IDSource interface {
	Registered(ctx context.Context, subject string, id int32) (bool, error)
	SchemaType(ctx context.Context, id int32) (typ string, found bool, err error)
	RecordName(ctx context.Context, id int32, indexes []int) (name, why string, err error)
}

// Cached remembers a source's answers: positive ones for Positive (a
// registered ID stays registered until its subject is deleted; 0 does
// not cache them), negative ones for Negative, briefly, so that a
// producer sending bad records does not send one lookup per batch while
// a schema registered meanwhile is still found soon. Errors are never
// cached. At most maxCached answers are kept; beyond, the cache is
// emptied and refilled.
type Cached struct {
	src                IDSource
	positive, negative time.Duration
	now                func() time.Time

	mu struct {
		sync.Mutex
		registered map[registeredKey]cachedAnswer
		types      map[int32]cachedAnswer
		names      map[nameKey]cachedAnswer
	}
}

type registeredKey struct {
	subject string
	id      int32
}

// nameKey is an ID and the message indexes asked with it, as msgindex
// writes them ("" for none).
type nameKey struct {
	id      int32
	indexes string
}

type cachedAnswer struct {
	name    string // a record name, or a schema type
	why     string
	ok      bool
	expires time.Time
}

const maxCached = 10000

// NewCached wraps src.
func NewCached(src IDSource, positive, negative time.Duration) *Cached {
	c := &Cached{src: src, positive: positive, negative: negative, now: time.Now}
	c.mu.registered = map[registeredKey]cachedAnswer{}
	c.mu.types = map[int32]cachedAnswer{}
	c.mu.names = map[nameKey]cachedAnswer{}
	return c
}

// Registered answers from the cache, else from the source.
func (c *Cached) Registered(ctx context.Context, subject string, id int32) (bool, error) {
	k := registeredKey{subject, id}
	if a, ok := lookupCached(c, c.mu.registered, k); ok {
		return a.ok, nil
	}
	ok, err := c.src.Registered(ctx, subject, id)
	if err != nil {
		return false, err
	}
	storeCached(c, c.mu.registered, k, cachedAnswer{ok: ok})
	return ok, nil
}

// SchemaType answers from the cache, else from the source. An ID's
// schema never changes, so a found type is as good as a registration.
func (c *Cached) SchemaType(ctx context.Context, id int32) (string, bool, error) {
	if a, ok := lookupCached(c, c.mu.types, id); ok {
		return a.name, a.ok, nil
	}
	typ, found, err := c.src.SchemaType(ctx, id)
	if err != nil {
		return "", false, err
	}
	storeCached(c, c.mu.types, id, cachedAnswer{name: typ, ok: found})
	return typ, found, nil
}

// RecordName answers from the cache, else from the source. A name is
// kept as a registration is; an answer without one only briefly.
func (c *Cached) RecordName(ctx context.Context, id int32, indexes []int) (string, string, error) {
	k := nameKey{id: id}
	if indexes != nil {
		k.indexes = string(msgindex.Append(nil, indexes))
	}
	if a, ok := lookupCached(c, c.mu.names, k); ok {
		return a.name, a.why, nil
	}
	name, why, err := c.src.RecordName(ctx, id, indexes)
	if err != nil {
		return "", "", err
	}
	storeCached(c, c.mu.names, k, cachedAnswer{name: name, why: why, ok: name != ""})
	return name, why, nil
}

func lookupCached[K comparable](c *Cached, m map[K]cachedAnswer, k K) (cachedAnswer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := m[k]
	if !ok || !c.now().Before(a.expires) {
		return cachedAnswer{}, false
	}
	return a, true
}

func storeCached[K comparable](c *Cached, m map[K]cachedAnswer, k K, a cachedAnswer) {
	ttl := c.negative
	if a.ok {
		ttl = c.positive
	}
	if ttl <= 0 {
		return
	}
	a.expires = c.now().Add(ttl)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(m) >= maxCached {
		clear(m)
	}
	m[k] = a
}
