package samsa.compat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The Java client's side of the follower fetching test (KIP-392,
 * internal/broker's TestClusterJavaRackConsumerReadsFromItsRack, through
 * SAMSA_RACK_JAVA): a consumer with client.rack reads every partition of a
 * topic from the start, without a group, until it has COUNT records, and
 * checks that each partition's offsets run from 0 without a gap or a
 * repeat. It prints "ok COUNT" or "error ..." and exits 0 or 1; the Go test
 * reads on the brokers which of them served the bytes.
 *
 * <p>Usage: RackConsumer BOOTSTRAP TOPIC RACK COUNT SECONDS.
 */
public final class RackConsumer {
    public static void main(String[] args) {
        String bootstrap = args[0], topic = args[1], rack = args[2];
        int count = Integer.parseInt(args[3]);
        long seconds = Long.parseLong(args[4]);
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.CLIENT_RACK_CONFIG, rack);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> parts = new ArrayList<>();
            for (PartitionInfo pi : consumer.partitionsFor(topic, Duration.ofSeconds(seconds))) {
                parts.add(new TopicPartition(topic, pi.partition()));
            }
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<Integer, Long> next = new HashMap<>();
            int got = 0;
            while (got < count && System.nanoTime() < end) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    long want = next.getOrDefault(r.partition(), 0L);
                    if (r.offset() != want) {
                        System.out.println("error partition " + r.partition() + ": offset " + r.offset() + ", want " + want);
                        System.exit(1);
                    }
                    next.put(r.partition(), want + 1);
                    got++;
                }
            }
            if (got != count) {
                System.out.println("error read " + got + " of " + count + " records in " + seconds + " s");
                System.exit(1);
            }
            System.out.println("ok " + got);
        }
    }
}
