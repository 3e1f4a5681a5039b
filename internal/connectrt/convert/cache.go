package convert

import (
	"container/list"
	"sync"
)

// lru is a bounded least-recently-used cache, safe for concurrent use, as
// Kafka's SynchronizedCache over an LRUCache; a size of 0 caches nothing.
type lru[K comparable, V any] struct {
	size int
	mu   struct {
		sync.Mutex
		order *list.List // front: most recent; elements hold *lruEntry
		items map[K]*list.Element
	}
}

type lruEntry[K comparable, V any] struct {
	key K
	val V
}

func newLRU[K comparable, V any](size int) *lru[K, V] {
	c := &lru[K, V]{size: size}
	c.mu.order = list.New()
	c.mu.items = map[K]*list.Element{}
	return c
}

// get and put on a nil cache (a converter used before Configure) cache
// nothing.
func (c *lru[K, V]) get(k K) (V, bool) {
	if c == nil {
		var zero V
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.mu.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.mu.order.MoveToFront(e)
	return e.Value.(*lruEntry[K, V]).val, true
}

func (c *lru[K, V]) put(k K, v V) {
	if c == nil || c.size <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.mu.items[k]; ok {
		e.Value.(*lruEntry[K, V]).val = v
		c.mu.order.MoveToFront(e)
		return
	}
	c.mu.items[k] = c.mu.order.PushFront(&lruEntry[K, V]{key: k, val: v})
	for c.mu.order.Len() > c.size {
		last := c.mu.order.Back()
		c.mu.order.Remove(last)
		delete(c.mu.items, last.Value.(*lruEntry[K, V]).key)
	}
}

func (c *lru[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.order.Len()
}
