package samsa.compat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterClientQuotasOptions;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.CreatePartitionsOptions;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Java client's side of the authorization matrix
 * (internal/broker/e2e_authz_matrix_test.go): a long-lived process the Go
 * test starts with SAMSA_AUTHZ_JAVA, which runs one probe per line of
 * stdin through the Java client's public API, as a SASL/PLAIN user, and
 * answers with the Kafka error code the client reported.
 *
 * <p>Usage: AuthzProbe BOOTSTRAP. A request line is tab-separated: user,
 * password, probe, then the probe's arguments. The answer line is the code
 * (0: allowed; -100: a listing left the resource out, as the Go test's
 * "omitted"), a tab and a detail. A probe that cannot run answers
 * "error", a tab and why; the Go test fails the cell on it.
 *
 * <p>Two probes are not the matrix's: alter-quotas and describe-quotas
 * answer 0 with what the Admin reported of client quotas in the detail,
 * for TestClientQuotasWithJavaAdmin (internal/broker).
 */
public final class AuthzProbe {
    /** What a listing answers when the resource is not in it. */
    static final short OMITTED = -100;
    /** How long one probe may wait on the client. */
    static final long TIMEOUT_S = 20;

    final String bootstrap;
    final Map<String, Admin> admins = new HashMap<>();

