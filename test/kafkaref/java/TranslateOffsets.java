// Prints what MirrorMaker 2's RemoteClusterUtils.translateOffsets answers
// for a consumer group, for test/kafkaref's TranslateOffsets: one line per
// partition, "OFFSET<TAB>topic<TAB>partition<TAB>offset", in no particular
// order (the prefix sets them apart from any log line on stdout).
//
//   java -cp CLASSES:LIBS/* TranslateOffsets BOOTSTRAP SOURCE_ALIAS GROUP TIMEOUT_MS
//
// BOOTSTRAP is the target cluster's, which holds SOURCE_ALIAS.checkpoints.internal.
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

public class TranslateOffsets {
    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: TranslateOffsets BOOTSTRAP SOURCE_ALIAS GROUP TIMEOUT_MS");
            System.exit(2);
        }
        Map<String, Object> props = new HashMap<>();
        props.put("bootstrap.servers", args[0]);
        Map<TopicPartition, OffsetAndMetadata> offsets = RemoteClusterUtils.translateOffsets(
            props, args[1], args[2], Duration.ofMillis(Long.parseLong(args[3])));
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
            System.out.println("OFFSET\t" + e.getKey().topic() + "\t" + e.getKey().partition() + "\t" + e.getValue().offset());
        }
    }
}
