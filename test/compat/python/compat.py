#!/usr/bin/env python3
"""Samsa compatibility suite for the Python clients.

Drives confluent-kafka-python (librdkafka) and kafka-python against the
broker at $SAMSA_BOOTSTRAP and appends one JSON result line per client and
feature to $COMPAT_RESULTS (see test/compat/README.md).

Every feature runs in a child process of its own (``compat.py --one CLIENT
FEATURE``) with a timeout, so a hung client cannot stall the suite. The
parent runs up to $COMPAT_PY_JOBS (default 2) children at once.

With COMPAT_PART=security it runs the security part's features instead
(security.py), against the secured broker the README's variables describe.

Usage:
    compat.py                       run everything
    compat.py --only FEATURE[,..]   run some features for both clients
    compat.py --clients NAME[,..]   run some clients
    compat.py --one CLIENT FEATURE  run one feature in this process (child)
"""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import traceback
import uuid
from collections import Counter

# security.py imports this file as "compat": the same module, not a second
# copy with exception classes of its own, when it runs as the main script.
sys.modules.setdefault("compat", sys.modules[__name__])

BOOTSTRAP = os.environ.get("SAMSA_BOOTSTRAP", "127.0.0.1:9092")
SECURITY = os.environ.get("COMPAT_PART") == "security"
RUN_ID = os.environ.get("COMPAT_PY_RUN_ID") or uuid.uuid4().hex[:6]

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
FEATURES = (
    ["create-topic", "delete-topic"]
    + ["produce-" + c for c in CODECS]
    + ["acks-0", "acks-1", "acks-all", "keys-headers",
       "group-consume-commit", "rebalance-two-members", "list-offsets",
       "reset-offsets", "describe-configs", "idempotent-produce", "transactions"]
    # this suite's own
    + ["transactions-send-offsets", "rebalance-two-members-kip848"]
)
# Per-feature timeouts (seconds); the rest get DEFAULT_TIMEOUT.
DEFAULT_TIMEOUT = 45
TIMEOUTS = {"rebalance-two-members": 75, "rebalance-two-members-kip848": 75, "transactions": 60,
            "transactions-send-offsets": 60, "group-consume-commit": 60, "reset-offsets": 60}
# Mutation hook for reviewers (test/compat/README.md): after each measured
# produce, a separate plain producer writes one more copy of the last record
# of one partition, and the checker is not told. Every consume check must
# then fail.
INJECT_DUPLICATE = os.environ.get("COMPAT_INJECT_DUPLICATE", "") not in ("", "0")
SUITE_BUDGET = float(os.environ.get("COMPAT_PY_BUDGET", "225"))  # seconds for all features

CLIENTS = ["confluent-kafka-python", "kafka-python"]


class Unsupported(Exception):
    """The client cannot do this; the message says why."""


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def topic_name(client, feature):
    short = {"confluent-kafka-python": "ck", "kafka-python": "kp"}[client]
    return "py-%s-%s-%s" % (short, feature, RUN_ID)


class Deadline:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self):
        return self.end - time.monotonic()

    def expired(self):
        return self.left() <= 0


def show(items, n=3):
    items = sorted(items, key=repr)
    return "%s%s" % (", ".join(repr(x) for x in items[:n]), ", ..." if len(items) > n else "")


def exact(want, got, what="records", note=""):
    """want, got: lists of hashable records. got must be exactly want as a
    multiset: nothing missing, nothing extra, nothing twice."""
    w, g = Counter(want), Counter(got)
    missing, extra = w - g, g - w
    if missing or extra:
        raise Failure("%s: read %d records, produced %d: %d missing [%s], %d extra [%s]%s" % (
            what, len(got), len(want), sum(missing.values()), show(missing.elements()),
            sum(extra.values()), show(extra.elements()), note))


def verify_produced(delivered, read, what="records"):
    """delivered: [(partition, offset, key, value)] from the producer's acks;
    read: [(partition, offset, key, value)] in consumption order, read to the
    end offsets. The read records must be exactly the delivered ones (as a
    multiset), in offset order per partition."""
    twice = Counter((p, k, v) for p, _, k, v in read) - Counter((p, k, v) for p, _, k, v in delivered)
    exact(delivered, read, what, "; read more often than produced: [%s]" % show(twice.elements()) if twice else "")
    per_part = {}
    for p, o, k, v in read:
        per_part.setdefault(p, []).append((o, k, v))
    for p, recs in per_part.items():
        offs = [o for o, _, _ in recs]
        check(offs == sorted(offs), "partition %d read out of offset order" % p)
        # production order: value "v<i>" with i increasing per partition
        idx = [int(v.decode()[1:]) for _, _, v in recs]
        check(idx == sorted(idx), "partition %d records not in production order" % p)


def in_offset_order(read, what="records"):
    for p in {r[0] for r in read}:
        offs = [r[1] for r in read if r[0] == p]
        check(offs == sorted(offs), "%s: partition %d read out of offset order" % (what, p))


def last_of_a_partition(acked):
    """acked: [(partition, offset, key, value)] in produce order. The last
    record of the lowest partition that has any, as (partition, key, value):
    what the duplicate-injection hook copies."""
    p = min(r[0] for r in acked)
    last = [r for r in acked if r[0] == p][-1]
    return last[0], last[2], last[3]


def wait_every_broker(topic, partitions, dl):
    """Waits until every bootstrap broker's own metadata has the topic with
    a leader for each partition. A cluster's brokers learn of a new topic a
    moment after CreateTopics answers (in Kafka as in Samsa); a client sent
    to one that has not yet would fail on the test's account, so the
    harness waits as Kafka's own tests wait for all brokers' metadata. A
    fresh client asks its bootstrap broker first. One broker: at once."""
    from confluent_kafka.admin import AdminClient
    for addr in BOOTSTRAP.split(","):
        admin = AdminClient({"bootstrap.servers": addr})
        while True:
            md = admin.list_topics(topic=topic, timeout=5)
            t = md.topics.get(topic)
            if t is not None and t.error is None and len(t.partitions) == partitions and \
                    all(p.leader >= 0 for p in t.partitions.values()):
                break
            if dl.left() < 1:
                raise Failure("topic %s not in %s's metadata with %d partitions: %r" % (
                    topic, addr, partitions, t and (t.error, sorted(t.partitions))))
            time.sleep(0.2)


def settle(cl, topic, partitions, n, seconds=10):
    """acks=0 gets no answer: waits until the end offsets of topic add up
    to at least n records (or seconds pass) before anything reads them."""
    end = time.monotonic() + seconds
    while sum(cl.end_offsets(topic, partitions).values()) < n and time.monotonic() < end:
        time.sleep(0.2)


def values_of(read):
    return sorted(r[3] for r in read)


# --------------------------------------------------------------------------
# confluent-kafka-python


