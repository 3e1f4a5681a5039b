package streams

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/streams/internal/assign"
	"github.com/samsa-io/samsa/streams/state"
)

// Interactive queries (Kafka's IQ): read the stores of this instance's
// active tasks while the application runs, and find which instance holds a
// key. Reads see each store as of its task's last commit (streams/state's
// committed views), never a write the task has not committed.

// ErrNotLocal is returned when the key's partition is not an active task
// of this instance: QueryMetadataForKey says which instance has it.
var ErrNotLocal = errors.New("streams: the key's task is not active on this instance")

// queryables is the registry of the stores queries may read: by store
// name, then partition.
type queryables struct {
	mu     sync.RWMutex
	stores map[string]map[int32]queryable
	// hosts is the last assignment's map of endpoints to the source
	// partitions of their active tasks.
	hosts map[string][]assign.TopicPartition
	// metadataServed keeps the metadata endpoint to one per mux and prefix.
	metadataServed map[*http.ServeMux]map[string]bool
}

type queryable struct {
	def *storeDef
	kv  state.ReadOnlyKeyValueStore
	win state.ReadOnlyWindowStore
}

func (q *queryables) add(id TaskID, h *storeHandle) {
	var entry queryable
	switch s := h.store.(type) {
	case state.KeyValueStore:
		entry = queryable{def: h.def, kv: s.Committed()}
	case state.WindowStore:
		if h.def.retainDuplicates {
			return
		}
		entry = queryable{def: h.def, win: s.Committed()}
	default:
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stores == nil {
		q.stores = map[string]map[int32]queryable{}
	}
	if q.stores[h.def.name] == nil {
		q.stores[h.def.name] = map[int32]queryable{}
	}
	q.stores[h.def.name][id.Partition] = entry
}

func (q *queryables) remove(id TaskID, name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.stores[name], id.Partition)
}

func (q *queryables) setHosts(h map[string][]assign.TopicPartition) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.hosts = h
}

// KeyQueryMetadata says where a key of a store lives.
type KeyQueryMetadata struct {
	Partition int32
	// Host is the application.server of the instance with the key's
	// active task ("" when that instance set none or is not known yet).
	Host string
	// Local is true when this instance has it.
	Local bool
}

// storePartitions finds the subtopology of a store and its task count.
func (a *App) storePartitions(store string) (*subtopology, int32, error) {
	def, ok := a.topo.stores[store]
	if !ok {
		return nil, 0, fmt.Errorf("streams: no store %q in the topology", store)
	}
	if def.global {
		return nil, 0, fmt.Errorf("streams: store %q is global: every instance has all of it", store)
	}
	for _, st := range a.bt.subtopologies {
		if contains(st.stores, store) {
			return st, a.plan.tasks[st.id], nil
		}
	}
	return nil, 0, fmt.Errorf("streams: store %q is in no subtopology", store)
}

// QueryMetadataForKey finds the instance holding key (serialized with the
// store's key serde) in store: the default partitioner's choice, as the
// records were written (murmur2 of the key bytes).
func (a *App) QueryMetadataForKey(store string, key []byte) (KeyQueryMetadata, error) {
	if a.plan == nil {
		return KeyQueryMetadata{}, fmt.Errorf("streams: the application is not started")
	}
	st, n, err := a.storePartitions(store)
	if err != nil {
		return KeyQueryMetadata{}, err
	}
	p := int32(kgo.StickyKeyPartitioner(nil).ForTopic("").Partition(&kgo.Record{Key: key}, int(n)))
	md := KeyQueryMetadata{Partition: p}
	a.query.mu.RLock()
	defer a.query.mu.RUnlock()
	_, md.Local = a.query.stores[store][p]
	for host, tps := range a.query.hosts {
		for _, tp := range tps {
			if _, reads := st.topics[a.unresolve(tp.Topic)]; reads && tp.Partition == p {
				md.Host = host
			}
		}
	}
	return md, nil
}

