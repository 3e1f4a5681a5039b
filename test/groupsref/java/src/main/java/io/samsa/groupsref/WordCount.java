package io.samsa.groupsref;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * One instance of a Kafka Streams word count on the streams rebalance
 * protocol (group.protocol=streams, KIP-1071: the broker assigns the
 * tasks) under exactly_once_v2, driven by the Go test: arguments
 * bootstrap, application.id, input topic, output topic, state directory,
 * stream threads. Lines of the input are split on spaces, regrouped by
 * word (a repartition topic) and counted (a store with a changelog); every
 * count goes to the output (no record cache: each update is one output
 * record), so under exactly-once a word's committed counts are 1, 2, ...
 * n with no gap and no repeat.
 *
 * It reports on stdout, one JSON object a line: {"ev":"state","state":
 * "RUNNING"} at each state change, {"ev":"error","msg":"..."} on an
 * uncaught exception (the client then shuts down), {"ev":"closed"} after
 * stdin's end closed it cleanly.
 */
public final class WordCount {
    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: WordCount bootstrap application-id input output state-dir threads");
            System.exit(2);
        }
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, args[5]);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);

        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(args[2], Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(line -> Arrays.asList(line.split(" ")))
                .groupBy((key, word) -> word, Grouped.with("words", Serdes.String(), Serdes.String()))
                .count(Materialized.as("counts"))
                .toStream()
                .to(args[3], Produced.with(Serdes.String(), Serdes.Long()));

        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        CountDownLatch done = new CountDownLatch(1);
        streams.setStateListener((now, before) -> Share.emit("{\"ev\":\"state\",\"state\":\"" + now + "\"}"));
        streams.setUncaughtExceptionHandler(e -> {
            Share.emit("{\"ev\":\"error\",\"msg\":" + Share.quote(e.toString()) + "}");
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        Thread stdin = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                while (r.readLine() != null) {
                }
            } catch (Exception e) {
                // stdin's end or failure: stop either way.
            }
            done.countDown();
        });
        stdin.setDaemon(true);
        stdin.start();
        streams.start();
        done.await();
        streams.close();
        Share.emit("{\"ev\":\"closed\"}");
    }
}