    AuthzProbe(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    public static void main(String[] args) throws Exception {
        AuthzProbe p = new AuthzProbe(args[0]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            String answer;
            try {
                answer = p.run(f[0], f[1], f[2], List.of(f).subList(3, f.length)) + "\t";
            } catch (Result r) {
                answer = r.code + "\t" + oneLine(r.detail);
            } catch (Throwable t) {
                answer = "error\t" + oneLine(t.toString());
            }
            out.println(answer);
        }
        for (Admin a : p.admins.values()) {
            a.close(Duration.ofSeconds(1));
        }
    }

    /** A probe's answer, thrown from where the client reported it. */
    static final class Result extends RuntimeException {
        final short code;
        final String detail;

        Result(short code, String detail) {
            super(null, null, false, false);
            this.code = code;
            this.detail = detail;
        }
    }

    static String oneLine(String s) {
        return s == null ? "" : s.replace('\n', ' ').replace('\t', ' ');
    }

    /** The code of what the client threw: its API exception's. */
    static Result failure(Throwable t) {
        Throwable c = t;
        while ((c instanceof ExecutionException || c instanceof KafkaException && !(c instanceof ApiException))
                && c.getCause() != null) {
            c = c.getCause();
        }
        if (c instanceof ApiException) {
            return new Result(Errors.forException(c).code(), c.getClass().getSimpleName() + ": " + c.getMessage());
        }
        // Errors the client does not expect from a response it reports by
        // their message ("Unexpected error in TxnOffsetCommitResponse:
        // Topic authorization failed.").
        if (c instanceof KafkaException && c.getMessage() != null) {
            for (Errors e : Errors.values()) {
                if (e.message() != null && c.getMessage().endsWith(": " + e.message())) {
                    return new Result(e.code(), c.getMessage());
                }
            }
        }
        throw new IllegalStateException("the client failed outside the protocol: " + t, t);
    }

    interface Call<T> {
        T get() throws Exception;
    }

    /** call's value, or the client's error as a Result. */
    static <T> T check(Call<T> call) {
        try {
            return call.get();
        } catch (Result r) {
            throw r;
        } catch (Exception e) {
            throw failure(e);
        }
    }

    static short listed(boolean present) {
        return present ? 0 : OMITTED;
    }

    Properties common(String user, String password) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", "PLAIN");
        p.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
                + user + "\" password=\"" + password + "\";");
        p.put("request.timeout.ms", "10000");
        p.put("default.api.timeout.ms", "15000");
        return p;
    }

    Admin admin(String user, String password) {
        return admins.computeIfAbsent(user, u -> Admin.create(common(user, password)));
    }

    KafkaProducer<byte[], byte[]> producer(String user, String password, String txn) {
        Properties p = common(user, password);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "15000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "15000");
        if (txn != null) {
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txn);
        } else {
            // A plain producer: an idempotent one would first need
            // IDEMPOTENT_WRITE (or WRITE on some topic) for InitProducerId.
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        }
        return new KafkaProducer<>(p);
    }

    KafkaConsumer<byte[], byte[]> consumer(String user, String password, String group, String protocol) {
        Properties p = common(user, password);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "50");
        p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        if (group != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
            if (protocol.equals("classic")) {
                p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "100");
                p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
            }
        }
        return new KafkaConsumer<>(p);
    }

    /** The value of a client metric by group and name, 0 when absent. */
    static double metric(Map<MetricName, ? extends Metric> metrics, String group, String name) {
        for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
            if (e.getKey().group().equals(group) && e.getKey().name().equals(name)
                    && e.getValue().metricValue() instanceof Double d) {
                return d;
            }
        }
        return 0;
    }

    short run(String user, String password, String probe, List<String> a) throws Exception {
        Admin admin = admin(user, password);
        long t = TIMEOUT_S;
        TimeUnit s = TimeUnit.SECONDS;
        switch (probe) {
            case "produce": {
                try (KafkaProducer<byte[], byte[]> p = producer(user, password, null)) {
                    check(() -> p.send(new ProducerRecord<>(a.get(0), "v".getBytes())).get(t, s));
                }
                return 0;
            }
            case "txn-produce": {
                // InitProducerId, AddPartitionsToTxn, Produce and EndTxn.
                try (KafkaProducer<byte[], byte[]> p = producer(user, password, a.get(0))) {
                    check(() -> {
                        p.initTransactions();
                        p.beginTransaction();
                        p.send(new ProducerRecord<>(a.get(1), "v".getBytes())).get(t, s);
                        p.commitTransaction();
                        return null;
                    });
                }
                return 0;
            }
            case "idempotent-init": {
                // An idempotent producer's InitProducerId, seen through its
                // first record, which waits for the ID: refused with the
                // ID's error, or (alice may not write the topic) with the
                // topic's once the ID came.
                Properties p = common(user, password);
                p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
                p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
                p.put(ProducerConfig.ACKS_CONFIG, "all");
                p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
                p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "15000");
                p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "15000");
                try (KafkaProducer<byte[], byte[]> pr = new KafkaProducer<>(p)) {
                    try {
                        check(() -> pr.send(new ProducerRecord<>(a.get(0), "v".getBytes())).get(t, s));
                    } catch (Result r) {
                        if (r.code != Errors.TOPIC_AUTHORIZATION_FAILED.code()) {
                            throw r;
                        }
                    }
                }
                return 0;
            }
            case "abort-transaction":
                // Admin.abortTransaction: the partition's leader from the
                // topic's metadata, then WriteTxnMarkers with an abort
                // marker for a producer that has no transaction.
                check(() -> admin.abortTransaction(new AbortTransactionSpec(new TopicPartition(a.get(0), 0), 555L, (short) 0, 0))
                        .all().get(t, s));
                return 0;
            case "init-txn": {
                try (KafkaProducer<byte[], byte[]> p = producer(user, password, a.get(0))) {
                    check(() -> {
                        p.initTransactions();
                        return null;
                    });
                }
                return 0;
            }
            case "txn-offsets": {
                // InitProducerId, AddOffsetsToTxn and TxnOffsetCommit of
                // the topic's partition 0 for the group, then EndTxn. With
                // "add-only", a TxnOffsetCommit refused for the topic still
                // counts: AddOffsetsToTxn, sent first, was allowed.
                boolean addOnly = a.size() > 3 && a.get(3).equals("add-only");
                try (KafkaProducer<byte[], byte[]> p = producer(user, password, a.get(0))) {
                    check(() -> {
                        p.initTransactions();
                        p.beginTransaction();
                        try {
                            p.sendOffsetsToTransaction(Map.of(new TopicPartition(a.get(2), 0), new OffsetAndMetadata(1)),
                                    new ConsumerGroupMetadata(a.get(1)));
                        } catch (KafkaException e) {
                            Result r = failure(e);
                            if (addOnly && r.code == Errors.TOPIC_AUTHORIZATION_FAILED.code()) {
                                return null;
                            }
                            throw r;
                        }
                        p.commitTransaction();
                        return null;
                    });
                }
                return 0;
            }
            case "fetch": {
                // Fetches from offset 0 until the client has had a fetch
                // answered.
                try (KafkaConsumer<byte[], byte[]> c = consumer(user, password, null, null)) {
                    TopicPartition tp = new TopicPartition(a.get(0), 0);
                    c.assign(List.of(tp));
                    c.seek(tp, 0);
                    long deadline = System.nanoTime() + s.toNanos(t);
                    while (metric(c.metrics(), "consumer-fetch-manager-metrics", "fetch-total") < 1) {
                        if (System.nanoTime() > deadline) {
                            throw new Result(Errors.REQUEST_TIMED_OUT.code(), "no fetch answered");
                        }
                        check(() -> c.poll(Duration.ofMillis(50)));
                    }
                }
                return 0;
            }
            case "list-offsets":
                check(() -> admin.listOffsets(Map.of(new TopicPartition(a.get(0), 0), OffsetSpec.latest())).all().get(t, s));
                return 0;
            case "metadata":
            case "metadata-auto-create": {
                // Metadata for one topic; the consumer asks the broker to
                // create it when allow.auto.create.topics is on.
                Properties p = common(user, password);
                p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
                p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
                p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, String.valueOf(probe.equals("metadata-auto-create")));
                try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
                    var parts = check(() -> c.partitionsFor(a.get(0), Duration.ofSeconds(t)));
                    if (parts.isEmpty()) {
                        throw new Result(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), "no partitions");
                    }
                }
                return 0;
            }
            case "metadata-all": {
                try (KafkaConsumer<byte[], byte[]> c = consumer(user, password, null, null)) {
                    return listed(check(() -> c.listTopics(Duration.ofSeconds(t))).containsKey(a.get(0)));
                }
            }
            case "describe-topics":
                check(() -> admin.describeTopics(List.of(a.get(0))).allTopicNames().get(t, s));
                return 0;
            case "create-topic":
                check(() -> admin.createTopics(List.of(new NewTopic(a.get(0), 1, (short) 1)),
                        new CreateTopicsOptions().validateOnly(true)).all().get(t, s));
                return 0;
            case "delete-topic":
                check(() -> admin.deleteTopics(List.of(a.get(0))).all().get(t, s));
                return 0;
            case "delete-records":
                check(() -> admin.deleteRecords(Map.of(new TopicPartition(a.get(0), 0), RecordsToDelete.beforeOffset(0)))
                        .all().get(t, s));
                return 0;
            case "create-partitions":
                check(() -> admin.createPartitions(Map.of(a.get(0), NewPartitions.increaseTo(2)),
                        new CreatePartitionsOptions().validateOnly(true)).all().get(t, s));
                return 0;
            case "describe-producers":
                check(() -> admin.describeProducers(List.of(new TopicPartition(a.get(0), 0))).all().get(t, s));
                return 0;
            case "offset-commit":
                // Admin.alterConsumerGroupOffsets: FindCoordinator, then an
                // OffsetCommit of the topic's partition 0 out of any
                // generation.
                check(() -> admin.alterConsumerGroupOffsets(a.get(0), Map.of(new TopicPartition(a.get(1), 0), new OffsetAndMetadata(1)))
                        .all().get(t, s));
                return 0;
            case "committed": {
                try (KafkaConsumer<byte[], byte[]> c = consumer(user, password, a.get(0), "classic")) {
                    check(() -> c.committed(Set.of(new TopicPartition(a.get(1), 0)), Duration.ofSeconds(t)));
                }
                return 0;
            }
            case "group-offsets": {
                // Every offset of the group: is the topic's among them?
                var offsets = check(() -> admin.listConsumerGroupOffsets(a.get(0)).partitionsToOffsetAndMetadata().get(t, s));
                return listed(offsets.keySet().stream().anyMatch(tp -> tp.topic().equals(a.get(1))));
            }
            case "describe-group":
                check(() -> admin.describeConsumerGroups(List.of(a.get(0))).all().get(t, s));
                return 0;
            case "list-groups": {
                var groups = check(() -> admin.listGroups().all().get(t, s));
                return listed(groups.stream().anyMatch(g -> g.groupId().equals(a.get(0))));
            }
            case "delete-group":
                check(() -> admin.deleteConsumerGroups(List.of(a.get(0))).all().get(t, s));
                return 0;
            case "remove-member":
                // LeaveGroup of a static member no one is.
                check(() -> admin.removeMembersFromConsumerGroup(a.get(0),
                        new RemoveMembersFromConsumerGroupOptions(List.of(new MemberToRemove("nobody")))).all().get(t, s));
                return 0;
            case "offset-delete":
                check(() -> admin.deleteConsumerGroupOffsets(a.get(0), Set.of(new TopicPartition(a.get(1), 0))).all().get(t, s));
                return 0;
            case "join-group":
            case "consumer-group": {
                // A subscription matching no topic, so only the group's
                // ACLs count: the member joins (JoinGroup and SyncGroup, or
                // ConsumerGroupHeartbeat) and has sent a heartbeat when
                // a.get(1) is "heartbeat".
                String protocol = probe.equals("join-group") ? "classic" : "consumer";
                boolean heartbeat = a.size() > 1 && a.get(1).equals("heartbeat");
                try (KafkaConsumer<byte[], byte[]> c = consumer(user, password, a.get(0), protocol)) {
                    boolean[] assigned = {false};
                    c.subscribe(Pattern.compile("^matrix-matches-no-topic$"), new ConsumerRebalanceListener() {
                        @Override
                        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                        }

                        @Override
                        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                            assigned[0] = true;
                        }
                    });
                    long deadline = System.nanoTime() + s.toNanos(t);
                    while (!assigned[0] || heartbeat
                            && metric(c.metrics(), "consumer-coordinator-metrics", "heartbeat-total") < 1) {
                        if (System.nanoTime() > deadline) {
                            throw new Result(Errors.REQUEST_TIMED_OUT.code(), "never joined, or no heartbeat");
                        }
                        check(() -> c.poll(Duration.ofMillis(50)));
                    }
                    // Leaves the group, so the next cell's member need not
                    // wait out this one's session.
                    c.close(Duration.ofSeconds(5));
                }
                return 0;
            }
            case "describe-transaction":
                check(() -> admin.describeTransactions(List.of(a.get(0))).all().get(t, s));
                return 0;
            case "list-transactions": {
                var txns = check(() -> admin.listTransactions().all().get(t, s));
                return listed(txns.stream().anyMatch(x -> x.transactionalId().equals(a.get(0))));
            }
            case "describe-acls":
                check(() -> admin.describeAcls(AclBindingFilter.ANY).values().get(t, s));
                return 0;
            case "create-acls":
                check(() -> admin.createAcls(List.of(new AclBinding(new ResourcePattern(ResourceType.TOPIC, "mx-unrelated", PatternType.LITERAL),
                        new AccessControlEntry("User:nobody", "*", AclOperation.READ, AclPermissionType.ALLOW)))).all().get(t, s));
                return 0;
            case "delete-acls":
                check(() -> admin.deleteAcls(List.of(new AclBindingFilter(ResourcePatternFilter.ANY,
                        new AccessControlEntryFilter("User:nobody", null, AclOperation.ANY, AclPermissionType.ANY)))).all().get(t, s));
                return 0;
            case "describe-configs":
                check(() -> admin.describeConfigs(List.of(resource(a.get(0), a.get(1)))).all().get(t, s));
                return 0;
            case "incremental-alter-configs":
                check(() -> admin.incrementalAlterConfigs(Map.of(resource(a.get(0), a.get(1)),
                        List.of(new AlterConfigOp(new ConfigEntry(a.get(2), "3600000"), AlterConfigOp.OpType.SET))),
                        new AlterConfigsOptions().validateOnly(true)).all().get(t, s));
                return 0;
            case "list-config-resources":
                check(() -> admin.listConfigResources().all().get(t, s));
                return 0;
            case "alter-logger":
                // The root logger's level, as a dry run.
                check(() -> admin.incrementalAlterConfigs(Map.of(resource("broker-logger", a.get(0)),
                        List.of(new AlterConfigOp(new ConfigEntry("root", "INFO"), AlterConfigOp.OpType.SET))),
                        new AlterConfigsOptions().validateOnly(true)).all().get(t, s));
                return 0;
            case "alter-reassignments":
                // A cancel of partition 0's move, with none in progress.
                check(() -> admin.alterPartitionReassignments(Map.of(new TopicPartition(a.get(0), 0),
                        Optional.<NewPartitionReassignment>empty())).all().get(t, s));
                return 0;
            case "unregister-broker":
                // A broker that is not registered: BROKER_ID_NOT_REGISTERED once allowed.
                check(() -> admin.unregisterBroker(Integer.parseInt(a.get(0))).all().get(t, s));
                return 0;
            case "list-reassignments":
                check(() -> admin.listPartitionReassignments().reassignments().get(t, s));
                return 0;
            case "describe-log-dirs":
                check(() -> admin.describeLogDirs(List.of(Integer.parseInt(a.get(0)))).allDescriptions().get(t, s));
                return 0;
            case "elect-leaders": {
                var res = check(() -> admin.electLeaders(ElectionType.PREFERRED, Set.of(new TopicPartition(a.get(0), 0)))
                        .partitions().get(t, s));
                for (Optional<Throwable> e : res.values()) {
                    if (e.isPresent()) {
                        throw failure(e.get());
                    }
                }
                return 0;
            }
            case "describe-client-quotas":
                check(() -> admin.describeClientQuotas(ClientQuotaFilter.all()).entities().get(t, s));
                return 0;
            case "alter-client-quotas":
                check(() -> admin.alterClientQuotas(List.of(new ClientQuotaAlteration(
                        new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, "carol")),
                        List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 1048576.0)))),
                        new AlterClientQuotasOptions().validateOnly(true)).all().get(t, s));
                return 0;
            case "alter-quotas":
                throw new Result((short) 0, alterQuotas(admin, a));
            case "describe-quotas":
                throw new Result((short) 0, describeQuotas(admin, a));
            case "describe-scram":
                check(() -> admin.describeUserScramCredentials().all().get(t, s));
                return 0;
            case "alter-scram":
                check(() -> admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("carol",
                        new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "carol-pw"))).all().get(t, s));
                return 0;
            case "describe-quorum":
                check(() -> admin.describeMetadataQuorum().quorumInfo().get(t, s));
                return 0;
            case "update-features":
                // group.version at the level it has: a dry run that changes nothing.
                check(() -> admin.updateFeatures(Map.of("group.version", new FeatureUpdate((short) 1, FeatureUpdate.UpgradeType.UPGRADE)),
                        new UpdateFeaturesOptions().validateOnly(true)).all().get(t, s));
                return 0;
            case "cluster-operations": {
                var ops = check(() -> admin.describeCluster(new DescribeClusterOptions().includeAuthorizedOperations(true))
                        .authorizedOperations().get(t, s));
                return listed(ops != null && !ops.isEmpty());
            }
            case "create-token": {
                check(() -> admin.createDelegationToken(new CreateDelegationTokenOptions()
                        .owner(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, a.get(0)))).delegationToken().get(t, s));
                return 0;
            }
            case "describe-tokens": {
                var tokens = check(() -> admin.describeDelegationToken().delegationTokens().get(t, s));
                return listed(tokens.stream().anyMatch(x -> x.tokenInfo().tokenId().equals(a.get(0))));
            }
            default:
                throw new IllegalArgumentException("no probe " + probe);
        }
    }

    /**
     * Alters client quotas: a.get(0) is "validate" or "alter", then pairs
     * of an entity (quotaEntity) and its ops, space-separated "key=value"
     * to set and "-key" to remove. The detail is each entity's outcome, in
     * the request's order: "ENTITY => ok" or the exception, joined by " | ".
     */
    static String alterQuotas(Admin admin, List<String> a) throws Exception {
        List<ClientQuotaAlteration> alts = new ArrayList<>();
        for (int i = 1; i + 1 < a.size(); i += 2) {
            List<ClientQuotaAlteration.Op> ops = new ArrayList<>();
            for (String op : a.get(i + 1).split(" ")) {
                if (op.startsWith("-")) {
                    ops.add(new ClientQuotaAlteration.Op(op.substring(1), null));
                } else {
                    String[] kv = op.split("=", 2);
                    ops.add(new ClientQuotaAlteration.Op(kv[0], Double.parseDouble(kv[1])));
                }
            }
            alts.add(new ClientQuotaAlteration(quotaEntity(a.get(i)), ops));
        }
        var futures = admin.alterClientQuotas(alts, new AlterClientQuotasOptions().validateOnly(a.get(0).equals("validate"))).values();
        List<String> out = new ArrayList<>();
        for (ClientQuotaAlteration alt : alts) {
            String outcome = "ok";
            try {
                futures.get(alt.entity()).get(TIMEOUT_S, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                outcome = e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage();
            }
            out.add(entityString(alt.entity()) + " => " + outcome);
        }
        return String.join(" | ", out);
    }

    /**
     * Describes client quotas: a.get(0) is "strict" or "loose", then the
     * filter's components, each "type:exact:name", "type:default" or
     * "type:any". The detail is every entity described, sorted, as
     * "ENTITY => key=value ..." joined by " | "; a refusal is the probe's
     * code.
     */
    static String describeQuotas(Admin admin, List<String> a) {
        List<ClientQuotaFilterComponent> comps = new ArrayList<>();
        for (String c : a.subList(1, a.size())) {
            String[] f = c.split(":", 3);
            comps.add(switch (f[1]) {
                case "exact" -> ClientQuotaFilterComponent.ofEntity(f[0], f[2]);
                case "default" -> ClientQuotaFilterComponent.ofDefaultEntity(f[0]);
                default -> ClientQuotaFilterComponent.ofEntityType(f[0]);
            });
        }
        ClientQuotaFilter filter = a.get(0).equals("strict") ? ClientQuotaFilter.containsOnly(comps) : ClientQuotaFilter.contains(comps);
        var described = check(() -> admin.describeClientQuotas(filter).entities().get(TIMEOUT_S, TimeUnit.SECONDS));
        List<String> out = new ArrayList<>();
        described.forEach((entity, values) -> {
            List<String> kv = new ArrayList<>();
            new java.util.TreeMap<>(values).forEach((k, v) ->
                    kv.add(k + "=" + BigDecimal.valueOf(v).stripTrailingZeros().toPlainString()));
            out.add(entityString(entity) + " => " + String.join(" ", kv));
        });
        out.sort(null);
        return String.join(" | ", out);
    }

    /** An entity from "type=name,type=": an empty name is the default. */
    static ClientQuotaEntity quotaEntity(String spec) {
        Map<String, String> entries = new HashMap<>();
        for (String part : spec.split(",")) {
            String[] tn = part.split("=", 2);
            entries.put(tn[0], tn[1].isEmpty() ? null : tn[1]);
        }
        return new ClientQuotaEntity(entries);
    }

    /** An entity as "user=alice,client-id=<default>": user, client-id, ip, then others. */
    static String entityString(ClientQuotaEntity e) {
        List<String> types = new ArrayList<>(List.of(ClientQuotaEntity.USER, ClientQuotaEntity.CLIENT_ID, ClientQuotaEntity.IP));
        e.entries().keySet().stream().filter(t -> !types.contains(t)).sorted().forEach(types::add);
        List<String> parts = new ArrayList<>();
        for (String t : types) {
            if (e.entries().containsKey(t)) {
                String name = e.entries().get(t);
                parts.add(t + "=" + (name == null ? "<default>" : name));
            }
        }
        return String.join(",", parts);
    }

    static ConfigResource resource(String type, String name) {
        return new ConfigResource(switch (type) {
            case "topic" -> ConfigResource.Type.TOPIC;
            case "broker" -> ConfigResource.Type.BROKER;
            case "client-metrics" -> ConfigResource.Type.CLIENT_METRICS;
            case "broker-logger" -> ConfigResource.Type.BROKER_LOGGER;
            default -> throw new IllegalArgumentException("no config resource type " + type);
        }, name);
    }
}
