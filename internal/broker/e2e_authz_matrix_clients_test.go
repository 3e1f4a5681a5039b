package broker

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/auth"
)

// The matrix's other clients: with SAMSA_AUTHZ_JAVA set (make compat's
// Java suite sets it), every cell of a row the Java client can express is
// checked again through the Java client's public API (test/compat/java's
// AuthzProbe, one long-lived JVM per broker), under the same ACLs and with
// the same expectations; with SAMSA_AUTHZ_LIBRDKAFKA (the Go suite's),
// the rows librdkafka's are, through confluent-kafka-go
// (test/compat/go/authzprobe). A row neither can express says why in
// noClient; TestAuthzMatrixClientsCoverEveryRow keeps the lists whole.

// matrixClient is a client that checks the matrix's cells besides
// franz-go: the variable holding the command that starts its probe
// process (the bootstrap address is appended), and its probes by row.
type matrixClient struct {
	name   string
	env    string
	probes map[string]javaProbe
}

var matrixClients = []matrixClient{
	{"java", "SAMSA_AUTHZ_JAVA", javaProbes},
	{"librdkafka", "SAMSA_AUTHZ_LIBRDKAFKA", librdkafkaProbes},
}

// javaProbe is how a client checks a row: its probe process's probe name
// and arguments, where "%s" is the cell's suffix and a tokenIDOf
// placeholder the token setup made.
type javaProbe struct {
	name string
	args []string
	// ok are the codes an allowed request may get; nil: only 0.
	ok []int16
	// before runs, as the admin, before the probe (what the franz-go
	// probe may have used up).
	before func(p *probe)
	// extra are ACLs the probe needs besides the cell's, none of which
	// the row's checks read: the Java client asks for more than the one
	// request (the topic's metadata before it produces), and the cell's
	// answer must come from the row's check.
	extra []auth.ACL
	// topic is created before the probe when not empty.
	topic string
}

func jp(name string, args ...string) javaProbe { return javaProbe{name: name, args: args} }

func (j javaProbe) allowing(codes ...int16) javaProbe {
	j.ok = append([]int16{0}, codes...)
	return j
}

func (j javaProbe) after(fn func(p *probe)) javaProbe {
	j.before = fn
	return j
}

// with gives alice op on the topic, which the probe creates.
func (j javaProbe) with(topic string, op kmsg.ACLOperation) javaProbe {
	j.topic = topic
	j.extra = append(j.extra, aliceACL(kmsg.ACLResourceTypeTopic, topic, literal, op))
	return j
}

var (
	groupNotFound = kerr.GroupIDNotFound.Code
	txnNotFound   = kerr.TransactionalIDNotFound.Code
)