def rebalance_two_members(cl, feature, member_loop):
    """rebalance-two-members for client cl: member 0 joins alone and gets
    every partition, member 1's join makes the group rebalance, then 200
    records are produced and the members read until, for every partition,
    the position past the last record read reaches the end offset. The
    records read by both together must be exactly those produced (none read
    twice, by one member or across the two), the two on disjoint partitions,
    and the group's committed offsets must then equal the end offsets.
    member_loop(i, group, topic, stop, state) runs member i until stop is
    set, keeping state["assign"] (its sorted partitions) and state["recs"]
    ((partition, offset, key, value) tuples) up to date, and committing
    after each poll that returned records."""
    t = topic_name(cl.name, feature)
    g = "g-" + t
    nparts = 4
    cl.create(t, nparts)
    stop = threading.Event()
    state = {0: {"assign": None, "recs": [], "err": None}, 1: {"assign": None, "recs": [], "err": None}}

    def member(i):
        try:
            member_loop(i, g, t, stop, state[i])
        except Exception as e:  # noqa
            state[i]["err"] = "%s: %s" % (type(e).__name__, e)

    def errors():
        for i in (0, 1):
            if state[i]["err"]:
                raise Failure("member %d: %s" % (i, state[i]["err"]))

    ths = [threading.Thread(target=member, args=(i,), daemon=True) for i in (0, 1)]
    try:
        ths[0].start()
        while state[0]["assign"] != list(range(nparts)):
            errors()
            if cl.dl.left() < 25:
                raise Failure("lone member 0 never got all partitions: %r" % state[0]["assign"])
            time.sleep(0.2)
        ths[1].start()
        # wait until both members hold a share of the partitions
        while True:
            a0, a1 = state[0]["assign"], state[1]["assign"]
            if a0 and a1 and sorted(a0 + a1) == list(range(nparts)):
                break
            errors()
            if cl.dl.left() < 15:
                raise Failure("no split assignment: member0=%r member1=%r" % (a0, a1))
            time.sleep(0.2)
        p = cl.producer()
        acked = cl.produce(p, t, [(b"k%d" % i, b"v%d" % i, i % nparts, None, None) for i in range(200)])
        if hasattr(p, "close"):
            p.close()
        cl.inject(t, acked)
        ends = cl.end_offsets(t, nparts)
        while True:
            errors()
            pos = {pp: 0 for pp in range(nparts)}
            for i in (0, 1):
                for r in list(state[i]["recs"]):
                    pos[r[0]] = max(pos[r[0]], r[1] + 1)
            behind = {pp: (pos[pp], e) for pp, e in ends.items() if pos[pp] < e}
            if not behind:
                break
            if cl.dl.left() < 5:
                raise Failure("members not at the end offsets in time: (position, end) %r; read %d + %d" % (
                    behind, len(state[0]["recs"]), len(state[1]["recs"])))
            time.sleep(0.1)
        # the members commit after each poll that returned records
        while True:
            errors()
            committed = cl.committed_offsets(g, t)
            if committed == ends:
                break
            if cl.dl.left() < 3:
                raise Failure("group's committed offsets %r, want the end offsets %r" % (committed, ends))
            time.sleep(0.2)
    finally:
        stop.set()
        for th in ths:
            if th.ident is not None:  # started
                th.join(10)
    errors()
    r0, r1 = state[0]["recs"], state[1]["recs"]
    check(r0 and r1, "one member read nothing (%d/%d)" % (len(r0), len(r1)))
    check(not ({r[0] for r in r0} & {r[0] for r in r1}), "members read the same partition")
    verify_produced(acked, r0 + r1, "both members")


