package schemaregistry

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/httpauth"
	"github.com/samsa-io/samsa/internal/schemaregistry/schema"
)

// Config configures a Registry.
type Config struct {
	// ClientOpts reach the cluster (seeds, TLS, SASL); the registry adds
	// its own producing and consuming options.
	ClientOpts []kgo.Opt
	// Topic is the store topic; "_schemas" when empty, as Confluent's
	// kafkastore.topic.
	Topic string
	// ReplicationFactor of the store topic when the registry creates it;
	// 0 leaves it to the cluster's default.replication.factor.
	ReplicationFactor int16
	// Timeout bounds a write: producing the record and waiting until the
	// reader has applied it (Confluent's kafkastore.timeout.ms); 10s when
	// zero.
	Timeout time.Duration
	// Logger is slog.Default() when nil.
	Logger *slog.Logger
	// GroupID, when set, elects one primary among the instances sharing
	// the store through a Kafka group of that name (Confluent's
	// schema.registry.group.id); the others forward writes to it. Empty:
	// this instance writes, and must be the only one on its topic.
	GroupID string
	// URL is how the other instances reach this one's API (Confluent's
	// advertised listener), required with GroupID; https:// when TLS is
	// set.
	URL string
	// TLS, when set, serves the API over TLS (Confluent's https
	// listener): its certificate, and ClientAuth and ClientCAs to verify
	// clients' certificates (ssl.client.authentication).
	TLS *tls.Config
	// ForwardTLS is how this instance reaches a primary whose URL is
	// https://: the CAs to trust (nil: the system's) and the certificate
	// to show when the primary verifies clients.
	ForwardTLS *tls.Config
	// Auth, when set, requires HTTP basic authentication on every
	// request (Confluent's authentication.method=BASIC). A forwarded
	// request keeps the caller's Authorization header, and the primary
	// checks it again.
	Auth *httpauth.Auth
}

// DefaultTopic is the store topic Confluent's registry uses.
const DefaultTopic = "_schemas"

// Registry is one registry instance: the state built from the store, and
// the operations of Confluent's API on it. Reads answer from the state;
// writes are made by one writer at a time (wmu), on the primary only
// (docs/DESIGN-schemaregistry.md, Service).
type Registry struct {
	cfg   Config
	log   *slog.Logger
	store *store
	// election is nil without Config.GroupID: this instance is primary.
	election *election
	// forwardTransport carries writes forwarded to the primary.
	forwardTransport http.RoundTripper

	// wmu serializes writes: catching up, checking against the state and
	// producing happen as one step, so that two registrations cannot both
	// take the same version or ID.
	wmu sync.Mutex

	mu struct {
		sync.RWMutex
		st *state
	}

	// parsed caches parsed schemas by contentKey (a schema's text never
	// changes under its key). It has its own lock: it is filled under the
	// state's read lock, by many readers at once.
	parsed struct {
		sync.Mutex
		m map[string]schema.Schema
	}
}

// New connects to the cluster; Start reads the store.
func New(cfg Config) (*Registry, error) {
	if cfg.Topic == "" {
		cfg.Topic = DefaultTopic
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.GroupID != "" && cfg.URL == "" {
		return nil, fmt.Errorf("schemaregistry: a group (%s) needs this instance's URL for forwarding", cfg.GroupID)
	}
	if cfg.ReplicationFactor == 0 {
		cfg.ReplicationFactor = -1
	}
	r := &Registry{cfg: cfg, log: cfg.Logger, forwardTransport: newForwardTransport(cfg.ForwardTLS)}
	if r.log == nil {
		r.log = slog.Default()
	}
	r.log = r.log.With("component", "schemaregistry")
	r.mu.st = newState()
	r.parsed.m = map[string]schema.Schema{}
	s, err := newStore(cfg.Topic, cfg.ReplicationFactor, cfg.ClientOpts, r.log, r.apply)
	if err != nil {
		return nil, err
	}
	r.store = s
	return r, nil
}

// Start creates the store topic if missing and reads it to its end: the
// registry must not answer before it knows every schema.
func (r *Registry) Start(ctx context.Context) error {
	if err := r.store.start(ctx); err != nil {
		return err
	}
	if r.cfg.GroupID == "" {
		return nil
	}
	e, err := newElection(r.cfg.URL, r.cfg.GroupID, r.cfg.Topic, r.cfg.ClientOpts, r.log)
	if err != nil {
		return err
	}
	r.election = e
	e.start(ctx)
	return e.waitKnown(ctx)
}

// Close leaves the group (another instance takes over as primary), stops
// reading and closes the clients.
func (r *Registry) Close() {
	if r.election != nil {
		r.election.close()
	}
	r.store.close()
}

// primary is the URL writes go to: "" when this instance writes itself,
// errUnknownPrimary while none is elected.
func (r *Registry) primary() (string, *Error) {
	if r.election == nil {
		return "", nil
	}
	switch p := r.election.current(); p {
	case r.cfg.URL:
		return "", nil
	case "":
		return "", errUnknownPrimary()
	default:
		return p, nil
	}
}

// apply is the reader's callback: one record into the state.
func (r *Registry) apply(key, value []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.mu.st.apply(key, value); err != nil {
		r.log.Warn("skipping a store record", "err", err)
	}
}

// read runs fn on the state under the read lock.
func (r *Registry) read(fn func(st *state)) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	fn(r.mu.st)
}

