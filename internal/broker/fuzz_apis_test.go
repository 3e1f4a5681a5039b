package broker

// One fuzz target per advertised API key (fuzzAPI in fuzz_test.go), each
// with its own corpus in testdata/fuzz/Fuzz<Name>/. TestFuzzTargetsCoverEveryAPI
// fails when an API is advertised without one.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func FuzzProduce(f *testing.F)                      { fuzzAPI(f, kmsg.Produce) }
func FuzzFetch(f *testing.F)                        { fuzzAPI(f, kmsg.Fetch) }
func FuzzListOffsets(f *testing.F)                  { fuzzAPI(f, kmsg.ListOffsets) }
func FuzzMetadata(f *testing.F)                     { fuzzAPI(f, kmsg.Metadata) }
func FuzzOffsetCommit(f *testing.F)                 { fuzzAPI(f, kmsg.OffsetCommit) }
func FuzzOffsetFetch(f *testing.F)                  { fuzzAPI(f, kmsg.OffsetFetch) }
func FuzzFindCoordinator(f *testing.F)              { fuzzAPI(f, kmsg.FindCoordinator) }
func FuzzJoinGroup(f *testing.F)                    { fuzzAPI(f, kmsg.JoinGroup) }
func FuzzHeartbeat(f *testing.F)                    { fuzzAPI(f, kmsg.Heartbeat) }
func FuzzLeaveGroup(f *testing.F)                   { fuzzAPI(f, kmsg.LeaveGroup) }
func FuzzSyncGroup(f *testing.F)                    { fuzzAPI(f, kmsg.SyncGroup) }
func FuzzDescribeGroups(f *testing.F)               { fuzzAPI(f, kmsg.DescribeGroups) }
func FuzzListGroups(f *testing.F)                   { fuzzAPI(f, kmsg.ListGroups) }
func FuzzSASLHandshake(f *testing.F)                { fuzzAPI(f, kmsg.SASLHandshake) }
func FuzzApiVersions(f *testing.F)                  { fuzzAPI(f, kmsg.ApiVersions) }
func FuzzCreateTopics(f *testing.F)                 { fuzzAPI(f, kmsg.CreateTopics) }
func FuzzDeleteTopics(f *testing.F)                 { fuzzAPI(f, kmsg.DeleteTopics) }
func FuzzDeleteRecords(f *testing.F)                { fuzzAPI(f, kmsg.DeleteRecords) }
func FuzzInitProducerID(f *testing.F)               { fuzzAPI(f, kmsg.InitProducerID) }
func FuzzOffsetForLeaderEpoch(f *testing.F)         { fuzzAPI(f, kmsg.OffsetForLeaderEpoch) }
func FuzzAddPartitionsToTxn(f *testing.F)           { fuzzAPI(f, kmsg.AddPartitionsToTxn) }
func FuzzAddOffsetsToTxn(f *testing.F)              { fuzzAPI(f, kmsg.AddOffsetsToTxn) }
func FuzzEndTxn(f *testing.F)                       { fuzzAPI(f, kmsg.EndTxn) }
func FuzzWriteTxnMarkers(f *testing.F)              { fuzzAPI(f, kmsg.WriteTxnMarkers) }
func FuzzTxnOffsetCommit(f *testing.F)              { fuzzAPI(f, kmsg.TxnOffsetCommit) }
func FuzzDescribeACLs(f *testing.F)                 { fuzzAPI(f, kmsg.DescribeACLs) }
func FuzzCreateACLs(f *testing.F)                   { fuzzAPI(f, kmsg.CreateACLs) }
func FuzzDeleteACLs(f *testing.F)                   { fuzzAPI(f, kmsg.DeleteACLs) }
func FuzzDescribeConfigs(f *testing.F)              { fuzzAPI(f, kmsg.DescribeConfigs) }
func FuzzAlterConfigs(f *testing.F)                 { fuzzAPI(f, kmsg.AlterConfigs) }
func FuzzDescribeLogDirs(f *testing.F)              { fuzzAPI(f, kmsg.DescribeLogDirs) }
func FuzzAlterReplicaLogDirs(f *testing.F)          { fuzzAPI(f, kmsg.AlterReplicaLogDirs) }
func FuzzAssignReplicasToDirs(f *testing.F)         { fuzzAPI(f, kmsg.AssignReplicasToDirs) }
func FuzzSASLAuthenticate(f *testing.F)             { fuzzAPI(f, kmsg.SASLAuthenticate) }
func FuzzCreatePartitions(f *testing.F)             { fuzzAPI(f, kmsg.CreatePartitions) }
func FuzzDeleteGroups(f *testing.F)                 { fuzzAPI(f, kmsg.DeleteGroups) }
func FuzzElectLeaders(f *testing.F)                 { fuzzAPI(f, kmsg.ElectLeaders) }
func FuzzIncrementalAlterConfigs(f *testing.F)      { fuzzAPI(f, kmsg.IncrementalAlterConfigs) }
func FuzzAlterPartitionAssignments(f *testing.F)    { fuzzAPI(f, kmsg.AlterPartitionAssignments) }
func FuzzListPartitionReassignments(f *testing.F)   { fuzzAPI(f, kmsg.ListPartitionReassignments) }
func FuzzOffsetDelete(f *testing.F)                 { fuzzAPI(f, kmsg.OffsetDelete) }
func FuzzCreateDelegationToken(f *testing.F)        { fuzzAPI(f, kmsg.CreateDelegationToken) }
func FuzzRenewDelegationToken(f *testing.F)         { fuzzAPI(f, kmsg.RenewDelegationToken) }
func FuzzExpireDelegationToken(f *testing.F)        { fuzzAPI(f, kmsg.ExpireDelegationToken) }
func FuzzDescribeDelegationToken(f *testing.F)      { fuzzAPI(f, kmsg.DescribeDelegationToken) }
func FuzzDescribeClientQuotas(f *testing.F)         { fuzzAPI(f, kmsg.DescribeClientQuotas) }
func FuzzAlterClientQuotas(f *testing.F)            { fuzzAPI(f, kmsg.AlterClientQuotas) }
func FuzzDescribeUserSCRAMCredentials(f *testing.F) { fuzzAPI(f, kmsg.DescribeUserSCRAMCredentials) }
func FuzzAlterUserSCRAMCredentials(f *testing.F)    { fuzzAPI(f, kmsg.AlterUserSCRAMCredentials) }
func FuzzDescribeQuorum(f *testing.F)               { fuzzAPI(f, kmsg.DescribeQuorum) }
func FuzzUpdateFeatures(f *testing.F)               { fuzzAPI(f, kmsg.UpdateFeatures) }
func FuzzAddRaftVoter(f *testing.F)                 { fuzzAPI(f, kmsg.AddRaftVoter) }
func FuzzRemoveRaftVoter(f *testing.F)              { fuzzAPI(f, kmsg.RemoveRaftVoter) }
func FuzzUnregisterBroker(f *testing.F)             { fuzzAPI(f, kmsg.UnregisterBroker) }
func FuzzEnvelope(f *testing.F)                     { fuzzAPI(f, kmsg.Envelope) }
func FuzzAlterPartition(f *testing.F)               { fuzzAPI(f, kmsg.AlterPartition) }
func FuzzDescribeCluster(f *testing.F)              { fuzzAPI(f, kmsg.DescribeCluster) }
func FuzzDescribeProducers(f *testing.F)            { fuzzAPI(f, kmsg.DescribeProducers) }
func FuzzBrokerRegistration(f *testing.F)           { fuzzAPI(f, kmsg.BrokerRegistration) }
func FuzzBrokerHeartbeat(f *testing.F)              { fuzzAPI(f, kmsg.BrokerHeartbeat) }
func FuzzDescribeTransactions(f *testing.F)         { fuzzAPI(f, kmsg.DescribeTransactions) }
func FuzzListTransactions(f *testing.F)             { fuzzAPI(f, kmsg.ListTransactions) }
func FuzzAllocateProducerIDs(f *testing.F)          { fuzzAPI(f, kmsg.AllocateProducerIDs) }
func FuzzConsumerGroupHeartbeat(f *testing.F)       { fuzzAPI(f, kmsg.ConsumerGroupHeartbeat) }
func FuzzConsumerGroupDescribe(f *testing.F)        { fuzzAPI(f, kmsg.ConsumerGroupDescribe) }
func FuzzGetTelemetrySubscriptions(f *testing.F)    { fuzzAPI(f, kmsg.GetTelemetrySubscriptions) }
func FuzzPushTelemetry(f *testing.F)                { fuzzAPI(f, kmsg.PushTelemetry) }
func FuzzListConfigResources(f *testing.F)          { fuzzAPI(f, kmsg.ListConfigResources) }
func FuzzDescribeTopicPartitions(f *testing.F)      { fuzzAPI(f, kmsg.DescribeTopicPartitions) }
func FuzzShareGroupHeartbeat(f *testing.F)          { fuzzAPI(f, kmsg.ShareGroupHeartbeat) }
func FuzzShareGroupDescribe(f *testing.F)           { fuzzAPI(f, kmsg.ShareGroupDescribe) }
func FuzzDescribeShareGroupOffsets(f *testing.F)    { fuzzAPI(f, kmsg.DescribeShareGroupOffsets) }
func FuzzAlterShareGroupOffsets(f *testing.F)       { fuzzAPI(f, kmsg.AlterShareGroupOffsets) }
func FuzzDeleteShareGroupOffsets(f *testing.F)      { fuzzAPI(f, kmsg.DeleteShareGroupOffsets) }
func FuzzShareFetch(f *testing.F)                   { fuzzAPI(f, kmsg.ShareFetch) }
func FuzzShareAcknowledge(f *testing.F)             { fuzzAPI(f, kmsg.ShareAcknowledge) }
func FuzzInitializeShareGroupState(f *testing.F)    { fuzzAPI(f, kmsg.InitializeShareGroupState) }
func FuzzReadShareGroupState(f *testing.F)          { fuzzAPI(f, kmsg.ReadShareGroupState) }
func FuzzWriteShareGroupState(f *testing.F)         { fuzzAPI(f, kmsg.WriteShareGroupState) }
func FuzzDeleteShareGroupState(f *testing.F)        { fuzzAPI(f, kmsg.DeleteShareGroupState) }
func FuzzReadShareGroupStateSummary(f *testing.F)   { fuzzAPI(f, kmsg.ReadShareGroupStateSummary) }
func FuzzStreamsGroupHeartbeat(f *testing.F)        { fuzzAPI(f, kmsg.StreamsGroupHeartbeat) }
func FuzzStreamsGroupDescribe(f *testing.F)         { fuzzAPI(f, kmsg.StreamsGroupDescribe) }

