package controller

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/vfs"
)

// BootstrapRecordsFile is the file in the controller's directory
// (Config.Dir) with records to commit on the cluster's first start, in the
// batch that writes the cluster ID: what `samsa storage format
// --add-scram` leaves, as Kafka's format leaves them in the metadata log's
// bootstrap checkpoint. A later start never reads it again: the metadata
// then holds the cluster ID. It may hold SCRAM credentials only.
const BootstrapRecordsFile = "bootstrap-records.json"

// WriteBootstrapRecords stores recs in the controller directory dir,
// creating it, for the first start to commit.
func WriteBootstrapRecords(fsys vfs.FS, dir string, recs []metadata.Record) error {
	if err := checkBootstrapRecords(recs); err != nil {
		return err
	}
	data, err := metadata.EncodeBatch(recs)
	if err != nil {
		return err
	}
	if err := vfs.MkdirAllDurable(fsys, dir); err != nil {
		return fmt.Errorf("controller: create %s: %w", dir, err)
	}
	path := filepath.Join(dir, BootstrapRecordsFile)
	if err := vfs.WriteFileAtomic(fsys, path, data); err != nil {
		return fmt.Errorf("controller: write %s: %w", path, err)
	}
	return nil
}

// readBootstrapRecords reads what WriteBootstrapRecords stored in dir;
// none, and no error, without the file. A file that cannot be read or
// holds anything else fails the first start: its credentials would
// otherwise be missing without a word.
func readBootstrapRecords(fsys vfs.FS, dir string) ([]metadata.Record, error) {
	path := filepath.Join(dir, BootstrapRecordsFile)
	data, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("controller: read %s: %w", path, err)
	}
	recs, err := metadata.DecodeBatch(data)
	if err != nil {
		return nil, fmt.Errorf("controller: %s: %w", path, err)
	}
	if err := checkBootstrapRecords(recs); err != nil {
		return nil, fmt.Errorf("controller: %s: %w", path, err)
	}
	return recs, nil
}

// checkBootstrapRecords allows SCRAM credentials within Kafka's bounds,
// one per user and mechanism.
func checkBootstrapRecords(recs []metadata.Record) error {
	type key struct {
		user      string
		mechanism int8
	}
	seen := map[key]bool{}
	for _, r := range recs {
		c, ok := r.(metadata.UserScramCredentialRecord)
		if !ok {
			return fmt.Errorf("a %s record cannot be bootstrapped: only SCRAM credentials can", r.Type())
		}
		switch {
		case c.Name == "":
			return errors.New("a bootstrapped SCRAM credential has no user name")
		case scramMechanisms[c.Mechanism] == "":
			return fmt.Errorf("the SCRAM credential of %q has unknown mechanism %d", c.Name, c.Mechanism)
		case c.Iterations < auth.MinScramIterations || c.Iterations > auth.MaxScramIterations:
			return fmt.Errorf("the %s credential of %q has %d iterations, outside [%d, %d]",
				scramMechanisms[c.Mechanism], c.Name, c.Iterations, auth.MinScramIterations, auth.MaxScramIterations)
		case len(c.Salt) == 0 || len(c.StoredKey) == 0 || len(c.ServerKey) == 0:
			return fmt.Errorf("the %s credential of %q lacks its salt or keys", scramMechanisms[c.Mechanism], c.Name)
		case seen[key{c.Name, c.Mechanism}]:
			return fmt.Errorf("the %s credential of %q is given twice", scramMechanisms[c.Mechanism], c.Name)
		}
		seen[key{c.Name, c.Mechanism}] = true
	}
	return nil
}
