package metaprops

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/vfs"
)

var when = time.Date(2026, time.March, 5, 10, 4, 5, 0, time.UTC)

const (
	clusterA = "MkU3OEVBNTcwNTJENDM2Qg"
	clusterB = "q1Sh-9_ISia_zwGINzRvyQ"
	dirID1   = "7eXr1Q2yR1-J9T9vRaSmdw"
	dirID2   = "a1fFfYxoQ9KQ6oWmQxtE3g"
)

// The bytes Samsa writes are the file Kafka writes: Properties.store's two
// comment lines, then the keys.
func TestEncode(t *testing.T) {
	got := string(Encode(Props{ClusterID: clusterA, NodeID: 3, DirectoryID: dirID1}, when))
	want := "#\n#Thu Mar 05 10:04:05 UTC 2026\nnode.id=3\ndirectory.id=" + dirID1 + "\nversion=1\ncluster.id=" + clusterA + "\n"
	if got != want {
		t.Fatalf("Encode:\n%s\nwant:\n%s", got, want)
	}
	if got := string(Encode(Props{ClusterID: `a=b:c#d!e\f`, NodeID: 0}, when)); !strings.Contains(got, `cluster.id=a\=b\:c\#d\!e\\f`+"\n") {
		t.Fatalf("escaped cluster.id:\n%s", got)
	}
}

