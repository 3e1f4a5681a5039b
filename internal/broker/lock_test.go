package broker

import (
	"errors"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/internal/storage"
)

// A second broker on a running broker's log directory is refused in New,
// by the log directory's lock, before its controller would wait on the
// raft store's lock ("open raft store: timeout"). It has the first one's
// node.id, as the same server.properties started twice would: another
// node.id is refused before the lock, by meta.properties.
func TestSecondBrokerOnALogDirIsRefused(t *testing.T) {
	dir := t.TempDir()
	startBrokerWith(t, Config{LogDir: dir})
	_, err := New(Config{NodeID: 1, LogDir: dir, Listeners: []Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 0}}, Logger: quiet})
	if !errors.Is(err, storage.ErrLogDirLocked) || !strings.Contains(err.Error(), "is locked by another process (is another broker running on it?)") {
		t.Fatalf("second broker on %s: %v", dir, err)
	}
}