// javaProbes are the rows the Java client checks, by row.
var javaProbes = map[string]javaProbe{
	"Produce":                                  jp("produce", "mx-produce"),
	"Produce/transactional":                    jp("txn-produce", "mx-produce-txn", "mx-produce-txn"),
	"Fetch/consumer":                           jp("fetch", "mx-fetch"),
	"ListOffsets":                              jp("list-offsets", "mx-list-offsets"),
	"Metadata/named":                           jp("metadata", "mx-metadata"),
	"Metadata/all topics":                      jp("metadata-all", "mx-metadata-all"),
	"Metadata/auto-create with topic CREATE":   jp("metadata-auto-create", "mx-auto-%s"),
	"Metadata/auto-create with cluster CREATE": jp("metadata-auto-create", "mx-auto-cluster-%s"),
	"CreateTopics/topic CREATE":                jp("create-topic", "mx-create-%s"),
	"CreateTopics/cluster CREATE":              jp("create-topic", "mx-create-cluster-%s"),
	"DeleteTopics/topic DELETE": jp("delete-topic", "mx-delete-topic").
		after(func(p *probe) { p.e.mustCreateTopic("mx-delete-topic") }),
	"DeleteTopics/cluster DELETE": jp("delete-topic", "mx-delete-topic-cluster").
		after(func(p *probe) { p.e.mustCreateTopic("mx-delete-topic-cluster") }),
	"DeleteRecords":                 jp("delete-records", "mx-delete-records"),
	"CreatePartitions":              jp("create-partitions", "mx-create-partitions"),
	"DescribeProducers":             jp("describe-producers", "mx-producers"),
	"DescribeTopicPartitions/named": jp("describe-topics", "mx-dtp"),

	"OffsetCommit":            jp("offset-commit", "mx-commit", "mx-commit"),
	"OffsetFetch/named topic": jp("committed", "mx-offset-fetch", "mx-offset-fetch"),
	"OffsetFetch/all topics":  jp("group-offsets", "mx-offset-fetch-all", "mx-offset-fetch-all"),
	// Admin.describeConsumerGroups: FindCoordinator, then
	// ConsumerGroupDescribe or DescribeGroups, all on the group's DESCRIBE.
	"FindCoordinator/group": jp("describe-group", "mx-find-group").allowing(groupNotFound),
	"JoinGroup":             jp("join-group", "mx-join-%s"),
	"SyncGroup":             jp("join-group", "mx-sync"),
	"Heartbeat":             jp("join-group", "mx-heartbeat", "heartbeat"),
	// Admin.removeMembersFromConsumerGroup: a LeaveGroup of a static
	// member the group does not have.
	"LeaveGroup":                  jp("remove-member", "mx-leave").allowing(kerr.UnknownMemberID.Code),
	"DescribeGroups":              jp("describe-group", "mx-describe-group").allowing(groupNotFound),
	"ListGroups/cluster DESCRIBE": jp("list-groups", "mx-list-groups"),
	"ListGroups/group DESCRIBE":   jp("list-groups", "mx-list-groups-each"),
	"DeleteGroups":                jp("delete-group", "mx-delete-group").allowing(groupNotFound),
	"OffsetDelete": jp("offset-delete", "mx-offset-delete", "mx-offset-delete").
		after(func(p *probe) { p.e.mustCommit("mx-offset-delete", "mx-offset-delete") }),
	"ConsumerGroupHeartbeat": jp("consumer-group", "mx-cgh"),
	"ConsumerGroupDescribe":  jp("describe-group", "mx-cgd").allowing(groupNotFound),

	// Admin.describeTransactions: FindCoordinator, then
	// DescribeTransactions, both on the transactional ID's DESCRIBE.
	"FindCoordinator/transaction":  jp("describe-transaction", "mx-find-txn").allowing(txnNotFound),
	"InitProducerID/transactional": jp("init-txn", "mx-init-txn"),
	// An idempotent producer asks for its ID as it starts, and its first
	// record waits for the ID: a topic alice may DESCRIBE but not WRITE
	// (which would allow InitProducerId) gives the record its metadata, so
	// it fails with the ID's refusal, or with the topic's once the ID came.
	"InitProducerID/idempotent with cluster IDEMPOTENT_WRITE": jp("idempotent-init", "mx-init-probe").with("mx-init-probe", opDescribe),
	"InitProducerID/idempotent with WRITE on a topic":         jp("idempotent-init", "mx-init-probe").with("mx-init-probe", opDescribe),
	"AddPartitionsToTxn/v3 producer":                          jp("txn-produce", "mx-apt", "mx-apt"),
	// AddOffsetsToTxn comes first; the TxnOffsetCommit after it needs the
	// topic's READ, which this row does not give, and its refusal shows
	// AddOffsetsToTxn was allowed.
	"AddOffsetsToTxn": jp("txn-offsets", "mx-aot", "mx-aot", "mx-aot", "add-only"),
	"TxnOffsetCommit": jp("txn-offsets", "mx-toc", "mx-toc", "mx-toc"),
	// A transaction with a record, so the commit sends EndTxn, on a topic
	// alice may write. InitProducerId checks the same WRITE first, so a
	// denial shows there; an allowed cell's EndTxn must succeed.
	"EndTxn": jp("txn-produce", "mx-end", "mx-end-probe").with("mx-end-probe", opWrite),
	// Admin.abortTransaction finds the partition's leader in the topic's
	// metadata, then sends WriteTxnMarkers; the markers' check is on the
	// cluster alone.
	"WriteTxnMarkers/CLUSTER_ACTION": jp("abort-transaction", "mx-markers").with("mx-markers", opDescribe),
	"WriteTxnMarkers/ALTER":          jp("abort-transaction", "mx-markers-alter").with("mx-markers-alter", opDescribe),
	"DescribeTransactions":           jp("describe-transaction", "mx-describe-txn").allowing(txnNotFound),
	"ListTransactions":               jp("list-transactions", "mx-list-txn"),

	"DescribeACLs":                           jp("describe-acls"),
	"CreateACLs":                             jp("create-acls"),
	"DeleteACLs":                             jp("delete-acls"),
	"DescribeConfigs/topic":                  jp("describe-configs", "topic", "mx-describe-configs"),
	"DescribeConfigs/broker":                 jp("describe-configs", "broker", "1"),
	"IncrementalAlterConfigs/topic":          jp("incremental-alter-configs", "topic", "mx-iac", "retention.ms"),
	"IncrementalAlterConfigs/broker":         jp("incremental-alter-configs", "broker", "", "log.retention.ms"),
	"DescribeConfigs/client-metrics":         jp("describe-configs", "client-metrics", "mx-client-metrics"),
	"IncrementalAlterConfigs/client-metrics": jp("incremental-alter-configs", "client-metrics", "mx-client-metrics", "interval.ms"),
	"ListConfigResources":                    jp("list-config-resources"),
	"DescribeLogDirs":                        jp("describe-log-dirs", "1"),
	"ElectLeaders":                           {name: "elect-leaders", args: []string{"mx-elect"}, ok: []int16{kerr.ElectionNotNeeded.Code}},
	"DescribeClientQuotas":                   jp("describe-client-quotas"),
	"AlterClientQuotas":                      jp("alter-client-quotas"),
	"DescribeUserSCRAMCredentials":           jp("describe-scram"),
	"AlterUserSCRAMCredentials":              jp("alter-scram"),
	"DescribeQuorum":                         jp("describe-quorum"),
	"DescribeCluster/authorized operations":  jp("cluster-operations"),
	"DescribeConfigs/broker logger":          jp("describe-configs", "broker-logger", "1"),
	"IncrementalAlterConfigs/broker logger":  jp("alter-logger", "1"),
	"UpdateFeatures":                         jp("update-features"),
	"AlterPartitionAssignments":              {name: "alter-reassignments", args: []string{"mx-reassign"}, ok: []int16{kerr.NoReassignmentInProgress.Code}},
	"ListPartitionReassignments":             jp("list-reassignments"),
	"UnregisterBroker":                       {name: "unregister-broker", args: []string{"9"}, ok: []int16{kerr.BrokerIDNotRegistered.Code}},

	"CreateDelegationToken/for another owner":       jp("create-token", "mx-token-for"),
	"DescribeDelegationToken/token DESCRIBE":        jp("describe-tokens", tokenIDOf("User:mx-dt-by-id")),
	"DescribeDelegationToken/owner DESCRIBE_TOKENS": jp("describe-tokens", tokenIDOf("User:mx-dt-by-owner")),
}

