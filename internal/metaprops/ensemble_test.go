package metaprops

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/internal/vfs"
)

// formatted makes a filesystem whose directories hold the given files.
func formatted(t *testing.T, dirs map[string]Props) *vfs.Mem {
	t.Helper()
	mem := vfs.NewMem()
	for d, p := range dirs {
		if err := mem.MkdirAll(d); err != nil {
			t.Fatal(err)
		}
		if err := Write(mem, d, p, when); err != nil {
			t.Fatal(err)
		}
	}
	return mem
}

func TestCheck(t *testing.T) {
	a1 := Props{ClusterID: clusterA, NodeID: 1, DirectoryID: dirID1}
	a1b := Props{ClusterID: clusterA, NodeID: 1, DirectoryID: dirID2}
	cases := []struct {
		name      string
		disk      map[string]Props
		dirs      []string
		clusterID string
		want      string // error substring; "" for success
		is        error
	}{
		{"all formatted", map[string]Props{"/logs": a1, "/meta": a1b}, []string{"/logs", "/meta"}, "", "", nil},
		{"the cluster ID expected", map[string]Props{"/logs": a1}, []string{"/logs"}, clusterA, "", nil},
		{"a directory named twice", map[string]Props{"/logs": a1}, []string{"/logs", "/logs/", "/logs/../logs"}, "", "", nil},
		{"nothing formatted", nil, []string{"/logs", "/meta"}, "",
			`log dir /logs is not formatted: run "samsa storage format --config server.properties --cluster-id <id>" with the cluster's ID`, ErrNotFormatted},
		{"the metadata dir not formatted", map[string]Props{"/logs": a1}, []string{"/logs", "/meta"}, "",
			`log dir /meta is not formatted: run "samsa storage format --config server.properties --cluster-id ` + clusterA + ` --ignore-formatted"`, ErrNotFormatted},
		{"two clusters", map[string]Props{"/logs": a1, "/meta": {ClusterID: clusterB, NodeID: 1}}, []string{"/logs", "/meta"}, "",
			"log dir /logs belongs to cluster " + clusterA + ", /meta to cluster " + clusterB, ErrInconsistent},
		{"another cluster than expected", map[string]Props{"/logs": a1}, []string{"/logs"}, clusterB,
			"log dir /logs belongs to cluster " + clusterA + ", not " + clusterB, ErrInconsistent},
		{"another node", map[string]Props{"/logs": {ClusterID: clusterA, NodeID: 2}}, []string{"/logs"}, "",
			"/logs/meta.properties has node.id 2, this node is 1", ErrInconsistent},
		{"a directory ID twice", map[string]Props{"/logs": a1, "/meta": a1}, []string{"/logs", "/meta"}, "",
			"log dirs /logs and /meta have the same directory.id " + dirID1, ErrInconsistent},
		{"inconsistency before unformatted", map[string]Props{"/meta": {ClusterID: clusterA, NodeID: 5}}, []string{"/logs", "/meta"}, "",
			"has node.id 5, this node is 1", ErrInconsistent},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, err := Check(formatted(t, c.disk), c.dirs, c.clusterID, 1)
			if c.want == "" {
				if err != nil || id != clusterA {
					t.Fatalf("Check = %q, %v; want %s", id, err, clusterA)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, c.is) {
				t.Fatalf("Check = %q, %v\nwant an error (%v) with %q", id, err, c.is, c.want)
			}
		})
	}
}

// A garbled meta.properties fails the check with an error naming the
// file, whatever else the directories hold.
func TestCheckGarbled(t *testing.T) {
	mem := formatted(t, map[string]Props{"/logs": {ClusterID: clusterA, NodeID: 1}})
	mem.MkdirAll("/meta")
	vfs.WriteFileAtomic(mem, "/meta/meta.properties", []byte("#\n#Thu\nnode.id=1\ndirectory.id=7eXr1"))
	_, err := Check(mem, []string{"/logs", "/meta"}, "", 1)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "/meta/meta.properties") {
		t.Fatalf("Check with a torn file: %v", err)
	}
}

