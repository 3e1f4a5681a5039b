package broker

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestProcessRoles checks process.roles against the quorum and the
// listeners as Kafka's KafkaConfig does: a controller is a voter with its
// controller listener; a broker-only node is not a voter and does not
// listen on the controller listener; a controller-only node listens on
// nothing else.
func TestProcessRoles(t *testing.T) {
	const voters = "1@127.0.0.1:9093,2@127.0.0.1:9193,3@127.0.0.1:9293"
	both := "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"
	for _, tc := range []struct {
		name, roles, nodeID, listeners string
		want                           string // "" accepted, else a part of the error
		broker, controller, observer   bool
	}{
		{"combined", "broker,controller", "1", both, "", true, true, false},
		{"controller-only", "controller", "1", "CONTROLLER://127.0.0.1:9093", "", false, true, false},
		{"broker-only", "broker", "4", "PLAINTEXT://127.0.0.1:9092", "", true, false, true},
		{"broker-only among the voters", "broker", "1", "PLAINTEXT://127.0.0.1:9092", "voter entry must name the port of one of its listeners", false, false, false},
		{"broker-only on the controller listener", "broker", "4", "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9393", "must not list the controller listener", false, false, false},
		{"controller-only with a broker listener", "controller", "1", both, "may list only controller listeners", false, false, false},
		{"controller not among the voters", "controller", "4", "CONTROLLER://127.0.0.1:9393", "must be one of the voters", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := resolvedQuorum(map[string]string{"process.roles": tc.roles, "node.id": tc.nodeID,
				"controller.quorum.voters": voters, "controller.listener.names": "CONTROLLER", "listeners": tc.listeners,
				"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"})
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want one saying %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			q := cfg.quorum
			if q.broker != tc.broker || q.controller != tc.controller || q.observer() != tc.observer {
				t.Errorf("roles broker=%v controller=%v observer=%v, want %v %v %v", q.broker, q.controller, q.observer(), tc.broker, tc.controller, tc.observer)
			}
			if tc.observer && q.raftListener != "PLAINTEXT" {
				t.Errorf("a broker-only node's Raft listener is %q, want PLAINTEXT", q.raftListener)
			}
		})
	}
	// Without a quorum over the network the node is the single node, both.
	v, err := LoadConfig("", map[string]string{"process.roles": "broker"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := testConfigFromValues(v)
	if err == nil {
		err = cfg.resolveQuorum()
	}
	if err == nil || !strings.Contains(err.Error(), "needs controller.quorum.bootstrap.servers (or controller.quorum.voters)") {
		t.Errorf("process.roles=broker without voters: %v", err)
	}
}

// TestBootstrapServersQuorum: a broker-only node may name the controllers
// by controller.quorum.bootstrap.servers alone, as Kafka 4 brokers do, and
// is then a Raft non-voter that registers through them; a combined node
// whose only bootstrap server is itself stays the single node.
func TestBootstrapServersQuorum(t *testing.T) {
	for _, tc := range []struct {
		name      string
		raw       map[string]string
		cluster   bool
		bootstrap []string
		want      string // "" accepted, else a part of the error
	}{
		{"broker-only, bootstrap servers alone", map[string]string{"process.roles": "broker", "node.id": "4",
			"controller.quorum.bootstrap.servers": "127.0.0.1:9093,127.0.0.1:9193", "listeners": "PLAINTEXT://127.0.0.1:9092"},
			true, []string{"127.0.0.1:9093", "127.0.0.1:9193"}, ""},
		{"broker-only, bootstrap servers among the voters", map[string]string{"process.roles": "broker", "node.id": "4",
			"controller.quorum.voters": "1@127.0.0.1:9093", "controller.quorum.bootstrap.servers": "127.0.0.1:9093", "listeners": "PLAINTEXT://127.0.0.1:9092"},
			true, []string{"127.0.0.1:9093"}, ""},
		{"combined, bootstrap server is itself", map[string]string{"process.roles": "broker,controller", "node.id": "1",
			"controller.quorum.bootstrap.servers": "127.0.0.1:9093", "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"},
			false, nil, ""},
		{"broker-only, no controller listener name", map[string]string{"process.roles": "broker", "node.id": "4", "controller.listener.names": "",
			"controller.quorum.bootstrap.servers": "127.0.0.1:9093", "listeners": "PLAINTEXT://127.0.0.1:9092"},
			false, nil, "controller.listener.names must name the listener the quorum uses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := map[string]string{"controller.listener.names": "CONTROLLER", "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"}
			for k, v := range tc.raw {
				raw[k] = v
			}
			cfg, err := resolvedQuorum(raw)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want one saying %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			q := cfg.quorum
			if q.cluster() != tc.cluster || !slices.Equal(q.bootstrap, tc.bootstrap) {
				t.Fatalf("cluster %v, bootstrap %v; want %v, %v", q.cluster(), q.bootstrap, tc.cluster, tc.bootstrap)
			}
			if tc.cluster && (!q.observer() || q.raftListener != "PLAINTEXT") {
				t.Errorf("observer %v on %q, want a non-voter on PLAINTEXT", q.observer(), q.raftListener)
			}
		})
	}
}

