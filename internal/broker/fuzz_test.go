package broker

// The request fuzzers. An input is one request frame (header and body, the
// size prefix is the harness's), written over a real TCP connection to a
// broker on a loopback port and followed on the same connection by an
// ApiVersions sentinel. The broker must answer the input with a response
// that decodes, or with nothing (acks=0), and then the sentinel; or close
// the connection, after which a fresh connection must still be served. A
// panic kills the test binary; an answer that takes longer than
// fuzzInputDeadline fails as a hang.
//
// FuzzRequest takes whole frames, key included; each advertised API has a
// target of its own (fuzz_apis_test.go) that writes its key over the first
// two bytes and takes structured edits of the decoded request besides
// (fuzz_edit_test.go), so one key can be fuzzed at a time with its own
// corpus:
//
//	go test -run '^$' -fuzz '^FuzzJoinGroup$' -fuzztime 3m -parallel 1 ./internal/broker/
//
// The seeds, every key at every advertised version plus a few mutations,
// are in testdata/fuzz/<target>/ (TestFuzzCorpus writes them with
// -update), so plain go test runs them; TestFuzzSeedsReachEveryAPI proves
// through them that every advertised key and version gets to its handler.
// docs/FUZZING.md has the campaign.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/samsa-io/samsa/internal/metaprops"
	"io"
	"net"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/config"
)

const (
	// fuzzMaxWaitMillis caps every wait a request may ask for (a fetch's
	// long poll, a join's session and rebalance timeouts), so that a
	// request that legitimately blocks does not stall the fuzzer.
	fuzzMaxWaitMillis = 50
	// fuzzInputDeadline is how long an input may take before it counts
	// as a hang: far above any capped wait (a join waits at most its
	// rebalance timeout plus the group tick, 100ms).
	fuzzInputDeadline = 5 * time.Second
	// fuzzHealthEvery is how often, in inputs, a fresh connection checks
	// the broker still serves, besides after every closed connection.
	fuzzHealthEvery = 256
)

// fuzzOutcome is what the broker did with one input.
type fuzzOutcome int

const (
	fuzzRefused  fuzzOutcome = iota // closed the connection without an answer
	fuzzSilent                      // answered nothing and kept the connection (acks=0)
	fuzzAnswered                    // answered with the request's correlation ID
)

// fuzzCount counts one API key's inputs: how many the harness could decode
// itself (header, advertised version, body) and how many reached the
// handler (answered, or silent on an open connection).
type fuzzCount struct {
	inputs, decoded, reached int
}

// fuzzHarness is a broker with the state the seeds name, and the counts.
type fuzzHarness struct {
	b       *Broker
	inputs  int
	counts  map[int16]*fuzzCount
	reached map[[2]int16]int // by key and version

	// statsPath, from $SAMSA_FUZZ_STATS, receives the counts about every
	// second (a fuzzing worker's output is not shown).
	statsPath string
	statsAt   time.Time
	// ctrlAddr is the controller listener, where the controller-only APIs
	// are served.
	ctrlAddr string
}

