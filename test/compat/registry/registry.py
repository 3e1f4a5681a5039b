#!/usr/bin/env python3
"""Samsa's Schema Registry with confluent-kafka-python (README.md here).

Drives confluent-kafka-python's SchemaRegistryClient and its Avro, JSON
Schema and Protobuf serializers against `samsa registry` at $SR_URL, with
the records going through the Kafka cluster at $SAMSA_BOOTSTRAP, and
appends one JSON result line per feature to $COMPAT_RESULTS
(test/compat/README.md).

Usage:
    registry.py single                  the format and evolution features
    registry.py cluster                 the same, and the two-instance ones:
        needs SR_URL2 (a secondary of SR_URL's group), SR_PRIMARY_PID
        (SR_URL's process, killed with SIGKILL) and SR_TOPIC (the store)
"""

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
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

BOOTSTRAP = os.environ["SAMSA_BOOTSTRAP"]
RESULTS = os.environ["COMPAT_RESULTS"]
SR_URL = os.environ["SR_URL"]
RUN = uuid.uuid4().hex[:6]
CLIENT = "confluent-kafka-python"
VERSION = confluent_kafka.__version__
RECORDS = 30
PARTITIONS = 3
FEATURE_TIMEOUT = 60
# The mutation hook (test/compat/README.md): after each produce a plain
# producer writes one more copy of the last record of a partition, and the
# checker is not told: every consume check must then fail.
INJECT_DUPLICATE = os.environ.get("COMPAT_INJECT_DUPLICATE", "") not in ("", "0")
# librdkafka's informational lines (telemetry) would bury the results.
KAFKA = {"bootstrap.servers": BOOTSTRAP, "log_level": 4}


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


class Timeout(Exception):
    pass


def on_alarm(*_):
    raise Timeout("timed out after %ds" % FEATURE_TIMEOUT)


failed = 0


def feature(name, fn, timeout=FEATURE_TIMEOUT):
    """Runs fn, appends its result line; fn returns the pass detail."""
    global failed
    start = time.monotonic()
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(timeout)
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
        f.write(json.dumps({"client": CLIENT, "version": VERSION, "feature": name,
                            "result": result, "detail": detail}) + "\n")
    print("%-5s %-30s %5.1fs  %s" % (result, name, time.monotonic() - start, detail), flush=True)


# ---------------------------------------------------------------- Kafka side

def create_topic(topic):
    admin = AdminClient(dict(KAFKA))
    fut = admin.create_topics([NewTopic(topic, PARTITIONS, 1)], operation_timeout=10)[topic]
    fut.result(timeout=20)
    # A cluster's brokers learn of a topic a moment after CreateTopics
    # answers: wait until the metadata has a leader for every partition.
    deadline = time.monotonic() + 20
    while True:
        md = admin.list_topics(topic, timeout=5).topics.get(topic)
        if md and md.error is None and len(md.partitions) == PARTITIONS and \
                all(p.leader >= 0 for p in md.partitions.values()):
            return
        check(time.monotonic() < deadline, "topic %s has no leader for every partition" % topic)
        time.sleep(0.1)


def produce(topic, records):
    """records: [(key str, value bytes)]. Returns [(partition, offset, key,
    value)] as acknowledged, in production order."""
    p = Producer({**KAFKA, "acks": "all", "enable.idempotence": True})
    acked, errors = [], []

    def done(err, msg):
        if err:
            errors.append(str(err))
        else:
            acked.append((msg.partition(), msg.offset(), msg.key().decode(), msg.value()))
    for k, v in records:
        p.produce(topic, key=k.encode(), value=v, on_delivery=done)
    left = p.flush(30)
    check(not errors and left == 0 and len(acked) == len(records),
          "produce: %d acknowledged of %d, %d unsent, errors %s" % (len(acked), len(records), left, errors[:3]))
    if INJECT_DUPLICATE:
        part = min(a[0] for a in acked)
        last = [a for a in acked if a[0] == part][-1]
        plain = Producer({**KAFKA, "enable.idempotence": False})
        plain.produce(topic, key=last[2].encode(), value=last[3], partition=part)
        plain.flush(30)
    return acked


