package schemaregistry

// What broker-side schema ID validation asks (docs/DESIGN-schemaregistry.md
// "Broker-side validation"): is an ID registered under a subject, and what
// record name does the schema behind an ID have. The broker declares the
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

// RecordName is the record name of the schema with this ID (see
// RecordName); found is false when no version carries the ID, also once
// the store has been read to its end.
func (r *Registry) RecordName(ctx context.Context, id int32) (string, bool, error) {
	if name, ok := r.recordNameNow(int(id)); ok {
		return name, true, nil
	}
	if err := r.store.catchUp(ctx); err != nil {
		return "", false, err
	}
	name, ok := r.recordNameNow(int(id))
	return name, ok, nil
}

func (r *Registry) recordNameNow(id int) (string, bool) {
	var v *schemaValue
	r.read(func(st *state) { v = st.byID(defaultContext, id) })
	if v == nil {
		return "", false
	}
	return RecordName(v.SchemaType, v.Schema), true
}

// RecordName is the name Confluent's RecordNameStrategy gives a schema's
// subject: an Avro record's full name (namespace.name), a JSON Schema's
// title; "" for any other Avro schema or a JSON Schema without a title,
// which that strategy refuses (Confluent's serializers throw "must only
// be a record schema"). Protobuf is not derived yet (""): its name depends
// on the message indexes after the ID, which need the parsed file.
func RecordName(schemaType, text string) string {
	switch schemaType {
	case "", "AVRO":
		var s struct {
			Type      any    `json:"type"`
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		}
		if json.Unmarshal([]byte(text), &s) != nil || (s.Type != "record" && s.Type != "error") || s.Name == "" {
			return ""
		}
		if strings.Contains(s.Name, ".") || s.Namespace == "" {
			return s.Name
		}
		return s.Namespace + "." + s.Name
	case "JSON":
		var s struct {
			Title string `json:"title"`
		}
		if json.Unmarshal([]byte(text), &s) != nil {
			return ""
		}
		return s.Title
	}
	return ""
}

// Remote asks a registry over HTTP (Confluent's API, through franz-go's
// pkg/sr): any registry, Samsa's or Confluent's.
type Remote struct {
	cl *sr.Client
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
	return &Remote{cl: cl}, nil
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

// RecordName asks GET /schemas/ids/{id}.
func (rm *Remote) RecordName(ctx context.Context, id int32) (string, bool, error) {
	s, err := rm.cl.SchemaByID(ctx, int(id))
	if notFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return RecordName(s.Type.String(), s.Schema), true, nil
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
	RecordName(ctx context.Context, id int32) (string, bool, error)
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
		names      map[int32]cachedAnswer
	}
}

type registeredKey struct {
	subject string
	id      int32
}

type cachedAnswer struct {
	name    string
	ok      bool
	expires time.Time
}

const maxCached = 10000

// NewCached wraps src.
func NewCached(src IDSource, positive, negative time.Duration) *Cached {
	c := &Cached{src: src, positive: positive, negative: negative, now: time.Now}
	c.mu.registered = map[registeredKey]cachedAnswer{}
	c.mu.names = map[int32]cachedAnswer{}
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

// RecordName answers from the cache, else from the source. An ID's
// schema never changes, so a found name is as good as a registration.
func (c *Cached) RecordName(ctx context.Context, id int32) (string, bool, error) {
	if a, ok := lookupCached(c, c.mu.names, id); ok {
		return a.name, a.ok, nil
	}
	name, found, err := c.src.RecordName(ctx, id)
	if err != nil {
		return "", false, err
	}
	storeCached(c, c.mu.names, id, cachedAnswer{name: name, ok: found})
	return name, found, nil
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