func newFuzzHarness(tb testing.TB) *fuzzHarness {
	tb.Helper()
	// A quorum of one over a controller listener, so the controller-only
	// APIs are reachable too (on that listener).
	ctrlPort, dir := freePort(tb), tb.TempDir()
	values, err := LoadConfig("", map[string]string{
		"group.initial.rebalance.delay.ms":     "0",
		"authorizer.class.name":                config.StandardAuthorizer,
		"super.users":                          "User:ANONYMOUS",
		"group.min.session.timeout.ms":         "1",
		"offsets.topic.num.partitions":         "2",
		"transaction.state.log.num.partitions": "2",
		"log.dirs":                             dir,
		"listeners":                            "PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:" + ctrlPort,
		"listener.security.protocol.map":       "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"controller.listener.names":            "CONTROLLER",
		"controller.quorum.voters":             "1@127.0.0.1:" + ctrlPort,
		// A quorum node gets Kafka's 3 replicas for these; this one is
		// the only broker.
		"offsets.topic.replication.factor":         "1",
		"transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr":            "1",
		// Delegation tokens on, so a forwarded CreateDelegationToken
		// (Envelope) creates one.
		"delegation.token.secret.key": "fuzz-token-secret",
	})
	if err != nil {
		tb.Fatal(err)
	}
	id, err := metaprops.NewClusterID()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := FormatStorage(values, FormatOptions{ClusterID: id, Now: time.Now()}); err != nil {
		tb.Fatal(err)
	}
	cfg, err := testConfigFromValues(values)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.LogDir = dir
	// An HTTP listener, so the broker receives client metrics and serves
	// their APIs.
	cfg.HTTPListener = "127.0.0.1:0"
	h := &fuzzHarness{
		b:         startBrokerWith(tb, cfg),
		ctrlAddr:  "127.0.0.1:" + ctrlPort,
		counts:    map[int16]*fuzzCount{},
		reached:   map[[2]int16]int{},
		statsPath: os.Getenv("SAMSA_FUZZ_STATS"),
	}
	h.setUp(tb)
	return h
}

// setUp creates what the seeds name: the topic with records, a group with
// committed offsets, a KIP-848 group with a member, a transaction, an ACL,
// a SCRAM user and its client quotas.
func (h *fuzzHarness) setUp(tb testing.TB) {
	h.ensureTopic(tb)
	rc := dialRaw(tb, h.b)
	for i := range 3 {
		batch := rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, rawRecord{Key: []byte("k"), Value: fmt.Appendf(nil, "v%d", i)})
		if sp := rawProducePart(rc, rawProduceReq(fuzzTopic, 0, -1, batch), int32(i)); sp.ErrorCode != 0 {
			tb.Fatalf("set up: produce: error %d", sp.ErrorCode)
		}
	}
	expect := func(what string, code int16) {
		if code != 0 {
			tb.Fatalf("set up: %s: %s", what, codeName(code))
		}
	}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version = 4
	fc.CoordinatorKeys = []string{fuzzGroup}
	expect("find group coordinator", rc.roundTrip(fc, 10).(*kmsg.FindCoordinatorResponse).Coordinators[0].ErrorCode)
	fc.CoordinatorType, fc.CoordinatorKeys = 1, []string{fuzzTxnID}
	expect("find transaction coordinator", rc.roundTrip(fc, 11).(*kmsg.FindCoordinatorResponse).Coordinators[0].ErrorCode)
	for i, g := range []string{fuzzGroup, "fuzz-empty-group"} {
		oc := offsetCommitReq(9, g, -1, "", "m", commitTopic{topic: fuzzTopic, partitions: []int32{0, 1}})
		expect("offset commit", firstCommitCode(rc.roundTrip(oc, int32(20+i)).(*kmsg.OffsetCommitResponse)))
	}
	cg := fuzzSeedRequest(kmsg.ConsumerGroupHeartbeat, 1).(*kmsg.ConsumerGroupHeartbeatRequest)
	cg.SubscribedTopicRegex = nil
	expect("consumer group heartbeat", rc.roundTrip(cg, 30).(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode)
	ip := fuzzSeedRequest(kmsg.InitProducerID, 4).(*kmsg.InitProducerIDRequest)
	ipr := rc.roundTrip(ip, 40).(*kmsg.InitProducerIDResponse)
	expect("init producer id", ipr.ErrorCode)
	if ipr.ProducerID != fuzzProducerID || ipr.ProducerEpoch != 0 {
		tb.Fatalf("set up: producer %d epoch %d, the seeds name %d epoch 0", ipr.ProducerID, ipr.ProducerEpoch, fuzzProducerID)
	}
	ap := fuzzSeedRequest(kmsg.AddPartitionsToTxn, 3).(*kmsg.AddPartitionsToTxnRequest)
	apr := rc.roundTrip(ap, 41).(*kmsg.AddPartitionsToTxnResponse)
	expect("add partitions to txn", apr.Topics[0].Partitions[0].ErrorCode)
	// The ACL APIs answer as with an authorizer (PLAINTEXT clients are
	// super users: the fuzzer reaches every handler), and find an ACL, a
	// SCRAM user and client quotas.
	ca := fuzzSeedRequest(kmsg.CreateACLs, 3).(*kmsg.CreateACLsRequest)
	expect("create acls", rc.roundTrip(ca, 50).(*kmsg.CreateACLsResponse).Results[0].ErrorCode)
	su := fuzzSeedRequest(kmsg.AlterUserSCRAMCredentials, 0).(*kmsg.AlterUserSCRAMCredentialsRequest)
	su.Deletions = nil
	expect("alter user scram credentials", rc.roundTrip(su, 51).(*kmsg.AlterUserSCRAMCredentialsResponse).Results[0].ErrorCode)
	cq := fuzzSeedRequest(kmsg.AlterClientQuotas, 1).(*kmsg.AlterClientQuotasRequest)
	expect("alter client quotas", rc.roundTrip(cq, 52).(*kmsg.AlterClientQuotasResponse).Entries[0].ErrorCode)
}