// writeOp runs one write operation: catch up with the store (another
// instance may have written), decide under the state's read lock what to
// write, then write the records in order, each applied before the next.
// decide returns the records, or an *Error. op names the operation in a
// store error, as Confluent's messages do.
func (r *Registry) writeOp(ctx context.Context, op string, decide func(st *state) ([]record, error)) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	// The HTTP layer forwarded the request if another instance is
	// primary; an election that moved since is refused, never written
	// by two instances.
	if p, e := r.primary(); e != nil {
		return e
	} else if p != "" {
		return errNotPrimary(p)
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	if err := r.store.catchUp(ctx); err != nil {
		return storeError(op, err)
	}
	var recs []record
	var err error
	r.read(func(st *state) { recs, err = decide(st) })
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if err := r.store.write(ctx, rec.key, rec.value); err != nil {
			return storeError(op, err)
		}
	}
	return nil
}

type record struct {
	key   storeKey
	value any // nil: a tombstone
}

func storeError(op string, err error) *Error {
	if errors.Is(err, ErrStoreTimeout) || errors.Is(err, context.DeadlineExceeded) {
		return errTimeout(op+" operation timed out", err)
	}
	return errStore(op+" operation failed while writing to the Kafka store", err)
}

// parsedOf parses a stored version with its references, through the cache.
func (r *Registry) parsedOf(st *state, v *schemaValue) (schema.Schema, error) {
	ck := contentKeyOf(v)
	if p, ok := r.cachedParsed(ck); ok {
		return p, nil
	}
	refs, rerr := resolveRefs(st, v.Subject, v.References)
	if rerr != nil {
		return nil, rerr
	}
	t, err := schema.ParseType(v.SchemaType)
	if err != nil {
		return nil, err
	}
	p, err := schema.Parse(t, v.Schema, refs)
	if err != nil {
		return nil, err
	}
	r.cacheParsed(ck, p)
	return p, nil
}

func (r *Registry) cachedParsed(ck string) (schema.Schema, bool) {
	r.parsed.Lock()
	defer r.parsed.Unlock()
	p, ok := r.parsed.m[ck]
	return p, ok
}

func (r *Registry) cacheParsed(ck string, p schema.Schema) {
	r.parsed.Lock()
	defer r.parsed.Unlock()
	if len(r.parsed.m) > 10_000 {
		clear(r.parsed.m) // a bound: parsing again is only slower
	}
	r.parsed.m[ck] = p
}