func (a *App) unresolve(topic string) string {
	if p := a.cfg.ApplicationID + "-"; strings.HasPrefix(topic, p) {
		if _, ok := a.topo.internalTopics[strings.TrimPrefix(topic, p)]; ok {
			return strings.TrimPrefix(topic, p)
		}
	}
	return topic
}

// QueryKey reads key's value and timestamp from a local key-value store.
func QueryKey[K, V any](a *App, store string, key K) (value V, ts int64, found bool, err error) {
	q, kb, err := localFor(a, store, key)
	if err != nil {
		return value, 0, false, err
	}
	if q.kv == nil {
		return value, 0, false, fmt.Errorf("streams: store %q is not a key-value store", store)
	}
	b, err := q.kv.Get(kb)
	if err != nil || b == nil {
		return value, 0, false, err
	}
	vb, ts, err := state.SplitValueAndTimestamp(b)
	if err != nil {
		return value, 0, false, err
	}
	v, err := q.def.valueSerde.deserialize(store, vb)
	if err != nil {
		return value, 0, false, err
	}
	return as[V](v), ts, true, nil
}

func localFor[K any](a *App, store string, key K) (queryable, []byte, error) {
	def, ok := a.topo.stores[store]
	if !ok {
		return queryable{}, nil, fmt.Errorf("streams: no store %q in the topology", store)
	}
	kb, err := def.keySerde.serialize(store, key)
	if err != nil {
		return queryable{}, nil, err
	}
	md, err := a.QueryMetadataForKey(store, kb)
	if err != nil {
		return queryable{}, nil, err
	}
	a.query.mu.RLock()
	q, ok := a.query.stores[store][md.Partition]
	a.query.mu.RUnlock()
	if !ok {
		return queryable{}, nil, fmt.Errorf("%w (partition %d, on %q)", ErrNotLocal, md.Partition, md.Host)
	}
	return q, kb, nil
}

