package metaprops

import (
	"testing"
)

// FuzzDecode: any bytes decode or fail, never panic; what decodes is
// valid, and encodes to a file that decodes to the same Props.
func FuzzDecode(f *testing.F) {
	f.Add(Encode(Props{ClusterID: clusterA, NodeID: 1, DirectoryID: dirID1}, when))
	f.Add(Encode(Props{ClusterID: `a=b:c#d!e\f`, NodeID: 0}, when))
	f.Add([]byte("#\n#Tue Apr 09 12:34:56 UTC 2024\ncluster.id=" + clusterA + "\nnode.id=2\nversion=1\n"))
	f.Add([]byte("! c\r\n  version : 1\r\n\tnode.id 7\r\n\r\ncluster.id\t=  x\\u0041\\\n   b\r\n"))
	f.Add([]byte("broker.id=1\ncluster.id=x\n"))
	f.Add([]byte("version=1\nnode.id=1\ncluster.id=\\u12"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Decode(data)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("Decode gave invalid %+v: %v", p, err)
		}
		again, err := Decode(Encode(p, when))
		if err != nil || again != p {
			t.Fatalf("Decode(Encode(%+v)) = %+v, %v", p, again, err)
		}
	})
}
