package samsa.compat;

import java.io.FileWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Java client's part of the compatibility suite: every feature of
 * test/compat/README.md through Admin, KafkaProducer and KafkaConsumer.
 *
 * Usage: Compat BOOTSTRAP RESULTS_FILE [FEATURE...]. Appends one JSON result
 * line per feature to RESULTS_FILE; exits 1 if any failed.
 */
public final class Compat {
    static final String CLIENT = "java-client";
    static final long FEATURE_TIMEOUT_S = Long.getLong("compat.timeout", 60);

    static String bootstrap;
    /** Settings every client of the suite gets too: the security part's (Security). */
    static final Properties security = new Properties();
    static String resultsFile;
    static String version = kafkaVersion();
    static boolean anyFailed = false;
    static final String RUN = UUID.randomUUID().toString().substring(0, 8);

    /** A feature's body; it throws on failure. */
    interface Body {
        void run() throws Exception;
    }

    /** The client cannot do the feature: reported as unsupported. */
    static final class Unsupported extends Exception {
        Unsupported(String why) {
            super(why);
        }
    }

    /** The feature passed, with a remark for the detail. */
    static final class Passed extends Exception {
        Passed(String note) {
            super(note);
        }
    }

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        resultsFile = args[1];
        Set<String> only = new HashSet<>(Arrays.asList(args).subList(2, args.length));

        Map<String, Body> features = new java.util.LinkedHashMap<>();
        features.put("create-topic", Compat::createTopic);
        features.put("delete-topic", Compat::deleteTopic);
        for (String codec : new String[] {"none", "gzip", "snappy", "lz4", "zstd"}) {
            features.put("produce-" + codec, () -> produceCodec(codec));
        }
        for (String acks : new String[] {"0", "1", "all"}) {
            features.put("acks-" + acks, () -> acks(acks));
        }
        features.put("keys-headers", Compat::keysHeaders);
        features.put("group-consume-commit", Compat::groupConsumeCommit);
        features.put("rebalance-two-members", () -> rebalance("classic"));
        features.put("rebalance-two-members-kip848", () -> rebalance("consumer"));
        features.put("list-offsets", Compat::listOffsets);
        features.put("reset-offsets", Compat::resetOffsets);
        features.put("describe-configs", Compat::describeConfigs);
        features.put("idempotent-produce", Compat::idempotentProduce);
        features.put("transactions", Compat::transactions);