func firstCommitCode(resp *kmsg.OffsetCommitResponse) int16 {
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return p.ErrorCode
			}
		}
	}
	return 0
}

// ensureTopic (re)creates fuzzTopic, which a fuzzed DeleteTopics may have
// deleted.
func (h *fuzzHarness) ensureTopic(tb testing.TB) {
	tb.Helper()
	if _, ok := h.b.topics.byTopicName(fuzzTopic); ok {
		return
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version, req.TimeoutMillis = 7, 5000
	req.Topics = []kmsg.CreateTopicsRequestTopic{{Topic: fuzzTopic, NumPartitions: 2, ReplicationFactor: 1}}
	rc := dialRaw(tb, h.b)
	defer rc.nc.Close()
	if code := rc.roundTrip(req, 1).(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; code != 0 {
		tb.Fatalf("create %s: %s", fuzzTopic, codeName(code))
	}
}

// run sends one input, edits applied (fuzz_edit_test.go), and checks the
// broker survived it.
func (h *fuzzHarness) run(t testing.TB, frame, edits []byte) {
	t.Helper()
	h.inputs++
	if len(edits) > 0 {
		prefix, req, ok := decodeFrame(frame)
		if !ok {
			prefix, req = seedFor(frame)
		}
		if req != nil {
			applyFuzzEdits(req, edits)
			frame = req.AppendTo(slices.Clone(prefix))
		}
	}
	frame = h.withTopicID(frame)
	frame, decoded, send := tameFrame(frame)
	var key, version int16 = -1, -1
	if len(frame) >= 4 {
		key, version = int16(binary.BigEndian.Uint16(frame)), int16(binary.BigEndian.Uint16(frame[2:]))
	}
	c := h.counts[key]
	if c == nil {
		c = &fuzzCount{}
		h.counts[key] = c
	}
	c.inputs++
	if decoded {
		c.decoded++
	}
	if send {
		out := h.send(t, frame)
		if out != fuzzRefused && decoded {
			c.reached++
			h.reached[[2]int16{key, version}]++
		}
		if out == fuzzRefused || h.inputs%fuzzHealthEvery == 0 {
			h.checkServing(t)
		}
		// A handler panic closes only its connection (runHandler), so the
		// process survives it; the fuzzer must still see it as a crash.
		if n := h.b.HandlerPanics(kmsg.Key(key)); key >= 0 && n > 0 {
			t.Fatalf("%s: the handler panicked (%d times); the broker's log has the stack", describeFrame(frame), n)
		}
	}
	if key == kmsg.DeleteTopics.Int16() {
		h.ensureTopic(t)
	}
	h.writeStats()
}

// withTopicID writes fuzzTopic's real ID over every placeholder.
func (h *fuzzHarness) withTopicID(frame []byte) []byte {
	ts, ok := h.b.topics.byTopicName(fuzzTopic)
	if !ok || !bytes.Contains(frame, fuzzTopicIDPlaceholder[:]) {
		return frame
	}
	return bytes.ReplaceAll(frame, fuzzTopicIDPlaceholder[:], ts.id[:])
}

// send writes the frame and the sentinel and reads what comes back.
func (h *fuzzHarness) send(t testing.TB, frame []byte) fuzzOutcome {
	t.Helper()
	nc := h.dialFor(t, frame)
	defer closeAtOnce(nc)
	corr := int32(-1)
	if len(frame) >= 8 {
		corr = int32(binary.BigEndian.Uint32(frame[4:]))
	}
	sentinel := corr + 1
	buf := binary.BigEndian.AppendUint32(nil, uint32(len(frame)))
	buf = append(buf, frame...)
	sreq := encodeRequest(sentinelRequest(), sentinel)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(sreq)))
	buf = append(buf, sreq...)
	if _, err := nc.Write(buf); err != nil {
		return fuzzRefused // closed while the sentinel was written
	}
	answered := false
	for {
		got, body, err := readResponse(nc)
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			t.Fatalf("no answer within %v: the broker hangs on %s", fuzzInputDeadline, describeFrame(frame))
		case err != nil:
			return fuzzRefused
		case got == corr && !answered:
			if err := checkResponse(frame, body); err != nil {
				t.Fatalf("%s: the response does not decode: %v", describeFrame(frame), err)
			}
			answered = true
		case got == sentinel:
			if err := checkSentinel(sreq, body); err != nil {
				t.Fatalf("after %s: the sentinel ApiVersions: %v", describeFrame(frame), err)
			}
			if answered {
				return fuzzAnswered
			}
			return fuzzSilent
		default:
			t.Fatalf("%s: a response with correlation ID %d, want %d or the sentinel's %d", describeFrame(frame), got, corr, sentinel)
		}
	}
}