class Confluent:
    name = "confluent-kafka-python"

    def __init__(self, deadline):
        import confluent_kafka
        from confluent_kafka.admin import AdminClient
        self.ck = confluent_kafka
        self.dl = deadline
        self.admin = AdminClient(self.conf())

    @staticmethod
    def version():
        from importlib.metadata import version
        return version("confluent-kafka")

    def conf(self, **kw):
        c = {"bootstrap.servers": BOOTSTRAP}
        c.update({k.replace("_", "."): v for k, v in kw.items()})
        return c

    # helpers
    def create(self, topic, partitions=3, config=None):
        from confluent_kafka.admin import NewTopic
        fs = self.admin.create_topics([NewTopic(topic, partitions, 1, config=config or {})],
                                      operation_timeout=10, request_timeout=15)
        fs[topic].result(timeout=20)
        self.wait_topic(topic, partitions)

    def wait_topic(self, topic, partitions):
        wait_every_broker(topic, partitions, self.dl)

    def producer(self, **kw):
        kw.setdefault("linger_ms", 20)
        return self.ck.Producer(self.conf(**kw))

    def produce(self, p, topic, records, flush=True):
        """records: [(key, value, partition or None, headers or None, ts or None)].
        Returns [(partition, offset, key, value)] as acknowledged."""
        acked, errors = [], []

        def cb(err, msg):
            if err is not None:
                errors.append(str(err))
            else:
                acked.append((msg.partition(), msg.offset(), msg.key(), msg.value()))

        for key, value, part, headers, ts in records:
            kw = {"key": key, "value": value, "on_delivery": cb}
            if part is not None:
                kw["partition"] = part
            if headers is not None:
                kw["headers"] = headers
            if ts is not None:
                kw["timestamp"] = ts
            while True:
                try:
                    p.produce(topic, **kw)
                    break
                except BufferError:
                    p.poll(0.1)
            p.poll(0)
        if flush:
            left = p.flush(max(1, self.dl.left() - 5))
            check(left == 0, "%d records not delivered by flush" % left)
        check(not errors, "delivery errors: %s" % errors[:3])
        return acked

    def end_offsets(self, topic, partitions, isolation="read_uncommitted"):
        """{partition: end offset}: the high watermark, or the last stable
        offset for read_committed (AdminClient.list_offsets)."""
        from confluent_kafka import IsolationLevel
        from confluent_kafka.admin import OffsetSpec
        TP = self.ck.TopicPartition
        level = IsolationLevel.READ_COMMITTED if isolation == "read_committed" else IsolationLevel.READ_UNCOMMITTED
        fs = self.admin.list_offsets({TP(topic, p): OffsetSpec.latest() for p in range(partitions)},
                                     isolation_level=level, request_timeout=10)
        return {tp.partition: f.result(timeout=15).offset for tp, f in fs.items()}

    def committed_offsets(self, group, topic):
        from confluent_kafka import ConsumerGroupTopicPartitions
        fs = self.admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)], request_timeout=10)
        return {tp.partition: tp.offset for tp in fs[group].result(timeout=15).topic_partitions
                if tp.topic == topic and tp.offset >= 0}

    def inject(self, topic, acked):
        """The mutation hook: one more copy of the last record of a partition,
        through a plain producer of its own."""
        if not INJECT_DUPLICATE:
            return
        part, key, value = last_of_a_partition(acked)
        p = self.ck.Producer(self.conf(enable_idempotence=False, acks="all"))
        p.produce(topic, key=key, value=value, partition=part)
        check(p.flush(10) == 0, "injected duplicate not delivered")

    def read(self, topic, partitions, isolation="read_uncommitted", raw=False):
        """Every record of the topic, read from the beginning to the end
        offsets (taken now, for the isolation level)."""
        TP = self.ck.TopicPartition
        ends = self.end_offsets(topic, partitions, isolation)
        c = self.ck.Consumer(self.conf(group_id="reader-" + uuid.uuid4().hex[:8],
                                       enable_auto_commit=False, isolation_level=isolation,
                                       auto_offset_reset="earliest", enable_partition_eof=True))
        try:
            c.assign([TP(topic, p, self.ck.OFFSET_BEGINNING) for p in range(partitions)])
            return self.read_to_end(c, ends, raw=raw, what="reader (%s)" % isolation)
        finally:
            c.close()

    def group_consumer(self, group, **kw):
        if kw.get("group_protocol") != "consumer":  # KIP-848 sets the session timeout on the broker
            kw.setdefault("session_timeout_ms", 10000)
        return self.ck.Consumer(self.conf(group_id=group, enable_auto_commit=False,
                                          auto_offset_reset="earliest", enable_partition_eof=True, **kw))

    def read_to_end(self, c, ends, raw=False, what="consumer"):
        """Polls c until its position in every partition p of ends has
        reached ends[p]: past the last record read, or where librdkafka
        reports the partition's end (enable.partition.eof, which counts
        transaction markers). Returns the records read as (partition,
        offset, key, value), or the messages themselves with raw; fails at
        the feature's deadline."""
        pos = {p: 0 for p in ends}
        out = []
        while True:
            behind = {p: (pos[p], e) for p, e in ends.items() if pos[p] < e}
            if not behind:
                return out
            if self.dl.left() < 2:
                raise Failure("%s not at the end offsets in time: (position, end) %r; %d records read" % (
                    what, behind, len(out)))
            m = c.poll(0.2)
            if m is None:
                continue
            err = m.error()
            if err is not None:
                if err.code() == self.ck.KafkaError._PARTITION_EOF:
                    pos[m.partition()] = max(pos.get(m.partition(), 0), m.offset())
                    continue
                raise Failure("%s: consume error: %s" % (what, err))
            pos[m.partition()] = max(pos.get(m.partition(), 0), m.offset() + 1)
            out.append(m if raw else (m.partition(), m.offset(), m.key(), m.value()))

    # features
    def f_create_topic(self, feature):
        t = topic_name(self.name, feature)
        self.create(t, 3)

    def f_delete_topic(self, feature):
        t = topic_name(self.name, feature)
        self.create(t, 3)
        fs = self.admin.delete_topics([t], operation_timeout=10, request_timeout=15)
        fs[t].result(timeout=20)
        while t in self.admin.list_topics(timeout=5).topics:
            if self.dl.left() < 1:
                raise Failure("topic still in metadata after delete")
            time.sleep(0.2)

    def produce_codec(self, feature, codec):
        t = topic_name(self.name, feature)
        self.create(t, 3)
        p = self.producer(compression_type=codec, linger_ms=50)
        recs = [(b"k%d" % (i % 10), b"v%d" % i, None, None, None) for i in range(100)]
        acked = self.produce(p, t, recs)
        check(len(acked) == 100, "acked %d of 100" % len(acked))
        self.inject(t, acked)
        verify_produced(acked, self.read(t, 3))

    def acks(self, feature, acks):
        t = topic_name(self.name, feature)
        self.create(t, 3)
        p = self.producer(acks=acks, enable_idempotence=False)
        recs = [(b"k%d" % i, b"v%d" % i, None, None, None) for i in range(50)]
        acked = self.produce(p, t, recs)
        check(len(acked) == 50, "acked %d of 50" % len(acked))
        if acks == "0":
            settle(self, t, 3, 50)
        self.inject(t, acked)
        read = self.read(t, 3)
        exact(sorted(r[1] for r in recs), values_of(read), "values")
        if acks != "0":
            verify_produced(acked, read)

    def f_keys_headers(self, feature):
        t = topic_name(self.name, feature)
        self.create(t, 1)
        binary = bytes(range(256))
        recs = [
            (b"key-1", b"value-1", 0, [("h-empty", b""), ("h-bin", binary), ("h-dup", b"1"), ("h-dup", b"2")], None),
            (b"key-null-value", None, 0, [("h-null", None)], None),
            (None, b"null-key", 0, [], None),
            (binary, b"", 0, [("", b"empty-name")], None),
            (None, None, 0, None, None),
        ]
        p = self.producer()
        self.inject(t, self.produce(p, t, recs))
        got = self.read(t, 1, raw=True)
        check(len(got) == len(recs), "read %d records to the end offset, produced %d" % (len(got), len(recs)))
        for (key, value, _, headers, _), m in zip(recs, got):
            check(m.key() == key, "key %r read back as %r" % (key, m.key()))
            check(m.value() == value, "value %r read back as %r" % (value, m.value()))
            want = [(k, v) for k, v in (headers or [])]
            have = [(k, v) for k, v in (m.headers() or [])]
            check(have == want, "headers %r read back as %r" % (want, have))

    def f_group_consume_commit(self, feature):
        t = topic_name(self.name, feature)
        g = "g-" + t
        self.create(t, 3)
        p = self.producer()
        first = self.produce(p, t, [(b"k%d" % i, b"v%d" % i, i % 3, None, None) for i in range(30)])
        self.inject(t, first)
        ends = self.end_offsets(t, 3)
        c = self.group_consumer(g)
        c.subscribe([t])
        got = self.read_to_end(c, ends, what="first member")
        verify_produced(first, got, "first member")
        c.commit(asynchronous=False)
        c.close()
        committed = self.committed_offsets(g, t)
        check(committed == ends, "committed offsets %r, want the end offsets %r" % (committed, ends))
        second = self.produce(p, t, [(b"k%d" % i, b"v%d" % i, i % 3, None, None) for i in range(30, 50)])
        self.inject(t, second)
        ends2 = self.end_offsets(t, 3)
        c2 = self.group_consumer(g)
        c2.subscribe([t])
        got2 = self.read_to_end(c2, ends2, what="second member")
        c2.commit(asynchronous=False)
        c2.close()
        verify_produced(second, got2, "second member")
        committed = self.committed_offsets(g, t)
        check(committed == ends2, "committed offsets %r after the second member, want the end offsets %r" % (
            committed, ends2))

    def f_rebalance_two_members_kip848(self, feature):
        """rebalance-two-members with the KIP-848 consumer group protocol."""
        self.f_rebalance_two_members(feature, group_protocol="consumer")

    def f_rebalance_two_members(self, feature, **ckw):
        def member_loop(i, g, t, stop, st):
            c = self.group_consumer(g, client_id="m%d" % i, **ckw)
            c.subscribe([t])
            while not stop.is_set():
                m = c.poll(0.2)
                st["assign"] = sorted(tp.partition for tp in c.assignment())
                if m is None:
                    continue
                if m.error():
                    if m.error().code() == self.ck.KafkaError._PARTITION_EOF:
                        continue
                    raise Failure("member %d: %s" % (i, m.error()))
                st["recs"].append((m.partition(), m.offset(), m.key(), m.value()))
                try:
                    c.commit(asynchronous=False)
                except self.ck.KafkaException as e:  # a rebalance under way: the next record commits
                    st["commit_err"] = str(e)
            c.close()

        rebalance_two_members(self, feature, member_loop)

    def f_list_offsets(self, feature):
        from confluent_kafka.admin import OffsetSpec
        TP = self.ck.TopicPartition
        t = topic_name(self.name, feature)
        self.create(t, 1)
        base = int(time.time() * 1000) - 600000
        p = self.producer()
        # 10 records at base, base+1000, ... base+9000, but offset 7 has the max timestamp
        ts = [base + i * 1000 for i in range(10)]
        ts[7] = base + 20000
        self.produce(p, t, [(b"k", b"v%d" % i, 0, None, ts[i]) for i in range(10)])
        tp = TP(t, 0)
        specs = {"earliest": (OffsetSpec.earliest(), 0), "latest": (OffsetSpec.latest(), 10),
                 "ts=base+5000": (OffsetSpec.for_timestamp(base + 5000), 5),
                 "ts=base+5500": (OffsetSpec.for_timestamp(base + 5500), 6),
                 "ts=base+15000": (OffsetSpec.for_timestamp(base + 15000), 7),
                 "ts=future": (OffsetSpec.for_timestamp(base + 10 ** 7), -1),
                 "max-timestamp": (OffsetSpec.max_timestamp(), 7)}
        bad = []
        for what, (spec, want) in specs.items():
            fs = self.admin.list_offsets({tp: spec}, request_timeout=10)
            got = fs[tp].result(timeout=15).offset
            if got != want:
                bad.append("admin %s: %d, want %d" % (what, got, want))
        c = self.ck.Consumer(self.conf(group_id="lo-" + RUN_ID))
        try:
            lo, hi = c.get_watermark_offsets(tp, timeout=10, cached=False)
            if (lo, hi) != (0, 10):
                bad.append("watermarks (%d, %d), want (0, 10)" % (lo, hi))
            for q, want in [(base + 5000, 5), (base + 5500, 6), (base + 10 ** 7, -1)]:
                r = c.offsets_for_times([TP(t, 0, q)], timeout=10)[0]
                if r.error or r.offset != want:
                    bad.append("offsets_for_times(base+%d): %s %s, want %d" % (q - base, r.offset, r.error, want))
        finally:
            c.close()
        check(not bad, "; ".join(bad))

    def f_reset_offsets(self, feature):
        from confluent_kafka import ConsumerGroupTopicPartitions
        TP = self.ck.TopicPartition
        t = topic_name(self.name, feature)
        g = "g-" + t
        self.create(t, 3)
        p = self.producer()
        acked = self.produce(p, t, [(b"k%d" % i, b"v%d" % i, i % 3, None, None) for i in range(30)])
        self.inject(t, acked)
        ends = self.end_offsets(t, 3)
        c = self.group_consumer(g)
        c.subscribe([t])
        verify_produced(acked, self.read_to_end(c, ends, what="first member"), "first member")
        c.commit(asynchronous=False)
        c.close()
        # rewind partitions 0 and 1 to offset 5, partition 2 to 8
        target = {0: 5, 1: 5, 2: 8}
        fs = self.admin.alter_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(g, [TP(t, pp, o) for pp, o in target.items()])], request_timeout=10)
        res = fs[g].result(timeout=15)
        for tp in res.topic_partitions:
            check(tp.error is None, "alter partition %d: %s" % (tp.partition, tp.error))
        fs = self.admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(g)], request_timeout=10)
        listed = {tp.partition: tp.offset for tp in fs[g].result(timeout=15).topic_partitions if tp.topic == t}
        check(listed == target, "listed offsets %r after alter, want %r" % (listed, target))
        c2 = self.group_consumer(g)
        c2.subscribe([t])
        got2 = self.read_to_end(c2, ends, what="member after reset")
        c2.close()
        want = [a for a in acked if a[1] >= target[a[0]]]
        verify_produced(want, got2, "member after reset")

    def f_describe_configs(self, feature):
        from confluent_kafka.admin import (ConfigResource, ResourceType, ConfigEntry,
                                           AlterConfigOpType, ConfigSource)
        t = topic_name(self.name, feature)
        self.create(t, 1, config={"retention.ms": "123456789", "max.message.bytes": "200000"})
        res = ConfigResource(ResourceType.TOPIC, t)

        def describe():
            fs = self.admin.describe_configs([res], request_timeout=10)
            return fs[res].result(timeout=15)

        cfg = describe()
        bad = []
        for k, v in [("retention.ms", "123456789"), ("max.message.bytes", "200000")]:
            e = cfg.get(k)
            if e is None or e.value != v:
                bad.append("%s=%r, want %r" % (k, e and e.value, v))
            elif e.source != ConfigSource.DYNAMIC_TOPIC_CONFIG.value:
                bad.append("%s source %r, want DYNAMIC_TOPIC_CONFIG" % (k, e.source))
        e = cfg.get("cleanup.policy")
        if e is None or e.value != "delete" or not e.is_default:
            bad.append("cleanup.policy default: %r" % (e and (e.value, e.source, e.is_default)))
        check(not bad, "describe: " + "; ".join(bad))
        # incremental alter: SET retention.ms, DELETE max.message.bytes
        alter = ConfigResource(ResourceType.TOPIC, t, incremental_configs=[
            ConfigEntry("retention.ms", "987654321", incremental_operation=AlterConfigOpType.SET),
            ConfigEntry("max.message.bytes", None, incremental_operation=AlterConfigOpType.DELETE)])
        fs = self.admin.incremental_alter_configs([alter], request_timeout=10)
        for f in fs.values():
            f.result(timeout=15)
        cfg = describe()
        r, m = cfg.get("retention.ms"), cfg.get("max.message.bytes")
        check(r is not None and r.value == "987654321", "after alter retention.ms=%r" % (r and r.value))
        check(m is not None and m.is_default, "after DELETE max.message.bytes=%r (source %r)" % (
            m and m.value, m and m.source))

    def f_transactions_send_offsets(self, feature):
        """consume-transform-produce: offsets sent to a committed transaction
        are committed for the group, those of an aborted one are not."""
        TP = self.ck.TopicPartition
        src, dst = topic_name(self.name, feature), topic_name(self.name, feature) + "-out"
        g = "g-" + src
        self.create(src, 1)
        self.create(dst, 1)
        inp = self.produce(self.producer(), src, [(b"k", b"v%d" % i, 0, None, None) for i in range(20)])
        self.inject(src, inp)
        c = self.group_consumer(g, isolation_level="read_committed")
        c.subscribe([src])
        got = self.read_to_end(c, self.end_offsets(src, 1, "read_committed"), what="input reader")
        verify_produced(inp, got, "input records")
        p = self.producer(transactional_id="tx-" + src, transaction_timeout_ms=30000)
        p.init_transactions(15)
        out = []
        for upto, commit in ((10, True), (20, False)):
            p.begin_transaction()
            out += self.produce(p, dst, [(b"k", b"out-%d" % i, 0, None, None) for i in range(upto - 10, upto)])
            p.send_offsets_to_transaction([TP(src, 0, upto)], c.consumer_group_metadata(), 15)
            if commit:
                p.commit_transaction(15)
            else:
                p.abort_transaction(15)
        self.inject(dst, out[:10])
        # the group's committed offset is the committed transaction's
        deadline = time.monotonic() + 10
        while True:
            off = c.committed([TP(src, 0)], timeout=10)[0].offset
            if off == 10 or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        c.close()
        check(off == 10, "group offset %d after a committed (10) and an aborted (20) transaction" % off)
        rc = self.read(dst, 1, isolation="read_committed")
        exact([b"out-%d" % i for i in range(10)], [r[3] for r in rc], "read_committed output")

    def f_idempotent_produce(self, feature):
        t = topic_name(self.name, feature)
        self.create(t, 3)
        p = self.producer(enable_idempotence=True, acks="all")
        acked = self.produce(p, t, [(b"k%d" % i, b"v%d" % i, None, None, None) for i in range(200)])
        check(len(acked) == 200, "acked %d of 200" % len(acked))
        self.inject(t, acked)
        verify_produced(acked, self.read(t, 3))

    def f_transactions(self, feature):
        t = topic_name(self.name, feature)
        self.create(t, 3)
        p = self.producer(transactional_id="tx-" + t, transaction_timeout_ms=30000)
        p.init_transactions(15)
        p.begin_transaction()
        c1 = self.produce(p, t, [(b"k%d" % i, b"c%d" % i, None, None, None) for i in range(10)])
        p.commit_transaction(15)
        p.begin_transaction()
        a = self.produce(p, t, [(b"k%d" % i, b"a%d" % i, None, None, None) for i in range(10)])
        p.abort_transaction(15)
        p.begin_transaction()
        c2 = self.produce(p, t, [(b"k%d" % i, b"d%d" % i, None, None, None) for i in range(5)])
        p.commit_transaction(15)
        self.inject(t, c2)
        rc = self.read(t, 3, isolation="read_committed")
        exact(c1 + c2, rc, "read_committed (%d aborted read)" % sum(1 for r in rc if r[3].startswith(b"a")))
        in_offset_order(rc, "read_committed")
        ru = self.read(t, 3, isolation="read_uncommitted")
        exact(c1 + a + c2, ru, "read_uncommitted")
        in_offset_order(ru, "read_uncommitted")


