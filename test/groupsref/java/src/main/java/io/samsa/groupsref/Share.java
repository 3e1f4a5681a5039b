package io.samsa.groupsref;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * One KafkaShareConsumer in explicit acknowledgement mode, driven by the Go
 * test: arguments bootstrap, group, topic, mode (ack or hold), then consumer
 * properties as key=value. It reports on stdout, one JSON object a line:
 *
 *   {"ev":"record","p":0,"o":12,"v":"accept-12","n":1}  a delivered record (n: delivery count)
 *   {"ev":"committed","records":3}                      commitSync of a poll's acknowledgements succeeded
 *   {"ev":"idle"}                                       a poll returned nothing
 *   {"ev":"holding","records":10}                       hold mode: the first records are held, unacknowledged
 *   {"ev":"error","msg":"..."}                          anything that went wrong
 *   {"ev":"closed"}                                     the consumer closed after stdin ended
 *
 * In ack mode the record's value says how it is acknowledged, so the Go
 * test decides by what it produces: "accept-..." ACCEPT, "reject-..."
 * REJECT, "release-..." RELEASE at every delivery (until the broker
 * archives it at the delivery-count limit), "release1-..." RELEASE at its
 * first delivery and ACCEPT after. Each poll's acknowledgements are
 * committed with commitSync before the next poll. In hold mode the first
 * non-empty poll's records are reported and never acknowledged, and the
 * consumer stops polling: the test kills the JVM to leave them locked.
 * stdin's end closes the consumer cleanly. The property
 * groupsref.poll.delay.ms (not the consumer's) pauses after each poll that
 * delivered records, as slow processing does.
 */
public final class Share {
    public static void main(String[] args) throws Exception {
        if (args.length < 4 || !(args[3].equals("ack") || args[3].equals("hold"))) {
            System.err.println("usage: Share bootstrap group topic ack|hold [key=value...]");
            System.exit(2);
        }
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("group.id", args[1]);
        props.put("share.acknowledgement.mode", "explicit");
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        for (int i = 4; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            if (kv.length != 2) {
                throw new IllegalArgumentException("consumer property " + args[i] + " is not key=value");
            }
            props.put(kv[0], kv[1]);
        }
        boolean hold = args[3].equals("hold");
        // Not a consumer property: a pause after each poll that delivered
        // records, as slow processing, so that the other consumers of a
        // group get their turn at the partition.
        long delayMs = Long.parseLong((String) props.getOrDefault("groupsref.poll.delay.ms", "0"));
        props.remove("groupsref.poll.delay.ms");
        AtomicBoolean stop = new AtomicBoolean();
        Thread stdin = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                while (r.readLine() != null) {
                }
            } catch (Exception e) {
                // stdin's end or failure: stop either way.
            }
            stop.set(true);
        });
        stdin.setDaemon(true);
        stdin.start();
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props)) {
            consumer.subscribe(List.of(args[2]));
            while (!stop.get()) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                if (records.isEmpty()) {
                    emit("{\"ev\":\"idle\"}");
                    continue;
                }
                for (ConsumerRecord<String, String> rec : records) {
                    emit(String.format("{\"ev\":\"record\",\"p\":%d,\"o\":%d,\"v\":%s,\"n\":%d}",
                            rec.partition(), rec.offset(), quote(rec.value()), rec.deliveryCount().orElse((short) -1)));
                    if (!hold) {
                        consumer.acknowledge(rec, decide(rec));
                    }
                }
                if (hold) {
                    emit("{\"ev\":\"holding\",\"records\":" + records.count() + "}");
                    while (!stop.get()) {
                        Thread.sleep(100);
                    }
                    // A clean end after holding releases nothing on
                    // purpose: the test kills this JVM instead.
                    return;
                }
                Map<TopicIdPartition, Optional<KafkaException>> result = consumer.commitSync(Duration.ofSeconds(30));
                boolean ok = true;
                for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : result.entrySet()) {
                    if (e.getValue().isPresent()) {
                        ok = false;
                        emit("{\"ev\":\"error\",\"msg\":" + quote("commit " + e.getKey() + ": " + e.getValue().get()) + "}");
                    }
                }
                if (ok) {
                    emit("{\"ev\":\"committed\",\"records\":" + records.count() + "}");
                }
                if (delayMs > 0) {
                    Thread.sleep(delayMs);
                }
            }
        } catch (Exception e) {
            emit("{\"ev\":\"error\",\"msg\":" + quote(e.toString()) + "}");
            System.exit(1);
        }
        emit("{\"ev\":\"closed\"}");
    }

    static AcknowledgeType decide(ConsumerRecord<String, String> rec) {
        String v = rec.value() == null ? "" : rec.value();
        String kind = v.contains("-") ? v.substring(0, v.indexOf('-')) : v;
        switch (kind) {
            case "accept":
                return AcknowledgeType.ACCEPT;
            case "reject":
                return AcknowledgeType.REJECT;
            case "release":
                return AcknowledgeType.RELEASE;
            case "release1":
                return rec.deliveryCount().orElse((short) 1) <= 1 ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT;
            default:
                throw new IllegalArgumentException("record value " + v + " names no acknowledgement");
        }
    }

    static synchronized void emit(String line) {
        System.out.println(line);
        System.out.flush();
    }

    static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        return b.append('"').toString();
    }
}
