package kafkaref

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// The releases run by default. The mirror is 4.3.0 because connect-mirror
// is not on Maven Central at 4.4.0 (pom.xml says more); the brokers it
// mirrors between are 4.4.0, the release Samsa is compared with.
const (
	DefaultKafkaVersion  = "4.4.0"
	DefaultMirrorVersion = "4.3.0"
)

// KafkaVersion is the Apache Kafka release of the brokers (KAFKA_VERSION,
// as bench/compare/run.sh).
func KafkaVersion() string { return envOr("KAFKA_VERSION", DefaultKafkaVersion) }

// MirrorVersion is the release of MirrorMaker 2 and of the client jars
// Classpath holds (KAFKAREF_MIRROR_VERSION).
func MirrorVersion() string { return envOr("KAFKAREF_MIRROR_VERSION", DefaultMirrorVersion) }

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// javaBin is the java launcher (JAVA, as bench/compare/run.sh).
func javaBin() string { return envOr("JAVA", "java") }

// benchCache is where bench/compare keeps the broker's jars: sharing it
// means the broker is downloaded once for the benchmarks, `make
// registry-on-kafka` and these tests.
func benchCache() string {
	return envOr("SAMSA_BENCH_CACHE", filepath.Join(homeDir(), ".cache", "samsa-bench"))
}

// compatCache is where the compatibility suites and the differential
// tests keep their Java side (COMPAT_CACHE); its m2/ is the Maven
// repository they share, so connect-runtime and kafka-clients are fetched
// once for all of them.
func compatCache() string {
	return envOr("COMPAT_CACHE", filepath.Join(homeDir(), ".cache", "samsa-compat"))
}

func homeDir() string {
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return os.TempDir()
}

// sourceDir is this package's directory in the source tree: the poms and
// the log4j2 configuration are read from there.
func sourceDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// requireJava skips the test when the machine lacks a tool the Java side
// needs, unless the run must not skip: with SAMSA_REQUIRE_JAVA set, or in
// CI (CI=true, as test/connectdiff and test/streamsdiff decide), a missing
// tool fails the test.
func requireJava(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if tool == "java" {
			tool = javaBin()
		}
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("SAMSA_REQUIRE_JAVA") != "" || os.Getenv("CI") == "true" {
				t.Fatalf("kafkaref: %s is needed for Apache Kafka and MirrorMaker 2: %v", tool, err)
			}
			t.Skipf("kafkaref: no %s on this machine (set SAMSA_REQUIRE_JAVA=1 to fail instead)", tool)
		}
	}
}

// jarSet is one directory of jars copied from Maven Central by
// `mvn dependency:copy-dependencies` of one pom.
type jarSet struct {
	dir    string // the jars, complete once marker exists
	marker string // a jar the directory holds once complete
	pomDir string
	m2     string // the local Maven repository
	props  []string
}

// brokerJars are bench/compare/kafka/pom.xml's: the broker and its runtime
// dependencies, in bench/compare's own directory and Maven repository.
func brokerJars() jarSet {
	v, cache := KafkaVersion(), benchCache()
	return jarSet{
		dir:    filepath.Join(cache, "kafka-libs-"+v),
		marker: "kafka_2.13-" + v + ".jar",
		pomDir: filepath.Join(sourceDir(), "..", "..", "bench", "compare", "kafka"),
		m2:     filepath.Join(cache, "m2"),
		props:  []string{"-Dkafka.version=" + v},
	}
}

// mirrorJars are this package's pom.xml: connect-mirror and what it needs.
func mirrorJars() jarSet {
	v, cache := MirrorVersion(), compatCache()
	return jarSet{
		dir:    filepath.Join(cache, "mirror-libs-"+v),
		marker: "connect-mirror-" + v + ".jar",
		pomDir: sourceDir(),
		m2:     filepath.Join(cache, "m2"),
		props:  []string{"-Dmirror.version=" + v},
	}
}

// fetchMu serialises fetches within the test binary; a file lock
// serialises them across test binaries (go test runs packages in
// parallel) and with the shell scripts' runs, which rename a finished
// directory into place as this does.
var fetchMu sync.Mutex

// fetch returns the directory of the jars, copying them from Maven
// Central on first use: minutes, then never again.
func (j jarSet) fetch() (string, error) {
	fetchMu.Lock()
	defer fetchMu.Unlock()
	if j.complete() {
		return j.dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(j.dir), 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(j.dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if j.complete() {
		return j.dir, nil
	}
	tmp := fmt.Sprintf("%s.tmp-kafkaref-%d", j.dir, os.Getpid())
	os.RemoveAll(tmp)
	args := append([]string{"-q", "-B", "-Dmaven.repo.local=" + j.m2}, j.props...)
	args = append(args, "dependency:copy-dependencies", "-DoutputDirectory="+tmp)
	cmd := exec.Command("mvn", args...)
	cmd.Dir = j.pomDir
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("mvn %s in %s: %w\n%s", strings.Join(args, " "), j.pomDir, err, lastLines(string(out), 20))
	}
	if _, err := os.Stat(filepath.Join(tmp, j.marker)); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("mvn copied no %s into %s", j.marker, tmp)
	}
	// A directory without the marker is a broken copy from elsewhere.
	os.RemoveAll(j.dir)
	if err := os.Rename(tmp, j.dir); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return j.dir, nil
}

func (j jarSet) complete() bool {
	_, err := os.Stat(filepath.Join(j.dir, j.marker))
	return err == nil
}

// Classpath returns the directory of MirrorMaker 2's jars (connect-mirror,
// connect-mirror-client, kafka-clients and the Connect runtime at
// MirrorVersion, with a log4j2 binding), copied from Maven Central once,
// for other Java programs a test runs: their class path is
// filepath.Join(Classpath(t), "*"). It skips or fails the test as
// StartKafka does when Java or Maven is missing.
func Classpath(t testing.TB) string {
	t.Helper()
	requireJava(t, "java", "mvn")
	dir, err := mirrorJars().fetch()
	if err != nil {
		t.Fatalf("kafkaref: MirrorMaker 2 %s jars: %v", MirrorVersion(), err)
	}
	return dir
}

// brokerClasspath is Classpath for the broker's jars.
func brokerClasspath(t testing.TB) string {
	t.Helper()
	requireJava(t, "java", "mvn")
	dir, err := brokerJars().fetch()
	if err != nil {
		t.Fatalf("kafkaref: Apache Kafka %s jars: %v", KafkaVersion(), err)
	}
	return dir
}

// jvmArgs are the options every JVM here starts with: a small heap, and
// the client compiler only (-XX:TieredStopAtLevel=1), which starts a JVM
// sooner and costs less CPU on a machine shared with other tests; the runs
// are short, so peak speed does not matter.
func jvmArgs(heap string) []string {
	return []string{
		"-Xmx" + heap, "-Xms128m", "-XX:+UseG1GC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile=" + filepath.Join(sourceDir(), "log4j2.properties"),
		"-Dkafkaref.log.level=" + envOr("KAFKAREF_LOG_LEVEL", "warn"),
	}
}

// lastLines is the end of a log, for error messages.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