# --------------------------------------------------------------------------
# kafka-python


class KafkaPython:
    name = "kafka-python"

    def __init__(self, deadline):
        import kafka
        from kafka.admin import KafkaAdminClient
        self.k = kafka
        self.dl = deadline
        self.admin = KafkaAdminClient(request_timeout_ms=15000, **self.kw())

    @staticmethod
    def version():
        from importlib.metadata import version
        return version("kafka-python")

    def kw(self):
        """What every client of this class connects with (the security
        part's subclass adds its listener's settings)."""
        return {"bootstrap_servers": BOOTSTRAP}

    def create(self, topic, partitions=3, config=None):
        self.admin.create_topics({topic: {"num_partitions": partitions, "replication_factor": 1,
                                          "configs": config or {}}}, timeout_ms=10000)
        self.wait_topic(topic, partitions)

    def wait_topic(self, topic, partitions):
        while True:
            md = [x for x in self.admin.describe_topics([topic]) if x["name"] == topic]
            if md and md[0]["error_code"] == 0 and len(md[0]["partitions"]) == partitions and \
                    all(pp["leader_id"] >= 0 for pp in md[0]["partitions"]):
                break
            if self.dl.left() < 1:
                raise Failure("topic %s not in metadata with %d partitions: %r" % (topic, partitions, md))
            time.sleep(0.2)
        wait_every_broker(topic, partitions, self.dl)

    def producer(self, **kw):
        kw.setdefault("linger_ms", 20)
        return self.k.KafkaProducer(**self.kw(), **kw)

    def produce(self, p, topic, records, flush=True):
        futs = []
        for key, value, part, headers, ts in records:
            kw = {"key": key, "value": value}
            if part is not None:
                kw["partition"] = part
            if headers is not None:
                kw["headers"] = headers
            if ts is not None:
                kw["timestamp_ms"] = ts
            futs.append((key, value, p.send(topic, **kw)))
        if flush:
            p.flush(timeout=max(1, self.dl.left() - 5))
        acked = []
        for key, value, f in futs:
            md = f.get(timeout=max(1, self.dl.left() - 3))
            acked.append((md.partition, md.offset, key, value))
        return acked

    def end_offsets(self, topic, partitions, isolation="read_uncommitted"):
        """{partition: end offset}: the high watermark, or the last stable
        offset for read_committed (KafkaConsumer.end_offsets, which asks
        with the consumer's isolation level)."""
        TP = self.k.TopicPartition
        c = self.k.KafkaConsumer(**self.kw(), group_id=None, isolation_level=isolation)
        try:
            return {tp.partition: o for tp, o in c.end_offsets([TP(topic, p) for p in range(partitions)]).items()}
        finally:
            c.close()

    def committed_offsets(self, group, topic):
        listed = self.admin.list_group_offsets({group: None})[group]
        return {tp.partition: om.offset for tp, om in listed.items() if tp.topic == topic and om.offset >= 0}

    def inject(self, topic, acked):
        """The mutation hook: one more copy of the last record of a partition,
        through a plain producer of its own."""
        if not INJECT_DUPLICATE:
            return
        part, key, value = last_of_a_partition(acked)
        p = self.k.KafkaProducer(**self.kw(), acks="all")
        try:
            p.send(topic, key=key, value=value, partition=part).get(timeout=10)
        finally:
            p.close()

    def read(self, topic, partitions, isolation="read_uncommitted", raw=False):
        """Every record of the topic, read from the beginning to the end
        offsets (taken now, for the isolation level)."""
        TP = self.k.TopicPartition
        ends = self.end_offsets(topic, partitions, isolation)
        c = self.k.KafkaConsumer(**self.kw(), group_id=None, enable_auto_commit=False,
                                 isolation_level=isolation, auto_offset_reset="earliest")
        try:
            tps = [TP(topic, p) for p in range(partitions)]
            c.assign(tps)
            c.seek_to_beginning(*tps)
            return self.read_to_end(c, topic, ends, raw, what="reader (%s)" % isolation)
        finally:
            c.close()

    def read_to_end(self, c, topic, ends, raw=False, what="consumer"):
        """Polls c until its position (KafkaConsumer.position, which moves
        past transaction markers) in every partition p of ends has reached
        ends[p]; returns the records read as (partition, offset, key,
        value), or the records themselves with raw; fails at the feature's
        deadline."""
        pos = {p: 0 for p in ends}
        out = []
        polled = False
        while True:
            if polled:
                for tp in c.assignment():
                    if tp.topic == topic and tp.partition in pos:
                        at = c.position(tp, timeout_ms=5000)
                        if at is not None:
                            pos[tp.partition] = max(pos[tp.partition], at)
            behind = {p: (pos[p], e) for p, e in ends.items() if pos[p] < e}
            if not behind:
                return out
            if self.dl.left() < 2:
                raise Failure("%s not at the end offsets in time: (position, end) %r; %d records read" % (
                    what, behind, len(out)))
            batches = c.poll(timeout_ms=200)
            polled = True
            for tp, recs in batches.items():
                for r in recs:
                    pos[r.partition] = max(pos[r.partition], r.offset + 1)
                    out.append(r if raw else (r.partition, r.offset, r.key, r.value))

    def group_consumer(self, group, **kw):
        return self.k.KafkaConsumer(**self.kw(), group_id=group, enable_auto_commit=False,
                                    auto_offset_reset="earliest", session_timeout_ms=10000,
                                    heartbeat_interval_ms=1000, **kw)

    # features
    def f_create_topic(self, feature):
        t = topic_name(self.name, feature)
        self.create(t, 3)
        check(t in self.admin.list_topics(), "created topic not in list_topics")

    def f_delete_topic(self, feature):
        t = topic_name(self.name, feature)
        self.create(t, 3)
        self.admin.delete_topics([t], timeout_ms=10000)
        while t in self.admin.list_topics():
            if self.dl.left() < 1:
                raise Failure("topic still in metadata after delete")
            time.sleep(0.2)

    def produce_codec(self, feature, codec):
        from kafka import codec as kc
        have = {"none": True, "gzip": kc.has_gzip(), "snappy": kc.has_snappy(),
                "lz4": kc.has_lz4(), "zstd": kc.has_zstd()}
        if not have[codec]:
            raise Failure("codec %s library missing in the venv" % codec)
        t = topic_name(self.name, feature)
        self.create(t, 3)
        p = self.producer(compression_type=None if codec == "none" else codec, linger_ms=50)
        acked = self.produce(p, t, [(b"k%d" % (i % 10), b"v%d" % i, None, None, None) for i in range(100)])
        p.close()
        self.inject(t, acked)
        verify_produced(acked, self.read(t, 3))

    def acks(self, feature, acks):
        t = topic_name(self.name, feature)
        self.create(t, 3)
        p = self.producer(acks={"0": 0, "1": 1, "all": "all"}[acks], enable_idempotence=False)
        recs = [(b"k%d" % i, b"v%d" % i, None, None, None) for i in range(50)]
        acked = self.produce(p, t, recs)
        p.close()
        if acks == "0":
            settle(self, t, 3, 50)
        self.inject(t, acked)
        read = self.read(t, 3)
        exact(sorted(r[1] for r in recs), values_of(read), "values")
        if acks != "0":
            verify_produced(acked, read)

    def f_keys_headers(self, feature):
        t = topic_name(self.name, feature)
        self.create(t, 1)
        binary = bytes(range(256))
        recs = [
            (b"key-1", b"value-1", 0, [("h-empty", b""), ("h-bin", binary), ("h-dup", b"1"), ("h-dup", b"2")], None),
            # kafka-python refuses null header values ("All headers items
            # must be (str, bytes) tuples"), so none here
            (b"key-null-value", None, 0, [("h-x", b"x")], None),
            (None, b"null-key", 0, [], None),
            (binary, b"", 0, [("", b"empty-name")], None),
            # (null key, null value) too is refused: "Need at least one: key or value"
        ]
        p = self.producer()
        acked = self.produce(p, t, recs)
        p.close()
        self.inject(t, acked)
        got = self.read(t, 1, raw=True)
        check(len(got) == len(recs), "read %d records to the end offset, produced %d" % (len(got), len(recs)))
        for (key, value, _, headers, _), r in zip(recs, got):
            check(r.key == key, "key %r read back as %r" % (key, r.key))
            check(r.value == value, "value %r read back as %r" % (value, r.value))
            want = [tuple(h) for h in headers]
            have = [tuple(h) for h in (r.headers or [])]
            check(have == want, "headers %r read back as %r" % (want, have))

    def f_group_consume_commit(self, feature):
        TP = self.k.TopicPartition
        t = topic_name(self.name, feature)
        g = "g-" + t
        self.create(t, 3)
        p = self.producer()
        first = self.produce(p, t, [(b"k%d" % i, b"v%d" % i, i % 3, None, None) for i in range(30)])
        self.inject(t, first)
        ends = self.end_offsets(t, 3)
        c = self.group_consumer(g)
        c.subscribe([t])
        got = self.read_to_end(c, t, ends, what="first member")
        verify_produced(first, got, "first member")
        c.commit()
        committed = {i: c.committed(TP(t, i)) for i in range(3)}
        check(committed == ends, "committed offsets %r, want the end offsets %r" % (committed, ends))
        c.close()
        second = self.produce(p, t, [(b"k%d" % i, b"v%d" % i, i % 3, None, None) for i in range(30, 50)])
        p.close()
        self.inject(t, second)
        ends2 = self.end_offsets(t, 3)
        c2 = self.group_consumer(g)
        c2.subscribe([t])
        got2 = self.read_to_end(c2, t, ends2, what="second member")
        c2.commit()
        c2.close()
        verify_produced(second, got2, "second member")
        committed = self.committed_offsets(g, t)
        check(committed == ends2, "committed offsets %r after the second member, want the end offsets %r" % (
            committed, ends2))

    def f_rebalance_two_members(self, feature):
        def member_loop(i, g, t, stop, st):
            c = self.group_consumer(g, client_id="m%d" % i)
            c.subscribe([t])
            while not stop.is_set():
                batches = c.poll(timeout_ms=200)
                st["assign"] = sorted(tp.partition for tp in c.assignment())
                for tp, recs in batches.items():
                    for r in recs:
                        st["recs"].append((r.partition, r.offset, r.key, r.value))
                if batches:
                    try:
                        c.commit()
                    except self.k.errors.KafkaError as e:  # a rebalance under way: the next poll commits
                        st["commit_err"] = str(e)
            c.close()

        rebalance_two_members(self, feature, member_loop)

    def f_list_offsets(self, feature):
        from kafka.admin import OffsetSpec
        TP = self.k.TopicPartition
        t = topic_name(self.name, feature)
        self.create(t, 1)
        base = int(time.time() * 1000) - 600000
        ts = [base + i * 1000 for i in range(10)]
        ts[7] = base + 20000
        p = self.producer()
        self.produce(p, t, [(b"k", b"v%d" % i, 0, None, ts[i]) for i in range(10)])
        p.close()
        tp = TP(t, 0)
        bad = []
        specs = {"earliest": (OffsetSpec.EARLIEST, 0), "latest": (OffsetSpec.LATEST, 10),
                 "ts=base+5000": (base + 5000, 5), "ts=base+5500": (base + 5500, 6),
                 "ts=base+15000": (base + 15000, 7), "ts=future": (base + 10 ** 7, -1),
                 "max-timestamp": (OffsetSpec.MAX_TIMESTAMP, 7)}
        for what, (spec, want) in specs.items():
            got = self.admin.list_partition_offsets({tp: spec})[tp].offset
            if got != want:
                bad.append("admin %s: %s, want %d" % (what, got, want))
        c = self.k.KafkaConsumer(**self.kw(), group_id=None)
        try:
            lo, hi = c.beginning_offsets([tp])[tp], c.end_offsets([tp])[tp]
            if (lo, hi) != (0, 10):
                bad.append("beginning/end offsets (%d, %d), want (0, 10)" % (lo, hi))
            for q, want in [(base + 5000, 5), (base + 5500, 6), (base + 10 ** 7, None)]:
                r = c.offsets_for_times({tp: q})[tp]
                got = None if r is None else r.offset
                if got != want:
                    bad.append("offsets_for_times(base+%d): %r, want %r" % (q - base, r, want))
        finally:
            c.close()
        check(not bad, "; ".join(bad))

    def f_reset_offsets(self, feature):
        TP = self.k.TopicPartition
        OAM = self.k.OffsetAndMetadata
        t = topic_name(self.name, feature)
        g = "g-" + t
        self.create(t, 3)
        p = self.producer()
        acked = self.produce(p, t, [(b"k%d" % i, b"v%d" % i, i % 3, None, None) for i in range(30)])
        p.close()
        self.inject(t, acked)
        ends = self.end_offsets(t, 3)
        c = self.group_consumer(g)
        c.subscribe([t])
        verify_produced(acked, self.read_to_end(c, t, ends, what="first member"), "first member")
        c.commit()
        c.close()
        target = {0: 5, 1: 5, 2: 8}
        res = self.admin.alter_group_offsets(g, {TP(t, pp): OAM(o, "", -1) for pp, o in target.items()})
        errs = {tp.partition: e.__name__ for tp, e in res.items() if e is not self.k.errors.NoError}
        check(not errs, "alter_group_offsets errors: %r" % errs)
        listed = self.admin.list_group_offsets({g: None})[g]
        listed = {tp.partition: om.offset for tp, om in listed.items() if tp.topic == t}
        check(listed == target, "listed offsets %r after alter, want %r" % (listed, target))
        c2 = self.group_consumer(g)
        c2.subscribe([t])
        got2 = self.read_to_end(c2, t, ends, what="member after reset")
        c2.close()
        want = [a for a in acked if a[1] >= target[a[0]]]
        verify_produced(want, got2, "member after reset")

    def f_describe_configs(self, feature):
        from kafka.admin import ConfigResource, ConfigResourceType, AlterConfigOp
        t = topic_name(self.name, feature)
        self.create(t, 1, config={"retention.ms": "123456789", "max.message.bytes": "200000"})

        def describe():
            r = self.admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, t)], config_filter="all")
            return r["topic"][t]

        cfg = describe()
        bad = []
        for k, v in [("retention.ms", "123456789"), ("max.message.bytes", "200000")]:
            e = cfg.get(k)
            if e is None or e["value"] != v:
                bad.append("%s=%r, want %r" % (k, e and e["value"], v))
            elif e["config_source"] != "DYNAMIC_TOPIC_CONFIG":
                bad.append("%s source %r, want DYNAMIC_TOPIC_CONFIG" % (k, e["config_source"]))
        e = cfg.get("cleanup.policy")
        if e is None or e["value"] != "delete" or e["config_source"] != "DEFAULT_CONFIG":
            bad.append("cleanup.policy default: %r" % e)
        check(not bad, "describe: " + "; ".join(bad))
        res = self.admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, t, {
            "retention.ms": (AlterConfigOp.SET, "987654321"),
            "max.message.bytes": (AlterConfigOp.DELETE, None)})])
        # Every broker answers DescribeConfigs from its own metadata, which
        # in a cluster learns of the alter a moment after the alter's
        # answer (as in Kafka): allow 5 s for the new value.
        until = time.time() + 5
        while True:
            cfg = describe()
            r, m = cfg.get("retention.ms"), cfg.get("max.message.bytes")
            if (r is not None and r["value"] == "987654321") or time.time() > until:
                break
            time.sleep(0.1)
        check(r is not None and r["value"] == "987654321", "after alter retention.ms=%r (alter said %r)" % (
            r and r["value"], res))
        check(m is not None and m["config_source"] == "DEFAULT_CONFIG",
              "after DELETE max.message.bytes=%r" % m)

    def f_transactions_send_offsets(self, feature):
        TP = self.k.TopicPartition
        OAM = self.k.OffsetAndMetadata
        src, dst = topic_name(self.name, feature), topic_name(self.name, feature) + "-out"
        g = "g-" + src
        self.create(src, 1)
        self.create(dst, 1)
        p0 = self.producer()
        inp = self.produce(p0, src, [(b"k", b"v%d" % i, 0, None, None) for i in range(20)])
        p0.close()
        self.inject(src, inp)
        c = self.group_consumer(g, isolation_level="read_committed")
        c.subscribe([src])
        got = self.read_to_end(c, src, self.end_offsets(src, 1, "read_committed"), what="input reader")
        verify_produced(inp, got, "input records")
        p = self.producer(transactional_id="tx-" + src, transaction_timeout_ms=30000)
        p.init_transactions()
        out = []
        for upto, commit in ((10, True), (20, False)):
            p.begin_transaction()
            out += self.produce(p, dst, [(b"k", b"out-%d" % i, 0, None, None) for i in range(upto - 10, upto)])
            p.send_offsets_to_transaction({TP(src, 0): OAM(upto, "", -1)}, c.group_metadata())
            if commit:
                p.commit_transaction()
            else:
                p.abort_transaction()
        p.close()
        self.inject(dst, out[:10])
        deadline = time.monotonic() + 10
        while True:
            off = c.committed(TP(src, 0))
            if off == 10 or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        c.close()
        check(off == 10, "group offset %r after a committed (10) and an aborted (20) transaction" % off)
        rc = self.read(dst, 1, isolation="read_committed")
        exact([b"out-%d" % i for i in range(10)], [r[3] for r in rc], "read_committed output")

    def f_rebalance_two_members_kip848(self, feature):
        raise Unsupported("kafka-python %s implements only the classic group protocol "
                          "(no KIP-848 ConsumerGroupHeartbeat)" % self.version())

    def f_idempotent_produce(self, feature):
        t = topic_name(self.name, feature)
        self.create(t, 3)
        p = self.producer(enable_idempotence=True, acks="all")
        acked = self.produce(p, t, [(b"k%d" % i, b"v%d" % i, None, None, None) for i in range(200)])
        tm = getattr(p, "_transaction_manager", None)
        pid = getattr(getattr(tm, "producer_id_and_epoch", None), "producer_id", None)
        p.close()
        check(pid is None or pid >= 0, "idempotent producer got no producer id (%r)" % pid)
        self.inject(t, acked)
        verify_produced(acked, self.read(t, 3))

    def f_transactions(self, feature):
        t = topic_name(self.name, feature)
        self.create(t, 3)
        p = self.producer(transactional_id="tx-" + t, transaction_timeout_ms=30000)
        p.init_transactions()
        p.begin_transaction()
        c1 = self.produce(p, t, [(b"k%d" % i, b"c%d" % i, None, None, None) for i in range(10)])
        p.commit_transaction()
        p.begin_transaction()
        a = self.produce(p, t, [(b"k%d" % i, b"a%d" % i, None, None, None) for i in range(10)])
        p.abort_transaction()
        p.begin_transaction()
        c2 = self.produce(p, t, [(b"k%d" % i, b"d%d" % i, None, None, None) for i in range(5)])
        p.commit_transaction()
        p.close()
        self.inject(t, c2)
        rc = self.read(t, 3, isolation="read_committed")
        exact(c1 + c2, rc, "read_committed (%d aborted read)" % sum(1 for r in rc if r[3].startswith(b"a")))
        in_offset_order(rc, "read_committed")
        ru = self.read(t, 3, isolation="read_uncommitted")
        exact(c1 + a + c2, ru, "read_uncommitted")
        in_offset_order(ru, "read_uncommitted")


