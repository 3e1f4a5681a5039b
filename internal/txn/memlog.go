package txn

import "github.com/samsa-io/samsa/internal/coordlog"

// MemLog is an in-memory Log for tests (internal/coordlog).
type MemLog = coordlog.MemLog

// NewMemLog returns an empty MemLog.
func NewMemLog() *MemLog { return coordlog.NewMemLog() }
