package io.samsa.benchstreams;

import java.io.FileInputStream;
import java.io.InputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;

/**
 * The Kafka Streams side of the streams benchmark (bench/streams): one
 * topology, word count or a windowed count, run with the properties the
 * driver wrote (application.id, bootstrap.servers, state.dir and the
 * settings both runtimes share).
 *
 * Usage: Bench wordcount|windowed PROPERTIES INPUT_TOPIC OUTPUT_TOPIC
 *
 * Prints "RUNNING" once the application runs and "ERROR ..." if it
 * fails; runs until SIGTERM.
 */
public final class Bench {
    private static final Serde<String> S = Serdes.String();
    private static final Serde<Long> L = Serdes.Long();

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: Bench wordcount|windowed PROPERTIES INPUT_TOPIC OUTPUT_TOPIC");
            System.exit(2);
        }
        Properties props = new Properties();
        try (InputStream in = new FileInputStream(args[1])) {
            props.load(in);
        }
        Topology topology;
        switch (args[0]) {
            case "wordcount":
                topology = wordCount(args[2], args[3]);
                break;
            case "windowed":
                topology = windowedCount(args[2], args[3]);
                break;
            default:
                System.err.println("unknown topology " + args[0] + ": wordcount or windowed");
                System.exit(2);
                return;
        }
        KafkaStreams streams = new KafkaStreams(topology, props);
        streams.setStateListener((now, before) -> {
            if (now == KafkaStreams.State.RUNNING) {
                System.out.println("RUNNING");
            } else if (now == KafkaStreams.State.ERROR) {
                System.out.println("ERROR");
            }
            System.out.flush();
        });
        streams.setUncaughtExceptionHandler(e -> {
            e.printStackTrace();
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(10));
            closed.countDown();
        }));
        streams.start();
        closed.await();
    }

    /** Word count: lines split on \W+ in lower case, counted per word. */
    static Topology wordCount(String input, String output) {
        StreamsBuilder b = new StreamsBuilder();
        b.stream(input, Consumed.with(S, S))
            .flatMapValues(line -> Arrays.stream(line.toLowerCase(Locale.ROOT).split("\\W+"))
                .filter(w -> !w.isEmpty()).collect(Collectors.toList()))
            .groupBy((k, w) -> w, Grouped.with(S, S))
            .count(Materialized.with(S, L))
            .toStream()
            .to(output, Produced.with(S, L));
        return b.build();
    }

    /** A windowed count: per key, tumbling one-minute windows with 10 s of grace. */
    static Topology windowedCount(String input, String output) {
        StreamsBuilder b = new StreamsBuilder();
        b.stream(input, Consumed.with(S, L))
            .groupByKey(Grouped.with(S, L))
            .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMinutes(1), Duration.ofSeconds(10)))
            .count(Materialized.with(S, L))
            .toStream()
            .map((wk, v) -> KeyValue.pair(wk.key() + "@" + wk.window().start() + "/" + wk.window().end(), v))
            .to(output, Produced.with(S, L));
        return b.build();
    }
}
