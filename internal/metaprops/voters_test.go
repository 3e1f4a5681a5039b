package metaprops

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/internal/vfs"
)

// --initial-controllers is id@host:port:directory-id,... as
// kafka-storage.sh takes it; each refusal says what is wrong.
func TestParseInitialVoters(t *testing.T) {
	cases := []struct {
		in   string
		want []InitialVoter
		err  string
	}{
		{"1@c1:9093:" + dirID1, []InitialVoter{{1, "c1:9093", dirID1}}, ""},
		{" 1@c1:9093:" + dirID1 + ",2@[::1]:9193:" + dirID2 + ",", []InitialVoter{{1, "c1:9093", dirID1}, {2, "[::1]:9193", dirID2}}, ""},
		{"", nil, "no voters given"},
		{"c1:9093:" + dirID1, nil, "no @ after the node id"},
		{"-1@c1:9093:" + dirID1, nil, "the node id is not a non-negative number"},
		{"x@c1:9093:" + dirID1, nil, "the node id is not a non-negative number"},
		{"1@c1:9093", nil, "no host:port"},
		{"1@c1:9093:not-a-uuid", nil, "is not a Kafka UUID"},
		{"1@" + dirID1, nil, "no directory id after the port"},
		{"1@c1:" + dirID1, nil, "no host:port"},
		{"1@c1:99999:" + dirID1, nil, "port 99999 is not a port number"},
		{"1@c1:9093:AAAAAAAAAAAAAAAAAAAAAA", nil, "is reserved"},
		{"1@c1:9093:" + dirID1 + ",1@c2:9093:" + dirID2, nil, "node id 1 was specified more than once"},
	}
	for _, c := range cases {
		got, err := ParseInitialVoters(c.in)
		if c.err == "" && (err != nil || !slices.Equal(got, c.want)) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseInitialVoters(%q) = %v, %v; want %v, error with %q", c.in, got, err, c.want, c.err)
		}
	}
}

// Format with initial voters stores them in the metadata log directory,
// whose directory.id is the one this node's entry names; the other
// directories keep IDs of their own. A directory with no file has no
// voters; a damaged file is corrupt.
func TestFormatStoresInitialVoters(t *testing.T) {
	voters := []InitialVoter{{1, "c1:9093", dirID1}, {2, "c2:9093", dirID2}}
	mem := vfs.NewMem()
	done, err := Format(mem, []string{"/logs", "/meta"}, FormatOptions{ClusterID: clusterA, NodeID: 2, Now: when, InitialVoters: voters, MetadataDir: "/meta"})
	if err != nil || !slices.Equal(done, []string{"/logs", "/meta"}) {
		t.Fatalf("Format = %v, %v", done, err)
	}
	if p, err := Read(mem, "/meta"); err != nil || p.DirectoryID != dirID2 {
		t.Fatalf("/meta: %+v, %v; want directory.id %s", p, err, dirID2)
	}
	if p, err := Read(mem, "/logs"); err != nil || p.DirectoryID == dirID2 || p.DirectoryID == "" {
		t.Fatalf("/logs: %+v, %v; want a directory.id of its own", p, err)
	}
	if got, err := ReadInitialVoters(mem, "/meta"); err != nil || !slices.Equal(got, voters) {
		t.Fatalf("ReadInitialVoters(/meta) = %v, %v; want %v", got, err, voters)
	}
	if got, err := ReadInitialVoters(mem, "/logs"); err != nil || got != nil {
		t.Fatalf("ReadInitialVoters(/logs) = %v, %v; want none", got, err)
	}

	// A node outside the voters keeps a random directory ID.
	mem = vfs.NewMem()
	if _, err := Format(mem, []string{"/meta"}, FormatOptions{ClusterID: clusterA, NodeID: 3, Now: when, InitialVoters: voters, MetadataDir: "/meta"}); err != nil {
		t.Fatal(err)
	}
	if p, _ := Read(mem, "/meta"); p.DirectoryID == dirID1 || p.DirectoryID == dirID2 {
		t.Fatalf("node 3 took a voter's directory ID %s", p.DirectoryID)
	}

	// A directory formatted already with the ID this node's entry names.
	mem = formatted(t, map[string]Props{"/logs": {ClusterID: clusterA, NodeID: 2, DirectoryID: dirID2}})
	_, err = Format(mem, []string{"/logs", "/meta"}, FormatOptions{ClusterID: clusterA, NodeID: 2, Now: when, IgnoreFormatted: true, InitialVoters: voters, MetadataDir: "/meta"})
	if err == nil || !strings.Contains(err.Error(), "directory id "+dirID2+", which log dir /logs has already") {
		t.Fatalf("Format over a taken directory ID: %v", err)
	}

	if err := vfs.WriteFileAtomic(mem, InitialVotersPath("/logs"), []byte("voters=1@c1\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadInitialVoters(mem, "/logs"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a damaged file: %v, want ErrCorrupt", err)
	}
}
