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
)

// The matrix's Java column: with SAMSA_AUTHZ_JAVA set (make compat's
// security part sets it), every cell of a row that the Java client can
// express is checked a second time through the Java client's public API
// (test/compat/java's AuthzProbe, one long-lived JVM per broker), under the
// same ACLs and with the same expectations. A row the Java client cannot
// express says why in noJava; TestAuthzMatrixJavaCoversEveryRow keeps the
// two lists whole.

// javaProbe is how the Java client checks a row: AuthzProbe's probe name
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
	"FindCoordinator/transaction":    jp("describe-transaction", "mx-find-txn").allowing(txnNotFound),
	"InitProducerID/transactional":   jp("init-txn", "mx-init-txn"),
	"AddPartitionsToTxn/v3 producer": jp("txn-produce", "mx-apt", "mx-apt"),
	// AddOffsetsToTxn comes first; the TxnOffsetCommit after it needs the
	// topic's READ, which this row does not give, and its refusal shows
	// AddOffsetsToTxn was allowed.
	"AddOffsetsToTxn":      jp("txn-offsets", "mx-aot", "mx-aot", "mx-aot", "add-only"),
	"TxnOffsetCommit":      jp("txn-offsets", "mx-toc", "mx-toc", "mx-toc"),
	"DescribeTransactions": jp("describe-transaction", "mx-describe-txn").allowing(txnNotFound),
	"ListTransactions":     jp("list-transactions", "mx-list-txn"),

	"DescribeACLs":                          jp("describe-acls"),
	"CreateACLs":                            jp("create-acls"),
	"DeleteACLs":                            jp("delete-acls"),
	"DescribeConfigs/topic":                 jp("describe-configs", "topic", "mx-describe-configs"),
	"DescribeConfigs/broker":                jp("describe-configs", "broker", "1"),
	"IncrementalAlterConfigs/topic":         jp("incremental-alter-configs", "topic", "mx-iac", "retention.ms"),
	"IncrementalAlterConfigs/broker":        jp("incremental-alter-configs", "broker", "", "log.retention.ms"),
	"DescribeLogDirs":                       jp("describe-log-dirs", "1"),
	"ElectLeaders":                          {name: "elect-leaders", args: []string{"mx-elect"}, ok: []int16{kerr.ElectionNotNeeded.Code}},
	"DescribeUserSCRAMCredentials":          jp("describe-scram"),
	"AlterUserSCRAMCredentials":             jp("alter-scram"),
	"DescribeQuorum":                        jp("describe-quorum"),
	"DescribeCluster/authorized operations": jp("cluster-operations"),

	"CreateDelegationToken/for another owner":       jp("create-token", "mx-token-for"),
	"DescribeDelegationToken/token DESCRIBE":        jp("describe-tokens", tokenIDOf("User:mx-dt-by-id")),
	"DescribeDelegationToken/owner DESCRIBE_TOKENS": jp("describe-tokens", tokenIDOf("User:mx-dt-by-owner")),
}

// noJava are the rows the Java client cannot express, and why.
var noJava = map[string]string{
	"Fetch/follower":                "a follower's fetch (a replica ID): only brokers send it",
	"OffsetForLeaderEpoch/follower": "a follower's request: only brokers send it",
	"OffsetForLeaderEpoch/consumer": "the consumer sends it only while validating a position before it fetches, " +
		"which needs READ too: no API of the client isolates it",
	"OffsetFetch/v7":                     "a version pin: the Java client sends its newest OffsetFetch, in the rows above",
	"DescribeTopicPartitions/all topics": "the Java Admin lists every topic with Metadata; DescribeTopicPartitions only names topics",
	"InitProducerID/idempotent with cluster IDEMPOTENT_WRITE": "the idempotent producer asks for its ID on its own, racing the metadata " +
		"its first send needs: no API of the client shows InitProducerId's answer alone",
	"InitProducerID/idempotent with WRITE on a topic": "as the row with IDEMPOTENT_WRITE",
	"AddPartitionsToTxn/v4+ broker":                   "the verify-only form: brokers send it to a transaction's coordinator",
	"EndTxn": "the producer sends EndTxn only for a transaction with partitions or offsets, whose checks this " +
		"row does not grant; the transactional Produce, AddPartitionsToTxn and TxnOffsetCommit rows end theirs",
	"WriteTxnMarkers/CLUSTER_ACTION": "a transaction coordinator sends it; Admin.abortTransaction first needs the " +
		"topic's DESCRIBE to find the leader, which the row does not grant",
	"WriteTxnMarkers/ALTER":       "as the CLUSTER_ACTION row",
	"AlterConfigs/topic":          "Kafka 4 removed Admin.alterConfigs: the Java client sends IncrementalAlterConfigs (the rows below)",
	"AlterConfigs/broker":         "as the topic row",
	"AlterPartition/handler":      "sent between nodes only, on controller listeners",
	"BrokerRegistration/handler":  "sent between nodes only, on controller listeners",
	"BrokerHeartbeat/handler":     "sent between nodes only, on controller listeners",
	"Envelope/handler":            "sent between nodes only, on controller listeners",
	"AllocateProducerIDs/handler": "sent between nodes only, on controller listeners",
}