// librdkafkaProbes are the rows librdkafka checks: AlterConfigs, which
// the Java client no longer sends, and a few the Java client checks too.
var librdkafkaProbes = map[string]javaProbe{
	"AlterConfigs/topic":            jp("alter-configs", "topic", "mx-alter-configs", "retention.ms"),
	"AlterConfigs/broker":           jp("alter-configs", "broker", "1", "log.retention.ms"),
	"IncrementalAlterConfigs/topic": jp("incremental-alter-configs", "topic", "mx-iac", "retention.ms"),
	"DescribeConfigs/topic":         jp("describe-configs", "topic", "mx-describe-configs"),
	"CreateTopics/topic CREATE":     jp("create-topic", "mx-create-%s"),
	"Produce":                       jp("produce", "mx-produce"),
}

// noClient are the rows neither the Java client nor librdkafka can
// express, and why.
var noClient = map[string]string{
	"StreamsGroupHeartbeat": "Kafka Streams (group.protocol=streams) sends it; the matrix's Java agent runs the clients and Admin, not Streams",
	"StreamsGroupDescribe":  "the Java Admin's describeStreamsGroups has no probe in the agent yet",
	"AddRaftVoter": "the matrix's single node has no quorum that can change (it answers UNSUPPORTED_VERSION); " +
		"the Java Admin's addRaftVoter has no probe yet",
	"RemoveRaftVoter":               "as AddRaftVoter: no quorum that can change on the single node; the Java Admin's removeRaftVoter has no probe yet",
	"Fetch/follower":                "a follower's fetch (a replica ID): only brokers send it",
	"OffsetForLeaderEpoch/follower": "a follower's request: only brokers send it",
	"OffsetForLeaderEpoch/consumer": "the consumer sends it only while validating a position before it fetches, " +
		"which needs READ too: no API of the client isolates it",
	"OffsetFetch/v7":                     "a version pin: the Java client and librdkafka (which asks the broker's versions even with api.version.request=false) send OffsetFetch v9, in the rows above",
	"DescribeTopicPartitions/all topics": "the Java Admin lists every topic with Metadata; DescribeTopicPartitions only names topics",
	"AddPartitionsToTxn/v4+ broker":      "the verify-only form: brokers send it to a transaction's coordinator",
	"AlterPartition/handler":             "sent between nodes only, on controller listeners",
	"BrokerRegistration/handler":         "sent between nodes only, on controller listeners",
	"BrokerHeartbeat/handler":            "sent between nodes only, on controller listeners",
	"AssignReplicasToDirs/handler":       "sent between nodes only, on controller listeners",
	"AlterReplicaLogDirs":                "no Java probe written yet (Admin.alterReplicaLogDirs would express it)",
	"Envelope/handler":                   "sent between nodes only, on controller listeners",
	"AllocateProducerIDs/handler":        "sent between nodes only, on controller listeners",
	"AlterConfigs/client-metrics":        "the Java client no longer sends AlterConfigs, and librdkafka has no client metrics resource type",
}