func TestFormat(t *testing.T) {
	a1 := Props{ClusterID: clusterA, NodeID: 1, DirectoryID: dirID1}
	opts := FormatOptions{ClusterID: clusterA, NodeID: 1, Now: when}
	t.Run("fresh", func(t *testing.T) {
		mem := vfs.NewMem()
		done, err := Format(mem, []string{"/var/lib/samsa/logs", "/var/lib/samsa/meta"}, opts)
		if err != nil || !slices.Equal(done, []string{"/var/lib/samsa/logs", "/var/lib/samsa/meta"}) {
			t.Fatalf("Format = %v, %v", done, err)
		}
		e, err := Load(mem, done)
		if err != nil {
			t.Fatal(err)
		}
		p0, _ := e.Props(done[0])
		p1, _ := e.Props(done[1])
		if p0.ClusterID != clusterA || p0.NodeID != 1 || p0.DirectoryID == "" || p1.DirectoryID == p0.DirectoryID {
			t.Fatalf("formatted %+v and %+v", p0, p1)
		}
		if _, err := Check(mem, done, clusterA, 1); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a formatted dir refuses", func(t *testing.T) {
		mem := formatted(t, map[string]Props{"/meta": a1})
		_, err := Format(mem, []string{"/logs", "/meta"}, opts)
		if err == nil || !strings.Contains(err.Error(), "log dir /meta is already formatted: use --ignore-formatted") {
			t.Fatalf("Format: %v", err)
		}
		if ok, _ := mem.Exists("/logs"); ok {
			t.Fatal("a refused Format made /logs")
		}
	})
	t.Run("ignore formatted", func(t *testing.T) {
		mem := formatted(t, map[string]Props{"/meta": a1})
		o := opts
		o.IgnoreFormatted = true
		done, err := Format(mem, []string{"/logs", "/meta"}, o)
		if err != nil || !slices.Equal(done, []string{"/logs"}) {
			t.Fatalf("Format = %v, %v", done, err)
		}
		if p, err := Read(mem, "/meta"); err != nil || p != a1 {
			t.Fatalf("the formatted dir changed: %+v %v", p, err)
		}
		if done, err := Format(mem, []string{"/logs", "/meta"}, o); err != nil || len(done) != 0 {
			t.Fatalf("Format of formatted dirs = %v, %v", done, err)
		}
	})
	t.Run("ignore formatted, another cluster", func(t *testing.T) {
		mem := formatted(t, map[string]Props{"/meta": {ClusterID: clusterB, NodeID: 1}})
		o := opts
		o.IgnoreFormatted = true
		_, err := Format(mem, []string{"/logs", "/meta"}, o)
		if !errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), "log dir /meta belongs to cluster "+clusterB+", not "+clusterA) {
			t.Fatalf("Format: %v", err)
		}
	})
	t.Run("bad input", func(t *testing.T) {
		for _, o := range []FormatOptions{{ClusterID: "", NodeID: 1}, {ClusterID: "a b", NodeID: 1}, {ClusterID: clusterA, NodeID: -1}} {
			if _, err := Format(vfs.NewMem(), []string{"/logs"}, o); err == nil {
				t.Errorf("Format(%+v) succeeded", o)
			}
		}
		if _, err := Format(vfs.NewMem(), nil, opts); err == nil {
			t.Error("Format of no directories succeeded")
		}
	})
}

// A directory formatted without a directory.id gets one, unlike any other.
func TestAssignDirectoryIDs(t *testing.T) {
	mem := formatted(t, map[string]Props{"/logs": {ClusterID: clusterA, NodeID: 1}, "/meta": {ClusterID: clusterA, NodeID: 1, DirectoryID: dirID1}})
	e, err := Load(mem, []string{"/logs", "/meta"})
	if err != nil {
		t.Fatal(err)
	}
	done, err := e.AssignDirectoryIDs(mem, when)
	if err != nil || !slices.Equal(done, []string{"/logs"}) {
		t.Fatalf("AssignDirectoryIDs = %v, %v", done, err)
	}
	p, err := Read(mem, "/logs")
	if err != nil || p.DirectoryID == "" || p.DirectoryID == dirID1 || p.ClusterID != clusterA {
		t.Fatalf("after AssignDirectoryIDs: %+v %v", p, err)
	}
	if m, _ := Read(mem, "/meta"); m.DirectoryID != dirID1 {
		t.Fatalf("the directory with an ID changed: %+v", m)
	}
}
