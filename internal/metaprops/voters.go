package metaprops

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/internal/vfs"
)

// InitialVotersFile is the file in the metadata log directory that holds
// the quorum's initial voters (KIP-853's bootstrapping): `samsa storage
// format --standalone` or `--initial-controllers` writes it, and a
// controller without controller.quorum.voters bootstraps Raft from it on
// its first start. Kafka keeps the same set in a bootstrap checkpoint of
// __cluster_metadata-0; Samsa's Raft log is hashicorp/raft's, so the set
// has a file of its own.
const InitialVotersFile = "initial-voters.properties"

// keyVoters is the file's one key.
const keyVoters = "voters"

// InitialVoter is one member of the initial voter set, as
// --initial-controllers names it: id@host:port:directory-id.
type InitialVoter struct {
	NodeID int32
	// Addr is host:port, the voter's controller listener.
	Addr string
	// DirectoryID is the voter's metadata log directory's directory.id.
	DirectoryID string
}

// String is the voter as --initial-controllers takes it.
func (v InitialVoter) String() string {
	return strconv.Itoa(int(v.NodeID)) + "@" + v.Addr + ":" + v.DirectoryID
}

// FormatInitialVoters renders voters as --initial-controllers takes them.
func FormatInitialVoters(voters []InitialVoter) string {
	s := make([]string, len(voters))
	for i, v := range voters {
		s[i] = v.String()
	}
	return strings.Join(s, ",")
}

// ParseInitialVoters parses --initial-controllers: comma-separated
// id@host:port:directory-id entries (an IPv6 host in brackets), each
// directory ID a Kafka UUID as samsa storage random-uuid draws one, no
// node ID twice, at least one voter.
func ParseInitialVoters(s string) ([]InitialVoter, error) {
	var out []InitialVoter
	seen := map[int32]bool{}
	for _, item := range strings.Split(strings.TrimSpace(s), ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		v, err := parseInitialVoter(item)
		if err != nil {
			return nil, err
		}
		if seen[v.NodeID] {
			return nil, fmt.Errorf("initial controllers: node id %d was specified more than once", v.NodeID)
		}
		seen[v.NodeID] = true
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, errors.New("initial controllers: no voters given")
	}
	return out, nil
}

func parseInitialVoter(item string) (InitialVoter, error) {
	bad := func(why string) error {
		return fmt.Errorf("initial controllers: %q is not id@host:port:directory-id: %s", item, why)
	}
	idStr, rest, ok := strings.Cut(item, "@")
	if !ok {
		return InitialVoter{}, bad("no @ after the node id")
	}
	id, err := strconv.ParseInt(idStr, 10, 32)
	if err != nil || id < 0 {
		return InitialVoter{}, bad("the node id is not a non-negative number")
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return InitialVoter{}, bad("no directory id after the port")
	}
	addr, dirID := rest[:i], rest[i+1:]
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return InitialVoter{}, bad("no host:port")
	}
	if p, err := strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
		return InitialVoter{}, bad("port " + port + " is not a port number")
	}
	if err := validateDirectoryID(dirID); err != nil {
		return InitialVoter{}, bad(err.Error() + " (samsa storage random-uuid draws one)")
	}
	return InitialVoter{NodeID: int32(id), Addr: addr, DirectoryID: dirID}, nil
}

// InitialVotersPath is the file in the metadata log directory dir.
func InitialVotersPath(dir string) string { return filepath.Join(dir, InitialVotersFile) }

// WriteInitialVoters stores voters in the metadata log directory dir,
// atomically. dir must exist.
func WriteInitialVoters(fsys vfs.FS, dir string, voters []InitialVoter, now time.Time) error {
	var b strings.Builder
	b.WriteString("#\n#" + now.Format(javaDate) + "\n")
	b.WriteString("# The metadata quorum's initial voters (KIP-853), written by samsa storage format.\n")
	b.WriteString(keyVoters + "=" + escapeValue(FormatInitialVoters(voters)) + "\n")
	if err := vfs.WriteFileAtomic(fsys, InitialVotersPath(dir), []byte(b.String())); err != nil {
		return fmt.Errorf("metaprops: write %s: %w", InitialVotersPath(dir), err)
	}
	return nil
}

// ReadInitialVoters reads the initial voters stored in the metadata log
// directory dir; none, and no error, when it holds no such file.
func ReadInitialVoters(fsys vfs.FS, dir string) ([]InitialVoter, error) {
	path := InitialVotersPath(dir)
	data, err := vfs.ReadFile(fsys, path)
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("metaprops: read %s: %w", path, err)
	}
	kv, err := parseProperties(string(data))
	if err != nil {
		return nil, fmt.Errorf("metaprops: %s: %w: %v", path, ErrCorrupt, err)
	}
	voters, err := ParseInitialVoters(kv[keyVoters])
	if err != nil {
		return nil, fmt.Errorf("metaprops: %s: %w: %v", path, ErrCorrupt, err)
	}
	return voters, nil
}
