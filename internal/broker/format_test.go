package broker

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/metaprops"
	"github.com/samsa-io/samsa/internal/vfs"
)

// The directories format and start-up look at: every log dir (log.dirs,
// else log.dir) and the metadata log dir, each once.
func TestStorageDirs(t *testing.T) {
	cases := []struct {
		raw  map[string]string
		want []string
	}{
		{map[string]string{"log.dirs": "/a"}, []string{"/a"}},
		{map[string]string{"log.dirs": "/a, /b"}, []string{"/a", "/b"}},
		{map[string]string{"log.dir": "/c"}, []string{"/c"}},
		{map[string]string{"log.dirs": "/a", "log.dir": "/c"}, []string{"/a"}},
		{map[string]string{"log.dirs": "/a,/b", "metadata.log.dir": "/m"}, []string{"/a", "/b", "/m"}},
		{map[string]string{"log.dirs": "/a,/b", "metadata.log.dir": "/b"}, []string{"/a", "/b"}},
		{map[string]string{}, []string{"/tmp/kafka-logs"}}, // Kafka's log.dir default
	}
	for _, c := range cases {
		if got := StorageDirs(brokerValues(t, c.raw)); !slices.Equal(got, c.want) {
			t.Errorf("StorageDirs(%v) = %v, want %v", c.raw, got, c.want)
		}
	}
}

func TestFormatStorageNeedsNodeID(t *testing.T) {
	v := brokerValues(t, map[string]string{"log.dirs": t.TempDir()})
	if _, err := FormatStorage(v, FormatOptions{ClusterID: "q1Sh-9_ISia_zwGINzRvyQ", Now: time.Now()}); err == nil || !strings.Contains(err.Error(), "node.id must be set") {
		t.Fatalf("FormatStorage without node.id: %v", err)
	}
}

// samsa storage format's quorum flags follow kafka-storage.sh format: each
// refused combination fails with Kafka's words before anything is
// written; --standalone stores this node alone at its controller
// listener, --initial-controllers stores the set given and gives the
// metadata log dir this node's directory ID.
func TestFormatStorageQuorumFlags(t *testing.T) {
	const id = "q1Sh-9_ISia_zwGINzRvyQ"
	const dir1, dir2 = "7eXr1Q2yR1-J9T9vRaSmdw", "a1fFfYxoQ9KQ6oWmQxtE3g"
	initial := "1@127.0.0.1:9093:" + dir1 + ",2@127.0.0.1:9193:" + dir2
	controller := map[string]string{"process.roles": "controller", "node.id": "2", "listeners": "CONTROLLER://127.0.0.1:9193",
		"controller.listener.names": "CONTROLLER", "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
		"controller.quorum.bootstrap.servers": "127.0.0.1:9093,127.0.0.1:9193"}
	static := map[string]string{"controller.quorum.bootstrap.servers": "", "controller.quorum.voters": "1@127.0.0.1:9093,2@127.0.0.1:9193"}
	broker := map[string]string{"process.roles": "broker", "listeners": "PLAINTEXT://127.0.0.1:9092", "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"}
	for _, c := range []struct {
		name   string
		also   map[string]string
		opts   FormatOptions
		err    string // "" formats
		voters string // the initial voters stored, with "<new>" for a drawn directory ID
	}{
		{"no flag on a controller without voters", nil, FormatOptions{},
			"Because controller.quorum.voters is not set on this controller, you must specify one of the following: --standalone, --initial-controllers, or --no-initial-controllers.", ""},
		{"two flags", nil, FormatOptions{Standalone: true, NoInitialControllers: true},
			"only one of --standalone, --initial-controllers and --no-initial-controllers may be given", ""},
		{"three flags", nil, FormatOptions{Standalone: true, InitialControllers: initial, NoInitialControllers: true},
			"only one of --standalone, --initial-controllers and --no-initial-controllers may be given", ""},
		{"--standalone with static voters", static, FormatOptions{Standalone: true},
			"You cannot specify controller.quorum.voters and format the node with --initial-controllers or --standalone. If you want to use dynamic quorum, please remove controller.quorum.voters and specify controller.quorum.bootstrap.servers instead.", ""},
		{"--initial-controllers with static voters", static, FormatOptions{InitialControllers: initial},
			"You cannot specify controller.quorum.voters", ""},
		{"--standalone on a broker", broker, FormatOptions{Standalone: true}, "You can only use --standalone on a controller.", ""},
		{"--standalone without a controller listener", map[string]string{"controller.listener.names": "", "process.roles": ""}, FormatOptions{Standalone: true},
			"No controller listeners found", ""},
		{"--initial-controllers that do not parse", nil, FormatOptions{InitialControllers: "2@127.0.0.1:9193"}, "is not id@host:port:directory-id", ""},
		{"static voters and no flag", static, FormatOptions{}, "", ""},
		{"static voters and --no-initial-controllers", static, FormatOptions{NoInitialControllers: true}, "", ""},
		{"a broker with bootstrap servers and no flag", broker, FormatOptions{}, "", ""},
		{"--no-initial-controllers", nil, FormatOptions{NoInitialControllers: true}, "", ""},
		{"--standalone", nil, FormatOptions{Standalone: true}, "", "2@127.0.0.1:9193:<new>"},
		{"--standalone on an advertised listener", map[string]string{"advertised.listeners": "CONTROLLER://c2.example:9193"}, FormatOptions{Standalone: true}, "", "2@c2.example:9193:<new>"},
		{"--initial-controllers", nil, FormatOptions{InitialControllers: initial}, "", initial},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := map[string]string{"log.dirs": t.TempDir()}
			for k, v := range controller {
				raw[k] = v
			}
			for k, v := range c.also {
				raw[k] = v
			}
			v := brokerValues(t, raw)
			c.opts.ClusterID, c.opts.Now = id, time.Now()
			done, err := FormatStorage(v, c.opts)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("FormatStorage: %v\nwant an error with %q", err, c.err)
				}
				if len(done) != 0 {
					t.Fatalf("a refused format formatted %v", done)
				}
				return
			}
			if err != nil || len(done) != 1 {
				t.Fatalf("FormatStorage = %v, %v", done, err)
			}
			stored, err := metaprops.ReadInitialVoters(vfs.OS, done[0])
			if err != nil {
				t.Fatal(err)
			}
			p, _ := metaprops.Read(vfs.OS, done[0])
			got := metaprops.FormatInitialVoters(stored)
			if len(stored) == 1 && stored[0].DirectoryID == p.DirectoryID {
				got = strings.Replace(got, p.DirectoryID, "<new>", 1)
			}
			if got != c.voters {
				t.Fatalf("stored voters %q, want %q", got, c.voters)
			}
			if c.voters == initial && p.DirectoryID != dir2 {
				t.Fatalf("the metadata log dir has directory.id %s, want node 2's %s", p.DirectoryID, dir2)
			}
		})
	}
}
