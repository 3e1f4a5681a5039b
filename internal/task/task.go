package task

import (
	"context"
	"sync"
	"time"
)

// Group owns goroutines.
type Group struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewGroup returns a group whose goroutines see a context derived from parent.
func NewGroup(parent context.Context) *Group {
	ctx, cancel := context.WithCancel(parent)
	return &Group{ctx: ctx, cancel: cancel}
}

// Go runs fn in a new goroutine owned by the group.
func (g *Group) Go(fn func(ctx context.Context)) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		fn(g.ctx)
	}()
}

// Every runs fn every interval until the group stops.
func (g *Group) Every(interval time.Duration, fn func(ctx context.Context)) {
	g.Go(func(ctx context.Context) {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fn(ctx)
			}
		}
	})
}

// Context is the group's context, cancelled by Stop.
func (g *Group) Context() context.Context { return g.ctx }

// Stop cancels the group's context and waits for its goroutines.
func (g *Group) Stop() {
	g.cancel()
	g.wg.Wait()
}

// Broadcast wakes everyone waiting for the next occurrence of an event:
// Wait returns a channel that the next Notify closes. A waiter takes the
// channel before it checks the state it waits for, so an event between the
// check and the wait still wakes it. The zero value is ready to use.
type Broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

// Wait returns a channel closed at the next Notify.
func (b *Broadcast) Wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

// Notify wakes every current waiter.
func (b *Broadcast) Notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}
