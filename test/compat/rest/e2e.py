#!/usr/bin/env python3
"""Samsa's REST Proxy end to end, over HTTP and through Kafka clients.

Produces over HTTP in every v2 embedded format (and over v3 with headers)
and reads the records back with confluent-kafka-python, byte for byte;
then produces with confluent-kafka-python's serializers and consumes over
HTTP with a v2 consumer instance in each format. The HTTP side is Python's
requests, or the curl command line (`--http curl`): the same checks, each
request made by curl. One JSON result line per feature goes to
$COMPAT_RESULTS (test/compat/README.md).

Environment: REST_URL (the proxy), SR_URL (the Schema Registry the proxy
uses), SAMSA_BOOTSTRAP (the cluster), COMPAT_RESULTS.

Usage: e2e.py [--http requests|curl]
"""

import base64
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections import Counter

import confluent_kafka
import requests
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

BOOTSTRAP = os.environ["SAMSA_BOOTSTRAP"]
RESULTS = os.environ["COMPAT_RESULTS"]
REST_URL = os.environ["REST_URL"].rstrip("/")
SR_URL = os.environ["SR_URL"]
RUN = uuid.uuid4().hex[:6]
RECORDS = 30
PARTITIONS = 3
FEATURE_TIMEOUT = 90
# The mutation hook (test/compat/README.md): after each produce one more
# copy of a record is written behind the checker's back; every check must
# then fail.
INJECT_DUPLICATE = os.environ.get("COMPAT_INJECT_DUPLICATE", "") not in ("", "0")
KAFKA = {"bootstrap.servers": BOOTSTRAP, "log_level": 4}
V2 = "application/vnd.kafka.v2+json"


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


class Timeout(Exception):
    pass


def on_alarm(*_):
    raise Timeout("timed out after %ds" % FEATURE_TIMEOUT)


# ---------------------------------------------------------------- HTTP side

class RequestsHTTP:
    name, version = "python-requests", requests.__version__

    def __init__(self):
        self.s = requests.Session()

    def call(self, method, url, body=None, ctype=None, accept=None):
        headers = {}
        if ctype:
            headers["Content-Type"] = ctype
        if accept:
            headers["Accept"] = accept
        data = None if body is None else json.dumps(body).encode()
        r = self.s.request(method, url, data=data, headers=headers, timeout=60)
        return r.status_code, (r.json() if r.content else None)


class CurlHTTP:
    name = "curl"

    def __init__(self):
        out = subprocess.run(["curl", "--version"], capture_output=True, text=True, check=True).stdout
        self.version = out.split()[1]

    def call(self, method, url, body=None, ctype=None, accept=None):
        cmd = ["curl", "-sS", "-X", method, "-w", "\n%{http_code}", "--max-time", "60"]
        if ctype:
            cmd += ["-H", "Content-Type: " + ctype]
        if accept:
            cmd += ["-H", "Accept: " + accept]
        data = None
        if body is not None:
            cmd += ["--data-binary", "@-"]
            data = json.dumps(body).encode()
        cmd.append(url)
        out = subprocess.run(cmd, input=data, capture_output=True, check=True).stdout
        text, _, status = out.rpartition(b"\n")
        return int(status), (json.loads(text) if text.strip() else None)


HTTP = RequestsHTTP()


def call(method, url, body=None, ctype=None, accept=None, want=200):
    status, reply = HTTP.call(method, url, body, ctype, accept)
    check(status == want, "%s %s: status %d, want %d: %s" % (method, url, status, want, reply))
    return reply


# ---------------------------------------------------------------- features

failed = 0


def feature(name, fn):
    global failed
    start = time.monotonic()
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(FEATURE_TIMEOUT)
    try:
        detail, result = fn() or "", "pass"
    except Exception as e:  # every failure is a result line, never a crash
        detail, result = "%s: %s" % (type(e).__name__, e), "fail"
        if os.environ.get("COMPAT_DEBUG"):
            traceback.print_exc()
    finally:
        signal.alarm(0)
    if result == "fail":
        failed += 1
    with open(RESULTS, "a") as f:
        f.write(json.dumps({"client": HTTP.name, "version": HTTP.version, "feature": name,
                            "result": result, "detail": detail}) + "\n")
    print("%-5s %-28s %5.1fs  %s" % (result, name, time.monotonic() - start, detail), flush=True)


# ---------------------------------------------------------------- Kafka side

