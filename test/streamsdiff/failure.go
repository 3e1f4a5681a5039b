package streamsdiff

import "sync"

// failures holds, per run prefix, the first failure an implementation
// reported after its applications started, so that settle stops at once
// instead of waiting for input that will never be consumed.
var failures sync.Map

// reportFailure records a run's failure (the first one wins).
func reportFailure(prefix string, err error) { failures.LoadOrStore(prefix, err) }

func failure(prefix string) error {
	if err, ok := failures.Load(prefix); ok {
		return err.(error)
	}
	return nil
}