// resolveRefs looks up the references of a schema of subject, and
// theirs, in the state: each once, those used before those using them, as
// schema.Parse wants.
func resolveRefs(st *state, subject string, refs []Reference) ([]schema.Ref, *Error) {
	var out []schema.Ref
	seen := map[subjectVersion]bool{}
	var visit func(parent string, refs []Reference, depth int) *Error
	visit = func(parent string, refs []Reference, depth int) *Error {
		if depth > 100 {
			return errInvalidSchema("Invalid schema: references nest more than 100 deep")
		}
		for _, ref := range refs {
			v := lookupRef(st, parent, ref)
			if v == nil {
				return errInvalidSchema(fmt.Sprintf("Invalid schema: reference %q to subject %q version %d not found", ref.Name, ref.Subject, ref.Version))
			}
			sv := subjectVersion{v.Subject, v.Version}
			if seen[sv] {
				continue
			}
			seen[sv] = true
			if err := visit(v.Subject, v.References, depth+1); err != nil {
				return err
			}
			out = append(out, schema.Ref{Name: ref.Name, Subject: v.Subject, Version: v.Version,
				Type: schema.Type(v.schemaTypeOrAvro()), Schema: v.Schema})
		}
		return nil
	}
	if err := visit(subject, refs, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// lookupRef finds the version a reference of a schema of parent names
// (an unqualified subject in parent's context); -1 is the latest, as in
// Confluent's registry. A soft-deleted version still resolves: schemas
// that use it stay readable.
func lookupRef(st *state, parent string, ref Reference) *schemaValue {
	subject := qualifyReference(parent, ref.Subject)
	if ref.Version == -1 {
		return st.latest(subject)
	}
	return st.subjects[subject][ref.Version]
}

// SchemaRequest is the body of register, lookup and compatibility
// requests.
type SchemaRequest struct {
	Schema     string          `json:"schema"`
	SchemaType string          `json:"schemaType,omitempty"`
	References []Reference     `json:"references,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	RuleSet    json.RawMessage `json:"ruleSet,omitempty"`
	// ID and Version are taken in IMPORT mode only.
	ID      int `json:"id,omitempty"`
	Version int `json:"version,omitempty"`
}

// parseRequest parses a request's schema for subject against the state:
// its type, its references resolved (version -1 pinned to the latest;
// subjects kept as the request spells them) and the text to store.
func parseRequest(st *state, subject string, req *SchemaRequest, normalize bool) (schema.Schema, string, []Reference, *Error) {
	t, err := schema.ParseType(req.SchemaType)
	if err != nil {
		return nil, "", nil, errInvalidSchema(err.Error())
	}
	if req.Schema == "" {
		return nil, "", nil, errInvalidSchema("Empty schema")
	}
	refs := make([]Reference, len(req.References))
	for i, ref := range req.References {
		v := lookupRef(st, subject, ref)
		if v == nil {
			return nil, "", nil, errInvalidSchema(fmt.Sprintf("Invalid schema %s, reference %q to subject %q version %d not found", req.Schema, ref.Name, ref.Subject, ref.Version))
		}
		refs[i] = Reference{Name: ref.Name, Subject: ref.Subject, Version: v.Version}
	}
	resolved, rerr := resolveRefs(st, subject, refs)
	if rerr != nil {
		return nil, "", nil, rerr
	}
	p, err := schema.Parse(t, req.Schema, resolved)
	if err != nil {
		return nil, "", nil, errInvalidSchema(err.Error())
	}
	text := p.Canonical()
	if normalize {
		text = p.Normalized()
	}
	if len(refs) == 0 {
		refs = nil
	}
	return p, text, refs, nil
}

// storedType is the schemaType a value stores: empty for Avro, as
// Confluent writes it.
func storedType(p schema.Schema) string {
	if p.Type() == schema.Avro {
		return ""
	}
	return string(p.Type())
}

// modeOf is the mode in force for a subject (inScope).
func modeOf(st *state, subject string) string {
	return inScope(st.modes, st.globalMode, subject, modeReadWrite)
}

// levelOf is the compatibility level in force for a subject (inScope).
func levelOf(st *state, subject string) string {
	return inScope(st.configs, st.globalConfig, subject, defaultLevel)
}

// inScope is a subject's setting as Confluent's lookup finds it: the
// subject's own; else its context's (":.ctx:"), or for the default
// context the global one; else the __GLOBAL context's; else def. A
// non-default context does not inherit the global setting. "\x00" asks
// for the global setting itself.
func inScope(own map[string]string, global, subject, def string) string {
	if v, ok := own[subject]; ok {
		return v
	}
	if ctx := contextOf(subject); subject != "\x00" && ctx != defaultContext {
		if v, ok := own[contextPrefixOf(ctx)]; ok {
			return v
		}
	} else if global != "" {
		return global
	}
	if v, ok := own[contextPrefixOf(globalContext)]; ok {
		return v
	}
	return def
}

// Modes, as the API and the store spell them.
const (
	modeReadWrite = "READWRITE"
	modeReadOnly  = "READONLY"
	modeImport    = "IMPORT"
)

func notWritable(st *state, subject string) *Error {
	if modeOf(st, subject) == modeReadOnly {
		return errNotPermitted(fmt.Sprintf("Subject %s in context %s is in read-only mode", subject, contextOf(subject)))
	}
	return nil
}