def read_to_end(topic):
    """Reads every partition of topic from its start until the consumer's
    position reaches the high watermark taken before reading. Returns
    [(partition, offset, key, value bytes)]."""
    c = Consumer({**KAFKA, "group.id": "sr-py-" + RUN,
                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    try:
        ends = {}
        for p in range(PARTITIONS):
            _, high = c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            ends[p] = high
        c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        got = []
        deadline = time.monotonic() + 30
        while True:
            pos = {tp.partition: tp.offset for tp in c.position([TopicPartition(topic, p) for p in ends])}
            behind = {p: (pos[p], e) for p, e in ends.items() if pos[p] < e}
            if not behind:
                return got
            check(time.monotonic() < deadline, "read %s: behind the end offsets (position, end): %s" % (topic, behind))
            m = c.poll(0.2)
            if m is None:
                continue
            check(m.error() is None, "consume %s: %s" % (topic, m.error()))
            got.append((m.partition(), m.offset(), m.key().decode(), m.value()))
    finally:
        c.close()


def exact(want, got):
    """want, got: lists of hashable records; got must be want as a
    multiset, and the failure names what is missing and extra."""
    w, g = Counter(want), Counter(got)
    missing, extra = w - g, g - w
    if missing or extra:
        show = lambda c: ", ".join(repr(x) for x in sorted(c.elements(), key=repr)[:3])
        raise Failure("read %d records, produced %d: %d missing [%s], %d extra [%s]" % (
            len(got), len(want), sum(missing.values()), show(missing), sum(extra.values()), show(extra)))


def wire_id(value):
    check(len(value) >= 5 and value[0] == 0, "value %r does not start with magic byte 0 and an id" % value[:8])
    return int.from_bytes(value[1:5], "big")


def round_trip(topic, subject, values, serializer, deserializer, canon):
    """Produces values (keyed k<i>) through serializer, reads the topic to
    its end offsets and checks that deserializer gives back exactly them,
    in production order per partition, each carrying the id the registry
    holds for subject's latest version. canon makes a decoded value
    hashable. Returns (the id, the records as read)."""
    create_topic(topic)
    vctx = SerializationContext(topic, MessageField.VALUE)
    acked = produce(topic, [("k%d" % i, serializer(v, vctx)) for i, v in enumerate(values)])
    sr = SchemaRegistryClient({"url": SR_URL})
    sid = sr.get_latest_version(subject).schema_id
    read = read_to_end(topic)
    decoded = []
    for p, o, k, raw in read:
        check(wire_id(raw) == sid, "record %s@%d carries schema id %d, the registry says %s has %d" % (
            p, o, wire_id(raw), subject, sid))
        decoded.append((p, k, canon(deserializer(raw, vctx))))
    # Acknowledgements arrive per partition, not in production order: the
    # key k<i> names the value produced.
    exact([(p, k, canon(values[int(k[1:])])) for p, _, k, _ in acked], decoded)
    for part in range(PARTITIONS):
        idx = [int(k[1:]) for p, k, _ in decoded if p == part]
        check(idx == sorted(idx), "partition %d: records not in production order: %s" % (part, idx))
    return sid, read


# ---------------------------------------------------------------- formats

AVRO_V1 = json.dumps({"type": "record", "name": "User", "namespace": "samsa.compat", "fields": [
    {"name": "name", "type": "string"},
    {"name": "age", "type": "int"},
    {"name": "emails", "type": {"type": "array", "items": "string"}},
    {"name": "nick", "type": ["null", "string"], "default": None}]})
AVRO_V2 = json.dumps({"type": "record", "name": "User", "namespace": "samsa.compat", "fields": [
    {"name": "name", "type": "string"},
    {"name": "age", "type": "long"},  # int -> long: a promotion, BACKWARD compatible
    {"name": "emails", "type": {"type": "array", "items": "string"}},
    {"name": "nick", "type": ["null", "string"], "default": None},
    {"name": "country", "type": "string", "default": "NL"}]})
# age long -> string, no default for the new field: refused.
AVRO_BAD = json.dumps({"type": "record", "name": "User", "namespace": "samsa.compat", "fields": [
    {"name": "name", "type": "string"},
    {"name": "age", "type": "string"},
    {"name": "zip", "type": "string"}]})

JSON_V1 = json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "title": "User", "type": "object",
                      "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                                     "tags": {"type": "array", "items": {"type": "string"}}},
                      "required": ["name", "age"], "additionalProperties": False})
# A property added to a closed content model: BACKWARD compatible.
JSON_V2 = json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "title": "User", "type": "object",
                      "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                                     "tags": {"type": "array", "items": {"type": "string"}},
                                     "country": {"type": "string"}},
                      "required": ["name", "age"], "additionalProperties": False})
