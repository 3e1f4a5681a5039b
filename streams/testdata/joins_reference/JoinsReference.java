import org.apache.kafka.common.serialization.*;
import org.apache.kafka.streams.*;
import org.apache.kafka.streams.kstream.*;
import org.apache.kafka.streams.test.TestRecord;
import java.time.*;
import java.util.*;

// JoinsReference runs the scenarios of streams/join_*_test.go on Kafka Streams
// 4.4.0's TopologyTestDriver and prints each checkpoint's output as the Go
// tests write it (key=value@timestamp, null for nulls) and the Describe()
// text of some topologies. The Go tests' expectations are its output
// (joins_reference.out). Run (jars from Maven Central: kafka-streams,
// kafka-streams-test-utils, kafka-clients 4.4.0 and their dependencies):
//
//	javac -cp "$CP" JoinsReference.java && java -cp "$CP:." JoinsReference
public class JoinsReference {
    static TopologyTestDriver d;
    static Map<String, TestInputTopic<String,String>> ins = new HashMap<>();
    static Map<String, TestOutputTopic<String,String>> outs = new HashMap<>();
    static void open(StreamsBuilder b) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "app");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "dummy:1");
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        if (d != null) d.close();
        d = new TopologyTestDriver(b.build(), p, Instant.ofEpochMilli(0));
        ins.clear(); outs.clear();
    }
    static void pipe(String t, String k, String v, long ts) {
        ins.computeIfAbsent(t, x -> d.createInputTopic(x, new StringSerializer(), new StringSerializer()))
           .pipeInput(new TestRecord<>(k.equals("null") ? null : k, v.equals("null") ? null : v, null, ts));
    }
    static void expect(String label) { expectOn(label, "out"); }
    static void expectOn(String label, String topic) {
        TestOutputTopic<String,String> o = outs.computeIfAbsent(topic, x -> d.createOutputTopic(x, new StringDeserializer(), new StringDeserializer()));
        StringBuilder sb = new StringBuilder();
        for (TestRecord<String,String> r : o.readRecordsToList()) {
            if (sb.length() > 0) sb.append(' ');
            sb.append(r.key() == null ? "null" : r.key()).append('=').append(r.value() == null ? "null" : r.value()).append('@').append(r.timestamp());
        }
        System.out.println("  " + label + " [" + topic + "]: \"" + sb + "\"");
    }
    static void advance() { d.advanceWallClockTime(Duration.ofSeconds(1)); }
    static String n(String s) { return s == null ? "null" : s; }

    public static void main(String[] a) {
        // Stream-table
        for (boolean left : new boolean[]{false, true}) {
            StreamsBuilder b = new StreamsBuilder();
            KStream<String,String> orders = b.stream("orders");
            KTable<String,String> prices = b.table("prices");
            if (left) orders.leftJoin(prices, (k, o, p) -> k + ":" + o + "/" + n(p)).to("out");
            else orders.join(prices, (k, o, p) -> k + ":" + o + "/" + p).to("out");
            if (!left) System.out.println(b.build().describe());
            open(b);
            System.out.println("streamTable left=" + left);
            if (!left) {
                pipe("orders","a","o1",10); expect("1");
                pipe("prices","a","p1",5); expect("2");
                pipe("orders","a","o2",20); expect("3");
                pipe("prices","a","p2",30); expect("4");
                pipe("orders","a","o3",25); expect("5");
                pipe("prices","a","null",40); pipe("orders","a","o4",41); pipe("orders","null","o5",42);
                pipe("prices","b","q1",1); pipe("orders","b","null",43); pipe("orders","b","o6",44); expect("6");
            } else {
                pipe("orders","a","o1",10); expect("1");
                pipe("prices","a","p1",5); pipe("orders","a","o2",20); expect("2");
                pipe("prices","a","null",40); pipe("orders","a","o4",41); pipe("orders","null","o5",42); pipe("orders","b","null",43); expect("3");
            }
        }
        // global
        for (boolean left : new boolean[]{false, true}) {
            StreamsBuilder b = new StreamsBuilder();
            KStream<String,String> orders = b.stream("orders");
            GlobalKTable<String,String> customers = b.globalTable("customers");
            KeyValueMapper<String,String,String> m = (k, v) -> v != null && v.contains(",") ? v.substring(0, v.indexOf(',')) : null;
            if (left) orders.leftJoin(customers, m, (k, o, c) -> o + "/" + n(c)).to("out");
            else orders.join(customers, m, (k, o, c) -> o + "/" + c).to("out");
            if (!left) System.out.println(b.build().describe());
            open(b);
            System.out.println("global left=" + left);
            if (!left) {
                pipe("orders","o1","c1,book",10); expect("1");
                pipe("customers","c1","alice",1); pipe("orders","o2","c1,pen",20); pipe("orders","o3","nocomma",21); pipe("orders","null","c1,ink",22); expect("2");
                pipe("customers","c1","null",30); pipe("orders","o4","c1,cup",31); expect("3");
            } else {
                pipe("orders","o1","c1,book",10); pipe("customers","c1","alice",1); pipe("orders","o2","c1,pen",20); pipe("orders","o3","nocomma",21);
                pipe("orders","o5","null",22); pipe("orders","null","c2,ink",23); expect("1");
            }
        }
        // table-table
        {
            StreamsBuilder b = new StreamsBuilder();
            KTable<String,String> l = b.table("left"), r = b.table("right");
            l.join(r, (x, y) -> x + "/" + y).toStream().to("inner");
            l.leftJoin(r, (x, y) -> x + "/" + n(y)).toStream().to("leftout");
            l.outerJoin(r, (x, y) -> n(x) + "/" + n(y)).toStream().to("outer");
            open(b);
            System.out.println("tableTable");
            String[][] steps = {{"left","a","l1","10"},{"right","a","r1","5"},{"right","b","r2","20"},{"left","a","l2","15"},{"right","a","null","30"},{"left","a","null","40"},{"right","b","null","50"},{"left","null","x","60"},{"left","c","null","70"}};
            int i = 0;
            for (String[] s : steps) { pipe(s[0], s[1], s[2], Long.parseLong(s[3])); i++; expectOn(""+i, "inner"); expectOn(""+i, "leftout"); expectOn(""+i, "outer"); }
        }
        {
            StreamsBuilder b = new StreamsBuilder();
            KTable<String,String> l = b.table("left"), r = b.table("right"), x = b.table("third");
            KTable<String,String> lr = l.leftJoin(r, (p, q) -> p + "/" + n(q));
            x.join(lr, (p, q) -> p + "+" + q).toStream().to("out");
            open(b);
            System.out.println("joinOfJoin");
            pipe("left","a","l1",10); pipe("right","a","r1",12); expect("1");
            pipe("third","a","x1",11); expect("2");
            pipe("right","a","r2",13); expect("3");
        }
        {
            StreamsBuilder b = new StreamsBuilder();
            KTable<String,String> l = b.table("left"), r = b.table("right");
            KTable<String,String> lr = l.join(r, (p, q) -> p + "/" + q, Materialized.as("joined"));
            KStream<String,String> s = b.stream("events");
            s.join(lr, (k, e, j) -> e + "@" + j).to("out");
            open(b);
            System.out.println("materialized");
            pipe("left","a","l1",1); pipe("right","a","r1",2); pipe("events","a","e1",3); expect("1");
            pipe("left","a","null",4); pipe("events","a","e2",5); expect("2");
        }
        {
            StreamsBuilder b = new StreamsBuilder();
            KTable<String,String> l = b.table("left"), r = b.table("right");
            KTable<String,String> lr = l.join(r, (p, q) -> p + "/" + q);
            KStream<String,String> s = b.stream("events");
            s.leftJoin(lr, (k, e, j) -> e + "@" + n(j)).to("out");
            open(b);
            System.out.println("getter");
            pipe("left","a","l1",1); pipe("events","a","e1",3); pipe("right","a","r1",4); pipe("events","a","e2",5); pipe("left","a","null",6); pipe("events","a","e3",7); expect("1");
        }
        // stream-stream
        ss("inner", JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(10)));
        ss("left", JoinWindows.ofTimeDifferenceAndGrace(Duration.ofMillis(10), Duration.ofMillis(5)));
        ss("outer", JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(10)));
        ss("asym", JoinWindows.ofTimeDifferenceAndGrace(Duration.ZERO, Duration.ofMillis(5)).after(Duration.ofMillis(10)));
        {
            StreamsBuilder b = new StreamsBuilder();
            KStream<String,String> l = b.<String,String>stream("L").selectKey((k, v) -> v.substring(0, 1));
            KStream<String,String> r = b.<String,String>stream("R").selectKey((k, v) -> v.substring(0, 1));
            l.join(r, (x, y) -> x + "/" + y, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(10)), StreamJoined.<String,String,String>as("x").withName("j").withStoreName(null)).to("out");
            System.out.println(b.build().describe());
        }
        // FK
        for (boolean left : new boolean[]{false, true}) {
            StreamsBuilder b = new StreamsBuilder();
            KTable<String,String> orders = b.table("orders"), products = b.table("products");
            java.util.function.Function<String,String> fk = v -> v.contains(":") ? v.substring(0, v.indexOf(':')) : null;
            KTable<String,String> j = left ? orders.leftJoin(products, fk, (o, p) -> o + "/" + n(p)) : orders.join(products, fk, (o, p) -> o + "/" + p);
            j.toStream().to("out");
            if (!left) System.out.println(b.build().describe());
            open(b);
            System.out.println("fk left=" + left);
            if (!left) {
                pipe("products","p1","P1",1); expect("1");
                pipe("orders","o1","p1:a",10); expect("2");
                pipe("orders","o2","p2:b",11); expect("3");
                pipe("products","p2","P2",12); expect("4");
                pipe("products","p1","P1x",13); expect("5");
                pipe("orders","o1","p2:c",14); expect("6");
                pipe("orders","o1","p2:d",15); expect("7");
                pipe("products","p1","P1y",16); expect("8");
                pipe("products","p2","null",17); expect("9");
                pipe("orders","o1","null",18); expect("10");
                pipe("orders","o3","none",20); pipe("products","p1","P1z",21); pipe("orders","o3","p1:e",22); expect("11");
                pipe("products","p3","P3",30); pipe("orders","o4","p3:f",25); expect("12"); pipe("orders","o2","p2:z",19); expect("13"); pipe("orders","o4","none",31); expect("14");
            } else {
                pipe("orders","o1","p1:a",10); expect("1");
                pipe("products","p1","P1",5); expect("2");
                pipe("orders","o1","none",12); expect("3");
                pipe("orders","o2","none",13); expect("4");
                pipe("orders","o1","null",14); expect("5");
                pipe("orders","o2","p1:b",15); expect("6");
                pipe("products","p1","null",16); expect("7");
                pipe("orders","o2","null",17); expect("8");
            }
        }
        d.close();
    }

    static void ss(String kind, JoinWindows w) {
        StreamsBuilder b = new StreamsBuilder();
        KStream<String,String> l = b.stream("L"), r = b.stream("R");
        KStream<String,String> o;
        if (kind.equals("inner")) o = l.join(r, (x, y) -> x + "/" + y, w);
        else if (kind.equals("left") || kind.equals("asym")) o = l.leftJoin(r, (x, y) -> x + "/" + n(y), w);
        else o = l.outerJoin(r, (x, y) -> n(x) + "/" + n(y), w);
        o.to("out");
        if (kind.equals("outer")) System.out.println(b.build().describe());
        open(b);
        System.out.println("ss " + kind);
        switch (kind) {
        case "inner":
            pipe("L","a","L1",0); expect("1"); pipe("R","a","R1",5); expect("2"); pipe("L","a","L2",20); expect("3");
            pipe("R","a","R2",15); expect("4"); pipe("R","a","R3",12); expect("5"); pipe("L","a","L4",20); expect("6");
            pipe("R","a","R4",0); expect("7"); pipe("L","a","L5",9); expect("8");
            pipe("R","b","Rx",40); pipe("L","a","L6",0); pipe("R","a","R5",5); pipe("L","null","L7",41); pipe("L","a","null",41); expect("9");
            break;
        case "left":
            pipe("L","a","L1",0); pipe("R","a","R1",3); expect("1");
            pipe("L","b","L2",10); pipe("L","c","L3",12); pipe("R","x","Rx",30); expect("2");
            advance(); pipe("R","y","Ry",30); expect("3");
            pipe("L","d","L4",14); expect("4");
            pipe("L","e","L5",25); pipe("R","e","R2",33); expect("5");
            advance(); pipe("L","f","L6",50); expect("6");
            pipe("R","null","R7",51); expect("7");
            break;
        case "outer":
            pipe("L","a","L1",0); pipe("R","b","R1",5); pipe("L","z","Lz",5); pipe("R","a","R2",8); expect("1");
            advance(); pipe("L","c","L2",30); expect("2");
            pipe("R","null","R3",31); expect("3");
            advance(); pipe("R","d","Rd",45); expect("4");
            advance(); pipe("L","e","Le",100); expect("5");
            break;
        case "asym":
            pipe("L","a","L1",0); advance(); pipe("R","x","Rx",15); expect("1");
            pipe("R","w","Rw",20); advance(); pipe("L","y","Ly",18); expect("2");
            pipe("R","v","Rv",21); expect("3");
            pipe("R","y","Ry",25); pipe("R","y","Ry2",29); pipe("L","q","Lq",30); pipe("R","q","Rq",29); expect("4");
            break;
        }
    }
}
