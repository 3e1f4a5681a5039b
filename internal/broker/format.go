package broker

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metaprops"
	"github.com/samsa-io/samsa/internal/vfs"
)

// A node's directories (the log dir and the metadata log dir) each hold
// Kafka's meta.properties, naming the cluster and the node they belong to.
//
// A node configured as part of a multi-node quorum
// (controller.quorum.voters or controller.quorum.bootstrap.servers set)
// starts only on directories that `samsa storage format` formatted for its
// cluster and node.id, as a Kafka node needs kafka-storage.sh format: a
// node must not start a cluster of its own, or join another, because its
// disk was empty or someone else's.
//
// A single node (no quorum configured) formats itself on first start,
// with a cluster ID drawn before the controller opens and handed to it, so
// that the metadata and meta.properties agree from the first record. A
// directory from before meta.properties (metadata but no file) is adopted:
// the controller opens on its metadata as it is, and the file is written
// with the cluster ID found there. Directories formatted already are
// checked as a quorum member's are.

// quorumConfigured reports whether the node is configured as part of a
// quorum of several nodes, which Kafka cannot start without formatting.
func quorumConfigured(v config.Values) bool {
	return len(v.List("controller.quorum.voters")) > 0 || len(v.List("controller.quorum.bootstrap.servers")) > 0
}

// metadataLogDirOf is metadata.log.dir, by default the (first) log
// directory, as in Kafka.
func metadataLogDirOf(v config.Values, logDir string) string {
	if d := v.String("metadata.log.dir"); d != "" {
		return d
	}
	return logDir
}

// StorageDirs are the directories `samsa storage format` formats: every
// log dir (log.dirs, else log.dir) and the metadata log dir.
func StorageDirs(v config.Values) []string {
	dirs := v.LogDirs()
	first := ""
	if len(dirs) > 0 {
		first = dirs[0]
	}
	if m := metadataLogDirOf(v, first); m != "" && !slices.Contains(dirs, m) {
		dirs = append(dirs, m)
	}
	return dirs
}

// FormatOptions are `samsa storage format`'s flags.
type FormatOptions struct {
	ClusterID       string // --cluster-id
	IgnoreFormatted bool   // --ignore-formatted
	// Standalone (--standalone) makes this node the quorum's only initial
	// voter, at its controller listener's advertised address.
	Standalone bool
	// InitialControllers (--initial-controllers) is the initial voter set,
	// id@host:port:directory-id entries; the same for every node.
	InitialControllers string
	// NoInitialControllers (--no-initial-controllers) stores no voter set.
	NoInitialControllers bool
	Now                  time.Time
}

// FormatStorage is `samsa storage format`: kafka-storage.sh format over
// StorageDirs(v) for node.id. It returns the directories it formatted.
//
// With --standalone or --initial-controllers it stores the quorum's
// initial voters in the metadata log directory (KIP-853's bootstrapping),
// from which a controller without controller.quorum.voters bootstraps Raft
// on its first start. It refuses what kafka-storage.sh refuses, with its
// words: two of the three quorum flags; --standalone or
// --initial-controllers with controller.quorum.voters set; --standalone on
// a broker-only node; a controller with controller.quorum.bootstrap.servers
// and no voters but none of the three flags. Samsa's own single node (no
// quorum configured) needs none of them.
func FormatStorage(v config.Values, o FormatOptions) ([]string, error) {
	dirs := StorageDirs(v)
	if len(dirs) == 0 {
		return nil, errors.New("log.dirs is empty")
	}
	node := v.Int("node.id")
	if node < 0 {
		return nil, errors.New("node.id must be set (>= 0)")
	}
	voters, err := initialVoters(v, o)
	if err != nil {
		return nil, err
	}
	return metaprops.Format(vfs.OS, dirs, metaprops.FormatOptions{ClusterID: o.ClusterID, NodeID: node, IgnoreFormatted: o.IgnoreFormatted, Now: o.Now,
		InitialVoters: voters, MetadataDir: metadataLogDirOf(v, dirs[0])})
}

// initialVoters applies kafka-storage.sh format's rules for the quorum
// flags and returns the initial voters to store, if any.
func initialVoters(v config.Values, o FormatOptions) ([]metaprops.InitialVoter, error) {
	given := 0
	for _, set := range []bool{o.Standalone, o.InitialControllers != "", o.NoInitialControllers} {
		if set {
			given++
		}
	}
	if given > 1 {
		return nil, errors.New("only one of --standalone, --initial-controllers and --no-initial-controllers may be given")
	}
	staticVoters := len(v.List("controller.quorum.voters")) > 0
	if staticVoters && (o.Standalone || o.InitialControllers != "") {
		return nil, errors.New("You cannot specify controller.quorum.voters and format the node with --initial-controllers or --standalone. " +
			"If you want to use dynamic quorum, please remove controller.quorum.voters and specify controller.quorum.bootstrap.servers instead.")
	}
	roles := v.List("process.roles")
	controller := len(roles) == 0 || slices.Contains(roles, "controller")
	switch {
	case o.InitialControllers != "":
		return metaprops.ParseInitialVoters(o.InitialControllers)
	case o.Standalone:
		if !controller {
			return nil, errors.New("You can only use --standalone on a controller.")
		}
		return standaloneVoter(v)
	case controller && !staticVoters && !o.NoInitialControllers && len(v.List("controller.quorum.bootstrap.servers")) > 0:
		return nil, errors.New("Because controller.quorum.voters is not set on this controller, you must specify one of the following: " +
			"--standalone, --initial-controllers, or --no-initial-controllers.")
	}
	return nil, nil
}

