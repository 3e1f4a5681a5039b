package samsa.compat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Kafka Streams word count under exactly_once_v2 (feature
 * streams-wordcount-eos). Two phases: the app counts the first lines; then it
 * is closed, its local state wiped, and a new instance restores the counts
 * from the changelog and counts the second lines. The output, read with
 * read_committed, must hold exactly the expected final count per word, and
 * the changelog must hold them too.
 *
 * Usage: WordCount BOOTSTRAP RESULTS_FILE
 */
public final class WordCount {
    static final String[] LINES1 = {
        "the quick brown fox jumps over the lazy dog",
        "the dog barks",
        "a fox and a dog",
        "Kafka streams counts words",
        "exactly once means exactly once",
    };
    static final String[] LINES2 = {
        "the fox again",
        "once more the dog",
        "streams of words",
    };

    static String bootstrap;

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        String results = args[1];
        String res = "pass";
        String detail = "";
        try {
            run();
        } catch (Throwable t) {
            res = "fail";
            detail = Compat.describe(t);
            t.printStackTrace();
        }
        System.out.println("streams-wordcount-eos " + res + " " + detail);
        Compat.resultsFile = results;
        Compat.version = Compat.kafkaVersion();
        writeResult(results, res, detail);
        System.exit("pass".equals(res) ? 0 : 1);
    }

    static void writeResult(String file, String res, String detail) throws Exception {
        try (java.io.FileWriter w = new java.io.FileWriter(file, java.nio.charset.StandardCharsets.UTF_8, true)) {
            w.write("{\"client\":\"kafka-streams\",\"version\":" + Compat.json(Compat.kafkaVersion())
                    + ",\"feature\":\"streams-wordcount-eos\",\"result\":" + Compat.json(res) + ",\"detail\":"
                    + Compat.json(detail) + "}\n");
        }
    }

    static Map<String, Long> count(String[]... lineSets) {
        Map<String, Long> m = new TreeMap<>();
        for (String[] lines : lineSets) {
            for (String l : lines) {
                for (String w : l.toLowerCase(Locale.ROOT).split("\\W+")) {
                    if (!w.isEmpty()) {
                        m.merge(w, 1L, Long::sum);
                    }
                }
            }
        }
        return m;
    }

    static KafkaStreams start(String appId, String in, String out, Path stateDir) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        // Short so that a restarted instance is not kept waiting for the old one's session.
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 10000);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 1000);

        StreamsBuilder b = new StreamsBuilder();
        b.stream(in, Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(v -> Arrays.asList(v.toLowerCase(Locale.ROOT).split("\\W+")))
                .filter((k, w) -> !w.isEmpty())
                .groupBy((k, w) -> w, Grouped.with("by-word", Serdes.String(), Serdes.String()))
                .count(Materialized.as("counts"))
                .toStream()
                .to(out, Produced.with(Serdes.String(), Serdes.Long()));
        KafkaStreams ks = new KafkaStreams(b.build(), p);
        ks.setUncaughtExceptionHandler(e -> {
            e.printStackTrace();
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        ks.start();
        return ks;
    }

    static void produce(String topic, String[] lines) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (KafkaProducer<String, String> pr = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            int i = 0;
            for (String l : lines) {
                pr.send(new ProducerRecord<>(topic, "line-" + (i++), l));
            }
            pr.flush();
        }
        // The mutation hook: one more copy of the last line, through a plain producer of its own.
        if (Compat.INJECT_DUPLICATE) {
            try (KafkaProducer<String, String> pr = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
                pr.send(new ProducerRecord<>(topic, "line-" + (lines.length - 1), lines[lines.length - 1])).get();
            }
        }
    }

    /**
     * Reads topic (read_committed) from the start until the latest count per
     * word equals want, then on to the end offsets (the last stable
     * offsets): with exactly_once_v2 and no record cache every count update
     * reaches the output once, so each word's values read must be exactly 1,
     * 2, ..., want. A count above want fails at once.
     */
    static Map<String, Long> awaitCounts(String topic, Map<String, Long> want, long timeoutMs, KafkaStreams ks)
            throws Exception {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        Map<String, Long> latest = new TreeMap<>();
        Map<String, List<Long>> seq = new TreeMap<>();
        try (KafkaConsumer<String, Long> c = new KafkaConsumer<>(p, new StringDeserializer(), new LongDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            c.partitionsFor(topic).forEach(pi -> tps.add(new TopicPartition(topic, pi.partition())));
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (true) {
                poll(c, latest, seq, want);
                if (latest.equals(want)) {
                    // Read on to the end: no count may overshoot, none come twice.
                    Map<TopicPartition, Long> end = c.endOffsets(tps);
                    for (TopicPartition tp : tps) {
                        while (c.position(tp) < end.get(tp)) {
                            Compat.check(System.currentTimeMillis() < deadline, "%s not read to its end offsets %s in %d ms",
                                    topic, end, timeoutMs);
                            poll(c, latest, seq, want);
                        }
                    }
                    if (latest.equals(want)) {
                        for (Map.Entry<String, List<Long>> e : seq.entrySet()) {
                            List<Long> w = new ArrayList<>();
                            for (long i = 1; i <= want.get(e.getKey()); i++) {
                                w.add(i);
                            }
                            Compat.check(e.getValue().equals(w), "%s: the counts of %s read %s, want %s (each update once)",
                                    topic, e.getKey(), e.getValue(), w);
                        }
                        return latest;
                    }
                }
                Compat.check(ks == null || ks.state() != KafkaStreams.State.ERROR
                        && ks.state() != KafkaStreams.State.PENDING_ERROR, "streams app in state %s", ks == null ? null : ks.state());
                Compat.check(System.currentTimeMillis() < deadline, "%s after %d ms: %s, want %s", topic, timeoutMs,
                        latest, want);
            }
        }
    }

    static void poll(KafkaConsumer<String, Long> c, Map<String, Long> latest, Map<String, List<Long>> seq,
            Map<String, Long> want) {
        for (ConsumerRecord<String, Long> r : c.poll(Duration.ofMillis(200))) {
            latest.put(r.key(), r.value());
            seq.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value());
            Long w = want.get(r.key());
            Compat.check(w != null && r.value() <= w, "count of %s reached %d at %s@%d, want %s at most", r.key(),
                    r.value(), r.partition(), r.offset(), w);
        }
    }

    static void awaitRunning(KafkaStreams ks, long timeoutMs) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (ks.state() != KafkaStreams.State.RUNNING) {
            Compat.check(ks.state() != KafkaStreams.State.ERROR && ks.state() != KafkaStreams.State.PENDING_ERROR,
                    "streams app in state %s", ks.state());
            Compat.check(System.currentTimeMillis() < deadline, "streams app not RUNNING in %d ms: %s", timeoutMs,
                    ks.state());
            Thread.sleep(100);
        }
    }

    static void run() throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        String appId = "wordcount-" + run;
        String in = "streams-lines-" + run;
        String out = "streams-counts-" + run;
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin a = Admin.create(ap)) {
            a.createTopics(List.of(new NewTopic(in, 3, (short) 1), new NewTopic(out, 3, (short) 1))).all()
                    .get(30, TimeUnit.SECONDS);
        }
        String stateProp = System.getProperty("samsa.streams.state");
        Path state = stateProp == null ? Files.createTempDirectory("samsa-streams-") : Path.of(stateProp, run);
        Files.createDirectories(state);
        try {
            KafkaStreams ks = start(appId, in, out, state);
            try {
                awaitRunning(ks, 60000);
                produce(in, LINES1);
                awaitCounts(out, count(LINES1), 60000, ks);
            } finally {
                ks.close(Duration.ofSeconds(30));
            }
            // Wipe the local state: the next instance must restore from the changelog.
            ks.cleanUp();
            for (int t = 0; t < 3; t++) {
                Compat.check(!Files.exists(state.resolve(appId).resolve("1_" + t)),
                        "local state of task 1_%d not wiped by cleanUp()", t);
            }
            // The changelog (compacted, written in the same transactions) holds the counts too.
            String changelog = appId + "-counts-changelog";
            try (Admin a = Admin.create(ap)) {
                Set<String> names = a.listTopics().names().get();
                Compat.check(names.contains(changelog) && names.contains(appId + "-by-word-repartition"),
                        "internal topics missing: %s", names);
                TopicDescription d = a.describeTopics(List.of(changelog)).allTopicNames().get().get(changelog);
                Compat.check(d.partitions().size() == 3, "changelog has %d partitions, want 3", d.partitions().size());
                var cfg = a.describeConfigs(List.of(new org.apache.kafka.common.config.ConfigResource(
                        org.apache.kafka.common.config.ConfigResource.Type.TOPIC, changelog))).all().get().values()
                        .iterator().next();
                Compat.check("compact".equals(cfg.get("cleanup.policy").value()), "changelog cleanup.policy %s",
                        cfg.get("cleanup.policy").value());
            }
            Map<String, Long> fromChangelog = readChangelog(changelog);
            Compat.check(fromChangelog.equals(count(LINES1)), "changelog after phase 1: %s, want %s", fromChangelog,
                    count(LINES1));

            // Phase 2: a fresh instance with no local state restores the counts.
            KafkaStreams ks3 = start(appId, in, out, state);
            try {
                awaitRunning(ks3, 60000);
                produce(in, LINES2);
                awaitCounts(out, count(LINES1, LINES2), 60000, ks3);
            } finally {
                ks3.close(Duration.ofSeconds(30));
            }
            Map<String, Long> cl2 = readChangelog(changelog);
            Compat.check(cl2.equals(count(LINES1, LINES2)), "changelog after phase 2: %s, want %s", cl2,
                    count(LINES1, LINES2));
        } finally {
            deleteRecursively(state);
        }
    }

    static Map<String, Long> readChangelog(String topic) throws Exception {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        Map<String, Long> m = new TreeMap<>();
        try (KafkaConsumer<String, Long> c = new KafkaConsumer<>(p, new StringDeserializer(), new LongDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            c.partitionsFor(topic).forEach(pi -> tps.add(new TopicPartition(topic, pi.partition())));
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            long deadline = System.currentTimeMillis() + 20000;
            for (TopicPartition tp : tps) {
                while (c.position(tp) < end.get(tp)) {
                    Compat.check(System.currentTimeMillis() < deadline, "changelog not read to its end in 20 s");
                    for (ConsumerRecord<String, Long> r : c.poll(Duration.ofMillis(200))) {
                        m.put(r.key(), r.value());
                    }
                }
            }
        }
        return m;
    }

    static void deleteRecursively(Path p) throws Exception {
        if (!Files.exists(p)) {
            return;
        }
        try (var s = Files.walk(p)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(x -> x.toFile().delete());
        }
    }
}