// fuzzTargetOf is the per-key target of an API.
func fuzzTargetOf(key kmsg.Key) string { return "Fuzz" + key.Name() }

// TestFuzzTargetsCoverEveryAPI: every advertised API has its target in
// this file, calling fuzzAPI with its own key.
func TestFuzzTargetsCoverEveryAPI(t *testing.T) {
	file, err := parser.ParseFile(token.NewFileSet(), "fuzz_apis_test.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]string{} // function name -> key named in its body
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || !strings.HasPrefix(fn.Name.Name, "Fuzz") || len(fn.Body.List) != 1 {
			continue
		}
		call, ok := fn.Body.List[0].(*ast.ExprStmt).X.(*ast.CallExpr)
		if !ok || len(call.Args) != 2 {
			continue
		}
		if sel, ok := call.Args[1].(*ast.SelectorExpr); ok {
			targets[fn.Name.Name] = sel.Sel.Name
		}
	}
	for _, api := range sortedAPIs() {
		name := fuzzTargetOf(api.key)
		key, ok := targets[name]
		switch {
		case !ok:
			t.Errorf("%s (key %d) has no fuzz target: add func %s(f *testing.F) { fuzzAPI(f, kmsg.%s) }", api.key.Name(), api.key, name, api.key.Name())
		case key != api.key.Name():
			t.Errorf("%s fuzzes kmsg.%s", name, key)
		}
		delete(targets, name)
	}
	for name := range targets {
		t.Errorf("%s fuzzes an API the broker does not advertise", name)
	}
}