# age's type changed: refused.
JSON_BAD = json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "title": "User", "type": "object",
                       "properties": {"name": {"type": "string"}, "age": {"type": "string"},
                                      "tags": {"type": "array", "items": {"type": "string"}}},
                       "required": ["name", "age"], "additionalProperties": False})

PROTO_V1 = '''syntax = "proto3";
package samsa.compat;

import "google/protobuf/timestamp.proto";

message User {
  string name = 1;
  int32 age = 2;
  repeated string emails = 3;
  google.protobuf.Timestamp created = 4;
  Address address = 5;
}

message Address {
  string city = 1;
}
'''
# A field added: compatible.
PROTO_V2 = PROTO_V1.replace("  Address address = 5;\n", "  Address address = 5;\n  string country = 6;\n")
# A field's kind changed (string -> int64): refused.
PROTO_BAD = PROTO_V1.replace("string name = 1;", "int64 name = 1;")


def user(i):
    return {"name": "user-%d" % i, "age": 20 + i, "emails": ["u%d@example.com" % i] * (i % 3), "nick": None if i % 2 else "n%d" % i}


def canon_dict(v):
    return json.dumps(v, sort_keys=True)


def check_avro():
    topic, subject = "sr-py-avro-" + RUN, "sr-py-avro-%s-value" % RUN
    sr = SchemaRegistryClient({"url": SR_URL})
    ser = AvroSerializer(sr, AVRO_V1)
    de = AvroDeserializer(sr)
    sid, _ = round_trip(topic, subject, [user(i) for i in range(RECORDS)], ser, de, canon_dict)
    return "schema id %d, %d records to the end offsets" % (sid, RECORDS)


def check_json():
    topic, subject = "sr-py-json-" + RUN, "sr-py-json-%s-value" % RUN
    sr = SchemaRegistryClient({"url": SR_URL})
    ser = JSONSerializer(JSON_V1, sr)
    de = JSONDeserializer(None, schema_registry_client=sr)  # the writer's schema, fetched by id
    values = [{"name": "user-%d" % i, "age": 20 + i, "tags": ["t%d" % j for j in range(i % 3)]} for i in range(RECORDS)]
    sid, _ = round_trip(topic, subject, values, ser, de, canon_dict)
    # The serializer validates: a value its schema refuses is not sent.
    try:
        ser({"name": "x", "age": "not a number"}, SerializationContext(topic, MessageField.VALUE))
    except Exception:
        pass
    else:
        raise Failure("JSONSerializer sent a value its registered schema refuses")
    return "schema id %d, %d records to the end offsets" % (sid, RECORDS)


_proto_modules = {}


def proto_module(text, name):
    """Compiles a .proto text with grpcio-tools' protoc into a Python
    module, as a user's build would, and imports it."""
    if name in _proto_modules:
        return _proto_modules[name]
    from grpc_tools import protoc
    import importlib
    import grpc_tools
    d = tempfile.mkdtemp(prefix="sr-proto-")
    with open(os.path.join(d, name + ".proto"), "w") as f:
        f.write(text)
    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    rc = protoc.main(["protoc", "-I" + d, "-I" + include, "--python_out=" + d, name + ".proto"])
    check(rc == 0, "protoc %s.proto: exit %d" % (name, rc))
    sys.path.insert(0, d)
    _proto_modules[name] = importlib.import_module(name + "_pb2")
    return _proto_modules[name]


def check_protobuf():
    pb = proto_module(PROTO_V1, "samsa_user_v1")
    topic, subject = "sr-py-protobuf-" + RUN, "sr-py-protobuf-%s-value" % RUN
    sr = SchemaRegistryClient({"url": SR_URL})
    ser = ProtobufSerializer(pb.User, sr, {"use.deprecated.format": False})
    de = ProtobufDeserializer(pb.User, {"use.deprecated.format": False}, schema_registry_client=sr)
    values = []
    for i in range(RECORDS):
        m = pb.User(name="user-%d" % i, age=20 + i, emails=["u%d@example.com" % i] * (i % 3))
        m.created.FromSeconds(1_700_000_000 + i)
        m.address.city = "city-%d" % (i % 4)
        values.append(m)
    sid, _ = round_trip(topic, subject, values, ser, de, lambda m: m.SerializeToString(deterministic=True))
    stored = sr.get_schema(sid)
    check(stored.schema_type == "PROTOBUF", "schema %d has type %s" % (sid, stored.schema_type))
    return "schema id %d (imports google/protobuf/timestamp.proto), %d records to the end offsets" % (sid, RECORDS)