IMPLS = {"confluent-kafka-python": Confluent, "kafka-python": KafkaPython}


def run_one(client, feature):
    """Child: runs one feature and prints RESULT <json> on stdout."""
    timeout = TIMEOUTS.get(feature, DEFAULT_TIMEOUT)
    dl = Deadline(timeout - 3)
    res, detail = "pass", ""
    try:
        if SECURITY:
            import security
            detail = security.run(client, feature, dl)
        else:
            impl = IMPLS[client](dl)
            if feature.startswith("produce-"):
                impl.produce_codec(feature, feature[len("produce-"):])
            elif feature.startswith("acks-"):
                impl.acks(feature, feature[len("acks-"):])
            else:
                getattr(impl, "f_" + feature.replace("-", "_"))(feature)
    except Unsupported as e:
        res, detail = "unsupported", str(e)
    except Failure as e:
        res, detail = "fail", str(e)
    except Exception as e:  # noqa
        tb = traceback.extract_tb(e.__traceback__)
        where = "%s:%d" % (os.path.basename(tb[-1].filename), tb[-1].lineno) if tb else ""
        res, detail = "fail", "%s: %s (at %s)" % (type(e).__name__, e, where)
        traceback.print_exc()
    sys.stdout.write("RESULT " + json.dumps({"result": res, "detail": detail[:1000]}) + "\n")
    sys.stdout.flush()
    # don't let a client's close path hang the child
    os._exit(0)