func TestDecode(t *testing.T) {
	cases := []struct {
		name, text string
		want       Props
	}{
		{"as Kafka 3.9 writes it", "#\n#Tue Apr 09 12:34:56 UTC 2024\nnode.id=1\ndirectory.id=" + dirID1 + "\nversion=1\ncluster.id=" + clusterA + "\n",
			Props{ClusterID: clusterA, NodeID: 1, DirectoryID: dirID1}},
		{"without directory.id (Kafka before 3.7)", "#\n#Mon Jan 01 00:00:00 UTC 2024\ncluster.id=" + clusterA + "\nnode.id=2\nversion=1\n",
			Props{ClusterID: clusterA, NodeID: 2}},
		{"CRLF, blanks, ':' and blank separators, '!' comments", "! a comment\r\n  version : 1\r\n\tnode.id 7\r\n\r\ncluster.id\t=  " + clusterA + "\r\n",
			Props{ClusterID: clusterA, NodeID: 7}},
		{"continuation lines and escapes", "version=1\nnode.id=1\\\n    2\nclu\\\nster.id=ab\\:c\\u0064\\e\n# cluster.id=other\\\nnot.a.continuation=x\n",
			Props{ClusterID: "ab:cde", NodeID: 12}},
		{"unknown keys are ignored, the last of a key wins", "version=1\nnode.id=1\nnode.id=4\ncluster.id=" + clusterB + "\nfuture.key=x\n",
			Props{ClusterID: clusterB, NodeID: 4}},
		{"a non-UUID cluster ID, as Kafka accepts", "version=1\nnode.id=0\ncluster.id=my-cluster\n",
			Props{ClusterID: "my-cluster", NodeID: 0}},
		{"a line with no line end", "version=1\nnode.id=0\ncluster.id=" + clusterA,
			Props{ClusterID: clusterA, NodeID: 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Decode([]byte(c.text))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

// What a torn or garbled file, or one of another version, gives: an
// error that says what is wrong, marked ErrCorrupt unless it is a
// ZooKeeper-mode file.
func TestDecodeRefuses(t *testing.T) {
	valid := Encode(Props{ClusterID: clusterA, NodeID: 1, DirectoryID: dirID1}, when)
	cases := []struct {
		name, text, want string
		corrupt          bool
	}{
		{"empty", "", "no version", true},
		{"only the header", "#\n#Thu Mar 05 10:04:05 UTC 2026\n", "no version", true},
		{"torn before version", string(valid[:len(valid)-40]), "no version", true},
		{"torn in node.id", "#\n#x\nnode.", "no version", true},
		{"no cluster.id", "version=1\nnode.id=1\n", "no cluster.id", true},
		{"no node.id", "version=1\ncluster.id=" + clusterA + "\n", "no node.id", true},
		{"garbage bytes", "\x00\x17\xff\xfe=\x01\n\x9c", "no version", true},
		{"garbage in cluster.id", "version=1\nnode.id=1\ncluster.id=ab\x00\xffcd\n", "not printable ASCII", true},
		{"empty cluster.id", "version=1\nnode.id=1\ncluster.id=\n", "cluster.id is empty", true},
		{"cluster.id with a blank", "version=1\nnode.id=1\ncluster.id=a b\n", "not printable ASCII", true},
		{"negative node.id", "version=1\nnode.id=-1\ncluster.id=" + clusterA + "\n", "node.id -1 is negative", true},
		{"node.id not a number", "version=1\nnode.id=one\ncluster.id=" + clusterA + "\n", `node.id "one" is not a 32-bit number`, true},
		{"node.id too large", "version=1\nnode.id=2147483648\ncluster.id=" + clusterA + "\n", "not a 32-bit number", true},
		{"directory.id not a UUID", "version=1\nnode.id=1\ncluster.id=" + clusterA + "\ndirectory.id=xyz\n", `directory.id "xyz" is not a Kafka UUID`, true},
		{"empty directory.id", "version=1\nnode.id=1\ncluster.id=" + clusterA + "\ndirectory.id=\n", "directory.id is empty", true},
		{"reserved directory.id", "version=1\nnode.id=1\ncluster.id=" + clusterA + "\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAQ\n", "reserved", true},
		{"unknown version", "version=2\nnode.id=1\ncluster.id=" + clusterA + "\n", `version "2": Samsa reads version 1`, true},
		{"malformed unicode escape", "version=1\nnode.id=1\ncluster.id=\\u12G4\n", `line 3: malformed \uxxxx`, true},
		{"unicode escape cut short", "version=1\nnode.id=1\ncluster.id=ab\\u12", `line 3: malformed \uxxxx`, true},
		{"ZooKeeper mode", "broker.id=1\ncluster.id=" + clusterA + "\n", "ZooKeeper-mode", false},
		{"version 0", "version=0\nbroker.id=1\n", "ZooKeeper-mode", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode([]byte(c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Decode(%q) = %v, want an error with %q", c.text, err, c.want)
			}
			if errors.Is(err, ErrCorrupt) != c.corrupt {
				t.Fatalf("errors.Is(%v, ErrCorrupt) = %v, want %v", err, !c.corrupt, c.corrupt)
			}
		})
	}
}

func TestValidateClusterID(t *testing.T) {
	for _, ok := range []string{clusterA, "x", "a=b:c#d!e\\f", "~!"} {
		if err := ValidateClusterID(ok); err != nil {
			t.Errorf("ValidateClusterID(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", " a", "a b", "tab\t", "é", "nl\n", "\x7f"} {
		if err := ValidateClusterID(bad); err == nil {
			t.Errorf("ValidateClusterID(%q) accepted it", bad)
		}
	}
}

// A cluster ID from NewClusterID is a Kafka UUID, as random-uuid prints.
func TestNewClusterID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id, err := NewClusterID()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := metadata.ParseUUID(id); err != nil || len(id) != 22 || id[0] == '-' || seen[id] {
			t.Fatalf("NewClusterID() = %q (%v)", id, err)
		}
		seen[id] = true
	}
}

func TestWriteRead(t *testing.T) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll("/data"); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(mem, "/data"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Read of an unformatted dir: %v", err)
	}
	if _, err := Read(mem, "/nowhere"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Read of a missing dir: %v", err)
	}
	for _, p := range []Props{
		{ClusterID: clusterA, NodeID: 1, DirectoryID: dirID1},
		{ClusterID: `odd=id:#!\`, NodeID: 2147483647},
	} {
		if err := Write(mem, "/data", p, when); err != nil {
			t.Fatal(err)
		}
		got, err := Read(mem, "/data")
		if err != nil {
			t.Fatal(err)
		}
		if got != p {
			t.Fatalf("Read after Write = %+v, want %+v", got, p)
		}
	}
	if err := Write(mem, "/data", Props{ClusterID: "", NodeID: 1}, when); err == nil {
		t.Fatal("Write of an empty cluster ID succeeded")
	}
	if err := Write(mem, "/data", Props{ClusterID: clusterA, NodeID: -1}, when); err == nil {
		t.Fatal("Write of a negative node ID succeeded")
	}
}

// A garbled file read from disk is an error naming the file, never a
// crash or a zero Props.
func TestReadGarbled(t *testing.T) {
	mem := vfs.NewMem()
	mem.MkdirAll("/data")
	if err := vfs.WriteFileAtomic(mem, "/data/meta.properties", []byte("node.id=1\ndirecto\x00\x00\x00")); err != nil {
		t.Fatal(err)
	}
	_, err := Read(mem, "/data")
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "/data/meta.properties") {
		t.Fatalf("Read of a garbled file: %v", err)
	}
}