def create_topic(topic):
    admin = AdminClient(dict(KAFKA))
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)], operation_timeout=10)[topic].result(timeout=20)
    deadline = time.monotonic() + 20
    while True:
        md = admin.list_topics(topic, timeout=5).topics.get(topic)
        if md and md.error is None and len(md.partitions) == PARTITIONS and \
                all(p.leader >= 0 for p in md.partitions.values()):
            break
        check(time.monotonic() < deadline, "topic %s has no leader for every partition" % topic)
        time.sleep(0.1)
    # In a cluster the leader named may not host its partition yet (it
    # applies the topic a moment later): ask each leader for its offsets
    # until it answers.
    c = Consumer({**KAFKA, "group.id": "rest-e2e-probe-" + RUN})
    try:
        for p in range(PARTITIONS):
            while True:
                try:
                    c.get_watermark_offsets(TopicPartition(topic, p), timeout=5)
                    break
                except confluent_kafka.KafkaException as e:
                    check(time.monotonic() < deadline, "partition %s-%d: %s" % (topic, p, e))
                    time.sleep(0.1)
    finally:
        c.close()


def inject_duplicate(topic, partition, key, value, headers=None):
    """The mutation hook: one more copy of a record, unknown to the check."""
    if INJECT_DUPLICATE:
        p = Producer({**KAFKA, "enable.idempotence": False})
        p.produce(topic, key=key, value=value, partition=partition, headers=headers)
        p.flush(30)


def kafka_produce(topic, records):
    """records: [(key bytes, value bytes)]. Returns [(partition, offset,
    key, value)] as acknowledged, in the order of records."""
    p = Producer({**KAFKA, "acks": "all", "enable.idempotence": True})
    acked, errors = [None] * len(records), []

    def done(i):
        def cb(err, msg):
            if err:
                errors.append(str(err))
            else:
                acked[i] = (msg.partition(), msg.offset(), msg.key(), msg.value())
        return cb
    for i, (k, v) in enumerate(records):
        p.produce(topic, key=k, value=v, on_delivery=done(i))
    left = p.flush(30)
    check(not errors and left == 0 and None not in acked,
          "produce: %d acknowledged of %d, errors %s" % (len(records) - acked.count(None), len(records), errors[:3]))
    inject_duplicate(topic, acked[-1][0], acked[-1][2], acked[-1][3])
    return acked


def end_offsets(topic):
    c = Consumer({**KAFKA, "group.id": "rest-e2e-ends-" + RUN})
    try:
        return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(PARTITIONS)}
    finally:
        c.close()


def kafka_read(topic):
    """Every record of topic, read until the consumer's position reaches the
    high watermark taken first: [(partition, offset, key, value, headers)]."""
    ends = end_offsets(topic)
    c = Consumer({**KAFKA, "group.id": "rest-e2e-" + RUN, "enable.auto.commit": False})
    try:
        c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        got, deadline = [], time.monotonic() + 30
        while True:
            pos = {tp.partition: tp.offset for tp in c.position([TopicPartition(topic, p) for p in ends])}
            behind = {p: (pos[p], e) for p, e in ends.items() if e > 0 and pos[p] < e}
            if not behind:
                return got
            check(time.monotonic() < deadline, "read %s: behind the end offsets (position, end): %s" % (topic, behind))
            m = c.poll(0.2)
            if m is None:
                continue
            check(m.error() is None, "consume %s: %s" % (topic, m.error()))
            got.append((m.partition(), m.offset(), m.key(), m.value(), tuple(m.headers() or ())))
    finally:
        c.close()


def exact(want, got):
    w, g = Counter(want), Counter(got)
    missing, extra = w - g, g - w
    if missing or extra:
        show = lambda c: ", ".join(repr(x) for x in sorted(c.elements(), key=repr)[:3])
        raise Failure("read %d records, want %d: %d missing [%s], %d extra [%s]" % (
            len(got), len(want), sum(missing.values()), show(missing), sum(extra.values()), show(extra)))


def sr():
    return SchemaRegistryClient({"url": SR_URL})


# ---------------------------------------------------------------- formats

def user(i):
    return {"id": i + 1, "name": "user-%d" % i}


AVRO_USER = json.dumps({"type": "record", "name": "User", "namespace": "samsa.rest",
                        "fields": [{"name": "id", "type": "int"}, {"name": "name", "type": "string"}]})
JSON_USER = json.dumps({"type": "object", "title": "User",
                        "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
                        "required": ["id", "name"], "additionalProperties": False})
PROTO_USER = 'syntax = "proto3";\npackage samsa.rest;\n\nmessage User {\n  int32 id = 1;\n  string name = 2;\n}\n'

