package kafkaref

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:embed java/TranslateOffsets.java
var translateSource []byte

// translateTimeout is what TranslateOffsets gives
// RemoteClusterUtils.translateOffsets (reading the checkpoints topic).
const translateTimeout = 30 * time.Second

// compileMu serialises the compilation within the test binary; the rename
// into place makes concurrent binaries safe (the loser's copy is dropped).
var compileMu sync.Mutex

// translateClasses compiles java/TranslateOffsets.java against the mirror's
// jars, once per source and MirrorVersion, into COMPAT_CACHE.
func translateClasses(t testing.TB, libs string) string {
	t.Helper()
	requireJava(t, "javac")
	compileMu.Lock()
	defer compileMu.Unlock()
	sum := sha256.Sum256(translateSource)
	dir := filepath.Join(compatCache(), "kafkaref-translate-"+MirrorVersion()+"-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, "TranslateOffsets.class")); err == nil {
		return dir
	}
	tmp, err := os.MkdirTemp(compatCache(), "kafkaref-translate-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "TranslateOffsets.java")
	if err := os.WriteFile(src, translateSource, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("javac", "-cp", filepath.Join(libs, "*"), "-d", tmp, src).CombinedOutput()
	if err != nil {
		t.Fatalf("kafkaref: javac TranslateOffsets.java: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "TranslateOffsets.class")); serr != nil {
			t.Fatalf("kafkaref: keep the compiled TranslateOffsets: %v", err)
		}
	}
	return dir
}

// TranslateOffsets runs MirrorMaker 2's
// RemoteClusterUtils.translateOffsets in a JVM: the consumer group's
// offsets on the source cluster sourceAlias, translated to the target
// cluster whose bootstrap is targetBootstrap, from the latest checkpoints
// in its <sourceAlias>.checkpoints.internal. The answer is by topic (the
// target's, e.g. "A.orders") and partition; a group with no checkpoints
// gives an empty map.
func TranslateOffsets(t testing.TB, targetBootstrap, sourceAlias, group string) map[string]map[int32]int64 {
	t.Helper()
	libs := Classpath(t)
	classes := translateClasses(t, libs)
	args := append(jvmArgs("256m"), "-cp", classes+string(os.PathListSeparator)+filepath.Join(libs, "*"),
		"TranslateOffsets", targetBootstrap, sourceAlias, group, strconv.FormatInt(translateTimeout.Milliseconds(), 10))
	cmd := exec.Command(javaBin(), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kafkaref: translateOffsets(%s, %s): %v\n%s", sourceAlias, group, err, lastLines(stderr.String(), 30))
	}
	offsets, err := parseTranslated(string(out))
	if err != nil {
		t.Fatalf("kafkaref: translateOffsets(%s, %s): %v", sourceAlias, group, err)
	}
	return offsets
}

// parseTranslated reads TranslateOffsets.java's lines,
// OFFSET<TAB>topic<TAB>partition<TAB>offset, among any others (log4j
// writes to stdout too).
func parseTranslated(out string) (map[string]map[int32]int64, error) {
	offsets := map[string]map[int32]int64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		rest, ok := strings.CutPrefix(line, "OFFSET\t")
		if !ok {
			continue
		}
		f := strings.Split(rest, "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("unexpected line %q", line)
		}
		p, perr := strconv.ParseInt(f[1], 10, 32)
		o, oerr := strconv.ParseInt(f[2], 10, 64)
		if perr != nil || oerr != nil {
			return nil, fmt.Errorf("unexpected line %q", line)
		}
		if offsets[f[0]] == nil {
			offsets[f[0]] = map[int32]int64{}
		}
		offsets[f[0]][int32(p)] = o
	}
	return offsets, nil
}