        runFeatures(features, only);
        System.exit(anyFailed ? 1 : 0);
    }

    /**
     * Runs features in order, each under FEATURE_TIMEOUT_S, and writes one
     * result line each (only: their names, empty for all).
     */
    static void runFeatures(Map<String, Body> features, Set<String> only) throws IOException, InterruptedException {
        ExecutorService pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r);
            t.setDaemon(true);
            return t;
        });
        for (Map.Entry<String, Body> f : features.entrySet()) {
            if (!only.isEmpty() && !only.contains(f.getKey())) {
                continue;
            }
            long start = System.nanoTime();
            Future<?> fut = pool.submit(() -> {
                f.getValue().run();
                return null;
            });
            String res = "pass";
            String detail = "";
            try {
                fut.get(FEATURE_TIMEOUT_S, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                fut.cancel(true);
                res = "fail";
                detail = "timed out after " + FEATURE_TIMEOUT_S + "s";
            } catch (ExecutionException e) {
                Throwable c = e.getCause();
                if (c instanceof Unsupported) {
                    res = "unsupported";
                    detail = c.getMessage();
                } else if (c instanceof Passed) {
                    detail = c.getMessage();
                } else {
                    res = "fail";
                    detail = describe(c);
                }
            }
            long ms = (System.nanoTime() - start) / 1_000_000;
            System.out.printf("%-30s %-11s %6d ms %s%n", f.getKey(), res, ms, detail);
            result(f.getKey(), res, detail);
        }
        pool.shutdownNow();
    }

    /** The kafka-clients version, from the properties file in its jar. */
    static String kafkaVersion() {
        try (var in = KafkaProducer.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (Exception e) {
            return "unknown";
        }
    }

    static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (sb.length() > 0) {
                sb.append(" <- ");
            }
            sb.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
            if (c.getCause() == c) {
                break;
            }
        }
        if (t instanceof AssertionError || t instanceof IllegalStateException) {
            return sb.toString();
        }
        StringWriter sw = new StringWriter();
        t.printStackTrace(new PrintWriter(sw));
        System.err.println(sw);
        return sb.toString();
    }

    static synchronized void result(String feature, String res, String detail) throws IOException {
        if ("fail".equals(res)) {
            anyFailed = true;
        }
        try (FileWriter w = new FileWriter(resultsFile, StandardCharsets.UTF_8, true)) {
            w.write("{\"client\":" + json(CLIENT) + ",\"version\":" + json(version) + ",\"feature\":" + json(feature)
                    + ",\"result\":" + json(res) + ",\"detail\":" + json(detail) + "}\n");
        }
    }

    static String json(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        return sb.append('"').toString();
    }

    // ---------------------------------------------------------------- helpers

    static void check(boolean ok, String fmt, Object... args) {
        if (!ok) {
            throw new AssertionError(String.format(fmt, args));
        }
    }

    static String topicName(String feature) {
        return "java-" + feature + "-" + RUN;
    }

    static Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.putAll(security);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 15000);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30000);
        return Admin.create(p);
    }

    static KafkaProducer<byte[], byte[]> producer(Object... kv) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.putAll(security);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 15000);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 30000);
        for (int i = 0; i < kv.length; i += 2) {
            p.put((String) kv[i], kv[i + 1]);
        }
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    static KafkaConsumer<byte[], byte[]> consumer(Object... kv) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.putAll(security);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30000);
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, 15000);
        for (int i = 0; i < kv.length; i += 2) {
            p.put((String) kv[i], kv[i + 1]);
        }
        return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    static void createTopic(Admin admin, String topic, int partitions, Map<String, String> configs) throws Exception {
        NewTopic nt = new NewTopic(topic, partitions, (short) 1);
        if (configs != null) {
            nt.configs(configs);
        }
        admin.createTopics(List.of(nt)).all().get(30, TimeUnit.SECONDS);
        // Wait until the topic is in metadata with all its partitions led.
        long deadline = System.currentTimeMillis() + 15000;
        while (true) {
            try {
                TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
                if (d.partitions().size() == partitions && d.partitions().stream().allMatch(p -> p.leader() != null)) {
                    awaitEveryBroker(topic, partitions, deadline);
                    return;
                }
            } catch (ExecutionException e) {
                if (System.currentTimeMillis() > deadline) {
                    throw e;
                }
            }
            check(System.currentTimeMillis() < deadline, "topic %s not ready in metadata", topic);
            Thread.sleep(100);
        }
    }

    /**
     * Waits until every bootstrap broker's own metadata has the topic with
     * its partitions led. A cluster's brokers learn of a new topic a moment
     * after CreateTopics answers (in Kafka as in Samsa); a client sent to
     * one that has not yet would fail on the test's account (an acks=0
     * record is lost), so the harness waits as Kafka's own tests wait for
     * all brokers' metadata. A fresh Admin asks its bootstrap broker first.
     * With one broker it returns at once.
     */
    static void awaitEveryBroker(String topic, int partitions, long deadline) throws Exception {
        for (String addr : bootstrap.split(",")) {
            Properties p = new Properties();
            p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, addr);
            p.putAll(security);
            p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000);
            try (Admin one = Admin.create(p)) {
                while (true) {
                    try {
                        TopicDescription d = one.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
                        if (d.partitions().size() == partitions && d.partitions().stream().allMatch(q -> q.leader() != null)) {
                            break;
                        }
                    } catch (ExecutionException e) {
                        // not there yet
                    }
                    check(System.currentTimeMillis() < deadline, "topic %s not ready in %s's metadata", topic, addr);
                    Thread.sleep(50);
                }
            }
        }
    }

    static List<TopicPartition> partitions(String topic, int n) {
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            tps.add(new TopicPartition(topic, i));
        }
        return tps;
    }

    /**
     * The mutation hook for reviewers (test/compat/README.md): with
     * COMPAT_INJECT_DUPLICATE set, after each measured produce a plain
     * producer of its own writes one more copy of the last record of a
     * partition, and the checker is not told. Every consume check must then
     * fail.
     */
    static final boolean INJECT_DUPLICATE = !List.of("", "0").contains(
            System.getenv().getOrDefault("COMPAT_INJECT_DUPLICATE", ""));

    /** The hook: partition null sends by key, as the measured producer did. */
    static void inject(String topic, Integer partition, byte[] key, byte[] value) throws Exception {
        if (!INJECT_DUPLICATE) {
            return;
        }
        try (KafkaProducer<byte[], byte[]> p = producer(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
                ProducerConfig.ACKS_CONFIG, "all")) {
            p.send(new ProducerRecord<>(topic, partition, key, value)).get();
        }
    }

    /** acks=0 gets no answer: waits (up to 10 s) until the end offsets add up to n records. */
    static void settle(String topic, int nparts, int n) throws Exception {
        try (KafkaConsumer<byte[], byte[]> c = consumer()) {
            long deadline = System.currentTimeMillis() + 10000;
            while (c.endOffsets(partitions(topic, nparts)).values().stream().mapToLong(Long::longValue).sum() < n
                    && System.currentTimeMillis() < deadline) {
                Thread.sleep(100);
            }
        }
    }

    /**
     * Reads every partition of the topic from the beginning until the
     * consumer's position (which moves past transaction markers) reaches the
     * end offsets taken first: the high watermarks, the last stable offsets
     * under read_committed. Fails after timeoutMs.
     */
    static List<ConsumerRecord<byte[], byte[]>> readAll(String topic, int nparts, long timeoutMs, Object... kv) {
        try (KafkaConsumer<byte[], byte[]> c = consumer(kv)) {
            List<TopicPartition> tps = partitions(topic, nparts);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            c.assign(tps);
            c.seekToBeginning(tps);
            return pollToEnd(c, end, timeoutMs, "reader of " + topic);
        }
    }

    /**
     * Polls c until its position in every partition of end has reached the
     * end offset (a group member: once it holds the partitions); returns the
     * records; fails after timeoutMs.
     */
    static List<ConsumerRecord<byte[], byte[]>> pollToEnd(KafkaConsumer<byte[], byte[]> c, Map<TopicPartition, Long> end,
            long timeoutMs, String who) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            Map<TopicPartition, String> behind = new TreeMap<>(Comparator.comparing(TopicPartition::partition));
            Set<TopicPartition> mine = c.assignment();
            for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
                long pos = mine.contains(e.getKey()) ? c.position(e.getKey()) : -1;
                if (pos < e.getValue()) {
                    behind.put(e.getKey(), pos + "/" + e.getValue());
                }
            }
            if (behind.isEmpty()) {
                return out;
            }
            check(System.currentTimeMillis() < deadline, "%s read %d records in %d ms, not at the end offsets "
                    + "(position/end): %s", who, out.size(), timeoutMs, behind);
            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                out.add(r);
            }
        }
    }

    /** The values read must be exactly want, as a multiset. */
    static void exactly(Collection<String> want, List<ConsumerRecord<byte[], byte[]>> got, String what) {
        Map<String, Integer> extra = new TreeMap<>();
        Map<String, Integer> missing = new TreeMap<>();
        for (ConsumerRecord<byte[], byte[]> r : got) {
            extra.merge(s(r.value()), 1, Integer::sum);
        }
        for (String w : want) {
            if (extra.merge(w, -1, Integer::sum) == 0) {
                extra.remove(w);
            }
        }
        extra.forEach((k, v) -> {
            if (v < 0) {
                missing.put(k, -v);
            }
        });
        extra.values().removeIf(v -> v < 0);
        check(extra.isEmpty() && missing.isEmpty(), "%s: read %d records, produced %d: missing %s, extra %s", what,
                got.size(), want.size(), missing, extra);
    }

    static Map<TopicPartition, Long> endOffsets(String topic, int nparts) {
        try (KafkaConsumer<byte[], byte[]> c = consumer()) {
            return c.endOffsets(partitions(topic, nparts));
        }
    }

    /** The group's committed offsets must be end (none for an empty partition). */
    static void committedAtEnd(String group, Map<TopicPartition, Long> end) throws Exception {
        try (Admin a = admin()) {
            Map<TopicPartition, OffsetAndMetadata> off = a.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            Map<TopicPartition, Long> got = new HashMap<>();
            off.forEach((tp, om) -> {
                if (end.containsKey(tp) && om != null) {
                    got.put(tp, om.offset());
                }
            });
            Map<TopicPartition, Long> want = new HashMap<>(end);
            want.values().removeIf(v -> v == 0);
            got.entrySet().removeIf(e -> e.getValue() == 0 && !want.containsKey(e.getKey()));
            check(got.equals(want), "group %s committed %s, want the end offsets %s", group, got, want);
        }
    }

    static byte[] b(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    static String s(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    // --------------------------------------------------------------- features

    static final AtomicReference<String> createdTopic = new AtomicReference<>();

    static void createTopic() throws Exception {
        String topic = topicName("create");
        try (Admin a = admin()) {
            createTopic(a, topic, 3, null);
            check(a.listTopics().names().get().contains(topic), "listTopics lacks %s", topic);
            TopicDescription d = a.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            check(d.partitions().size() == 3, "want 3 partitions, got %d", d.partitions().size());
            check(d.topicId() != null && !d.topicId().toString().equals("AAAAAAAAAAAAAAAAAAAAAA"), "no topic id: %s",
                    d.topicId());
            // A second create of the same topic fails with TopicExistsException.
            try {
                a.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get();
                check(false, "second create of %s succeeded", topic);
            } catch (ExecutionException e) {
                check(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException,
                        "second create: want TopicExistsException, got %s", e.getCause());
            }
            createdTopic.set(topic);
        }
    }

    static void deleteTopic() throws Exception {
        String topic = createdTopic.get();
        try (Admin a = admin()) {
            if (topic == null) {
                topic = topicName("delete");
                createTopic(a, topic, 3, null);
            }
            a.deleteTopics(List.of(topic)).all().get(30, TimeUnit.SECONDS);
            long deadline = System.currentTimeMillis() + 15000;
            while (a.listTopics().names().get().contains(topic)) {
                check(System.currentTimeMillis() < deadline, "topic %s still listed 15 s after delete", topic);
                Thread.sleep(100);
            }
            try {
                a.describeTopics(List.of(topic)).allTopicNames().get();
                check(false, "describe of deleted topic %s succeeded", topic);
            } catch (ExecutionException e) {
                check(e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException,
                        "describe deleted: want UnknownTopicOrPartitionException, got %s", e.getCause());
            }
        }
    }

    static void produceCodec(String codec) throws Exception {
        String topic = topicName("produce-" + codec);
        try (Admin a = admin()) {
            createTopic(a, topic, 3, null);
        }
        // Per partition, the values in the order sent.
        Map<Integer, List<String>> sent = new TreeMap<>();
        try (KafkaProducer<byte[], byte[]> p = producer(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec,
                ProducerConfig.LINGER_MS_CONFIG, 20)) {
            List<Future<RecordMetadata>> futs = new ArrayList<>();
            List<String> values = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                String v = "value-" + i + "-" + "x".repeat(50 + i); // compressible, varied sizes
                values.add(v);
                futs.add(p.send(new ProducerRecord<>(topic, b("key-" + (i % 10)), b(v))));
            }
            p.flush();
            for (int i = 0; i < futs.size(); i++) {
                RecordMetadata md = futs.get(i).get();
                sent.computeIfAbsent(md.partition(), k -> new ArrayList<>()).add(values.get(i));
            }
        }
        check(sent.size() > 1, "all 100 keyed records went to one partition: %s", sent.keySet());
        inject(topic, null, b("key-9"), b("value-99-" + "x".repeat(149)));
        List<ConsumerRecord<byte[], byte[]>> got = readAll(topic, 3, 20000);
        Map<Integer, List<String>> read = new TreeMap<>();
        for (ConsumerRecord<byte[], byte[]> r : got) {
            read.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(s(r.value()));
            check(s(r.key()).startsWith("key-"), "bad key %s", s(r.key()));
        }
        check(got.size() == 100, "read %d records to the end offsets, produced 100", got.size());
        check(read.equals(sent), "records read differ from those sent (per partition order)");
        // Keys are hashed with murmur2: the same key always on the same partition.
        Map<String, Integer> keyPart = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : got) {
            Integer prev = keyPart.put(s(r.key()), r.partition());
            check(prev == null || prev == r.partition(), "key %s on two partitions", s(r.key()));
        }
    }

    static void acks(String acks) throws Exception {
        String topic = topicName("acks-" + acks);
        try (Admin a = admin()) {
            createTopic(a, topic, 1, null);
        }
        int n = 200;
        try (KafkaProducer<byte[], byte[]> p = producer(ProducerConfig.ACKS_CONFIG, acks,
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "all".equals(acks))) {
            List<Future<RecordMetadata>> futs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                futs.add(p.send(new ProducerRecord<>(topic, b("k" + i), b("v" + i))));
            }
            p.flush();
            for (int i = 0; i < n; i++) {
                RecordMetadata md = futs.get(i).get();
                if (!"0".equals(acks)) {
                    check(md.offset() == i, "record %d got offset %d", i, md.offset());
                } else {
                    check(md.offset() == -1, "acks=0 record got offset %d, want -1 (unknown)", md.offset());
                }
            }
        }
        if ("0".equals(acks)) {
            settle(topic, 1, n);
        }
        inject(topic, 0, b("k" + (n - 1)), b("v" + (n - 1)));
        List<ConsumerRecord<byte[], byte[]>> got = readAll(topic, 1, 20000);
        check(got.size() == n, "read %d records to the end offset, produced %d", got.size(), n);
        for (int i = 0; i < n; i++) {
            check(("v" + i).equals(s(got.get(i).value())) && got.get(i).offset() == i, "record %d: offset %d value %s", i,
                    got.get(i).offset(), s(got.get(i).value()));
        }
    }

    static void keysHeaders() throws Exception {
        String topic = topicName("keys-headers");
        try (Admin a = admin()) {
            createTopic(a, topic, 1, null);
        }
        byte[] binary = new byte[256];
        for (int i = 0; i < 256; i++) {
            binary[i] = (byte) i;
        }
        List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
        recs.add(new ProducerRecord<>(topic, 0, b("k0"), b("v0"),
                List.of(new RecordHeader("empty", new byte[0]), new RecordHeader("bin", binary))));
        recs.add(new ProducerRecord<>(topic, 0, b("tombstone"), null)); // null value
        recs.add(new ProducerRecord<>(topic, 0, null, b("no key")));    // null key
        recs.add(new ProducerRecord<>(topic, 0, b(""), b("")));         // empty key and value
        recs.add(new ProducerRecord<>(topic, 0, b("k4"), b("v4"),
                List.of(new RecordHeader("null", (byte[]) null), new RecordHeader("dup", b("1")),
                        new RecordHeader("dup", b("2")), new RecordHeader("ünïcödé", b("✓")))));
        recs.add(new ProducerRecord<>(topic, 0, binary, binary));       // binary key and value
        try (KafkaProducer<byte[], byte[]> p = producer()) {
            for (ProducerRecord<byte[], byte[]> r : recs) {
                p.send(r);
            }
            p.flush();
        }
        inject(topic, 0, binary, binary);
        List<ConsumerRecord<byte[], byte[]>> got = readAll(topic, 1, 20000);
        check(got.size() == recs.size(), "read %d records to the end offset, produced %d", got.size(), recs.size());
        for (int i = 0; i < recs.size(); i++) {
            ProducerRecord<byte[], byte[]> want = recs.get(i);
            ConsumerRecord<byte[], byte[]> r = got.get(i);
            check(Arrays.equals(want.key(), r.key()), "record %d: key %s, want %s", i, Arrays.toString(r.key()),
                    Arrays.toString(want.key()));
            check(Arrays.equals(want.value(), r.value()), "record %d: value %s, want %s", i, Arrays.toString(r.value()),
                    Arrays.toString(want.value()));
            Header[] wh = want.headers().toArray();
            Header[] gh = r.headers().toArray();
            check(wh.length == gh.length, "record %d: %d headers, want %d", i, gh.length, wh.length);
            for (int j = 0; j < wh.length; j++) {
                check(wh[j].key().equals(gh[j].key()) && Arrays.equals(wh[j].value(), gh[j].value()),
                        "record %d header %d: %s=%s, want %s=%s", i, j, gh[j].key(), Arrays.toString(gh[j].value()),
                        wh[j].key(), Arrays.toString(wh[j].value()));
            }
        }
    }

    /** Sends prefix+i keyed k+i for i in [from, to) and returns the values sent. */
    static List<String> produceValues(String topic, String prefix, int from, int to) throws Exception {
        List<String> sent = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = producer()) {
            for (int i = from; i < to; i++) {
                p.send(new ProducerRecord<>(topic, b("k" + i), b(prefix + i)));
                sent.add(prefix + i);
            }
            p.flush();
        }
        inject(topic, null, b("k" + (to - 1)), b(prefix + (to - 1)));
        return sent;
    }

    /** A group member subscribed to topic, its partitions read to the end offsets. */
    static List<ConsumerRecord<byte[], byte[]>> memberReadsToEnd(KafkaConsumer<byte[], byte[]> c, String topic,
            Map<TopicPartition, Long> end, String who) {
        c.subscribe(List.of(topic));
        return pollToEnd(c, end, 30000, who);
    }

    static void groupConsumeCommit() throws Exception {
        String topic = topicName("group-commit");
        String group = topic + "-g";
        try (Admin a = admin()) {
            createTopic(a, topic, 3, null);
        }
        List<String> first = produceValues(topic, "a", 0, 30);
        Map<TopicPartition, Long> end = endOffsets(topic, 3);
        try (KafkaConsumer<byte[], byte[]> c = consumer(ConsumerConfig.GROUP_ID_CONFIG, group)) {
            List<ConsumerRecord<byte[], byte[]>> got = memberReadsToEnd(c, topic, end, "first member");
            exactly(first, got, "first member");
            c.commitSync();
        }
        committedAtEnd(group, end);
        List<String> second = produceValues(topic, "b", 30, 50);
        Map<TopicPartition, Long> end2 = endOffsets(topic, 3);
        try (KafkaConsumer<byte[], byte[]> c = consumer(ConsumerConfig.GROUP_ID_CONFIG, group)) {
            List<ConsumerRecord<byte[], byte[]>> got = memberReadsToEnd(c, topic, end2, "second member");
            // Nothing before the commit may come again.
            exactly(second, got, "second member");
            c.commitSync();
        }
        committedAtEnd(group, end2);
    }

    static void rebalance(String protocol) throws Exception {
        String topic = topicName("rebalance-" + protocol);
        String group = topic + "-g";
        int nparts = 4;
        try (Admin a = admin()) {
            createTopic(a, topic, nparts, null);
        }
        int n = 400;
        Object[] cfg = {ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol,
                ConsumerConfig.CLIENT_ID_CONFIG, ""};
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean stop1 = new AtomicBoolean(); // member 1 leaves
        Map<Integer, Set<TopicPartition>> current = new ConcurrentHashMap<>();
        AtomicBoolean produced = new AtomicBoolean();
        Map<Integer, Set<TopicPartition>> assigned = new ConcurrentHashMap<>();
        Map<Integer, List<ConsumerRecord<byte[], byte[]>>> read = new ConcurrentHashMap<>();
        Map<Integer, Throwable> errors = new ConcurrentHashMap<>();
        List<Thread> threads = new ArrayList<>();
        for (int m = 0; m < 2; m++) {
            final int member = m;
            read.put(member, Collections.synchronizedList(new ArrayList<>()));
            assigned.put(member, Set.of());
            current.put(member, Set.of());
            Object[] mcfg = cfg.clone();
            mcfg[5] = "member-" + member;
            Thread t = new Thread(() -> {
                try (KafkaConsumer<byte[], byte[]> c = consumer(mcfg)) {
                    c.subscribe(List.of(topic));
                    while (!stop.get() && !(member == 1 && stop1.get())) {
                        ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(100));
                        for (ConsumerRecord<byte[], byte[]> r : rs) {
                            read.get(member).add(r);
                        }
                        if (!produced.get()) {
                            assigned.put(member, new HashSet<>(c.assignment()));
                        }
                        current.put(member, new HashSet<>(c.assignment()));
                        if (!rs.isEmpty()) {
                            c.commitSync();
                        }
                    }
                } catch (Throwable e) {
                    errors.put(member, e);
                }
            });
            t.setDaemon(true);
            threads.add(t);
            t.start();
            if (m == 0) {
                // The first member owns everything first, then the second joins.
                long d = System.currentTimeMillis() + 30000;
                while (assigned.get(0).size() != nparts && errors.isEmpty()) {
                    check(System.currentTimeMillis() < d, "first member not assigned all %d partitions in 30 s: %s",
                            nparts, assigned.get(0));
                    Thread.sleep(50);
                }
            }
        }
        try {
            long deadline = System.currentTimeMillis() + 40000;
            while (true) {
                if (!errors.isEmpty()) {
                    throw new AssertionError("member failed: " + describe(errors.values().iterator().next()));
                }
                Set<TopicPartition> a0 = assigned.get(0), a1 = assigned.get(1);
                Set<TopicPartition> union = new HashSet<>(a0);
                union.addAll(a1);
                if (!a0.isEmpty() && !a1.isEmpty() && union.size() == nparts && a0.size() + a1.size() == nparts) {
                    break;
                }
                check(System.currentTimeMillis() < deadline,
                        "partitions not split between two members in 40 s: member0=%s member1=%s", a0, a1);
                Thread.sleep(50);
            }
            Thread.sleep(300); // let both settle on the assignment
            try (Admin a = admin()) {
                var gd = a.describeConsumerGroups(List.of(group)).all().get().get(group);
                org.apache.kafka.common.GroupType want = protocol.equals("consumer")
                        ? org.apache.kafka.common.GroupType.CONSUMER : org.apache.kafka.common.GroupType.CLASSIC;
                check(gd.type() == want, "group type %s, want %s", gd.type(), want);
                check(gd.members().size() == 2, "described group has %d members, want 2", gd.members().size());
                Set<TopicPartition> described = new HashSet<>();
                gd.members().forEach(m -> described.addAll(m.assignment().topicPartitions()));
                check(described.size() == nparts, "described assignment %s", described);
            }
            produced.set(true);
            Set<TopicPartition> a0 = assigned.get(0), a1 = assigned.get(1);
            try (KafkaProducer<byte[], byte[]> p = producer()) {
                for (int i = 0; i < n; i++) {
                    p.send(new ProducerRecord<>(topic, i % nparts, b("k" + i), b("v" + i)));
                }
                p.flush();
            }
            inject(topic, 0, b("k" + (n - nparts)), b("v" + (n - nparts)));
            Map<TopicPartition, Long> end = endOffsets(topic, nparts);
            awaitGroupAtEnd(read, end, errors, 0);
            awaitCommitted(group, end, errors);
            Set<String> all = new HashSet<>();
            for (int m = 0; m < 2; m++) {
                Set<TopicPartition> mine = m == 0 ? a0 : a1;
                for (ConsumerRecord<byte[], byte[]> r : read.get(m)) {
                    check(mine.contains(new TopicPartition(r.topic(), r.partition())),
                            "member %d read partition %d outside its assignment %s", m, r.partition(), mine);
                    check(all.add(s(r.value())), "record %s read twice", s(r.value()));
                }
            }
            check(all.size() == n, "members read %d distinct records, want %d", all.size(), n);
            check(!read.get(0).isEmpty() && !read.get(1).isEmpty(), "a member read nothing: %d, %d",
                    read.get(0).size(), read.get(1).size());

            // Member 1 leaves: member 0 gets every partition and reads what follows.
            stop1.set(true);
            threads.get(1).join(15000);
            deadline = System.currentTimeMillis() + 30000;
            while (current.get(0).size() != nparts) {
                check(errors.isEmpty(), "member failed: %s", errors.isEmpty() ? "" : describe(errors.values().iterator().next()));
                check(System.currentTimeMillis() < deadline, "after member 1 left, member 0 has %s, not all %d partitions",
                        current.get(0), nparts);
                Thread.sleep(50);
            }
            int before = read.get(0).size();
            try (KafkaProducer<byte[], byte[]> p = producer()) {
                for (int i = n; i < n + 100; i++) {
                    p.send(new ProducerRecord<>(topic, i % nparts, b("k" + i), b("v" + i)));
                }
                p.flush();
            }
            inject(topic, 0, b("k" + (n + 100 - nparts)), b("v" + (n + 100 - nparts)));
            Map<TopicPartition, Long> end2 = endOffsets(topic, nparts);
            awaitGroupAtEnd(read, end2, errors, before);
            awaitCommitted(group, end2, errors);
            List<ConsumerRecord<byte[], byte[]>> after = new ArrayList<>(read.get(0).subList(before, read.get(0).size()));
            Set<String> vals = new HashSet<>();
            after.forEach(r -> vals.add(s(r.value())));
            check(after.size() == 100 && vals.size() == 100 && after.stream().allMatch(r -> Integer.parseInt(s(r.value()).substring(1)) >= n),
                    "after member 1 left, member 0 read %d records (%d distinct), want the 100 new ones", after.size(), vals.size());
        } finally {
            stop.set(true);
            for (Thread t : threads) {
                t.join(15000);
            }
        }
    }

    /**
     * Waits (30 s) until the members' records (from index from of member 0's
     * on) reach the end offsets in every partition: the group's position is
     * past the last record read, the topic holding no transaction markers.
     */
    static void awaitGroupAtEnd(Map<Integer, List<ConsumerRecord<byte[], byte[]>>> read, Map<TopicPartition, Long> end,
            Map<Integer, Throwable> errors, int from) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 30000;
        while (true) {
            check(errors.isEmpty(), "member failed: %s", errors.isEmpty() ? "" : describe(errors.values().iterator().next()));
            Map<TopicPartition, Long> pos = new HashMap<>();
            for (Map.Entry<Integer, List<ConsumerRecord<byte[], byte[]>>> m : read.entrySet()) {
                List<ConsumerRecord<byte[], byte[]>> rs;
                synchronized (m.getValue()) {
                    rs = new ArrayList<>(m.getValue());
                }
                for (ConsumerRecord<byte[], byte[]> r : rs) {
                    pos.merge(new TopicPartition(r.topic(), r.partition()), r.offset() + 1, Math::max);
                }
            }
            Map<TopicPartition, String> behind = new TreeMap<>(Comparator.comparing(TopicPartition::partition));
            end.forEach((tp, e) -> {
                long p = pos.getOrDefault(tp, 0L);
                if (p < e) {
                    behind.put(tp, p + "/" + e);
                }
            });
            if (behind.isEmpty()) {
                return;
            }
            check(System.currentTimeMillis() < deadline, "members not at the end offsets in 30 s (position/end): %s; "
                    + "read %d + %d", behind, read.get(0).size() - from, read.get(1).size());
            Thread.sleep(50);
        }
    }

    /** Waits (15 s) until the group's committed offsets are the end offsets: the members commit as they poll. */
    static void awaitCommitted(String group, Map<TopicPartition, Long> end, Map<Integer, Throwable> errors) throws Exception {
        long deadline = System.currentTimeMillis() + 15000;
        while (true) {
            check(errors.isEmpty(), "member failed: %s", errors.isEmpty() ? "" : describe(errors.values().iterator().next()));
            try {
                committedAtEnd(group, end);
                return;
            } catch (AssertionError e) {
                if (System.currentTimeMillis() > deadline) {
                    throw e;
                }
            }
            Thread.sleep(100);
        }
    }

    static void listOffsets() throws Exception {
        String topic = topicName("list-offsets");
        TopicPartition tp = new TopicPartition(topic, 0);
        long base = System.currentTimeMillis() - 3_600_000; // an hour ago
        try (Admin a = admin()) {
            createTopic(a, topic, 1, null);
            // Empty partition: earliest = latest = 0, max timestamp has no offset.
            ListOffsetsResult.ListOffsetsResultInfo e0 = a.listOffsets(Map.of(tp, OffsetSpec.earliest())).partitionResult(tp).get();
            ListOffsetsResult.ListOffsetsResultInfo l0 = a.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get();
            check(e0.offset() == 0 && l0.offset() == 0, "empty partition: earliest %d latest %d, want 0 0", e0.offset(),
                    l0.offset());
            try (KafkaProducer<byte[], byte[]> p = producer(ProducerConfig.LINGER_MS_CONFIG, 0)) {
                for (int i = 0; i < 10; i++) {
                    long ts = i == 5 ? base + 100_000 : base + i * 1000L;
                    p.send(new ProducerRecord<>(topic, 0, ts, b("k" + i), b("v" + i))).get();
                }
            }
            Map<String, OffsetSpec> specs = new java.util.LinkedHashMap<>();
            specs.put("earliest", OffsetSpec.earliest());
            specs.put("latest", OffsetSpec.latest());
            specs.put("max-timestamp", OffsetSpec.maxTimestamp());
            specs.put("ts=base+3500", OffsetSpec.forTimestamp(base + 3500));
            specs.put("ts=base", OffsetSpec.forTimestamp(base));
            specs.put("ts=base+50000", OffsetSpec.forTimestamp(base + 50_000));
            specs.put("ts=base+200000", OffsetSpec.forTimestamp(base + 200_000));
            Map<String, Long> want = Map.of("earliest", 0L, "latest", 10L, "max-timestamp", 5L, "ts=base+3500", 4L,
                    "ts=base", 0L, "ts=base+50000", 5L, "ts=base+200000", -1L);
            List<String> bad = new ArrayList<>();
            for (Map.Entry<String, OffsetSpec> s : specs.entrySet()) {
                ListOffsetsResult.ListOffsetsResultInfo info = a.listOffsets(Map.of(tp, s.getValue())).partitionResult(tp).get();
                if (info.offset() != want.get(s.getKey())) {
                    bad.add(s.getKey() + "=" + info.offset() + " (want " + want.get(s.getKey()) + ")");
                }
                if (s.getKey().equals("max-timestamp") && info.timestamp() != base + 100_000) {
                    bad.add("max-timestamp timestamp=" + info.timestamp() + " (want " + (base + 100_000) + ")");
                }
                if (s.getKey().equals("ts=base+3500") && info.timestamp() != base + 4000) {
                    bad.add("ts=base+3500 timestamp=" + info.timestamp() + " (want " + (base + 4000) + ")");
                }
            }
            check(bad.isEmpty(), "admin listOffsets: %s", bad);
        }
        // The consumer's offsetsForTimes, beginningOffsets and endOffsets.
        try (KafkaConsumer<byte[], byte[]> c = consumer()) {
            Map<TopicPartition, OffsetAndTimestamp> ot = c.offsetsForTimes(Map.of(tp, base + 2500));
            check(ot.get(tp) != null && ot.get(tp).offset() == 3 && ot.get(tp).timestamp() == base + 3000,
                    "consumer offsetsForTimes(base+2500) = %s, want offset 3", ot.get(tp));
            Map<TopicPartition, OffsetAndTimestamp> none = c.offsetsForTimes(Map.of(tp, base + 500_000));
            check(none.get(tp) == null, "consumer offsetsForTimes past the end = %s, want null", none.get(tp));
            check(c.beginningOffsets(List.of(tp)).get(tp) == 0, "beginningOffsets %s", c.beginningOffsets(List.of(tp)));
            check(c.endOffsets(List.of(tp)).get(tp) == 10, "endOffsets %s", c.endOffsets(List.of(tp)));
        }
    }

    static void resetOffsets() throws Exception {
        String topic = topicName("reset-offsets");
        String group = topic + "-g";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin a = admin()) {
            createTopic(a, topic, 1, null);
            List<String> sent = produceValues(topic, "v", 0, 20);
            Map<TopicPartition, Long> end = endOffsets(topic, 1);
            try (KafkaConsumer<byte[], byte[]> c = consumer(ConsumerConfig.GROUP_ID_CONFIG, group)) {
                exactly(sent, memberReadsToEnd(c, topic, end, "first member"), "first member");
                c.commitSync();
            }
            Map<TopicPartition, OffsetAndMetadata> before = a.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get();
            check(before.get(tp) != null && before.get(tp).offset() == 20, "committed before reset: %s, want 20",
                    before);
            a.alterConsumerGroupOffsets(group, Map.of(tp, new OffsetAndMetadata(5, "reset by compat"))).all().get();
            Map<TopicPartition, OffsetAndMetadata> after = a.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get();
            check(after.get(tp) != null && after.get(tp).offset() == 5 && "reset by compat".equals(after.get(tp).metadata()),
                    "committed after reset: %s, want 5 with metadata", after);
            try (KafkaConsumer<byte[], byte[]> c = consumer(ConsumerConfig.GROUP_ID_CONFIG, group)) {
                List<ConsumerRecord<byte[], byte[]>> got = memberReadsToEnd(c, topic, end, "next member");
                check(!got.isEmpty() && got.get(0).offset() == 5, "next member started at offset %s, want 5",
                        got.isEmpty() ? "none" : got.get(0).offset());
                exactly(sent.subList(5, 20), got, "next member");
            }
            // Deleting the group's offsets (the member has left) works too.
            a.deleteConsumerGroupOffsets(group, Set.of(tp)).all().get();
            Map<TopicPartition, OffsetAndMetadata> gone = a.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get();
            check(gone.get(tp) == null, "offsets after deleteConsumerGroupOffsets: %s", gone);
        }
    }

    static ConfigEntry entry(Admin a, ConfigResource r, String name) throws Exception {
        Config c = a.describeConfigs(List.of(r)).all().get().get(r);
        return c.get(name);
    }

    static void describeConfigs() throws Exception {
        String topic = topicName("configs");
        ConfigResource tr = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin a = admin()) {
            createTopic(a, topic, 1, Map.of("retention.ms", "123456789"));
            ConfigEntry e = entry(a, tr, "retention.ms");
            check(e != null && "123456789".equals(e.value()) && e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG,
                    "retention.ms after create: %s, want 123456789 DYNAMIC_TOPIC_CONFIG", e);
            ConfigEntry cp = entry(a, tr, "cleanup.policy");
            check(cp != null && "delete".equals(cp.value()) && cp.source() == ConfigEntry.ConfigSource.DEFAULT_CONFIG,
                    "cleanup.policy default: %s, want delete DEFAULT_CONFIG", cp);
            ConfigEntry seg = entry(a, tr, "segment.bytes");
            check(seg != null && seg.value() != null, "segment.bytes not described: %s", seg);

            a.incrementalAlterConfigs(Map.of(tr, List.of(
                    new AlterConfigOp(new ConfigEntry("max.message.bytes", "2000000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("retention.ms", ""), AlterConfigOp.OpType.DELETE),
                    new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.APPEND))))
                    .all().get();
            ConfigEntry mm = entry(a, tr, "max.message.bytes");
            check(mm != null && "2000000".equals(mm.value()) && mm.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG,
                    "max.message.bytes after SET: %s", mm);
            ConfigEntry rm = entry(a, tr, "retention.ms");
            check(rm != null && "604800000".equals(rm.value()) && rm.source() == ConfigEntry.ConfigSource.DEFAULT_CONFIG,
                    "retention.ms after DELETE: %s, want the default 604800000", rm);
            ConfigEntry cp2 = entry(a, tr, "cleanup.policy");
            check(cp2 != null && "delete,compact".equals(cp2.value()), "cleanup.policy after APPEND compact: %s, want delete,compact", cp2);

            // An invalid value is refused.
            try {
                a.incrementalAlterConfigs(Map.of(tr, List.of(new AlterConfigOp(
                        new ConfigEntry("retention.ms", "not-a-number"), AlterConfigOp.OpType.SET)))).all().get();
                check(false, "retention.ms=not-a-number accepted");
            } catch (ExecutionException ex) {
                check(ex.getCause() instanceof org.apache.kafka.common.errors.InvalidConfigurationException
                        || ex.getCause() instanceof org.apache.kafka.common.errors.InvalidRequestException,
                        "invalid value: want InvalidConfigurationException, got %s", ex.getCause());
            }

            // The broker's configs.
            String node = String.valueOf(a.describeCluster().nodes().get().iterator().next().id());
            ConfigResource br = new ConfigResource(ConfigResource.Type.BROKER, node);
            Config bc = a.describeConfigs(List.of(br)).all().get().get(br);
            ConfigEntry nt = bc.get("num.partitions");
            check(nt != null && nt.value() != null, "broker %s num.partitions not described", node);
            check(bc.entries().size() > 20, "broker %s has only %d configs described", node, bc.entries().size());
        }
    }

    static void idempotentProduce() throws Exception {
        String topic = topicName("idempotent");
        try (Admin a = admin()) {
            createTopic(a, topic, 3, null);
        }
        int n = 300;
        try (KafkaProducer<byte[], byte[]> p = producer(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5,
                ProducerConfig.LINGER_MS_CONFIG, 0, ProducerConfig.BATCH_SIZE_CONFIG, 200)) {
            List<Future<RecordMetadata>> futs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                futs.add(p.send(new ProducerRecord<>(topic, i % 3, b("k" + i), b("v" + i))));
            }
            p.flush();
            for (Future<RecordMetadata> f : futs) {
                f.get();
            }
        }
        inject(topic, (n - 1) % 3, b("k" + (n - 1)), b("v" + (n - 1)));
        List<ConsumerRecord<byte[], byte[]>> got = readAll(topic, 3, 20000);
        check(got.size() == n, "read %d records to the end offsets, produced %d", got.size(), n);
        Map<Integer, Integer> next = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : got) {
            int i = Integer.parseInt(s(r.value()).substring(1));
            int want = next.getOrDefault(r.partition(), r.partition());
            check(i == want, "partition %d: got v%d, want v%d (order or duplicate)", r.partition(), i, want);
            next.put(r.partition(), i + 3);
        }
    }

    static void transactions() throws Exception {
        String topic = topicName("txn");
        try (Admin a = admin()) {
            createTopic(a, topic, 2, null);
        }
        try (KafkaProducer<byte[], byte[]> p = producer(ProducerConfig.TRANSACTIONAL_ID_CONFIG, topic + "-tid",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true)) {
            p.initTransactions();
            p.beginTransaction();
            for (int i = 0; i < 10; i++) {
                p.send(new ProducerRecord<>(topic, i % 2, b("k" + i), b("committed-" + i)));
            }
            p.commitTransaction();
            p.beginTransaction();
            for (int i = 0; i < 7; i++) {
                p.send(new ProducerRecord<>(topic, i % 2, b("k" + i), b("aborted-" + i)));
            }
            p.flush();
            p.abortTransaction();
            p.beginTransaction();
            for (int i = 0; i < 4; i++) {
                p.send(new ProducerRecord<>(topic, i % 2, b("k" + i), b("committed2-" + i)));
            }
            p.commitTransaction();
        }
        inject(topic, 1, b("k3"), b("committed2-3"));
        checkCommittedReads(topic);
        // An open transaction holds read_committed at the last stable offset;
        // offsets sent to a transaction count only when it commits.
        TopicPartition p0 = new TopicPartition(topic, 0);
        String group = topic + "-g";
        try (KafkaProducer<byte[], byte[]> p = producer(ProducerConfig.TRANSACTIONAL_ID_CONFIG, topic + "-tid2");
             KafkaConsumer<byte[], byte[]> rcc = consumer(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
             KafkaConsumer<byte[], byte[]> ruc = consumer(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
             Admin a = admin()) {
            p.initTransactions();
            p.beginTransaction();
            for (int i = 0; i < 3; i++) {
                p.send(new ProducerRecord<>(topic, 0, b("k"), b("open-" + i)));
            }
            p.flush();
            long lso = rcc.endOffsets(List.of(p0)).get(p0), hw = ruc.endOffsets(List.of(p0)).get(p0);
            check(lso == 14 && hw == 17, "with a transaction open: read_committed end %d (want 14, the LSO), "
                    + "read_uncommitted end %d (want 17)", lso, hw);
            p.sendOffsetsToTransaction(Map.of(p0, new OffsetAndMetadata(7)),
                    new org.apache.kafka.clients.consumer.ConsumerGroupMetadata(group));
            p.abortTransaction();
            Map<TopicPartition, OffsetAndMetadata> off = a.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            check(off.get(p0) == null, "offsets of an aborted transaction were committed: %s", off);
            p.beginTransaction();
            p.send(new ProducerRecord<>(topic, 1, b("k"), b("committed3")));
            p.sendOffsetsToTransaction(Map.of(p0, new OffsetAndMetadata(9)),
                    new org.apache.kafka.clients.consumer.ConsumerGroupMetadata(group));
            p.commitTransaction();
            off = a.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            check(off.get(p0) != null && off.get(p0).offset() == 9, "offsets sent to a committed transaction: %s, want 9", off);
            long lso2 = rcc.endOffsets(List.of(p0)).get(p0);
            check(lso2 == 18, "read_committed end after the abort %d, want 18 (3 aborted records + marker)", lso2);
        }
    }

    static void checkCommittedReads(String topic) {
        List<ConsumerRecord<byte[], byte[]>> rc = readAll(topic, 2, 20000,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<ConsumerRecord<byte[], byte[]>> ru = readAll(topic, 2, 20000,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        List<String> committed = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            committed.add("committed-" + i);
        }
        for (int i = 0; i < 4; i++) {
            committed.add("committed2-" + i);
        }
        exactly(committed, rc, "read_committed");
        List<String> all = new ArrayList<>(committed);
        for (int i = 0; i < 7; i++) {
            all.add("aborted-" + i);
        }
        exactly(all, ru, "read_uncommitted");
        List<String> rcv = new ArrayList<>();
        rc.forEach(r -> rcv.add(s(r.value())));
        Collections.sort(rcv);
        check(rc.size() == 14 && rcv.stream().allMatch(v -> v.startsWith("committed")),
                "read_committed read %d records %s, want the 14 committed", rc.size(), rcv);
        long aborted = ru.stream().filter(r -> s(r.value()).startsWith("aborted")).count();
        check(ru.size() == 21 && aborted == 7, "read_uncommitted read %d records (%d aborted), want 21 (7 aborted)",
                ru.size(), aborted);
        // Offsets count the transaction markers: 3 markers per partition.
        try (KafkaConsumer<byte[], byte[]> c = consumer(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed")) {
            Map<TopicPartition, Long> end = c.endOffsets(partitions(topic, 2));
            check(end.get(new TopicPartition(topic, 0)) == 5 + 4 + 2 + 3 && end.get(new TopicPartition(topic, 1)) == 5 + 3 + 2 + 3,
                    "read_committed end offsets %s, want 14 and 13 (records plus 3 markers each)", end);
        }
    }
}
