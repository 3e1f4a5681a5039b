package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// What GET /v1/balancer answers (the controller's BalancerStatus as JSON):
// a node standing by and the active controller.
const (
	standbyBalancer = `{"node_id":1,"controller_id":2,"active":false,"enabled":true,"state":"standby","in_progress":[],"moves":[],"notes":[]}`
	activeBalancer  = `{"node_id":2,"controller_id":2,"active":true,"enabled":true,"state":"moving",
  "throttle_bytes_per_second":104857600,"last_plan":"2026-12-04T10:00:00Z",
  "in_progress":[{"topic":"t","partition":1,"from":[3,2],"to":[4,2],"adding":[4],"removing":[3]}],
  "moves":[{"topic":"t","partition":1,"kind":"replicas","from":[3,2],"to":[4,2],"reason":"broker 3 holds 4 replicas and broker 4 holds 0 (spread 4 > 2): moving t-1 replica 3→4 (rack b)"}],
  "notes":["1 more partitions break the rack spread: waiting for moves to finish (max moves 1)"],
  "brokers":[{"Broker":3,"Rack":"b","State":"ok","Replicas":4,"Leaders":2,"Bytes":2048},{"Broker":4,"Rack":"b","State":"ok","Replicas":0,"Leaders":0,"Bytes":0}],
  "after":[{"Broker":3,"Rack":"b","State":"ok","Replicas":3,"Leaders":2,"Bytes":1024},{"Broker":4,"Rack":"b","State":"ok","Replicas":1,"Leaders":0,"Bytes":1024}],
  "moves_started":1,"moves_completed":0,"moves_cancelled":0,"leader_elections":0}`
)

func balancerServer(t *testing.T, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/balancer" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// cluster status --http keeps the active controller's answer and prints
// the balancer's section: state, throttle, loads before and after, moves
// in progress, decisions with reasons, notes.
func TestClusterStatusShowsTheBalancer(t *testing.T) {
	standby, active := balancerServer(t, standbyBalancer), balancerServer(t, activeBalancer)
	b, err := readBalancer(context.Background(), []string{standby, active})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := printClusterStatus(&out, clusterStatus{Controller: 2, Nodes: []nodeStatus{}, Balancer: b}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Balancer: on, moving (on node 2; last plan 2026-12-04T10:00:00Z)",
		"Throttle: 104857600 B/s per broker of a move",
		"3       ok     4 -> 3    2        2048 -> 1024",
		"4       ok     0 -> 1    0        0 -> 1024",
		"In progress:\n  t-1 [3 2] -> [4 2] (adding [4], removing [3])",
		"Last decisions:\n  t-1 replicas [3 2] -> [4 2]: broker 3 holds 4 replicas",
		"Not done:\n  1 more partitions break the rack spread",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, out.String())
		}
	}
	// Only nodes standing by: the error names the active controller.
	if _, err := readBalancer(context.Background(), []string{standby}); err == nil || !strings.Contains(err.Error(), "active controller (node 2)") {
		t.Errorf("standby only: %v", err)
	}
	out.Reset()
	printClusterStatus(&out, clusterStatus{Nodes: []nodeStatus{}, BalancerError: "x: connection refused"})
	if !strings.Contains(out.String(), "Balancer: - (not read: x: connection refused)") {
		t.Errorf("unreadable balancer:\n%s", out.String())
	}
}