// fuzzCorpusFile is one seed of a committed corpus.
type fuzzCorpusFile struct {
	target, name string
	frame        []byte
	edits        []byte // per-key targets only
}

// fuzzSeedEdits is one seed's edits per key, a start for the fuzzer's:
// the first field set to -1, the second's slice (or value) doubled, a
// name from the dictionary into the third.
var fuzzSeedEdits = []byte{0, 0, 1, 1, 2, 0, 2, 0, 3}

// fuzzCorpus is every seed TestFuzzCorpus writes: for each API, a valid
// request at every advertised version, three mutations of the newest (cut
// short, one version past the newest, a body byte flipped) and the newest
// with fuzzSeedEdits, plus the newest of every key for FuzzRequest.
func fuzzCorpus() []fuzzCorpusFile {
	var out []fuzzCorpusFile
	for _, api := range sortedAPIs() {
		target := fuzzTargetOf(api.key)
		for v := api.min; v <= api.max; v++ {
			frame := encodeRequest(fuzzSeedRequest(api.key, v), 7)
			out = append(out, fuzzCorpusFile{target: target, name: fmt.Sprintf("seed-v%d", v), frame: frame, edits: []byte{}})
		}
		newest := encodeRequest(fuzzSeedRequest(api.key, api.max), 7)
		short := newest[:len(newest)-(len(newest)-10)/2]
		past := bytes.Clone(newest)
		binary.BigEndian.PutUint16(past[2:], uint16(api.max+1))
		flipped := bytes.Clone(newest)
		flipped[10+(len(newest)-10)/2] ^= 0xff
		out = append(out,
			fuzzCorpusFile{target: target, name: "mutated-short", frame: short, edits: []byte{}},
			fuzzCorpusFile{target: target, name: "mutated-past-newest", frame: past, edits: []byte{}},
			fuzzCorpusFile{target: target, name: "mutated-flipped", frame: flipped, edits: []byte{}},
			fuzzCorpusFile{target: target, name: "edited", frame: newest, edits: fuzzSeedEdits},
			fuzzCorpusFile{target: "FuzzRequest", name: fmt.Sprintf("seed-%02d-%s", api.key, api.key.Name()), frame: newest},
		)
	}
	out = append(out,
		fuzzCorpusFile{target: "FuzzRequest", name: "unknown-key", frame: encodeRequest(&unknownKeyRequest{kmsg.NewPtrDescribeClusterRequest()}, 7)},
		fuzzCorpusFile{target: "FuzzRequest", name: "header-only", frame: []byte{0, 18, 0, 3, 0, 0, 0, 7, 0xff, 0xff}},
	)
	return out
}

