package vfs

import "testing"

func TestCountingCountsOpenFiles(t *testing.T) {
	c := NewCounting(NewMem())
	if err := c.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	a, err := c.Create("/d/a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.OpenReadWrite("/d/b")
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Open("/d/a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Open("/d/missing"); err == nil {
		t.Fatal("opened a missing file")
	}
	if n := c.OpenFiles(); n != 3 {
		t.Fatalf("%d open, want 3", n)
	}
	a.Close()
	a.Close() // a second Close counts nothing
	r.Close()
	if n := c.OpenFiles(); n != 1 {
		t.Fatalf("%d open after closing two, want 1", n)
	}
	b.Close()
	if n := c.OpenFiles(); n != 0 {
		t.Fatalf("%d open after closing all, want 0", n)
	}
}