// dialFor dials where the frame's API is served: the controller listener
// for the controller-only APIs, the client listener for the rest.
func (h *fuzzHarness) dialFor(t testing.TB, frame []byte) net.Conn {
	if len(frame) >= 2 {
		if e, ok := apiTable[kmsg.Key(binary.BigEndian.Uint16(frame))]; ok && e.controllerOnly {
			return h.dialAddr(t, h.ctrlAddr)
		}
	}
	return h.dial(t)
}

func (h *fuzzHarness) dial(t testing.TB) net.Conn {
	return h.dialAddr(t, h.b.Addr())
}

func (h *fuzzHarness) dialAddr(t testing.TB, addr string) net.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, fuzzInputDeadline)
	if err != nil {
		t.Fatalf("the broker stopped accepting connections: %v", err)
	}
	nc.SetDeadline(time.Now().Add(fuzzInputDeadline))
	return nc
}

// closeAtOnce closes without TIME_WAIT (a reset), so a long campaign does
// not run out of loopback ports.
func closeAtOnce(nc net.Conn) {
	if tcp, ok := nc.(*net.TCPConn); ok {
		tcp.SetLinger(0)
	}
	nc.Close()
}

// checkServing checks a fresh connection gets an ApiVersions answer.
func (h *fuzzHarness) checkServing(t testing.TB) {
	t.Helper()
	nc := h.dial(t)
	defer closeAtOnce(nc)
	req := encodeRequest(sentinelRequest(), 1)
	if _, err := nc.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(req))), req...)); err != nil {
		t.Fatalf("the broker stopped serving: %v", err)
	}
	if _, body, err := readResponse(nc); err != nil {
		t.Fatalf("the broker stopped serving: %v", err)
	} else if err := checkSentinel(req, body); err != nil {
		t.Fatalf("the broker stopped serving: %v", err)
	}
}

