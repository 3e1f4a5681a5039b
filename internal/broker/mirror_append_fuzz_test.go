package broker

import (
	"slices"
	"testing"
)

// checkMirrorBatches reads a mirror append's record set, bytes from the
// network: it never panics, and what it accepts is whole batches within
// the input.
func FuzzCheckMirrorBatches(f *testing.F) {
	f.Add(srcBatch{}.build(f, 0, 1, 2))
	f.Add(slices.Concat(srcBatch{}.build(f, 5), srcBatch{}.build(f, 9, 11)))
	f.Add(srcBatch{producer: true}.build(f, 0))
	f.Add(srcBatch{control: true, transactional: true}.build(f, 3))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, records []byte) {
		n, code, msg := checkMirrorBatches(records, 1<<20)
		if n < 0 || n > len(records) || (code == 0) != (msg == "") || (code == 0 && n == 0) {
			t.Fatalf("n %d of %d, code %d %q", n, len(records), code, msg)
		}
	})
}
