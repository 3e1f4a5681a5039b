package broker

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// The directories format and start-up look at: every log dir (log.dirs,
// else log.dir) and the metadata log dir, each once.
func TestStorageDirs(t *testing.T) {
	cases := []struct {
		raw  map[string]string
		want []string
	}{
		{map[string]string{"log.dirs": "/a"}, []string{"/a"}},
		{map[string]string{"log.dirs": "/a, /b"}, []string{"/a", "/b"}},
		{map[string]string{"log.dir": "/c"}, []string{"/c"}},
		{map[string]string{"log.dirs": "/a", "log.dir": "/c"}, []string{"/a"}},
		{map[string]string{"log.dirs": "/a,/b", "metadata.log.dir": "/m"}, []string{"/a", "/b", "/m"}},
		{map[string]string{"log.dirs": "/a,/b", "metadata.log.dir": "/b"}, []string{"/a", "/b"}},
		{map[string]string{}, []string{"/tmp/kafka-logs"}}, // Kafka's log.dir default
	}
	for _, c := range cases {
		if got := StorageDirs(brokerValues(t, c.raw)); !slices.Equal(got, c.want) {
			t.Errorf("StorageDirs(%v) = %v, want %v", c.raw, got, c.want)
		}
	}
}

func TestFormatStorageNeedsNodeID(t *testing.T) {
	v := brokerValues(t, map[string]string{"log.dirs": t.TempDir()})
	if _, err := FormatStorage(v, "q1Sh-9_ISia_zwGINzRvyQ", false, time.Now()); err == nil || !strings.Contains(err.Error(), "node.id must be set") {
		t.Fatalf("FormatStorage without node.id: %v", err)
	}
}
