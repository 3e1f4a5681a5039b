package metaprops

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/vfs"
)

// FileName is the file in each log directory.
const FileName = "meta.properties"

// Version is the meta.properties version Samsa reads and writes: KRaft's.
const Version = 1

// The keys of a version 1 file.
const (
	keyVersion     = "version"
	keyClusterID   = "cluster.id"
	keyNodeID      = "node.id"
	keyDirectoryID = "directory.id"
	keyBrokerID    = "broker.id" // version 0 only
)

// ErrCorrupt is wrapped by the error for a meta.properties that cannot be
// used: not a properties file, a required field missing, a value out of
// range.
var ErrCorrupt = errors.New("corrupt meta.properties")

// Props is what one directory's meta.properties holds.
type Props struct {
	// ClusterID is the cluster the directory belongs to (cluster.id).
	ClusterID string
	// NodeID is the node that owns the directory (node.id).
	NodeID int32
	// DirectoryID is the directory's own ID (directory.id, KIP-858) in
	// Kafka's UUID form; "" in a file written without one (Kafka before
	// 3.7).
	DirectoryID string
}

// Validate checks what Write would put in the file.
func (p Props) Validate() error {
	if err := ValidateClusterID(p.ClusterID); err != nil {
		return err
	}
	if p.NodeID < 0 {
		return fmt.Errorf("node.id %d is negative", p.NodeID)
	}
	if p.DirectoryID != "" {
		return validateDirectoryID(p.DirectoryID)
	}
	return nil
}

// ValidateClusterID accepts what kafka-storage.sh format accepts and a
// properties file and a command line carry unchanged: a non-empty string of
// printable ASCII without blanks. Kafka's random-uuid gives 22 characters of
// base64url (NewClusterID); Kafka itself accepts any string, so an ID that
// is not a UUID is not refused either.
func ValidateClusterID(id string) error {
	if id == "" {
		return errors.New("cluster.id is empty")
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("cluster.id %q: byte %d is not printable ASCII (0x%02x)", id, i, c)
		}
	}
	return nil
}

// NewClusterID draws a cluster ID as kafka-storage.sh random-uuid does: a
// random Kafka UUID in its base64url text form.
func NewClusterID() (string, error) {
	id, err := metadata.NewUUID(rand.Reader)
	if err != nil {
		return "", err
	}
	return metadata.FormatUUID(id), nil
}

// validateDirectoryID accepts a Kafka UUID that is not one of the IDs Kafka
// reserves for directories (the first 100: unassigned, lost, migrating...).
func validateDirectoryID(s string) error {
	id, err := metadata.ParseUUID(s)
	if err != nil {
		return fmt.Errorf("directory.id %q is not a Kafka UUID", s)
	}
	if binary.BigEndian.Uint64(id[:8]) == 0 && binary.BigEndian.Uint64(id[8:]) < 100 {
		return fmt.Errorf("directory.id %s is reserved", s)
	}
	return nil
}

// javaDate is the layout of java.util.Date.toString, which
// Properties.store writes as the second comment line.
const javaDate = "Mon Jan 02 15:04:05 MST 2006"

// Encode renders p as Kafka writes it: Java's Properties.store header (an
// empty comment, then now in Date.toString's form) and the four keys in the
// order Kafka's files show them.
func Encode(p Props, now time.Time) []byte {
	var b strings.Builder
	b.WriteString("#\n#" + now.Format(javaDate) + "\n")
	b.WriteString(keyNodeID + "=" + strconv.Itoa(int(p.NodeID)) + "\n")
	if p.DirectoryID != "" {
		b.WriteString(keyDirectoryID + "=" + p.DirectoryID + "\n")
	}
	b.WriteString(keyVersion + "=" + strconv.Itoa(Version) + "\n")
	b.WriteString(keyClusterID + "=" + escapeValue(p.ClusterID) + "\n")
	return []byte(b.String())
}

// escapeValue escapes what Properties.store escapes in a value that
// ValidateClusterID accepts: the backslash and the characters that would
// otherwise start a comment or separate a key.
func escapeValue(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`\=:#!`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Decode parses a meta.properties. Keys it does not know are ignored, as
// Kafka ignores them.
func Decode(data []byte) (Props, error) {
	kv, err := parseProperties(string(data))
	if err != nil {
		return Props{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	version, ok := kv[keyVersion]
	if !ok {
		if _, zk := kv[keyBrokerID]; zk {
			return Props{}, errors.New("version 0 (broker.id, no version): written by a ZooKeeper-mode Kafka broker; Samsa reads KRaft's version 1")
		}
		return Props{}, fmt.Errorf("%w: no version", ErrCorrupt)
	}
	if v, err := strconv.Atoi(version); err != nil || v != Version {
		if err == nil && v == 0 {
			return Props{}, errors.New("version 0: written by a ZooKeeper-mode Kafka broker; Samsa reads KRaft's version 1")
		}
		return Props{}, fmt.Errorf("%w: version %q: Samsa reads version %d", ErrCorrupt, version, Version)
	}
	var p Props
	var found bool
	if p.ClusterID, found = kv[keyClusterID]; !found {
		return Props{}, fmt.Errorf("%w: no cluster.id", ErrCorrupt)
	}
	node, found := kv[keyNodeID]
	if !found {
		return Props{}, fmt.Errorf("%w: no node.id", ErrCorrupt)
	}
	n, err := strconv.ParseInt(node, 10, 32)
	if err != nil {
		return Props{}, fmt.Errorf("%w: node.id %q is not a 32-bit number", ErrCorrupt, node)
	}
	p.NodeID = int32(n)
	p.DirectoryID = kv[keyDirectoryID]
	if _, found := kv[keyDirectoryID]; found && p.DirectoryID == "" {
		return Props{}, fmt.Errorf("%w: directory.id is empty", ErrCorrupt)
	}
	if err := p.Validate(); err != nil {
		return Props{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return p, nil
}

// Path is the meta.properties of dir.
func Path(dir string) string { return filepath.Join(dir, FileName) }

// Read reads dir's meta.properties. A missing file (or directory) is an
// error wrapping fs.ErrNotExist.
func Read(fsys vfs.FS, dir string) (Props, error) {
	data, err := vfs.ReadFile(fsys, Path(dir))
	if err != nil {
		return Props{}, fmt.Errorf("metaprops: read %s: %w", Path(dir), err)
	}
	p, err := Decode(data)
	if err != nil {
		return Props{}, fmt.Errorf("metaprops: %s: %w", Path(dir), err)
	}
	return p, nil
}

// Write replaces dir's meta.properties with p so that a crash leaves the
// old file or the new one, whole: vfs.WriteFileAtomic, as the log's
// checkpoints are written. dir must exist.
func Write(fsys vfs.FS, dir string, p Props, now time.Time) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("metaprops: write %s: %w", Path(dir), err)
	}
	if err := vfs.WriteFileAtomic(fsys, Path(dir), Encode(p, now)); err != nil {
		return fmt.Errorf("metaprops: write %s: %w", Path(dir), err)
	}
	return nil
}

// isNotExist reports a missing file or directory.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