_proto = {}


def proto_user():
    """The User message class, compiled from PROTO_USER with grpcio-tools'
    protoc (the registry suite does the same)."""
    if "User" not in _proto:
        import importlib.util
        import grpc_tools
        from grpc_tools import protoc
        d = tempfile.mkdtemp()
        with open(os.path.join(d, "restuser.proto"), "w") as f:
            f.write(PROTO_USER)
        include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
        rc = protoc.main(["protoc", "-I" + d, "-I" + include, "--python_out=" + d, "restuser.proto"])
        check(rc == 0, "protoc: exit %d" % rc)
        spec = importlib.util.spec_from_file_location("restuser_pb2", os.path.join(d, "restuser_pb2.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _proto["User"] = mod.User
    return _proto["User"]


def serdes(fmt):
    """(serializer, deserializer) of confluent-kafka-python for a schema
    format's User values: the serializer uses the subject's latest
    version (registered over REST, or auto-registered when none is)."""
    client = sr()
    if fmt == "avro":
        return (AvroSerializer(client, AVRO_USER),
                AvroDeserializer(client))
    if fmt == "jsonschema":
        return (JSONSerializer(JSON_USER, client),
                JSONDeserializer(JSON_USER))
    User = proto_user()
    to_msg = lambda v: User(id=v["id"], name=v["name"])
    ser = ProtobufSerializer(User, client, {"use.deprecated.format": False})
    de = ProtobufDeserializer(User, {"use.deprecated.format": False})
    return ((lambda v, ctx: ser(to_msg(v), ctx)),
            (lambda b, ctx: (lambda m: {"id": m.id, "name": m.name})(de(b, ctx))))


SCHEMAS = {"avro": AVRO_USER, "jsonschema": JSON_USER, "protobuf": PROTO_USER}


def v2_produce(topic, fmt, records, schema_fields=None, path=None):
    body = {"records": records}
    body.update(schema_fields or {})
    return call("POST", REST_URL + (path or "/topics/" + topic), body,
                ctype="application/vnd.kafka.%s.v2+json" % fmt, accept=V2)


def produced(reply, n):
    offs = reply["offsets"]
    check(len(offs) == n, "reply has %d offsets for %d records: %s" % (len(offs), n, reply))
    bad = [o for o in offs if o.get("error_code") is not None or o.get("error") is not None]
    check(not bad, "records refused: %s" % bad[:3])
    return [(o["partition"], o["offset"]) for o in offs]


def check_produce_binary():
    topic = "rest-bin-%s-%s" % (HTTP.name, RUN)
    create_topic(topic)
    values = [bytes([i, 0xff, 0x00, 0x80]) + os.urandom(8) for i in range(RECORDS)]
    keys = [("k%d" % i).encode() for i in range(RECORDS)]
    recs = []
    for i in range(RECORDS):
        r = {"key": base64.b64encode(keys[i]).decode(), "value": base64.b64encode(values[i]).decode()}
        if i % 2:
            r["partition"] = i % PARTITIONS
        recs.append(r)
    at = produced(v2_produce(topic, "binary", recs), RECORDS)
    for i in range(RECORDS):
        if i % 2:
            check(at[i][0] == i % PARTITIONS, "record %d went to partition %d, asked %d" % (i, at[i][0], i % PARTITIONS))
    # One record more through the partition path.
    one = v2_produce(topic, "binary", [{"value": base64.b64encode(b"by-path").decode()}],
                     path="/topics/%s/partitions/2" % topic)
    (p, o), = produced(one, 1)
    check(p == 2, "the partition path produced to partition %d" % p)
    want = [(at[i][0], at[i][1], keys[i], values[i], ()) for i in range(RECORDS)] + [(2, o, None, b"by-path", ())]
    inject_duplicate(topic, 0, keys[0], values[0])
    exact(want, kafka_read(topic))
    return "%d records, keys and values byte-identical, explicit partitions kept" % (RECORDS + 1)


def check_produce_json():
    topic = "rest-json-%s-%s" % (HTTP.name, RUN)
    create_topic(topic)
    values = [{"id": i, "name": "n%d" % i, "tags": ["a", "b"], "nested": {"x": None, "ok": True}} for i in range(RECORDS)]
    at = produced(v2_produce(topic, "json", [{"key": "k%d" % i, "value": v} for i, v in enumerate(values)]), RECORDS)
    compact = lambda v: json.dumps(v, separators=(",", ":")).encode()
    want = [(at[i][0], at[i][1], compact("k%d" % i), compact(values[i]), ()) for i in range(RECORDS)]
    inject_duplicate(topic, at[0][0], want[0][2], want[0][3])
    exact(want, kafka_read(topic))
    return "%d records as compact JSON text" % RECORDS


def check_produce_schema(fmt):
    def run():
        topic = "rest-%s-%s-%s" % (fmt, HTTP.name, RUN)
        create_topic(topic)
        values = [user(i) for i in range(RECORDS)]
        half = RECORDS // 2
        # The first half with the schema inline (registered on the fly)...
        reply = v2_produce(topic, fmt, [{"value": v} for v in values[:half]], {"value_schema": SCHEMAS[fmt]})
        at = produced(reply, half)
        sid = reply.get("value_schema_id")
        check(isinstance(sid, int), "reply has no value_schema_id: %s" % reply)
        latest = sr().get_latest_version(topic + "-value")
        check(latest.schema_id == sid, "the registry's %s-value is id %d, the reply says %d" % (topic, latest.schema_id, sid))
        # ...the second by its id.
        reply2 = v2_produce(topic, fmt, [{"value": v} for v in values[half:]], {"value_schema_id": sid})
        at += produced(reply2, RECORDS - half)
        ser, de = serdes(fmt)
        ctx = SerializationContext(topic, MessageField.VALUE)
        inject_duplicate(topic, at[0][0], None, ser(values[0], ctx))
        read = kafka_read(topic)
        pos = {(p, o): i for i, (p, o) in enumerate(at)}
        decoded, identical = [], 0
        for p, o, k, raw, _ in read:
            check(len(raw) > 5 and raw[0] == 0 and int.from_bytes(raw[1:5], "big") == sid,
                  "record %d@%d does not carry schema id %d: %r" % (p, o, sid, raw[:8]))
            decoded.append((p, o, k, json.dumps(de(raw, ctx), sort_keys=True)))
            i = pos.get((p, o))
            if i is not None and fmt != "jsonschema":
                # Avro and Protobuf encode one value one way: the proxy's
                # bytes are those confluent-kafka's serializer writes.
                mine = ser(values[i], ctx)
                check(raw == mine, "record %d@%d: proxy wrote %r, confluent-kafka writes %r" % (p, o, raw, mine))
                identical += 1
        want = [(at[i][0], at[i][1], None, json.dumps(values[i], sort_keys=True)) for i in range(RECORDS)]
        exact(want, decoded)
        return "%d records, schema id %d inline then by id, decoded by confluent-kafka%s" % (
            RECORDS, sid, "; %d byte-identical to its serializer" % identical if identical else "")
    return run


def check_produce_v3_headers():
    topic = "rest-v3h-%s-%s" % (HTTP.name, RUN)
    create_topic(topic)
    cluster = call("GET", REST_URL + "/v3/clusters")["data"][0]["cluster_id"]
    want = []
    for i in range(RECORDS):
        key, value = ("k%d" % i).encode(), os.urandom(6) + bytes([i])
        hdrs = [("h", b"one"), ("h", b"two"), ("i", str(i).encode())]
        body = {"partition_id": i % PARTITIONS,
                "key": {"type": "BINARY", "data": base64.b64encode(key).decode()},
                "value": {"type": "BINARY", "data": base64.b64encode(value).decode()},
                "headers": [{"name": n, "value": base64.b64encode(v).decode()} for n, v in hdrs]}
        r = call("POST", REST_URL + "/v3/clusters/%s/topics/%s/records" % (cluster, topic), body, ctype="application/json")
        check(r.get("error_code") == 200 and r["partition_id"] == i % PARTITIONS, "produce %d: %s" % (i, r))
        want.append((r["partition_id"], r["offset"], key, value, tuple(hdrs)))
    inject_duplicate(topic, want[0][0], want[0][2], want[0][3], list(want[0][4]))
    exact(want, kafka_read(topic))
    return "%d records with repeated headers, in order, byte-identical" % RECORDS


# ---------------------------------------------------------------- consume over v2

def v2_consume(topic, fmt, ends):
    """Creates a v2 consumer instance of format fmt, assigns it every
    partition of topic, reads until it has read up to ends, one read more,
    commits, checks the commits and deletes it. Returns
    [(partition, offset, key, value)] as the JSON the proxy answered."""
    group = "rest-e2e-%s-%s-%s" % (fmt, HTTP.name, RUN)
    inst = call("POST", REST_URL + "/consumers/" + group,
                {"name": "c-" + RUN, "format": fmt, "auto.offset.reset": "earliest", "auto.commit.enable": "false"},
                ctype=V2, accept=V2)
    base = inst["base_uri"]
    check(inst["instance_id"] == "c-" + RUN, "instance id %s" % inst)
    try:
        call("POST", base + "/assignments", {"partitions": [{"topic": topic, "partition": p} for p in range(PARTITIONS)]},
             ctype=V2, want=204)
        accept = "application/vnd.kafka.%s.v2+json" % fmt
        got, last = [], {}
        deadline = time.monotonic() + 45
        while any(last.get(p, -1) < e - 1 for p, e in ends.items()):
            check(time.monotonic() < deadline, "read over HTTP: last offsets %s, ends %s" % (last, ends))
            for r in call("GET", base + "/records?timeout=1000", accept=accept):
                check(r["topic"] == topic, "record of topic %s" % r["topic"])
                got.append((r["partition"], r["offset"], json.dumps(r["key"]), json.dumps(r["value"], sort_keys=True)))
                last[r["partition"]] = max(last.get(r["partition"], -1), r["offset"])
        # A duplicate or an extra record behind the end would come now.
        for r in call("GET", base + "/records?timeout=500", accept=accept):
            got.append((r["partition"], r["offset"], json.dumps(r["key"]), json.dumps(r["value"], sort_keys=True)))
        call("POST", base + "/offsets", None, ctype=V2, want=200)
        committed = call("GET", base + "/offsets", {"partitions": [{"topic": topic, "partition": p} for p in range(PARTITIONS)]},
                         ctype=V2, accept=V2)
        # A partition nothing was read from has no commit, and Confluent
        # (and Samsa) leave it out of the answer.
        have = {o["partition"]: o["offset"] for o in committed["offsets"]}
        want = {p: e for p, e in ends.items() if e > 0}
        check(have == want, "committed %s, the end offsets are %s" % (have, want))
        return got
    finally:
        HTTP.call("DELETE", base, ctype=V2)


def check_consume(fmt):
    def run():
        topic = "rest-c%s-%s-%s" % (fmt, HTTP.name, RUN)
        create_topic(topic)
        keys = ["k%d" % i for i in range(RECORDS)]
        if fmt == "binary":
            values = [os.urandom(5) + bytes([i, 0xff]) for i in range(RECORDS)]
            recs = list(zip([k.encode() for k in keys], values))
            shown = lambda v: json.dumps(base64.b64encode(v).decode())
            key_shown = lambda k: json.dumps(base64.b64encode(k.encode()).decode())
        elif fmt == "json":
            values = [{"id": i, "list": [1, 2, i]} for i in range(RECORDS)]
            recs = [(json.dumps(k).encode(), json.dumps(v).encode()) for k, v in zip(keys, values)]
            shown = lambda v: json.dumps(v, sort_keys=True)
            key_shown = json.dumps
        else:
            ser, _ = serdes(fmt)
            ctx = SerializationContext(topic, MessageField.VALUE)
            values = [user(i) for i in range(RECORDS)]
            # Keys: JSON text, which every schema format's key deserializer
            # reads only if it is in the format; keep them null.
            recs = [(None, ser(v, ctx)) for v in values]
            shown = lambda v: json.dumps(v, sort_keys=True)
            key_shown = lambda k: "null"
        acked = kafka_produce(topic, recs)
        ends = end_offsets(topic)
        want = [(p, o, key_shown(keys[i]), shown(values[i])) for i, (p, o, _, _) in enumerate(acked)]
        exact(want, v2_consume(topic, fmt, ends))
        return "%d records produced by confluent-kafka read back over v2, offsets committed" % RECORDS
    return run


# ---------------------------------------------------------------- a group of two proxies and a native consumer

def start_proxy():
    """One more `samsa rest` process on a free port: (process, URL)."""
    proc = subprocess.Popen([os.environ["SAMSA_BIN"], "rest", "--bootstrap-server", BOOTSTRAP,
                             "--listener", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = proc.stdout.readline().decode()
    check(line.startswith("rest proxy serving on "), "the second samsa rest did not start: %r" % line)
    return proc, line.split()[-1]


def check_group_with_native():
    """Two REST proxies' v2 consumer instances and a confluent-kafka
    consumer (librdkafka's default assignors) in one group share a topic's
    partitions, each record read once; when one instance is deleted the
    group rebalances and its partition goes on to the others from the
    committed offset."""
    topic = "rest-group-%s" % RUN
    group = "rest-e2e-group-%s" % RUN
    create_topic(topic)
    proc, url2 = start_proxy()
    native = Consumer({**KAFKA, "group.id": group, "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    cluster = call("GET", REST_URL + "/v3/clusters")["data"][0]["cluster_id"]
    bases = {}
    try:
        for name, url in (("a", REST_URL), ("b", url2)):
            inst = call("POST", url + "/consumers/" + group,
                        {"name": name, "format": "binary", "auto.offset.reset": "earliest", "auto.commit.enable": "false"},
                        ctype=V2, accept=V2)
            bases[name] = inst["base_uri"]
            check(inst["base_uri"].startswith(url), "instance %s's base_uri %s is not its proxy's %s" % (name, inst["base_uri"], url))
            call("POST", bases[name] + "/subscription", {"topics": [topic]}, ctype=V2, want=204)
        native.subscribe([topic])
        seen = {"a": [], "b": [], "native": []}

        def poll_all(members):
            for m in members:
                if m == "native":
                    msg = native.poll(0.1)
                    while msg is not None:
                        check(msg.error() is None, "native consume: %s" % msg.error())
                        seen["native"].append((msg.partition(), msg.offset()))
                        msg = native.poll(0)
                else:
                    for r in call("GET", bases[m] + "/records?timeout=100", accept="application/vnd.kafka.binary.v2+json"):
                        seen[m].append((r["partition"], r["offset"]))

        def wait_stable(members, n):
            deadline = time.monotonic() + 40
            while True:
                poll_all(members)
                g = call("GET", REST_URL + "/v3/clusters/%s/consumer-groups/%s" % (cluster, group))
                cs = call("GET", REST_URL + "/v3/clusters/%s/consumer-groups/%s/consumers" % (cluster, group))["data"]
                if g["state"] == "STABLE" and len(cs) == n:
                    return
                check(time.monotonic() < deadline, "group %s: state %s with %d members, want STABLE with %d" % (group, g["state"], len(cs), n))

        def read_round(members, want):
            for m in seen:
                seen[m] = []
            deadline = time.monotonic() + 30
            while sum(len(v) for v in seen.values()) < len(want):
                check(time.monotonic() < deadline, "read %d of %d records" % (sum(len(v) for v in seen.values()), len(want)))
                poll_all(members)
            poll_all(members)  # a duplicate would come now
            exact(want, [x for v in seen.values() for x in v])
            return {m: sorted({p for p, _ in v}) for m, v in seen.items() if v}

        wait_stable(["a", "b", "native"], 3)
        acked = kafka_produce(topic, [(("k%d" % i).encode(), b"v%d" % i) for i in range(60)])
        parts = read_round(["a", "b", "native"], [(p, o) for p, o, _, _ in acked])
        check(len(parts) == 3, "records went to %s: every member should have a partition" % parts)
        for m in ("a", "b"):
            call("POST", bases[m] + "/offsets", None, ctype=V2, want=200)
        native.commit(asynchronous=False)
        call("DELETE", bases.pop("b"), ctype=V2, want=204)
        wait_stable(["a", "native"], 2)
        acked2 = kafka_produce(topic, [(("k%d" % i).encode(), b"w%d" % i) for i in range(60)])
        parts2 = read_round(["a", "native"], [(p, o) for p, o, _, _ in acked2])
        check(sorted(p for v in parts2.values() for p in v) == list(range(PARTITIONS)),
              "after the rebalance the two members read partitions %s" % parts2)
        return "3 members (2 proxies, 1 native) read 60 records once, %s; after one left, 2 read 60 more once, %s" % (parts, parts2)
    finally:
        for b in bases.values():
            HTTP.call("DELETE", b, ctype=V2)
        native.close()
        proc.terminate()
        proc.wait(10)


def main():
    global HTTP
    if "--http" in sys.argv and sys.argv[sys.argv.index("--http") + 1] == "curl":
        HTTP = CurlHTTP()
    feature("v2-produce-binary", check_produce_binary)
    feature("v2-produce-json", check_produce_json)
    for fmt in ("avro", "jsonschema", "protobuf"):
        feature("v2-produce-" + fmt, check_produce_schema(fmt))
    feature("v3-produce-headers", check_produce_v3_headers)
    for fmt in ("binary", "json", "avro", "jsonschema", "protobuf"):
        feature("v2-consume-" + fmt, check_consume(fmt))
    if HTTP.name != "curl":  # once: it checks the proxies, not the HTTP client
        feature("v2-group-with-native", check_group_with_native)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
