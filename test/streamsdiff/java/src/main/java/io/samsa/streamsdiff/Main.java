package io.samsa.streamsdiff;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;

/**
 * The reference side of Samsa's streams differential test
 * (test/streamsdiff, docs/streams/DIFFERENTIAL.md): the six topologies,
 * each its own KafkaStreams instance with its own application.id
 * (prefix + name), reading the shared input topics and writing
 * prefix + output topic. Serdes are explicit everywhere: no default serde
 * is configured, so a topology that leaned on one would fail to start.
 *
 * Usage: Main BOOTSTRAP PREFIX STATE_DIR DESCRIBE_DIR
 *
 * Prints "RUNNING app-id" when an application reaches RUNNING and "ERROR
 * app-id" when one fails; runs until SIGTERM, then closes every
 * application.
 */
public final class Main {
    private static final Serde<String> S = Serdes.String();
    private static final Serde<Long> L = Serdes.Long();

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: Main BOOTSTRAP PREFIX STATE_DIR DESCRIBE_DIR");
            System.exit(2);
        }
        String bootstrap = args[0];
        String prefix = args[1];
        Path stateDir = Path.of(args[2]);
        Path describeDir = Path.of(args[3]);
        Files.createDirectories(describeDir);

        Map<String, Topology> apps = new LinkedHashMap<>();
        apps.put("wordcount", wordCount(prefix));
        apps.put("windowed", windowed(prefix));
        apps.put("session", session(prefix));
        apps.put("stream-stream", streamStream(prefix));
        apps.put("stream-table", streamTable(prefix));
        apps.put("fk", foreignKey(prefix));

        List<KafkaStreams> running = new ArrayList<>();
        for (Map.Entry<String, Topology> app : apps.entrySet()) {
            String appId = prefix + app.getKey();
            Files.writeString(describeDir.resolve(app.getKey() + ".txt"), app.getValue().describe().toString());
            KafkaStreams streams = new KafkaStreams(app.getValue(), config(bootstrap, appId, stateDir));
            streams.setStateListener((now, before) -> {
                if (now == KafkaStreams.State.RUNNING) {
                    say("RUNNING " + appId);
                } else if (now == KafkaStreams.State.ERROR) {
                    say("ERROR " + appId);
                }
            });
            streams.setUncaughtExceptionHandler(e -> {
                e.printStackTrace();
                say("ERROR " + appId + " " + e);
                return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
            });
            streams.cleanUp();
            running.add(streams);
        }

        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (KafkaStreams streams : running) {
                streams.close(Duration.ofSeconds(10));
            }
            closed.countDown();
        }));
        for (KafkaStreams streams : running) {
            streams.start();
        }
        closed.await();
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /**
     * The configuration every application shares. The choices that make
     * the processing order deterministic (docs/streams/DIFFERENTIAL.md):
     * no record cache (every update is forwarded, none is folded into a
     * later one depending on when the cache flushed), one stream thread,
     * and max.task.idle.ms=0: a task whose partitions are known to hold
     * unfetched records waits for them, so it always picks the record with
     * the smallest head timestamp across its partitions; all input is on
     * the broker before the application starts. And the left and outer
     * stream-stream joins' non-joined results are emitted on every record
     * past their window's close, not at most once per wall-clock second
     * (the internal emit interval, 1000 ms by default, would make them
     * depend on how fast records arrive).
     */
    static Properties config(String bootstrap, String appId, Path stateDir) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
        p.put(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, "0");
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "1");
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, "1");
        p.put(StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG, StreamsConfig.NO_OPTIMIZATION);
        p.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
        p.put("__emit.interval.ms.kstreams.outer.join.spurious.results.fix__", "0");
        return p;
    }

    /** The windowed key as one string: key@start/end. */
    static String windowKey(Windowed<String> wk) {
        return wk.key() + "@" + wk.window().start() + "/" + wk.window().end();
    }

    /** T1: word count; some input keys are null. */
    static Topology wordCount(String prefix) {
        StreamsBuilder b = new StreamsBuilder();
        b.stream("wc-in", Consumed.with(S, S))
            .flatMapValues(line -> Arrays.stream(line.toLowerCase(Locale.ROOT).split("\\W+"))
                .filter(w -> !w.isEmpty()).collect(Collectors.toList()))
            .groupBy((k, w) -> w, Grouped.with(S, S))
            .count(Materialized.with(S, L))
            .toStream()
            .to(prefix + "wc-out", Produced.with(S, L));
        return b.build();
    }

    /** T2: tumbling windows with grace and suppression; hopping and sliding windows without. */
    static Topology windowed(String prefix) {
        StreamsBuilder b = new StreamsBuilder();
        KStream<String, Long> in = b.stream("win-in", Consumed.with(S, L));
        in.groupByKey(Grouped.with(S, L))
            .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(5)))
            // Kafka Streams 4.4 hands null values to a windowed reducer
            // (it no longer drops them): a null adds nothing.
            .reduce((sum, v) -> v == null ? sum : sum + v, Materialized.with(S, L))
            .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()))
            .toStream()
            .map((wk, v) -> KeyValue.pair(windowKey(wk), v))
            .to(prefix + "win-out", Produced.with(S, L));
        in.groupByKey(Grouped.with(S, L))
            .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(5))
                .advanceBy(Duration.ofSeconds(5)))
            .count(Materialized.with(S, L))
            .toStream()
            .map((wk, v) -> KeyValue.pair(windowKey(wk), v))
            .to(prefix + "hop-out", Produced.with(S, L));
        in.groupByKey(Grouped.with(S, L))
            .windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(Duration.ofSeconds(5), Duration.ofSeconds(5)))
            .count(Materialized.with(S, L))
            .toStream()
            .map((wk, v) -> KeyValue.pair(windowKey(wk), v))
            .to(prefix + "slide-out", Produced.with(S, L));
        return b.build();
    }

    /** T3: session windows; a merge emits a tombstone for each merged session. */
    static Topology session(String prefix) {
        StreamsBuilder b = new StreamsBuilder();
        b.stream("sess-in", Consumed.with(S, L))
            .groupByKey(Grouped.with(S, L))
            .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofSeconds(5), Duration.ofSeconds(2)))
            .count(Materialized.with(S, L))
            .toStream()
            .map((wk, v) -> KeyValue.pair(windowKey(wk), v))
            .to(prefix + "sess-out", Produced.with(S, L));
        return b.build();
    }

    /** T4: windowed stream-stream inner, left and outer joins. */
    static Topology streamStream(String prefix) {
        StreamsBuilder b = new StreamsBuilder();
        KStream<String, String> left = b.stream("ssj-left", Consumed.with(S, S));
        KStream<String, String> right = b.stream("ssj-right", Consumed.with(S, S));
        JoinWindows w = JoinWindows.ofTimeDifferenceAndGrace(Duration.ofSeconds(5), Duration.ofSeconds(2));
        left.join(right, (l, r) -> l + "+" + r, w, StreamJoined.with(S, S, S))
            .to(prefix + "ssj-inner", Produced.with(S, S));
        left.leftJoin(right, (l, r) -> l + "+" + r, w, StreamJoined.with(S, S, S))
            .to(prefix + "ssj-left", Produced.with(S, S));
        left.outerJoin(right, (l, r) -> l + "+" + r, w, StreamJoined.with(S, S, S))
            .to(prefix + "ssj-outer", Produced.with(S, S));
        return b.build();
    }

    /** T5: stream-table inner and left joins, and a stream-global-table join on the value. */
    static Topology streamTable(String prefix) {
        StreamsBuilder b = new StreamsBuilder();
        KStream<String, String> stream = b.stream("stj-stream", Consumed.with(S, S));
        KTable<String, String> table = b.table("stj-table", Consumed.with(S, S));
        GlobalKTable<String, String> global = b.globalTable("stj-global", Consumed.with(S, S));
        stream.join(table, (s, t) -> s + "+" + t, Joined.with(S, S, S))
            .to(prefix + "stj-inner", Produced.with(S, S));
        stream.leftJoin(table, (s, t) -> s + "+" + t, Joined.with(S, S, S))
            .to(prefix + "stj-left", Produced.with(S, S));
        stream.join(global, (k, v) -> v, (s, g) -> s + "+" + g)
            .to(prefix + "stj-global", Produced.with(S, S));
        return b.build();
    }

    /** T6: foreign-key table-table inner and left joins: orders (productId:qty) to products. */
    static Topology foreignKey(String prefix) {
        StreamsBuilder b = new StreamsBuilder();
        KTable<String, String> orders = b.table("fk-orders", Consumed.with(S, S));
        KTable<String, String> products = b.table("fk-products", Consumed.with(S, S));
        Function<String, String> productId = v -> v.split(":")[0];
        orders.join(products, productId, (o, p) -> o + "/" + p, Materialized.with(S, S))
            .toStream()
            .to(prefix + "fk-inner", Produced.with(S, S));
        orders.leftJoin(products, productId, (o, p) -> o + "/" + p, Materialized.with(S, S))
            .toStream()
            .to(prefix + "fk-left", Produced.with(S, S));
        return b.build();
    }
}
