package connectfail

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/task"
)

func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

func startBroker(t *testing.T) (bin, addr string) {
	t.Helper()
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	addr, _ = devcluster.StartTestBroker(t)
	return bin, addr
}

// cluster is three workers of one group.
type cluster struct {
	t       *testing.T
	bin     string
	dir     string
	props   string
	workers []*devcluster.ConnectWorker
	tasks   *task.Group
}

func startCluster(t *testing.T, bin, broker string, n int, extra ...string) *cluster {
	t.Helper()
	dir := t.TempDir()
	props := strings.Join(append([]string{
		"bootstrap.servers=" + broker,
		"group.id=failover",
		"config.storage.topic=failover-configs",
		"offset.storage.topic=failover-offsets",
		"status.storage.topic=failover-status",
		"config.storage.replication.factor=1",
		"offset.storage.replication.factor=1",
		"status.storage.replication.factor=1",
		"key.converter=org.apache.kafka.connect.storage.StringConverter",
		"value.converter=org.apache.kafka.connect.storage.StringConverter",
		"offset.flush.interval.ms=500",
		"session.timeout.ms=6000",
		"heartbeat.interval.ms=1000",
		"scheduled.rebalance.max.delay.ms=2000",
	}, extra...), "\n") + "\n"
	c := &cluster{t: t, bin: bin, dir: dir, props: props, tasks: task.NewGroup(context.Background())}
	t.Cleanup(c.tasks.Stop)
	for range n {
		c.start()
	}
	return c
}

func (c *cluster) start() *devcluster.ConnectWorker {
	w := devcluster.StartConnectWorker(c.t, c.bin, c.dir, c.props, nil)
	c.workers = append(c.workers, w)
	return w
}

// kill stops a worker with SIGKILL: no leave, no commit, no flush.
func (c *cluster) kill(id string) {
	for _, w := range c.workers {
		if w.ID == id {
			w.Kill()
			return
		}
	}
	c.t.Fatalf("no worker %s", id)
}

func (c *cluster) alive() *devcluster.ConnectWorker {
	for _, w := range c.workers {
		if w.Alive() {
			return w
		}
	}
	c.t.Fatal("no worker alive")
	return nil
}

// call makes a REST call to a live worker and decodes the answer into out.
func (c *cluster) call(method, path string, body any, out any) int {
	c.t.Helper()
	code, _, err := c.alive().Call(method, path, body, out)
	if err != nil {
		c.t.Fatal(err)
	}
	return code
}

func (c *cluster) create(name string, config map[string]string) {
	c.t.Helper()
	if code := c.call("PUT", "/connectors/"+name+"/config", config, nil); code != 201 && code != 200 {
		c.t.Fatalf("create %s: %d", name, code)
	}
}

type connectorStatus struct {
	Connector struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
	} `json:"connector"`
	Tasks []struct {
		ID       int    `json:"id"`
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"tasks"`
}

// running waits until every task of a connector runs, and answers where.
func (c *cluster) running(name string, tasks int, not string) connectorStatus {
	c.t.Helper()
	var st connectorStatus
	eventually(c.t, 90*time.Second, name+" running", func() (bool, string) {
		st = connectorStatus{}
		if code := c.call("GET", "/connectors/"+name+"/status", nil, &st); code != 200 {
			return false, fmt.Sprint(code)
		}
		if len(st.Tasks) != tasks {
			return false, fmt.Sprintf("%+v", st)
		}
		for _, ts := range st.Tasks {
			if ts.State == "FAILED" {
				c.t.Fatalf("%s task %d failed: %s", name, ts.ID, ts.Trace)
			}
			if ts.State != "RUNNING" || ts.WorkerID == not {
				return false, fmt.Sprintf("%+v", st)
			}
		}
		return true, ""
	})
	return st
}

func eventually(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: not after %s (last: %s)", what, d, last)
}
