package metaprops

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/samsa-io/samsa/internal/vfs"
)

// ErrNotFormatted is wrapped by Check's error for a directory without
// meta.properties.
var ErrNotFormatted = errors.New("not formatted")

// ErrInconsistent is wrapped by Verify's error when the directories
// disagree with each other or with this node: another cluster ID, another
// node ID, a directory ID twice.
var ErrInconsistent = errors.New("inconsistent meta.properties")

// formatCommand is what the errors tell an operator to run.
const formatCommand = "samsa storage format --config server.properties"

// Ensemble is what a node's directories hold, as Kafka's
// MetaPropertiesEnsemble: each directory formatted (with its Props) or not.
type Ensemble struct {
	dirs  []string // cleaned, without duplicates, in the order given
	props map[string]Props
}

// Load reads the meta.properties of every directory in dirs (log dirs and
// the metadata log dir; one named twice is read once). A missing file or
// directory leaves that directory unformatted; any other failure, a file
// that does not decode included, is an error naming the file.
func Load(fsys vfs.FS, dirs []string) (*Ensemble, error) {
	e := &Ensemble{props: map[string]Props{}}
	for _, d := range dirs {
		d = filepath.Clean(d)
		if slices.Contains(e.dirs, d) {
			continue
		}
		e.dirs = append(e.dirs, d)
		p, err := Read(fsys, d)
		switch {
		case isNotExist(err):
		case err != nil:
			return nil, err
		default:
			e.props[d] = p
		}
	}
	if len(e.dirs) == 0 {
		return nil, errors.New("metaprops: no log directories")
	}
	return e, nil
}

// Dirs returns the directories, in the order given to Load.
func (e *Ensemble) Dirs() []string { return slices.Clone(e.dirs) }

// Props returns a directory's meta.properties, if it has one.
func (e *Ensemble) Props(dir string) (Props, bool) {
	p, ok := e.props[filepath.Clean(dir)]
	return p, ok
}

// Formatted returns the directories with a meta.properties.
func (e *Ensemble) Formatted() []string {
	return slices.DeleteFunc(e.Dirs(), func(d string) bool { _, ok := e.props[d]; return !ok })
}

// Unformatted returns the directories without one.
func (e *Ensemble) Unformatted() []string {
	return slices.DeleteFunc(e.Dirs(), func(d string) bool { _, ok := e.props[d]; return ok })
}

// Verify checks the formatted directories as Kafka does before it starts or
// formats: one cluster ID among them, and clusterID when it is not empty;
// nodeID in each; no directory ID twice. It returns the cluster ID they
// hold ("" when none is formatted). Unformatted directories are not an
// error here (see Check).
func (e *Ensemble) Verify(clusterID string, nodeID int32) (string, error) {
	var from string // the directory clusterID was read from; "" when given
	owner := map[string]string{}
	for _, d := range e.Formatted() {
		p := e.props[d]
		switch {
		case clusterID == "":
			clusterID, from = p.ClusterID, d
		case p.ClusterID != clusterID && from != "":
			return "", fmt.Errorf("metaprops: %w: log dir %s belongs to cluster %s, %s to cluster %s",
				ErrInconsistent, from, clusterID, d, p.ClusterID)
		case p.ClusterID != clusterID:
			return "", fmt.Errorf("metaprops: %w: log dir %s belongs to cluster %s, not %s",
				ErrInconsistent, d, p.ClusterID, clusterID)
		}
		if p.NodeID != nodeID {
			return "", fmt.Errorf("metaprops: %w: %s has node.id %d, this node is %d: set node.id to %d if the data moved here from that node, or empty the directory for a new node",
				ErrInconsistent, Path(d), p.NodeID, nodeID, p.NodeID)
		}
		if p.DirectoryID == "" {
			continue
		}
		if other, dup := owner[p.DirectoryID]; dup {
			return "", fmt.Errorf("metaprops: %w: log dirs %s and %s have the same directory.id %s: was one copied from the other?",
				ErrInconsistent, other, d, p.DirectoryID)
		}
		owner[p.DirectoryID] = d
	}
	return clusterID, nil
}

// Check is the start-up check of a node that must be formatted (a member of
// a multi-node quorum): Load, then Ensemble.Check. It returns the cluster
// ID. clusterID may be empty (not known yet).
func Check(fsys vfs.FS, dirs []string, clusterID string, nodeID int32) (string, error) {
	e, err := Load(fsys, dirs)
	if err != nil {
		return "", err
	}
	return e.Check(clusterID, nodeID)
}

// Check is Verify, and every directory formatted: the error for one that
// is not says what to run.
func (e *Ensemble) Check(clusterID string, nodeID int32) (string, error) {
	id, err := e.Verify(clusterID, nodeID)
	if err != nil {
		return "", err
	}
	if missing := e.Unformatted(); len(missing) > 0 {
		return "", e.notFormatted(missing[0], id)
	}
	return id, nil
}

// notFormatted says what to run for dir: with the cluster ID the other
// directories hold, and --ignore-formatted, when some are formatted.
func (e *Ensemble) notFormatted(dir, clusterID string) error {
	if clusterID == "" {
		return fmt.Errorf("metaprops: log dir %s is %w: run \"%s --cluster-id <id>\" with the cluster's ID (samsa storage random-uuid draws a new one)",
			dir, ErrNotFormatted, formatCommand)
	}
	return fmt.Errorf("metaprops: log dir %s is %w: run \"%s --cluster-id %s --ignore-formatted\"",
		dir, ErrNotFormatted, formatCommand, clusterID)
}

