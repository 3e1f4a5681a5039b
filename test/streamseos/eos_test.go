package streamseos

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/task"
)

func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

// soak is how long the load and the kills last: SAMSA_STREAMS_SOAK (a Go
// duration) for the long run of `make streams-eos-soak`, 20s in make test.
func soak(t *testing.T) time.Duration {
	if s := os.Getenv("SAMSA_STREAMS_SOAK"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	return 30 * time.Second
}

type instance struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// tail is the end of an instance's log.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

func start(t *testing.T, g *task.Group, bin, bootstrap, stateDir string, n int) *instance {
	t.Helper()
	cmd := exec.Command(bin, "-bootstrap", bootstrap, "-state", stateDir)
	logPath := filepath.Join(stateDir, fmt.Sprintf("log-%d.txt", n))
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inst := &instance{cmd: cmd, log: logPath, done: make(chan struct{})}
	g.Go(func(context.Context) {
		defer close(inst.done)
		defer logf.Close()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
		}
		_ = cmd.Wait()
	})
	return inst
}

func TestExactlyOnceUnderKills(t *testing.T) {
	bootstrap, _ := devcluster.StartTestBroker(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "eosapp")
	build := exec.Command("go", "build", "-tags", "pebblegozstd", "-o", bin, "./eosapp")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build eosapp: %v\n%s", err, out)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for _, topic := range []string{"eos-in", "eos-out"} {
		if _, err := adm.CreateTopic(context.Background(), 6, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	g := task.NewGroup(context.Background())
	defer g.Stop()
	const keys = 50
	var produced [keys]atomic.Int64
	loadDone := make(chan struct{})
	stopLoad := make(chan struct{})
	g.Go(func(ctx context.Context) {
		defer close(loadDone)
		for i := 0; ; i++ {
			select {
			case <-stopLoad:
				return
			case <-ctx.Done():
				return
			default:
			}
			var recs []*kgo.Record
			for j := 0; j < 20; j++ {
				k := (i*20 + j) % keys
				recs = append(recs, &kgo.Record{Topic: "eos-in", Key: []byte("k" + strconv.Itoa(k)), Value: []byte("v")})
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				if ctx.Err() == nil {
					t.Errorf("produce: %v", err)
				}
				return
			}
			for j := 0; j < 20; j++ {
				produced[(i*20+j)%keys].Add(1)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	insts := make([]*instance, 3)
	dirs := make([]string, 3)
	for i := range insts {
		dirs[i] = filepath.Join(dir, fmt.Sprintf("state-%d", i))
		if err := os.MkdirAll(dirs[i], 0o755); err != nil {
			t.Fatal(err)
		}
		insts[i] = start(t, g, bin, bootstrap, dirs[i], 0)
	}
	deadline := time.Now().Add(soak(t))
	kills := 0
	outEnd := func() int64 {
		ends, err := adm.ListEndOffsets(context.Background(), "eos-out")
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
		return sum
	}
	begin := time.Now()
	for n := 1; time.Now().Before(deadline); n++ {
		// A kill every 8 s (a rebalance after one takes the 6 s session
		// timeout), each while the group is processing: the output grows.
		time.Sleep(time.Until(begin.Add(time.Duration(n) * 8 * time.Second)))
		before := outEnd()
		for waited := time.Duration(0); outEnd() == before; waited += 100 * time.Millisecond {
			if waited > 30*time.Second {
				t.Fatal("the application made no progress for 30 s")
			}
			time.Sleep(100 * time.Millisecond)
		}
		i := n % 3
		select {
		case <-insts[i].done:
			t.Fatalf("instance %d exited by itself: %s", i, tail(insts[i].log))
		default:
		}
		if err := insts[i].cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-insts[i].done
		kills++
		insts[i] = start(t, g, bin, bootstrap, dirs[i], n)
	}
	close(stopLoad)
	<-loadDone
	var total int64
	want := map[string]int64{}
	for k := range keys {
		want["k"+strconv.Itoa(k)] = produced[k].Load()
		total += produced[k].Load()
	}
	t.Logf("%d records produced over %d keys, %d instances killed", total, keys, kills)
	checkOutput(t, bootstrap, want)
	for _, inst := range insts {
		_ = inst.cmd.Process.Signal(syscall.SIGTERM)
		<-inst.done
	}
}

// checkOutput reads eos-out read_committed until every key's last count is
// want's, and checks each key's counts are exactly 1..n in order.
func checkOutput(t *testing.T, bootstrap string, want map[string]int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics("eos-out"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string][]int64{}
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			got[string(r.Key)] = append(got[string(r.Key)], int64(binary.BigEndian.Uint64(r.Value)))
		})
		done := true
		for k, n := range want {
			if c := got[k]; len(c) == 0 || c[len(c)-1] < n {
				done = false
			}
		}
		if done {
			break
		}
	}
	for k, n := range want {
		c := got[k]
		if int64(len(c)) != n {
			t.Errorf("key %s: %d outputs for %d inputs: %v", k, len(c), n, c)
			continue
		}
		for i, v := range c {
			if v != int64(i+1) {
				t.Errorf("key %s: output %d is %d, want %d (all: %v)", k, i, v, i+1, c)
				break
			}
		}
	}
}
