package broker

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
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

// FormatStorage is `samsa storage format`: kafka-storage.sh format over
// StorageDirs(v) for node.id. It returns the directories it formatted.
func FormatStorage(v config.Values, clusterID string, ignoreFormatted bool, now time.Time) ([]string, error) {
	dirs := StorageDirs(v)
	if len(dirs) == 0 {
		return nil, errors.New("log.dirs is empty")
	}
	node := v.Int("node.id")
	if node < 0 {
		return nil, errors.New("node.id must be set (>= 0)")
	}
	return metaprops.Format(vfs.OS, dirs, metaprops.FormatOptions{ClusterID: clusterID, NodeID: node, IgnoreFormatted: ignoreFormatted, Now: now})
}

// storageDirs are this broker's directories.
func (c *Config) storageDirs() []string {
	return []string{c.LogDir, metadataLogDirOf(c.Values, c.LogDir)}
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
