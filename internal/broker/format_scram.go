package broker

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/metaprops"
	"github.com/samsa-io/samsa/internal/vfs"
)

// FormatStorageWithScram is FormatStorage with `samsa storage format
// --add-scram`: the SCRAM credentials go into the controller's directory
// of the metadata log dir (controller.BootstrapRecordsFile), which the
// first start commits with the cluster ID, so the first SCRAM login
// already works. It refuses a metadata log dir formatted already, or one
// holding metadata: its first start may be past, and credentials are then
// added with AlterUserScramCredentials (samsa user create).
//
// The file is written before meta.properties, so a crash leaves the
// directory unformatted rather than formatted without the credentials;
// a format that fails removes it again.
func FormatStorageWithScram(v config.Values, o FormatOptions, creds []metadata.UserScramCredentialRecord) ([]string, error) {
	logDirs := v.LogDirs()
	if len(creds) == 0 || len(logDirs) == 0 {
		return FormatStorage(v, o) // which refuses an empty log.dirs
	}
	dirs, metaDir := StorageDirs(v), metadataLogDirOf(v, logDirs[0])
	e, err := metaprops.Load(vfs.OS, dirs)
	if err != nil {
		return nil, err
	}
	if _, formatted := e.Props(metaDir); formatted {
		return nil, fmt.Errorf("--add-scram: the metadata log directory %s is formatted already: add users to a running cluster with samsa user create", metaDir)
	}
	ctrlDir := filepath.Join(metaDir, metadataDir)
	switch held, err := vfs.OS.Exists(ctrlDir); {
	case err != nil:
		return nil, fmt.Errorf("--add-scram: %w", err)
	case held:
		return nil, fmt.Errorf("--add-scram: %s holds metadata already: add users to a running cluster with samsa user create", ctrlDir)
	}
	recs := make([]metadata.Record, len(creds))
	for i, c := range creds {
		recs[i] = c
	}
	created := topMissingDir(ctrlDir)
	if err := controller.WriteBootstrapRecords(vfs.OS, ctrlDir, recs); err != nil {
		os.RemoveAll(created)
		return nil, fmt.Errorf("--add-scram: %w", err)
	}
	done, err := FormatStorage(v, o)
	if err != nil {
		if rmErr := os.RemoveAll(created); rmErr != nil {
			return nil, fmt.Errorf("%w (and removing the credentials it left in %s failed: %v)", err, ctrlDir, rmErr)
		}
		return nil, err
	}
	return done, nil
}

// topMissingDir is the outermost directory of dir's path that does not
// exist yet: what creating dir creates, and a failure removes.
func topMissingDir(dir string) string {
	top := dir
	for p := filepath.Dir(dir); p != top; top, p = p, filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			break
		}
	}
	return top
}