// standaloneVoter is --standalone's voter set: this node alone, at its
// first controller listener's advertised address ("localhost" for a
// listener without a host, as Kafka has it), with a new directory ID.
func standaloneVoter(v config.Values) ([]metaprops.InitialVoter, error) {
	names := strings.Split(v.String("controller.listener.names"), ",")
	name := strings.ToUpper(strings.TrimSpace(names[0]))
	var found *Listener
	for _, key := range []string{"advertised.listeners", "listeners"} {
		if v.IsNull(key) || v.String(key) == "" {
			continue
		}
		ls, err := ParseListeners(v.String(key))
		if err != nil {
			return nil, err
		}
		for i := range ls {
			if ls[i].Name == name {
				found = &ls[i]
				break
			}
		}
		if found != nil {
			break
		}
	}
	if name == "" || found == nil {
		return nil, errors.New("No controller listeners found: --standalone makes this node the only voter at its controller listener (controller.listener.names, listeners)")
	}
	host := found.Host
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	dirID, err := metaprops.NewClusterID() // a random Kafka UUID, as a directory ID is
	if err != nil {
		return nil, err
	}
	return []metaprops.InitialVoter{{NodeID: int32(v.Int("node.id")), Addr: net.JoinHostPort(host, strconv.Itoa(found.Port)), DirectoryID: dirID}}, nil
}

// storageDirs are this broker's directories: every log dir and the
// metadata log dir.
func (c *Config) storageDirs() []string {
	dirs := slices.Clone(c.LogDirs)
	if m := metadataLogDirOf(c.Values, c.LogDir); !slices.Contains(dirs, m) {
		dirs = append(dirs, m)
	}
	return dirs
}

// loadStorage reads the directories' meta.properties before anything is
// opened or created, and refuses what may not start: inconsistent
// directories, and unformatted ones on a quorum member. It returns the
// cluster ID they hold ("" when none is formatted).
func loadStorage(cfg Config) (*metaprops.Ensemble, string, error) {
	e, err := metaprops.Load(cfg.FS, cfg.storageDirs())
	if err != nil {
		return nil, "", fmt.Errorf("broker: %w", err)
	}
	check := e.Verify
	if quorumConfigured(cfg.Values) {
		check = e.Check
	}
	id, err := check("", cfg.NodeID)
	if err != nil {
		return nil, "", fmt.Errorf("broker: %w", err)
	}
	return e, id, nil
}

// formatStorage, with the log directory locked, writes what is missing:
// directory IDs (files from Kafka before 3.7), and for a single node the
// files themselves, with the cluster ID the other directories hold or a
// new one. An unformatted directory with metadata in it is left for
// adoptClusterID. It sets b.clusterID.
func (b *Broker) formatStorage(e *metaprops.Ensemble, clusterID string) error {
	now := b.cfg.Clock.Now()
	if _, err := e.AssignDirectoryIDs(b.cfg.FS, now); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	b.storage, b.clusterID = e, clusterID
	if len(e.Unformatted()) == 0 {
		return nil
	}
	if clusterID == "" {
		existing, err := b.cfg.FS.Exists(filepath.Join(b.metadataLogDir(), metadataDir))
		if err != nil {
			return fmt.Errorf("broker: %w", err)
		}
		if existing {
			return nil // adoptClusterID, once the controller has opened it
		}
		if clusterID, err = metaprops.NewClusterID(); err != nil {
			return fmt.Errorf("broker: %w", err)
		}
	}
	done, err := e.Format(b.cfg.FS, clusterID, b.cfg.NodeID, now)
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	b.clusterID = clusterID
	b.log.Info("formatted log dirs", "dirs", done, "cluster_id", clusterID)
	return nil
}

// adoptClusterID checks the cluster ID of the controller's metadata
// against meta.properties, and writes the files a directory from before
// them lacks, with the metadata's cluster ID.
func (b *Broker) adoptClusterID(metadataID string) error {
	if b.clusterID != "" {
		if metadataID != b.clusterID {
			return fmt.Errorf("broker: the metadata in %s belongs to cluster %s, but meta.properties says %s",
				filepath.Join(b.metadataLogDir(), metadataDir), metadataID, b.clusterID)
		}
		return nil
	}
	done, err := b.storage.Format(b.cfg.FS, metadataID, b.cfg.NodeID, b.cfg.Clock.Now())
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	b.clusterID = metadataID
	b.log.Info("formatted log dirs with the cluster ID of their metadata", "dirs", done, "cluster_id", metadataID)
	return nil
}
