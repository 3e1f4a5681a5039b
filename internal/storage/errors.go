package storage

import (
	"errors"
	"fmt"
)

// Marker errors; the broker maps them to Kafka error codes.
var (
	// ErrOffsetOutOfRange: an offset below the log start or past the log
	// end. Kafka: OFFSET_OUT_OF_RANGE.
	ErrOffsetOutOfRange = errors.New("storage: offset out of range")
	// ErrLogFailed: an earlier write, sync or truncate failed, so the log
	// no longer knows what is on disk and refuses writes until reopened
	// (which recovers it). Kafka: KAFKA_STORAGE_ERROR.
	ErrLogFailed = errors.New("storage: log failed after an I/O error")
	// ErrClosed: the log was closed.
	ErrClosed = errors.New("storage: log closed")
	// ErrUnexpectedFile: the partition directory holds a file the log
	// does not know how to treat. The error names it.
	ErrUnexpectedFile = errors.New("storage: unexpected file in log directory")
	// ErrInvalidOffset: a follower append that does not continue the log
	// (a batch below the log end or the previous batch's end, or a gap on
	// a log that is not compacted), or a batch that does not fit a
	// segment's 32-bit relative offsets.
	ErrInvalidOffset = errors.New("storage: invalid offset")
	// ErrLeaderEpochRegression: a follower append whose batch carries a
	// partition leader epoch older than one the log already holds batches
	// of, or than an earlier batch of the append. A leader's epochs only
	// grow along its log, so the follower's log has diverged from it and
	// must be truncated by leader epoch before it fetches again. Also a
	// leader append in an epoch older than the log's batches' (a stale
	// leader).
	ErrLeaderEpochRegression = errors.New("storage: leader epoch goes back")
	// ErrMirrorOverlap: a mirror append's batch holds the log end without
	// starting there (Log.AppendMirror): the mirror topic's log and its
	// source's are cut at different offsets there, so appending it would
	// write some offsets twice and skipping it would lose the rest.
	ErrMirrorOverlap = errors.New("storage: mirror batch overlaps the log end")
	// ErrCorruptLog: data that recovery cannot repair without losing
	// flushed records (for example a hole below the recovery point).
	ErrCorruptLog = errors.New("storage: corrupt log")
	// ErrLogDirLocked: another process (another broker) holds the data
	// directory's lock. The error NewManager returns names the directory.
	ErrLogDirLocked = errors.New("storage: log directory locked by another process")

	// ErrLogDirOffline: the replica's data directory is offline after an
	// I/O error (or was at start). Kafka: KAFKA_STORAGE_ERROR.
	ErrLogDirOffline = errors.New("storage: log directory offline")
	// ErrLogDirNotFound: a path that is not one of log.dirs. Kafka:
	// LOG_DIR_NOT_FOUND.
	ErrLogDirNotFound = errors.New("storage: not a log directory of this broker")
	// ErrNoReplica: the broker has no replica of the partition. Kafka:
	// REPLICA_NOT_AVAILABLE in AlterReplicaLogDirs.
	ErrNoReplica = errors.New("storage: no replica of the partition")
	// ErrTooManyOpenFiles: a file could not be opened because the process
	// (EMFILE) or the system (ENFILE) is at its open-files limit. It is no
	// fault of the disk: the directory stays online and the log stays
	// writable, and what failed (a new log, a roll) can be tried again
	// once files are freed or the limit raised. Kafka: KAFKA_STORAGE_ERROR
	// (retriable), where Kafka takes the log directory offline.
	ErrTooManyOpenFiles = errors.New("storage: at the open-files limit (ulimit -n)")

	errIndexCorrupt = errors.New("storage: index corrupt")
)

// dirLockedError is NewManager's error for a locked data directory.
type dirLockedError struct {
	dir string
	err error // from vfs.FS.Lock
}

func (e *dirLockedError) Error() string {
	return fmt.Sprintf("storage: log directory %s is locked by another process (is another broker running on it?)", e.dir)
}

func (e *dirLockedError) Unwrap() []error { return []error{ErrLogDirLocked, e.err} }
