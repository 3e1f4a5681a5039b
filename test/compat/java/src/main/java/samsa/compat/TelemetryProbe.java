package samsa.compat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Java client's side of the client telemetry test (KIP-714,
 * internal/broker's TestClientTelemetryFromJava, through
 * SAMSA_TELEMETRY_JAVA): a producer with enable.metrics.push (the client's
 * default) produces to a topic for some seconds, so it pushes its metrics
 * at the interval the broker's subscription asks, while the Go test reads
 * them on the broker's /metrics. It prints its client instance ID, as the
 * client learned it from GetTelemetrySubscriptions, once it has one.
 *
 * <p>Usage: TelemetryProbe BOOTSTRAP CLIENT_ID TOPIC SECONDS.
 */
public final class TelemetryProbe {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], clientId = args[1], topic = args[2];
        long seconds = Long.parseLong(args[3]);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(ProducerConfig.ENABLE_METRICS_PUSH_CONFIG, "true");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            boolean told = false;
            for (int i = 0; System.nanoTime() < end; i++) {
                producer.send(new ProducerRecord<>(topic, ("record " + i).getBytes(StandardCharsets.UTF_8))).get();
                if (!told) {
                    // Blocks until the client has its instance ID (or the
                    // timeout), so it comes after the first record.
                    Uuid id = producer.clientInstanceId(Duration.ofSeconds(10));
                    System.out.println("client_instance_id " + id);
                    System.out.flush();
                    told = true;
                }
                Thread.sleep(50);
            }
        }
    }
}
