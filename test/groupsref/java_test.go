package groupsref

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/task"
)

// The Java side: java/pom.xml's classes and jars, built with Maven once
// per source and Kafka version into COMPAT_CACHE (shared with test/kafkaref
// and test/streamsdiff, so kafka-clients and kafka-streams come from its
// Maven repository, fetched once for all).

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func kafkaVersion() string { return envOr("KAFKA_VERSION", "4.4.0") }

func compatCache() string {
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return envOr("COMPAT_CACHE", filepath.Join(home, ".cache", "samsa-compat"))
}

func javaDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "java")
}

// requireJava skips the test when java or mvn is missing, unless
// SAMSA_REQUIRE_JAVA is set or CI=true (as test/kafkaref).
func requireJava(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("SAMSA_REQUIRE_JAVA") != "" || os.Getenv("CI") == "true" {
				t.Fatalf("groupsref: %s is needed for the Java clients: %v", tool, err)
			}
			t.Skipf("groupsref: no %s on this machine (set SAMSA_REQUIRE_JAVA=1 to fail instead)", tool)
		}
	}
}

// buildMu serialises the build within the test binary; a file lock
// serialises it across binaries.
var buildMu sync.Mutex

// javaClasspath builds java/ into COMPAT_CACHE/groupsref-VERSION when its
// sources changed (a stamp of their hash) and returns the class path.
func javaClasspath(t *testing.T) string {
	t.Helper()
	requireJava(t)
	buildMu.Lock()
	defer buildMu.Unlock()
	stamp, err := sourceStamp()
	if err != nil {
		t.Fatal(err)
	}
	build := filepath.Join(compatCache(), "groupsref-"+kafkaVersion())
	cp := filepath.Join(build, "classes") + string(os.PathListSeparator) + filepath.Join(build, "libs", "*")
	if built(build, stamp) {
		return cp
	}
	if err := os.MkdirAll(compatCache(), 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(build+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("groupsref: lock %s: %v", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if built(build, stamp) {
		return cp
	}
	os.RemoveAll(build)
	cmd := exec.Command("mvn", "-q", "-B", "-Dmaven.repo.local="+filepath.Join(compatCache(), "m2"),
		"-Dkafka.version="+kafkaVersion(), "-Dbuild.dir="+build,
		"package", "dependency:copy-dependencies", "-DoutputDirectory="+filepath.Join(build, "libs"))
	cmd.Dir = javaDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("groupsref: mvn package in %s: %v\n%s", javaDir(), err, lastLines(string(out), 30))
	}
	if err := os.WriteFile(filepath.Join(build, "stamp"), []byte(stamp), 0o644); err != nil {
		t.Fatal(err)
	}
	return cp
}

func built(build, stamp string) bool {
	b, err := os.ReadFile(filepath.Join(build, "stamp"))
	return err == nil && string(b) == stamp
}

// sourceStamp hashes the pom and the Java sources.
func sourceStamp() (string, error) {
	h := sha256.New()
	files, err := filepath.Glob(filepath.Join(javaDir(), "src", "main", "java", "io", "samsa", "groupsref", "*.java"))
	if err != nil {
		return "", err
	}
	for _, f := range append([]string{filepath.Join(javaDir(), "pom.xml")}, files...) {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// event is one JSON line of a Java client (Share.java, WordCount.java).
type event struct {
	Ev        string `json:"ev"`
	Partition int32  `json:"p"`
	Offset    int64  `json:"o"`
	Value     string `json:"v"`
	Delivery  int    `json:"n"`
	Records   int    `json:"records"`
	State     string `json:"state"`
	Msg       string `json:"msg"`
}

// jvm is one Java client process: its JSON lines arrive on events, its
// log (stderr and any line that is not JSON) is kept for a failed test.
type jvm struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	events chan event
	exited chan struct{}
	log    *tail
	group  *task.Group
}

// startJVM runs class with args. The process has a process group of its
// own and dies with the test binary (Pdeathsig); the test's end closes its
// stdin (a clean close) and kills it 20 s later.
func startJVM(t *testing.T, name, class string, args ...string) *jvm {
	t.Helper()
	cp := javaClasspath(t)
	jargs := []string{"-Xmx256m", "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile=" + filepath.Join(javaDir(), "log4j2.properties"),
		"-Dgroupsref.log.level=" + envOr("GROUPSREF_LOG_LEVEL", "warn"),
		"-cp", cp, "io.samsa.groupsref." + class}
	cmd := exec.Command(envOr("JAVA", "java"), append(jargs, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	j := &jvm{name: name, cmd: cmd, events: make(chan event, 100000), exited: make(chan struct{}), log: &tail{}, group: task.NewGroup(context.Background())}
	cmd.Stderr = j.log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if j.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("groupsref: start %s: %v", name, err)
	}
	j.group.Go(func(context.Context) {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var ev event
			if !strings.HasPrefix(sc.Text(), "{") || json.Unmarshal(sc.Bytes(), &ev) != nil {
				fmt.Fprintln(j.log, sc.Text())
				continue
			}
			if ev.Ev == "error" {
				fmt.Fprintln(j.log, sc.Text())
			}
			// The buffer holds more lines than any test makes; a full
			// one would only drop idle lines' successors, never block
			// the process.
			select {
			case j.events <- ev:
			default:
			}
		}
		_ = cmd.Wait()
		close(j.exited)
	})
	t.Cleanup(func() {
		j.close(20 * time.Second)
		if t.Failed() {
			t.Logf("%s (%s) log, last lines:\n%s", name, class, j.log.String())
		}
	})
	return j
}

// kill is a crash: SIGKILL, no shutdown hook, nothing released.
func (j *jvm) kill() {
	_ = j.cmd.Process.Kill()
	<-j.exited
	j.group.Stop()
}

// freeze stops the process (SIGSTOP): its connections stay open and it
// says nothing, as a consumer stuck in a long pause. kill ends it.
func (j *jvm) freeze(t *testing.T) {
	t.Helper()
	if err := j.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("freeze %s: %v", j.name, err)
	}
}

// close ends stdin, which closes the client cleanly, and kills the process
// if it has not exited within grace.
func (j *jvm) close(grace time.Duration) {
	_ = j.stdin.Close()
	select {
	case <-j.exited:
	case <-time.After(grace):
		_ = j.cmd.Process.Kill()
		<-j.exited
	}
	j.group.Stop()
}

// next returns the next event, failing the test when the process exits, an
// error is reported, or limit passes first.
func (j *jvm) next(t *testing.T, limit time.Duration) (event, bool) {
	t.Helper()
	select {
	case ev := <-j.events:
		if ev.Ev == "error" {
			t.Fatalf("%s: %s", j.name, ev.Msg)
		}
		return ev, true
	case <-j.exited:
		// Lines already read come first.
		select {
		case ev := <-j.events:
			return ev, true
		default:
		}
		t.Fatalf("%s exited unexpectedly", j.name)
	case <-time.After(limit):
	}
	return event{}, false
}

// await reads events until one satisfies done, failing after limit.
func (j *jvm) await(t *testing.T, limit time.Duration, what string, done func(event) bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ev, ok := j.next(t, time.Until(deadline))
		if !ok {
			t.Fatalf("%s: no %s within %v", j.name, what, limit)
		}
		if done(ev) {
			return
		}
	}
}

// tail keeps a process's last 64 KiB of output.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (l *tail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if over := len(l.buf) - 64<<10; over > 0 {
		l.buf = l.buf[over:]
	}
	return len(p), nil
}

func (l *tail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return lastLines(string(l.buf), 60)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