// Format writes meta.properties with clusterID and nodeID into every
// unformatted directory, making the directory (and its parents) durably
// first, each with a new directory ID. It returns the directories it
// formatted, in order. Call Verify first: Format does not look at the
// formatted directories except to keep directory IDs unique.
func (e *Ensemble) Format(fsys vfs.FS, clusterID string, nodeID int32, now time.Time) ([]string, error) {
	return e.format(fsys, FormatOptions{ClusterID: clusterID, NodeID: nodeID, Now: now})
}

// format is Format with the initial voters of o: the metadata log
// directory, when this node is among them, takes the directory ID they
// give it, and holds them (InitialVotersFile) before its meta.properties
// is written, so a crash leaves it unformatted rather than formatted
// without them.
func (e *Ensemble) format(fsys vfs.FS, o FormatOptions) ([]string, error) {
	clusterID, nodeID, now := o.ClusterID, o.NodeID, o.Now
	if err := ValidateClusterID(clusterID); err != nil {
		return nil, fmt.Errorf("metaprops: %w", err)
	}
	metaDir := ""
	if len(o.InitialVoters) > 0 {
		metaDir = filepath.Clean(o.MetadataDir)
	}
	var done []string
	for _, d := range e.Unformatted() {
		dirID, err := e.newDirectoryID()
		if err != nil {
			return done, err
		}
		if d == metaDir {
			if id, ok := voterDirectoryID(o.InitialVoters, nodeID); ok {
				dirID = id
			}
		}
		if err := vfs.MkdirAllDurable(fsys, d); err != nil {
			return done, fmt.Errorf("metaprops: create %s: %w", d, err)
		}
		if d == metaDir {
			if err := WriteInitialVoters(fsys, d, o.InitialVoters, now); err != nil {
				return done, err
			}
		}
		p := Props{ClusterID: clusterID, NodeID: nodeID, DirectoryID: dirID}
		if err := Write(fsys, d, p, now); err != nil {
			return done, err
		}
		e.props[d] = p
		done = append(done, d)
	}
	return done, nil
}

// AssignDirectoryIDs gives each formatted directory without a directory.id
// (formatted by Kafka before 3.7) one of its own, as Kafka does at start-up.
// It returns the directories it rewrote.
func (e *Ensemble) AssignDirectoryIDs(fsys vfs.FS, now time.Time) ([]string, error) {
	var done []string
	for _, d := range e.Formatted() {
		p := e.props[d]
		if p.DirectoryID != "" {
			continue
		}
		id, err := e.newDirectoryID()
		if err != nil {
			return done, err
		}
		p.DirectoryID = id
		if err := Write(fsys, d, p, now); err != nil {
			return done, err
		}
		e.props[d] = p
		done = append(done, d)
	}
	return done, nil
}

// newDirectoryID draws a directory ID no directory of e has.
func (e *Ensemble) newDirectoryID() (string, error) {
	for {
		id, err := NewClusterID() // the same kind of random UUID
		if err != nil {
			return "", fmt.Errorf("metaprops: directory.id: %w", err)
		}
		if validateDirectoryID(id) == nil && !slices.ContainsFunc(e.Formatted(), func(d string) bool { return e.props[d].DirectoryID == id }) {
			return id, nil
		}
	}
}

// FormatOptions are kafka-storage.sh format's inputs.
type FormatOptions struct {
	ClusterID string
	NodeID    int32
	// IgnoreFormatted formats the unformatted directories when some are
	// formatted already (--ignore-formatted); without it, any formatted
	// directory fails the whole command before anything is written.
	IgnoreFormatted bool
	Now             time.Time
	// InitialVoters, when set, is the quorum's initial voter set
	// (--standalone, --initial-controllers), stored in MetadataDir, the
	// metadata log directory, when Format formats it. If this node is
	// among them, MetadataDir takes the directory ID its entry names.
	InitialVoters []InitialVoter
	MetadataDir   string
}

// voterDirectoryID is the directory ID voters give node.
func voterDirectoryID(voters []InitialVoter, node int32) (string, bool) {
	for _, v := range voters {
		if v.NodeID == node {
			return v.DirectoryID, true
		}
	}
	return "", false
}

// Format is kafka-storage.sh format over dirs: the formatted directories
// must agree with o (Verify) even with IgnoreFormatted, then every other
// directory is formatted. It returns the directories it formatted; none,
// and no error, when all were formatted and IgnoreFormatted is set.
func Format(fsys vfs.FS, dirs []string, o FormatOptions) ([]string, error) {
	if err := ValidateClusterID(o.ClusterID); err != nil {
		return nil, fmt.Errorf("metaprops: %w", err)
	}
	if o.NodeID < 0 {
		return nil, fmt.Errorf("metaprops: node.id %d: set node.id to the node's ID (>= 0)", o.NodeID)
	}
	e, err := Load(fsys, dirs)
	if err != nil {
		return nil, err
	}
	if _, err := e.Verify(o.ClusterID, o.NodeID); err != nil {
		return nil, err
	}
	if f := e.Formatted(); len(f) > 0 && !o.IgnoreFormatted {
		return nil, fmt.Errorf("metaprops: log dir %s is already formatted: use --ignore-formatted to leave it as it is and format the others", f[0])
	}
	if id, ok := voterDirectoryID(o.InitialVoters, o.NodeID); ok {
		for _, d := range e.Formatted() {
			if e.props[d].DirectoryID == id {
				return nil, fmt.Errorf("metaprops: the initial controllers give node %d directory id %s, which log dir %s has already", o.NodeID, id, d)
			}
		}
	}
	return e.format(fsys, o)
}
