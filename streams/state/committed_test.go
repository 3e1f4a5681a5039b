package state

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
)

// TestCommittedViewsSeeOnlyCommits: the views interactive queries read show
// the last commit, not the writes buffered since, for every store kind.
func TestCommittedViewsSeeOnlyCommits(t *testing.T) {
	for name, open := range kvVariants(t) {
		t.Run("keyvalue/"+name, func(t *testing.T) {
			s := open()
			defer s.Close()
			must(t, s.Put([]byte("b"), []byte("0")))
			must(t, s.Commit())
			must(t, s.Put([]byte("b"), []byte("1")))
			must(t, s.Put([]byte("c"), []byte("1")))
			view := s.Committed() // asked for in a transaction
			must(t, s.Put([]byte("a"), []byte("1")))
			if v, err := view.Get([]byte("b")); err != nil || string(v) != "0" {
				t.Fatalf("view of b = %q, %v; want the committed 0", v, err)
			}
			if v, err := view.Get([]byte("c")); err != nil || v != nil {
				t.Fatalf("uncommitted write visible: %q, %v", v, err)
			}
			if v, err := view.Get([]byte("a")); err != nil || v != nil {
				t.Fatalf("uncommitted write visible: %q, %v", v, err)
			}
			must(t, s.Commit())
			must(t, s.Put([]byte("a"), []byte("2")))
			must(t, s.Abort())
			if v, err := view.Get([]byte("a")); err != nil || string(v) != "1" {
				t.Fatalf("Get = %q, %v; want the committed 1", v, err)
			}
			if n, err := view.ApproximateNumEntries(); err != nil || n != 3 {
				t.Fatalf("ApproximateNumEntries = %d, %v", n, err)
			}
		})
	}
	for name, open := range windowVariants(t, testWindowOptions) {
		t.Run("window/"+name, func(t *testing.T) {
			s := open()
			defer s.Close()
			view := s.Committed()
			must(t, s.Put([]byte("a"), []byte("1"), 0))
			must(t, s.Commit())
			must(t, s.Put([]byte("a"), []byte("2"), 100)) // would expire the first
			it, err := view.All()
			if got := collectWindows(t, it, err); len(got) != 1 || string(got[0].value) != "1" {
				t.Fatalf("committed view: %v; want a@0=1", got)
			}
			must(t, s.Commit())
			it, err = view.All()
			if got := collectWindows(t, it, err); len(got) != 1 || got[0].start != 100 {
				t.Fatalf("after the commit: %v; want a@100 only", got)
			}
		})
	}
	for name, open := range sessionVariants(t, testSessionOptions) {
		t.Run("session/"+name, func(t *testing.T) {
			s := open()
			defer s.Close()
			view := s.Committed()
			must(t, s.Put([]byte("a"), Window{Start: 1, End: 2}, []byte("1")))
			if v, err := view.FetchSession([]byte("a"), 1, 2); err != nil || v != nil {
				t.Fatalf("uncommitted session visible: %q, %v", v, err)
			}
			must(t, s.Commit())
			if v, err := view.FetchSession([]byte("a"), 1, 2); err != nil || string(v) != "1" {
				t.Fatalf("FetchSession = %q, %v; want 1", v, err)
			}
		})
	}
}

// TestCommittedViewConcurrentReads: readers on other goroutines see whole
// commits while the task writes (run with -race). Each commit adds key i
// and sets "n" to i+1 together, so a reader must see exactly n keys.
func TestCommittedViewConcurrentReads(t *testing.T) {
	for name, open := range kvVariants(t) {
		t.Run(name, func(t *testing.T) {
			s := open()
			view := s.Committed()
			done := make(chan struct{})
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-done:
							return
						default:
						}
						if err := checkCommittedCount(view); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			for i := range 300 {
				must(t, s.Put(binary.BigEndian.AppendUint32([]byte("k"), uint32(i)), []byte("v")))
				must(t, s.Put([]byte("n"), binary.BigEndian.AppendUint32(nil, uint32(i+1))))
				must(t, s.Commit())
			}
			close(done)
			wg.Wait()
			must(t, s.Close())
			select {
			case err := <-errs:
				t.Fatal(err)
			default:
			}
			if _, err := view.Get([]byte("n")); err == nil && name == "pebble" {
				t.Fatal("a view of a closed pebble store read")
			}
		})
	}
}

func checkCommittedCount(view ReadOnlyKeyValueStore) error {
	it, err := view.PrefixScan([]byte("k"))
	if err != nil {
		return err
	}
	keys := 0
	for it.Next() {
		keys++
	}
	it.Close()
	// The scan ran before this Get, so n can only be larger.
	n, err := view.Get([]byte("n"))
	if err != nil {
		return err
	}
	if n != nil && keys > int(binary.BigEndian.Uint32(n)) || n == nil && keys > 0 {
		return fmt.Errorf("saw %d keys but n = %x", keys, n)
	}
	it, err = view.All()
	if err != nil {
		return err
	}
	defer it.Close()
	all, count := 0, -1
	for it.Next() {
		all++
		if string(it.Key()) == "n" {
			count = int(binary.BigEndian.Uint32(it.Value()))
		}
	}
	if count >= 0 && all != count+1 {
		return fmt.Errorf("one iterator saw %d entries with n = %d: not one commit", all, count)
	}
	return nil
}