// unknownKeyRequest is a request under a key no broker knows.
type unknownKeyRequest struct{ *kmsg.DescribeClusterRequest }

func (unknownKeyRequest) Key() int16 { return 10000 }

// marshalFuzzInputs writes []byte inputs as go test reads its corpus
// files.
func marshalFuzzInputs(inputs ...[]byte) []byte {
	b := []byte("go test fuzz v1\n")
	for _, in := range inputs {
		b = fmt.Appendf(b, "[]byte(%s)\n", strconv.Quote(string(in)))
	}
	return b
}

// unmarshalFuzzInputs reads a corpus file of []byte inputs.
func unmarshalFuzzInputs(data []byte) ([][]byte, error) {
	rest, ok := bytes.CutPrefix(data, []byte("go test fuzz v1\n"))
	if !ok {
		return nil, fmt.Errorf("not a go test fuzz v1 file")
	}
	var out [][]byte
	for _, line := range strings.Split(strings.TrimSpace(string(rest)), "\n") {
		inner, ok := strings.CutPrefix(line, "[]byte(")
		if !ok || !strings.HasSuffix(inner, ")") {
			return nil, fmt.Errorf("not a []byte input: %.40q", line)
		}
		s, err := strconv.Unquote(strings.TrimSuffix(inner, ")"))
		if err != nil {
			return nil, err
		}
		out = append(out, []byte(s))
	}
	return out, nil
}

// TestFuzzCorpus checks the committed seeds are what fuzzCorpus builds;
// -update writes them.
func TestFuzzCorpus(t *testing.T) {
	for _, c := range fuzzCorpus() {
		path := filepath.Join("testdata", "fuzz", c.target, c.name)
		want := marshalFuzzInputs(c.frame)
		if c.edits != nil {
			want = marshalFuzzInputs(c.frame, c.edits)
		}
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is missing or stale: run go test ./internal/broker/ -run TestFuzzCorpus -update", path)
		}
	}
}

// TestFuzzSeedsReachEveryAPI runs every committed corpus file of the
// request fuzzers through one harness and checks that every advertised key
// reached its handler at every advertised version.
func TestFuzzSeedsReachEveryAPI(t *testing.T) {
	keyOf := map[string]kmsg.Key{}
	for _, api := range sortedAPIs() {
		keyOf[fuzzTargetOf(api.key)] = api.key
	}
	dirs, err := filepath.Glob(filepath.Join("testdata", "fuzz", "Fuzz*"))
	if err != nil {
		t.Fatal(err)
	}
	h := newFuzzHarness(t)
	for _, dir := range dirs {
		target := filepath.Base(dir)
		key, perKey := keyOf[target]
		if !perKey && target != "FuzzRequest" {
			continue
		}
		files, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(filepath.Join(dir, f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			inputs, err := unmarshalFuzzInputs(data)
			want := 1
			if perKey {
				want = 2 // frame and edits
			}
			if err != nil || len(inputs) != want {
				t.Fatalf("%s/%s: %d inputs, %v", target, f.Name(), len(inputs), err)
			}
			if perKey {
				h.run(t, withKey(inputs[0], key), inputs[1])
			} else {
				h.run(t, inputs[0], nil)
			}
		}
	}
	for _, api := range sortedAPIs() {
		c := h.counts[api.key.Int16()]
		if c == nil || c.reached == 0 {
			t.Errorf("%s: no seed reached the handler", api.key.Name())
			continue
		}
		for v := api.min; v <= api.max; v++ {
			if h.reached[[2]int16{api.key.Int16(), v}] == 0 {
				t.Errorf("%s v%d: no seed reached the handler", api.key.Name(), v)
			}
		}
	}
	t.Logf("inputs, decoded, reached by key:\n%s", h.stats())
}
