package kafkaref

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// mm2StopGrace is how long a stopped MirrorMaker 2 gets to commit its
// offsets and leave its workers' groups.
const mm2StopGrace = 20 * time.Second

// MM2 is Apache Kafka's MirrorMaker 2 in dedicated mode
// (org.apache.kafka.connect.mirror.MirrorMaker), one JVM.
type MM2 struct {
	// Dir holds mm2.properties and mm2.log.
	Dir  string
	proc *process
}

// StartMM2 runs MirrorMaker 2 (MirrorVersion, jars from Maven Central) in
// dedicated mode with props as its mm2.properties, until Stop, Kill or the
// end of the test. clusters, when given, are passed as --clusters: only
// the flows into those clusters run in this process (without it, MM2 also
// starts a herder per pair whose heartbeats are enabled, B->A for an A->B
// flow). It does not wait for anything: a test waits on what the mirror
// does. The log (warnings and errors; KAFKAREF_LOG_LEVEL=info for more)
// goes to Dir/mm2.log and its end is printed when the test failed.
func StartMM2(t testing.TB, props string, clusters ...string) *MM2 {
	t.Helper()
	libs := Classpath(t)
	m := &MM2{Dir: t.TempDir()}
	path := filepath.Join(m.Dir, "mm2.properties")
	if err := os.WriteFile(path, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(jvmArgs("512m"), "-cp", filepath.Join(libs, "*"), "org.apache.kafka.connect.mirror.MirrorMaker", path)
	if len(clusters) > 0 {
		args = append(append(args, "--clusters"), clusters...)
	}
	var err error
	if m.proc, err = startProcess(exec.Command(javaBin(), args...), filepath.Join(m.Dir, "mm2.log")); err != nil {
		t.Fatalf("kafkaref: start MirrorMaker 2: %v", err)
	}
	t.Cleanup(func() {
		m.proc.stop(mm2StopGrace)
		if t.Failed() {
			t.Logf("MirrorMaker 2, %s (last lines):\n%s", m.proc.logPath, m.proc.logTail(60))
		}
	})
	return m
}

// Stop shuts MirrorMaker 2 down as an operator does (SIGTERM), SIGKILL
// after 20 s, and returns once it has exited.
func (m *MM2) Stop() { m.proc.stop(mm2StopGrace) }

// Kill crashes MirrorMaker 2 (SIGKILL).
func (m *MM2) Kill() { m.proc.kill() }

// Alive reports whether the process still runs: a wait on the mirror's
// effects should give up when it does not.
func (m *MM2) Alive() bool { return m.proc.alive() }

// LogPath is MirrorMaker 2's log file.
func (m *MM2) LogPath() string { return m.proc.logPath }

// LogTail is the last n lines of the log, for a test's own messages.
func (m *MM2) LogTail(n int) string { return m.proc.logTail(n) }