def evolve(fmt, v1, v2, bad):
    """BACKWARD on a new subject: v1 registers, v2 is compatible and
    registers as version 2, bad is found incompatible and refused with
    409; the subject keeps versions 1 and 2."""
    sr = SchemaRegistryClient({"url": SR_URL})
    subject = "sr-py-evolve-%s-%s" % (fmt.lower(), RUN)
    sr.set_compatibility(subject, "BACKWARD")
    id1 = sr.register_schema(subject, Schema(v1, fmt))
    check(sr.test_compatibility(subject, Schema(v2, fmt)), "v2 found incompatible")
    id2 = sr.register_schema(subject, Schema(v2, fmt))
    check(id2 != id1, "v2 registered with v1's id %d" % id1)
    check(not sr.test_compatibility(subject, Schema(bad, fmt)), "the incompatible schema found compatible")
    try:
        sr.register_schema(subject, Schema(bad, fmt))
    except SchemaRegistryError as e:
        check(e.http_status_code == 409 and e.error_code == 409,
              "incompatible schema refused with %d/%d, want 409/409: %s" % (e.http_status_code, e.error_code, e))
        refusal = e.error_message
    else:
        raise Failure("the incompatible schema registered")
    versions = sr.get_versions(subject)
    check(versions == [1, 2], "versions %s, want [1, 2]" % versions)
    check(sr.get_version(subject, 2).schema_id == id2, "version 2 lost its id")
    return id1, id2, refusal


def check_evolution_avro():
    id1, id2, refusal = evolve("AVRO", AVRO_V1, AVRO_V2, AVRO_BAD)
    # Data written with v1 is read with v2 as the reader's schema: the new
    # field takes its default, age is promoted.
    sr = SchemaRegistryClient({"url": SR_URL})
    subject = "sr-py-evolve-avro-" + RUN
    ctx = SerializationContext("sr-py-evolve-" + RUN, MessageField.VALUE)
    ser = AvroSerializer(sr, AVRO_V1, conf={"auto.register.schemas": False,
                                            "subject.name.strategy": lambda *_: subject})
    raw = ser(user(7), ctx)
    check(wire_id(raw) == id1, "v1 data carries id %d, want %d" % (wire_id(raw), id1))
    got = AvroDeserializer(sr, AVRO_V2)(raw, ctx)
    want = dict(user(7), country="NL")
    check(got == want, "v1 data read with v2: %s, want %s" % (got, want))
    return "ids %d, %d; v1 data read as v2; refused: %s" % (id1, id2, refusal[:160])


def check_evolution_json():
    id1, id2, refusal = evolve("JSON", JSON_V1, JSON_V2, JSON_BAD)
    return "ids %d, %d; refused: %s" % (id1, id2, refusal[:160])


def check_evolution_protobuf():
    id1, id2, refusal = evolve("PROTOBUF", PROTO_V1, PROTO_V2, PROTO_BAD)
    return "ids %d, %d; refused: %s" % (id1, id2, refusal[:160])


# ---------------------------------------------------------------- two instances

def fresh(url):
    """A client with empty caches: every answer comes from the instance."""
    return SchemaRegistryClient({"url": url})


def store_view(url, prefix="sr-py-"):
    """This run's subjects named prefix... with their versions, as
    {(subject, version): (id, schema text)}, read through one instance."""
    sr = fresh(url)
    view = {}
    for s in sr.get_subjects():
        if not s.startswith(prefix) or RUN not in s:
            continue
        for v in sr.get_versions(s):
            rv = sr.get_version(s, v)
            view[(s, v)] = (rv.schema_id, rv.schema.schema_str)
    return view


def wait_same(urls, want, what, seconds=30):
    """Waits until every instance's view holds want (a secondary answers
    from its own reader, a moment behind the primary)."""
    deadline = time.monotonic() + seconds
    while True:
        views = {u: store_view(u) for u in urls}
        bad = {u: v for u, v in views.items() if {k: v[k] for k in want if k in v} != want}
        if not bad:
            return views
        if time.monotonic() > deadline:
            u, v = next(iter(bad.items()))
            raise Failure("%s: %s differs from what was written: has %s, want %s" % (what, u, sorted(v.items()), sorted(want.items())))
        time.sleep(0.2)


two = {}