// javaAgent is one AuthzProbe process.
type javaAgent struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	// stderr is where the JVM's log goes.
	stderr string
}

// startJavaAgent starts AuthzProbe for the broker at addr, or returns nil
// when SAMSA_AUTHZ_JAVA is not set.
func startJavaAgent(t *testing.T, addr string) *javaAgent {
	t.Helper()
	command := strings.Fields(os.Getenv("SAMSA_AUTHZ_JAVA"))
	if len(command) == 0 {
		return nil
	}
	a := &javaAgent{stderr: t.TempDir() + "/authz-probe.err"}
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
		t.Fatalf("start the Java probe %v: %v", command, err)
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
		t.Fatalf("java: write the probe: %v (stderr in %s)", err, a.stderr)
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
		t.Fatalf("java: %s %v: no answer in 90s", name, args)
	}
	if ans.err != nil {
		tail, _ := os.ReadFile(a.stderr)
		t.Fatalf("java: %s %v: %v; stderr: %s", name, args, ans.err, lastLines(string(tail), 20))
	}
	code, detail, _ := strings.Cut(strings.TrimSuffix(ans.line, "\n"), "\t")
	if code == "error" {
		t.Fatalf("java: %s %v could not run: %s", name, args, detail)
	}
	n, err := strconv.ParseInt(code, 10, 16)
	if err != nil {
		t.Fatalf("java: %s %v: answer %q", name, args, ans.line)
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

// checkJava runs a cell's Java probe, if the row has one and the agent
// runs, and reports whether it ran. A row whose grants name a resource
// per cell (a topic to auto-create) gets the cell's ACLs again under a
// suffix of its own, since the franz-go probe made the first.
func (e *authzEnv) checkJava(t *testing.T, r matrixRow, c matrixCell, suffix string) bool {
	j, ok := javaProbes[r.String()]
	if e.java == nil || !ok {
		return false
	}
	if slices.ContainsFunc(slices.Concat(r.grants, r.alternatives), func(g grant) bool { return strings.Contains(g.name, "%s") }) {
		suffix += "-java"
		e.setACLs(cellACLs(c.acls, suffix))
	}
	p := &probe{t: t, e: e, cl: e.admin, user: c.user, suffix: suffix}
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
	got, detail := e.java.probe(t, c.user, j.name, args)
	okCodes := j.ok
	if okCodes == nil {
		okCodes = []int16{0}
	}
	switch {
	case c.want != 0 && got != c.want:
		t.Errorf("java: %s: %s, want %s (%s)", c.name, cellCode(got), cellCode(c.want), detail)
	case c.want == 0 && !slices.Contains(okCodes, got):
		t.Errorf("java: %s: %s, want it allowed with one of %v (%s)", c.name, cellCode(got), codeNames(okCodes...), detail)
	}
	return true
}

// Every row of the matrix either has a Java probe or says why the Java
// client cannot express it, and neither list names a row that is not.
func TestAuthzMatrixJavaCoversEveryRow(t *testing.T) {
	rows := map[string]bool{}
	for _, r := range matrixRows() {
		name := r.String()
		rows[name] = true
		_, probe := javaProbes[name]
		_, why := noJava[name]
		switch {
		case probe && why:
			t.Errorf("%s: both a Java probe and a reason it has none", name)
		case !probe && !why:
			t.Errorf("%s: neither a Java probe nor a reason it has none", name)
		}
	}
	for name := range javaProbes {
		if !rows[name] {
			t.Errorf("a Java probe for %q, which is not a row", name)
		}
	}
	for name := range noJava {
		if !rows[name] {
			t.Errorf("a reason %q has no Java probe, which is not a row", name)
		}
	}
	t.Logf("%d rows: %d with a Java probe, %d without", len(rows), len(javaProbes), len(noJava))
}