// javaAgent is one probe process.
type javaAgent struct {
	client string
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	// stderr is where the JVM's log goes.
	stderr string
}

// startAgents starts the probe process of every client whose variable is
// set, for the broker at addr.
func startAgents(t *testing.T, addr string) map[string]*javaAgent {
	t.Helper()
	agents := map[string]*javaAgent{}
	for _, mc := range matrixClients {
		if command := strings.Fields(os.Getenv(mc.env)); len(command) > 0 {
			agents[mc.name] = startAgent(t, mc.name, command, addr)
		}
	}
	return agents
}

// startAgent starts one client's probe process.
func startAgent(t *testing.T, client string, command []string, addr string) *javaAgent {
	t.Helper()
	a := &javaAgent{client: client, stderr: t.TempDir() + "/authz-probe-" + client + ".err"}
	a.cmd = exec.Command(command[0], append(command[1:], addr)...)
	errf, err := os.Create(a.stderr)
	if err != nil {
		t.Fatal(err)
	}
	a.cmd.Stderr = errf
	if a.in, err = a.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := a.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	a.out = bufio.NewReader(out)
	if err := a.cmd.Start(); err != nil {
		t.Fatalf("start the %s probe %v: %v", client, command, err)
	}
	t.Cleanup(func() {
		a.in.Close()
		done := make(chan struct{})
		go func() { a.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			a.cmd.Process.Kill()
			<-done
		}
		errf.Close()
	})
	return a
}