def check_two_instances():
    a, b = SR_URL, os.environ["SR_URL2"]
    ra = fresh(a).register_schema("sr-py-two-a-" + RUN, Schema(AVRO_V1, "AVRO"))   # on the primary
    rb = fresh(b).register_schema("sr-py-two-b-" + RUN, Schema(JSON_V1, "JSON"))   # forwarded by the secondary
    rc = fresh(b).register_schema("sr-py-two-c-" + RUN, Schema(AVRO_V1, "AVRO"))   # same schema: same global id
    check(rc == ra and rb != ra, "ids: %d (A), %d (B), %d (A's schema through B), want the first and last equal" % (ra, rb, rc))
    want = store_view(a, "sr-py-two-")
    check(len(want) == 3, "the primary holds %d versions of this run, want 3: %s" % (len(want), want))
    wait_same([a, b], want, "reads")
    for url in (a, b):
        for sid in {ra, rb}:
            fresh(url).get_schema(sid)
    # A producer serializing through one instance, a consumer
    # deserializing through the other.
    topic, subject = "sr-py-two-" + RUN, "sr-py-two-%s-value" % RUN
    ser = AvroSerializer(fresh(b), AVRO_V1)
    de = AvroDeserializer(fresh(a))
    sid, read = round_trip(topic, subject, [user(i) for i in range(RECORDS)], ser, de, canon_dict)
    two.update(topic=topic, subject=subject, read=read, values=[user(i) for i in range(RECORDS)])
    return "ids %d (through the primary), %d (through the secondary); Avro records serialized through the secondary, read through the primary" % (ra, rb)


def check_primary_killed():
    a, b = SR_URL, os.environ["SR_URL2"]
    check(two, "needs registry-two-instances to have passed")
    before = wait_same([a, b], store_view(a), "before the kill")[b]
    os.kill(int(os.environ["SR_PRIMARY_PID"]), signal.SIGKILL)
    killed = time.monotonic()
    # The secondary takes over once the group's coordinator has expired
    # the dead primary's session: writes answer 50004 until then.
    sr = fresh(b)
    new_subject = "sr-py-after-" + RUN
    fresh_schema = json.dumps({"type": "record", "name": "After" + RUN, "fields": [{"name": "a", "type": "string"}]})
    refusals = Counter()
    while True:
        try:
            new_id = sr.register_schema(new_subject, Schema(fresh_schema, "AVRO"))
            break
        except SchemaRegistryError as e:
            refusals["%d" % e.error_code] += 1
        except Exception as e:
            refusals[type(e).__name__] += 1
        check(time.monotonic() - killed < 100, "no write through the survivor within 100 s of the kill: %s" % dict(refusals))
        time.sleep(0.5)
    took = time.monotonic() - killed
    after = store_view(b)
    lost = {k: v for k, v in before.items() if after.get(k) != v}
    check(not lost, "after the takeover these versions are gone or changed: %s" % lost)
    max_before = max(i for i, _ in before.values())
    check(new_id > max_before, "the first schema after the takeover got id %d, not past the largest before (%d)" % (new_id, max_before))
    # Registering a known schema again answers its old id.
    for (s, v), (sid, text) in before.items():
        st = fresh(b).get_version(s, v).schema.schema_type
        again = fresh(b).register_schema(s, Schema(text, st))
        check(again == sid, "%s v%d registered again: id %d, was %d" % (s, v, again, sid))
    # The records written before the kill still decode through the survivor.
    de, ctx = AvroDeserializer(fresh(b)), SerializationContext(two["topic"], MessageField.VALUE)
    got = Counter(canon_dict(de(raw, ctx)) for _, _, _, raw in two["read"])
    check(got == Counter(canon_dict(v) for v in two["values"]), "records from before the kill decode differently")
    return "survivor took writes %.1fs after kill -9 (refusals meanwhile: %s); %d versions kept with their ids; new id %d" % (
        took, dict(refusals), len(before), new_id)


def main():
    part = sys.argv[1] if len(sys.argv) > 1 else "single"
    feature("registry-avro", check_avro)
    feature("registry-json", check_json)
    feature("registry-protobuf", check_protobuf)
    feature("registry-evolution-avro", check_evolution_avro)
    feature("registry-evolution-json", check_evolution_json)
    feature("registry-evolution-protobuf", check_evolution_protobuf)
    if part == "cluster":
        feature("registry-two-instances", check_two_instances)
        feature("registry-primary-killed", check_primary_killed, timeout=150)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