// QueryRange reads the local rows of a key-value store with keys in
// [from, to] by their serialized bytes (nil: unbounded), every local
// partition merged in key-byte order.
func QueryRange[K, V any](a *App, store string, from, to *K) ([]KeyValue[K, V], error) {
	def, ok := a.topo.stores[store]
	if !ok {
		return nil, fmt.Errorf("streams: no store %q in the topology", store)
	}
	var fb, tb []byte
	var err error
	if from != nil {
		if fb, err = def.keySerde.serialize(store, *from); err != nil {
			return nil, err
		}
	}
	if to != nil {
		if tb, err = def.keySerde.serialize(store, *to); err != nil {
			return nil, err
		}
	}
	a.query.mu.RLock()
	parts := make([]queryable, 0, len(a.query.stores[store]))
	for _, q := range a.query.stores[store] {
		parts = append(parts, q)
	}
	a.query.mu.RUnlock()
	type row struct {
		kb []byte
		kv KeyValue[K, V]
	}
	var rows []row
	for _, q := range parts {
		if q.kv == nil {
			return nil, fmt.Errorf("streams: store %q is not a key-value store", store)
		}
		it, err := q.kv.Range(fb, tb)
		if err != nil {
			return nil, err
		}
		for it.Next() {
			k, err := def.keySerde.deserialize(store, it.Key())
			if err == nil {
				var vb []byte
				vb, _, err = state.SplitValueAndTimestamp(it.Value())
				if err == nil {
					var v any
					v, err = def.valueSerde.deserialize(store, vb)
					rows = append(rows, row{append([]byte(nil), it.Key()...), KeyValue[K, V]{as[K](k), as[V](v)}})
				}
			}
			if err != nil {
				it.Close()
				return nil, err
			}
		}
		err = it.Err()
		it.Close()
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(rows, func(i, j int) bool { return bytes.Compare(rows[i].kb, rows[j].kb) < 0 })
	out := make([]KeyValue[K, V], len(rows))
	for i, r := range rows {
		out[i] = r.kv
	}
	return out, nil
}

// WindowValue is one window of a key in a window store.
type WindowValue[V any] struct {
	Window    Window
	Value     V
	Timestamp int64
}

// QueryWindows reads key's windows starting in [from, to] (ms) from a
// local window store.
func QueryWindows[K, V any](a *App, store string, key K, from, to int64) ([]WindowValue[V], error) {
	q, kb, err := localFor(a, store, key)
	if err != nil {
		return nil, err
	}
	if q.win == nil {
		return nil, fmt.Errorf("streams: store %q is not a window store", store)
	}
	it, err := q.win.FetchTimeRange(kb, from, to)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []WindowValue[V]
	for it.Next() {
		vb, ts, err := state.SplitValueAndTimestamp(it.Value())
		if err != nil {
			return nil, err
		}
		v, err := q.def.valueSerde.deserialize(store, vb)
		if err != nil {
			return nil, err
		}
		w := it.Window()
		end := w.Start + q.def.windowSize
		out = append(out, WindowValue[V]{Window: Window{Start: w.Start, End: end}, Value: as[V](v), Timestamp: ts})
	}
	return out, it.Err()
}

// ServeKeyValueStore adds to mux an HTTP endpoint answering a key-value
// store's keys as JSON: GET <prefix>/stores/<store>/keys/<key>, the key
// parsed from the path by parseKey. A key held by another instance is
// redirected there (307, to its application.server); 404 when absent.
// GET <prefix>/metadata lists the instances and their partitions.
func ServeKeyValueStore[K, V any](mux *http.ServeMux, prefix string, a *App, store string, parseKey func(string) (K, error)) {
	mux.HandleFunc("GET "+prefix+"/stores/"+store+"/keys/{key}", func(w http.ResponseWriter, r *http.Request) {
		key, err := parseKey(r.PathValue("key"))
		if err != nil {
			httpError(w, http.StatusBadRequest, err)
			return
		}
		v, ts, found, err := QueryKey[K, V](a, store, key)
		if errors.Is(err, ErrNotLocal) {
			def := a.topo.stores[store]
			kb, _ := def.keySerde.serialize(store, key)
			md, merr := a.QueryMetadataForKey(store, kb)
			if merr == nil && md.Host != "" {
				http.Redirect(w, r, "http://"+md.Host+r.URL.Path, http.StatusTemporaryRedirect)
				return
			}
			httpError(w, http.StatusServiceUnavailable, err)
			return
		}
		if err != nil {
			httpError(w, http.StatusInternalServerError, err)
			return
		}
		if !found {
			httpError(w, http.StatusNotFound, fmt.Errorf("key %q not found in %s", r.PathValue("key"), store))
			return
		}
		writeJSON(w, map[string]any{"key": key, "value": v, "timestamp": ts})
	})
	a.serveMetadataOnce(mux, prefix)
}

func (a *App) serveMetadataOnce(mux *http.ServeMux, prefix string) {
	a.query.mu.Lock()
	defer a.query.mu.Unlock()
	if a.query.metadataServed == nil {
		a.query.metadataServed = map[*http.ServeMux]map[string]bool{}
	}
	if a.query.metadataServed[mux][prefix] {
		return
	}
	if a.query.metadataServed[mux] == nil {
		a.query.metadataServed[mux] = map[string]bool{}
	}
	a.query.metadataServed[mux][prefix] = true
	mux.HandleFunc("GET "+prefix+"/metadata", func(w http.ResponseWriter, r *http.Request) {
		a.query.mu.RLock()
		defer a.query.mu.RUnlock()
		out := map[string][]string{}
		for host, tps := range a.query.hosts {
			for _, tp := range tps {
				out[host] = append(out[host], fmt.Sprintf("%s-%d", tp.Topic, tp.Partition))
			}
			sort.Strings(out[host])
		}
		writeJSON(w, map[string]any{"application.id": a.cfg.ApplicationID, "instances": out})
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func httpError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error_code": code, "message": err.Error()})
}