// probe runs one probe as user and returns the code the Java client
// reported, and its detail.
func (a *javaAgent) probe(t *testing.T, user, name string, args []string) (int16, string) {
	t.Helper()
	line := strings.Join(append([]string{user, userPasswords[user], name}, args...), "\t") + "\n"
	if _, err := io.WriteString(a.in, line); err != nil {
		t.Fatalf("%s: write the probe: %v (stderr in %s)", a.client, err, a.stderr)
	}
	type answer struct {
		line string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		l, err := a.out.ReadString('\n')
		got <- answer{l, err}
	}()
	var ans answer
	select {
	case ans = <-got:
	case <-time.After(90 * time.Second):
		a.cmd.Process.Kill()
		t.Fatalf("%s: %s %v: no answer in 90s", a.client, name, args)
	}
	if ans.err != nil {
		tail, _ := os.ReadFile(a.stderr)
		t.Fatalf("%s: %s %v: %v; stderr: %s", a.client, name, args, ans.err, lastLines(string(tail), 20))
	}
	code, detail, _ := strings.Cut(strings.TrimSuffix(ans.line, "\n"), "\t")
	if code == "error" {
		t.Fatalf("%s: %s %v could not run: %s", a.client, name, args, detail)
	}
	n, err := strconv.ParseInt(code, 10, 16)
	if err != nil {
		t.Fatalf("%s: %s %v: answer %q", a.client, name, args, ans.line)
	}
	return int16(n), detail
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// checkClients runs a cell's probe in every client that has one for the
// row and whose process runs, and returns the names of those it ran in. A
// row whose grants name a resource per cell (a topic to auto-create) gets
// the cell's ACLs again under a suffix of the client's, since the franz-go
// probe made the first.
func (e *authzEnv) checkClients(t *testing.T, r matrixRow, c matrixCell, suffix string) []string {
	var ran []string
	for _, mc := range matrixClients {
		j, ok := mc.probes[r.String()]
		agent := e.agents[mc.name]
		if agent == nil || !ok {
			continue
		}
		e.checkClient(t, agent, j, r, c, suffix)
		ran = append(ran, mc.name)
	}
	return ran
}

func (e *authzEnv) checkClient(t *testing.T, agent *javaAgent, j javaProbe, r matrixRow, c matrixCell, suffix string) {
	perCell := slices.ContainsFunc(slices.Concat(r.grants, r.alternatives), func(g grant) bool { return strings.Contains(g.name, "%s") })
	if perCell {
		suffix += "-" + agent.client
	}
	if perCell || len(j.extra) > 0 {
		e.setACLs(append(cellACLs(c.acls, suffix), j.extra...))
	}
	p := &probe{t: t, e: e, cl: e.admin, user: c.user, suffix: suffix}
	if j.topic != "" {
		e.mustCreateTopic(j.topic)
	}
	if j.before != nil {
		j.before(p)
	}
	args := make([]string, len(j.args))
	for i, a := range j.args {
		if name, ok := e.names[a]; ok {
			a = name
		}
		args[i] = p.name(a)
	}
	got, detail := agent.probe(t, c.user, j.name, args)
	okCodes := j.ok
	if okCodes == nil {
		okCodes = []int16{0}
	}
	switch {
	case c.want != 0 && got != c.want:
		t.Errorf("%s: %s: %s, want %s (%s)", agent.client, c.name, cellCode(got), cellCode(c.want), detail)
	case c.want == 0 && !slices.Contains(okCodes, got):
		t.Errorf("%s: %s: %s, want it allowed with one of %v (%s)", agent.client, c.name, cellCode(got), codeNames(okCodes...), detail)
	}
}

// Every row of the matrix has a probe in the Java client or librdkafka,
// or says why neither can express it, and no list names a row that is not.
func TestAuthzMatrixClientsCoverEveryRow(t *testing.T) {
	rows := map[string]bool{}
	for _, r := range matrixRows() {
		name := r.String()
		rows[name] = true
		_, java := javaProbes[name]
		_, rdkafka := librdkafkaProbes[name]
		_, why := noClient[name]
		switch {
		case (java || rdkafka) && why:
			t.Errorf("%s: a probe and a reason it has none", name)
		case !java && !rdkafka && !why:
			t.Errorf("%s: neither a probe nor a reason it has none", name)
		}
	}
	for _, mc := range matrixClients {
		for name := range mc.probes {
			if !rows[name] {
				t.Errorf("a %s probe for %q, which is not a row", mc.name, name)
			}
		}
	}
	for name := range noClient {
		if !rows[name] {
			t.Errorf("a reason %q has no probe, which is not a row", name)
		}
	}
	t.Logf("%d rows: %d with a Java probe, %d with a librdkafka probe, %d with neither", len(rows), len(javaProbes), len(librdkafkaProbes), len(noClient))
}