def main(argv):
    if argv[:1] == ["--one"]:
        run_one(argv[1], argv[2])
        return 0
    only, clients = None, CLIENTS
    i = 0
    while i < len(argv):
        if argv[i] == "--only":
            only = argv[i + 1].split(",")
            i += 2
        elif argv[i] == "--clients":
            clients = argv[i + 1].split(",")
            i += 2
        else:
            print("unknown argument %s" % argv[i], file=sys.stderr)
            return 2
    results_path = os.environ.get("COMPAT_RESULTS")
    versions = {c: IMPLS[c].version() for c in clients}
    print("python compat: bootstrap %s, run %s, %s" % (
        BOOTSTRAP, RUN_ID, ", ".join("%s %s" % kv for kv in versions.items())), flush=True)
    features = FEATURES
    if SECURITY:
        import security
        features = security.FEATURES
        if not os.environ.get("SAMSA_AUTHORIZER"):
            # Without an authorizer nothing a client sees depends on its
            # principal: the check is left out rather than faked.
            features = [f for f in features if f != "mtls-principal"]
            print("mtls-principal: not run, the broker has no authorizer (SAMSA_AUTHORIZER is empty)")
    jobs = [(c, f) for c in clients for f in features if only is None or f in only]
    # interleave the clients so the parallel workers run different clients
    jobs.sort(key=lambda j: (features.index(j[1]), clients.index(j[0])))
    q = queue.Queue()
    for j in jobs:
        q.put(j)
    lock = threading.Lock()
    suite_end = time.monotonic() + SUITE_BUDGET
    results = []
    env = dict(os.environ, COMPAT_PY_RUN_ID=RUN_ID, PYTHONUNBUFFERED="1")

    def record(client, feature, res, detail, took):
        line = {"client": client, "version": versions[client], "feature": feature,
                "result": res, "detail": detail}
        with lock:
            results.append(line)
            if results_path:
                with open(results_path, "a") as f:
                    f.write(json.dumps(line) + "\n")
            print("%-24s %-22s %-11s %5.1fs %s" % (client, feature, res, took, detail), flush=True)

    def worker():
        while True:
            try:
                client, feature = q.get_nowait()
            except queue.Empty:
                return
            start = time.monotonic()
            left = suite_end - start
            if left < 5:
                record(client, feature, "fail", "not run: python suite time budget exhausted", 0)
                continue
            timeout = min(TIMEOUTS.get(feature, DEFAULT_TIMEOUT), left)
            proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--one", client, feature],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                    start_new_session=True)
            try:
                out, err = proc.communicate(timeout=timeout)
                res = None
                for ln in out.decode(errors="replace").splitlines():
                    if ln.startswith("RESULT "):
                        res = json.loads(ln[len("RESULT "):])
                if res is None:
                    res = {"result": "fail", "detail": "child exited %s without a result" % proc.returncode}
            except subprocess.TimeoutExpired:
                # The child leads its own session: kill all of it, and do not
                # wait on its pipes for ever (a stalled child once used up the
                # whole suite's budget here).
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                try:
                    out, err = proc.communicate(timeout=10)
                except subprocess.TimeoutExpired:
                    out, err = b"", b"(no output: the killed child's pipes did not close)"
                res = {"result": "fail", "detail": "timed out after %ds" % timeout}
            took = time.monotonic() - start
            record(client, feature, res["result"], res["detail"], took)
            if res["result"] == "fail" and err:
                tail = err.decode(errors="replace").strip().splitlines()[-15:]
                with lock:
                    print("    stderr of %s %s:\n      %s" % (client, feature, "\n      ".join(tail)), flush=True)

    nworkers = max(1, int(os.environ.get("COMPAT_PY_JOBS", "2")))
    ths = [threading.Thread(target=worker) for _ in range(nworkers)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    counts = {}
    for r in results:
        counts[r["result"]] = counts.get(r["result"], 0) + 1
    print("python: %d passed, %d failed, %d skipped" % (counts.get("pass", 0), counts.get("fail", 0),
                                                 counts.get("unsupported", 0)))
    return 1 if counts.get("fail") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
