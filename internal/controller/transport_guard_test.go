package controller

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// A voter stopping while a heartbeat is in its handler must wait for it
// before the store closes, and must not hand Raft a heartbeat after: Raft
// panics when the term it adopts from one cannot be saved.
func TestHeartbeatGuardWaitsForHeartbeatsInFlightAndDropsLaterOnes(t *testing.T) {
	tcp, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := guardHeartbeats(tcp, time.Now)
	var handled atomic.Int32
	entered, release := make(chan struct{}, 2), make(chan struct{})
	g.SetHeartbeatHandler(func(rpc raft.RPC) {
		handled.Add(1)
		entered <- struct{}{}
		<-release
		rpc.Respond(&raft.AppendEntriesResponse{Success: true}, nil)
	})

	leader, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer leader.Close()
	heartbeat := func() error {
		req := &raft.AppendEntriesRequest{Term: 2, RPCHeader: raft.RPCHeader{Addr: []byte(leader.LocalAddr()), ID: []byte("2")}}
		return leader.AppendEntries("1", g.LocalAddr(), req, &raft.AppendEntriesResponse{})
	}
	first := make(chan error, 1)
	go func() { first <- heartbeat() }()
	<-entered

	stopped := make(chan struct{})
	go func() { g.stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("stop returned while a heartbeat was in its handler")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-stopped
	if err := <-first; err != nil {
		t.Fatalf("the heartbeat in flight was not answered: %v", err)
	}

	second := make(chan error, 1)
	go func() { second <- heartbeat() }()
	time.Sleep(100 * time.Millisecond)
	g.Close()
	<-second
	if n := handled.Load(); n != 1 {
		t.Fatalf("the handler ran %d times; want once, none after stop", n)
	}
}