func sentinelRequest() *kmsg.ApiVersionsRequest {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "samsa-fuzz", "1"
	return req
}

// readResponse reads one response frame: correlation ID and the rest.
func readResponse(nc net.Conn) (int32, []byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(nc, size[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 64<<20 {
		return 0, nil, fmt.Errorf("a %d-byte response frame", n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(nc, buf); err != nil {
		return 0, nil, err
	}
	return int32(binary.BigEndian.Uint32(buf)), buf[4:], nil
}

// checkResponse decodes the response to the request in frame, when the
// broker answers it with its own kind (an ApiVersions outside the
// advertised versions gets a v0 answer; nothing else outside them is
// answered).
func checkResponse(frame, body []byte) error {
	h, _, err := parseRequestHeader(frame)
	if err != nil {
		return fmt.Errorf("a response to a frame without a header")
	}
	api, ok := apiTable[kmsg.Key(h.key)]
	if !ok {
		return fmt.Errorf("a response to unknown key %d", h.key)
	}
	if h.version < api.min || h.version > api.max {
		if api.key != kmsg.ApiVersions {
			return fmt.Errorf("a response to unadvertised %s v%d", api.key.Name(), h.version)
		}
		h.version = 0
	}
	resp := kmsg.ResponseForKey(h.key)
	resp.SetVersion(h.version)
	if resp.IsFlexible() && api.key != kmsg.ApiVersions {
		if len(body) == 0 || body[0] != 0 {
			return fmt.Errorf("response header tags % x", body[:min(len(body), 1)])
		}
		body = body[1:]
	}
	return resp.ReadFrom(body)
}

// checkSentinel checks the answer to the harness's own ApiVersions.
func checkSentinel(req, body []byte) error {
	if err := checkResponse(req, body); err != nil {
		return err
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = sentinelRequest().Version
	resp.ReadFrom(body)
	if resp.ErrorCode != 0 {
		return fmt.Errorf("ApiVersions error %s", codeName(resp.ErrorCode))
	}
	return nil
}

// describeFrame names a frame's key and version, for failures.
func describeFrame(frame []byte) string {
	h, _, err := parseRequestHeader(frame)
	if err != nil {
		return fmt.Sprintf("a %d-byte frame", len(frame))
	}
	return fmt.Sprintf("%s v%d (%d bytes)", kmsg.NameForKey(h.key), h.version, len(frame))
}

// tameFrame keeps a fuzzed request from stalling or flooding the broker
// without changing what the decoder sees for anything else: waits longer
// than fuzzMaxWaitMillis are capped (re-encoding the request), and requests
// that would create more than a few topics or partitions are not sent
// (Kafka allows those too; they are slow, not wrong). decoded says the
// harness itself could decode the request at an advertised version.
func tameFrame(frame []byte) (_ []byte, decoded, send bool) {
	prefix, req, ok := decodeFrame(frame)
	if !ok {
		return frame, false, true
	}
	capped := false
	capWait := func(ms *int32) {
		if *ms > fuzzMaxWaitMillis {
			*ms, capped = fuzzMaxWaitMillis, true
		}
	}
	switch r := req.(type) {
	case *kmsg.FetchRequest:
		capWait(&r.MaxWaitMillis)
	case *kmsg.JoinGroupRequest:
		capWait(&r.SessionTimeoutMillis)
		capWait(&r.RebalanceTimeoutMillis)
	case *kmsg.CreateTopicsRequest:
		if len(r.Topics) > 8 {
			return nil, true, false
		}
		for _, t := range r.Topics {
			if t.NumPartitions > 8 || len(t.ReplicaAssignment) > 8 {
				return nil, true, false
			}
		}
	case *kmsg.CreatePartitionsRequest:
		for _, t := range r.Topics {
			if t.Count > 8 {
				return nil, true, false
			}
		}
	case *kmsg.AlterClientQuotasRequest:
		// A small quota that holds would throttle the harness itself (a
		// connection creation rate of 127.0.0.1 closes its connections):
		// valid values are raised to a billion, which no input reaches,
		// and invalid ones kept, so the refusals are still fuzzed.
		for i := range r.Entries {
			for j := range r.Entries[i].Ops {
				if v := &r.Entries[i].Ops[j].Value; *v > 0 && *v < 1e9 {
					*v, capped = 1e9, true
				}
			}
		}
	}
	if capped {
		frame = req.AppendTo(slices.Clone(prefix))
	}
	return frame, true, true
}

// seedFor is what edits apply to when the frame does not decode: the seed
// of its key at its version brought into the advertised range, under a
// plain header. A fuzzed frame is mostly broken, and edits to a broken
// frame would otherwise never reach a handler.
func seedFor(frame []byte) ([]byte, kmsg.Request) {
	if len(frame) < 4 {
		return nil, nil
	}
	api, ok := apiTable[kmsg.Key(binary.BigEndian.Uint16(frame))]
	if !ok {
		return nil, nil
	}
	v := api.min + int16(binary.BigEndian.Uint16(frame[2:])%uint16(api.max-api.min+1))
	req := fuzzSeedRequest(api.key, v)
	whole := encodeRequest(req, 7)
	prefix, _, _ := decodeFrame(whole)
	return prefix, req
}

// decodeFrame decodes a request as Broker.handle does; prefix is the
// header, tags included, to encode an edited request after.
func decodeFrame(frame []byte) (prefix []byte, _ kmsg.Request, ok bool) {
	h, body, err := parseRequestHeader(frame)
	if err != nil {
		return nil, nil, false
	}
	api, ok := apiTable[kmsg.Key(h.key)]
	if !ok || h.version < api.min || h.version > api.max {
		return nil, nil, false
	}
	req := kmsg.RequestForKey(h.key)
	req.SetVersion(h.version)
	if req.IsFlexible() {
		if body, err = skipHeaderTags(body); err != nil {
			return nil, nil, false
		}
	}
	if req.ReadFrom(body) != nil {
		return nil, nil, false
	}
	return frame[:len(frame)-len(body)], req, true
}

// writeStats writes the counts to statsPath, at most once a second.
func (h *fuzzHarness) writeStats() {
	if h.statsPath == "" || time.Since(h.statsAt) < time.Second {
		return
	}
	h.statsAt = time.Now()
	os.WriteFile(h.statsPath, []byte(h.stats()), 0o644)
}

// stats lists the counts by key: inputs, decoded, reached.
func (h *fuzzHarness) stats() string {
	keys := make([]int16, 0, len(h.counts))
	for k := range h.counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var sb strings.Builder
	for _, k := range keys {
		c := h.counts[k]
		fmt.Fprintf(&sb, "%d %s %d %d %d\n", k, kmsg.NameForKey(k), c.inputs, c.decoded, c.reached)
	}
	return sb.String()
}

// fuzzAPI is the target of one API key: the frame's first two bytes become
// the key, and the edits apply to the decoded request.
func fuzzAPI(f *testing.F, key kmsg.Key) {
	h := newFuzzHarness(f)
	f.Fuzz(func(t *testing.T, frame, edits []byte) {
		h.run(t, withKey(frame, key), edits)
	})
}

func withKey(frame []byte, key kmsg.Key) []byte {
	if len(frame) < 2 {
		return frame
	}
	frame = slices.Clone(frame)
	binary.BigEndian.PutUint16(frame, uint16(key))
	return frame
}

// FuzzRequest fuzzes whole frames: the key too, so unknown keys and
// unadvertised versions of every key are in reach.
func FuzzRequest(f *testing.F) {
	h := newFuzzHarness(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		h.run(t, frame, nil)
	})
}