// TestBootstrapServersLeadNowhere: a broker-only node whose bootstrap
// servers answer nothing does not wait silently: while it retries it logs
// what it waits for, and once initial.broker.registration.timeout.ms has
// passed its start fails naming the servers it asked.
func TestBootstrapServersLeadNowhere(t *testing.T) {
	dead := freePort(t)
	dir := t.TempDir()
	raw := map[string]string{"process.roles": "broker", "node.id": "4", "log.dirs": dir,
		"controller.quorum.bootstrap.servers": "127.0.0.1:" + dead, "controller.listener.names": "CONTROLLER",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT", "listeners": "PLAINTEXT://127.0.0.1:0",
		"initial.broker.registration.timeout.ms": "6000"}
	v, err := LoadConfig("", raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FormatStorage(v, FormatOptions{ClusterID: "q1Sh-9_ISia_zwGINzRvyQ", Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	cfg, err := testConfigFromValues(v)
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = b.Start(context.Background())
	want := "asked controller.quorum.bootstrap.servers 127.0.0.1:" + dead
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("start: %v\nwant an error saying %q", err, want)
	}
	for _, part := range []string{`msg="waiting for the active controller"`, `request=BrokerRegistration asking="controller.quorum.bootstrap.servers 127.0.0.1:` + dead + `"`} {
		if !strings.Contains(logs.String(), part) {
			t.Fatalf("the log does not say what the broker waits for (%s):\n%s", part, logs.String())
		}
	}
}

// TestBootstrapServersController: a controller without
// controller.quorum.voters bootstraps Raft from the initial voters stored
// at format time, and keeps Raft's configuration on a restart. A
// controller-only node that has none stored, or is not among them, joins
// the quorum (it waits for AddRaftVoter as a Raft non-voter at its
// controller listener); a combined one, or one stored at another port,
// refuses to start and says why.
func TestBootstrapServersController(t *testing.T) {
	const id = "q1Sh-9_ISia_zwGINzRvyQ"
	const dir1, dir2 = "7eXr1Q2yR1-J9T9vRaSmdw", "a1fFfYxoQ9KQ6oWmQxtE3g"
	port := freePort(t)
	setupWith := func(t *testing.T, opts FormatOptions, extra map[string]string) Config {
		raw := map[string]string{"process.roles": "controller", "node.id": "2", "log.dirs": t.TempDir(),
			"listeners": "CONTROLLER://127.0.0.1:" + port, "controller.listener.names": "CONTROLLER",
			"listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT", "controller.quorum.bootstrap.servers": "127.0.0.1:" + port}
		maps.Copy(raw, extra)
		v, err := LoadConfig("", raw)
		if err != nil {
			t.Fatal(err)
		}
		opts.ClusterID, opts.Now = id, time.Now()
		if _, err := FormatStorage(v, opts); err != nil {
			t.Fatal(err)
		}
		cfg, err := testConfigFromValues(v)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Logger = quiet
		return cfg
	}
	setup := func(t *testing.T, opts FormatOptions) Config { return setupWith(t, opts, nil) }
	combined := map[string]string{"process.roles": "broker,controller", "controller.quorum.bootstrap.servers": "127.0.0.1:1",
		"listeners": "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:" + port}
	for _, c := range []struct {
		name  string
		opts  FormatOptions
		extra map[string]string
		want  string
	}{
		{"a combined node not among the initial voters", FormatOptions{InitialControllers: "1@127.0.0.1:9093:" + dir1}, combined,
			"is not among the initial voters stored in"},
		{"stored at another port", FormatOptions{InitialControllers: "2@127.0.0.1:1:" + dir2}, nil,
			"put this node (node.id 2) at 127.0.0.1:1, which is not the port of its controller listener CONTROLLER"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(setupWith(t, c.opts, c.extra))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New: %v\nwant an error with %q", err, c.want)
			}
		})
	}
	for _, c := range []struct {
		name string
		opts FormatOptions
	}{
		{"--no-initial-controllers", FormatOptions{NoInitialControllers: true}},
		{"not among the initial voters", FormatOptions{InitialControllers: "1@127.0.0.1:9093:" + dir1}},
	} {
		t.Run(c.name+" joins", func(t *testing.T) {
			b, err := New(setup(t, c.opts))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := b.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			cc := b.controllerConfig()
			if got := b.ctrl.Voters(); !b.ctrl.Observer() || len(got) != 0 {
				t.Fatalf("a joining controller: observer %v, voters %v; want a non-voter that knows no voters yet", b.ctrl.Observer(), got)
			}
			if !cc.Joining || cc.RaftAddr != "127.0.0.1:"+port {
				t.Fatalf("a controller outside the initial voters: Joining %v at %q, want a joining non-voter at 127.0.0.1:%s", cc.Joining, cc.RaftAddr, port)
			}
		})
	}

	cfg := setup(t, FormatOptions{Standalone: true})
	for start := range 2 {
		b, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err = b.Start(ctx)
		cancel()
		if err != nil {
			t.Fatalf("start %d: %v", start, err)
		}
		got := b.ctrl.Voters()
		addr := b.controllerAddr()
		b.Close()
		if len(got) != 1 || got[0].ID != 2 || got[0].Addr != "127.0.0.1:"+port || addr != got[0].Addr {
			t.Fatalf("start %d: the Raft configuration holds voters %v, the active controller at %q; want node 2 at 127.0.0.1:%s", start, got, addr, port)
		}
	}
}

// resolvedQuorum loads raw as a node's config and resolves its quorum
// settings, as start-up does.
func resolvedQuorum(raw map[string]string) (Config, error) {
	v, err := LoadConfig("", raw)
	if err != nil {
		return Config{}, err
	}
	cfg, err := testConfigFromValues(v)
	if err != nil {
		return Config{}, err
	}
	return cfg, cfg.resolveQuorum()
}
