'use strict'
// Samsa's Schema Registry with @kafkajs/confluent-schema-registry, the
// records produced and consumed by KafkaJS (README.md here). Appends one
// JSON result line per feature to $COMPAT_RESULTS; exits non-zero when any
// feature fails.

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1'

const fs = require('fs')
const { Kafka, Partitioners, logLevel } = require('kafkajs')
const { SchemaRegistry, SchemaType } = require('@kafkajs/confluent-schema-registry')

const CLIENT = '@kafkajs/confluent-schema-registry'
const VERSION = require('@kafkajs/confluent-schema-registry/package.json').version
const KAFKAJS = require('kafkajs/package.json').version
const { SAMSA_BOOTSTRAP: BOOTSTRAP, COMPAT_RESULTS: RESULTS, SR_URL } = process.env
if (!BOOTSTRAP || !RESULTS || !SR_URL) {
  console.error('SAMSA_BOOTSTRAP, COMPAT_RESULTS and SR_URL must be set')
  process.exit(2)
}
const RUN = Date.now().toString(36)
const RECORDS = 30
const PARTITIONS = 3
// The mutation hook (test/compat/README.md): after each produce a plain
// producer writes one more copy of the last record sent, unknown to the
// checker: every consume check must then fail.
const INJECT_DUPLICATE = !['', '0', undefined].includes(process.env.COMPAT_INJECT_DUPLICATE)

const kafka = new Kafka({
  clientId: 'samsa-compat-registry',
  brokers: BOOTSTRAP.split(','),
  logLevel: logLevel.ERROR,
  retry: { retries: 6 },
})
const sleep = ms => new Promise(r => setTimeout(r, ms))

function check(cond, msg) {
  if (!cond) throw new Error(msg)
}

let failed = 0
async function feature(name, fn, timeoutMs = 60000) {
  const start = Date.now()
  let timer
  let res
  try {
    const detail = await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs / 1000}s`)), timeoutMs)
      }),
    ])
    res = { result: 'pass', detail: detail || '' }
  } catch (e) {
    res = { result: 'fail', detail: `${e.name}: ${e.message}` }
    if (process.env.COMPAT_DEBUG) console.error(e)
  } finally {
    clearTimeout(timer)
  }
  if (res.result === 'fail') failed++
  const line = { client: CLIENT, version: VERSION, feature: name, result: res.result, detail: res.detail }
  fs.appendFileSync(RESULTS, JSON.stringify(line) + '\n')
  console.log(`${res.result.padEnd(5)} ${name.padEnd(30)} ${((Date.now() - start) / 1000).toFixed(1)}s  ${res.detail}`)
}

// ---------------------------------------------------------------- Kafka side

async function createTopic(topic) {
  const admin = kafka.admin()
  await admin.connect()
  try {
    const created = await admin.createTopics({
      topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }],
      waitForLeaders: true,
      timeout: 10000,
    })
    check(created, `createTopics(${topic}) returned false`)
  } finally {
    await admin.disconnect()
  }
}

// Sends [{key, value}] and returns what the broker acknowledged, as
// [{partition, key, value}] with value a Buffer.
async function produce(topic, messages) {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, idempotent: true })
  await producer.connect()
  try {
    const sent = []
    for (const m of messages) {
      const [meta] = await producer.send({ topic, acks: -1, messages: [m] })
      check(meta.errorCode === 0, `produce: error code ${meta.errorCode}`)
      sent.push({ partition: meta.partition, key: m.key, value: m.value })
    }
    if (INJECT_DUPLICATE) {
      const last = sent[sent.length - 1]
      const plain = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
      await plain.connect()
      await plain.send({ topic, acks: -1, messages: [{ key: last.key, value: last.value, partition: last.partition }] })
      await plain.disconnect()
    }
    return sent
  } finally {
    await producer.disconnect()
  }
}

// Takes the end offsets, then consumes every partition from its start
// until the consumer's position in each has reached them. Returns
// [{partition, offset, key, value}].
async function readToEnd(topic) {
  const admin = kafka.admin()
  await admin.connect()
  const ends = new Map((await admin.fetchTopicOffsets(topic)).map(o => [o.partition, Number(o.high)]))
  await admin.disconnect()
  const consumer = kafka.consumer({ groupId: `sr-kjs-${topic}`, sessionTimeout: 10000, heartbeatInterval: 500, maxWaitTimeInMs: 250 })
  const pos = new Map([...ends.keys()].map(p => [p, 0]))
  const got = []
  let done
  const finished = new Promise(r => (done = r))
  const advance = (p, next) => {
    pos.set(p, Math.max(pos.get(p), next))
    if ([...ends].every(([q, e]) => pos.get(q) >= e)) done()
  }
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => advance(payload.partition, Number(payload.lastOffset) + 1))
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    advance(0, 0)
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        got.push({ partition, offset: Number(message.offset), key: message.key.toString(), value: message.value })
        advance(partition, Number(message.offset) + 1)
      },
    })
    await Promise.race([
      finished,
      sleep(30000).then(() => {
        throw new Error(`read ${topic}: behind the end offsets ${JSON.stringify([...ends])}: positions ${JSON.stringify([...pos])}`)
      }),
    ])
    return got
  } finally {
    await consumer.disconnect()
  }
}

// want, got: arrays of strings; got must be want as a multiset.
function exact(want, got) {
  const count = a => a.reduce((m, x) => m.set(x, (m.get(x) || 0) + 1), new Map())
  const w = count(want)
  const g = count(got)
  const diff = (a, b) => [...a].flatMap(([k, n]) => Array(Math.max(0, n - (b.get(k) || 0))).fill(k))
  const missing = diff(w, g)
  const extra = diff(g, w)
  check(
    missing.length === 0 && extra.length === 0,
    `read ${got.length} records, produced ${want.length}: ${missing.length} missing [${missing.slice(0, 3).join(', ')}], ${extra.length} extra [${extra.slice(0, 3).join(', ')}]`
  )
}

// Registers schema under subject, produces RECORDS values encoded with its
// id, reads the topic to the end offsets and checks that decoding gives
// exactly the values, in production order per partition, each with the id.
// A decoded Protobuf value is a protobufjs message: both sides are compared
// as the message type's plain objects, defaults and enums as numbers.
async function canonical(fmt, registry, id) {
  if (fmt !== SchemaType.PROTOBUF) return v => JSON.stringify(v)
  const type = (await registry.getSchema(id)).message
  const opts = { enums: Number, arrays: true, defaults: true }
  return v => JSON.stringify(type.toObject(v instanceof type.ctor ? v : type.fromObject(v), opts))
}

async function roundTrip(fmt, schema, value, extra = {}) {
  const registry = new SchemaRegistry({ host: SR_URL })
  const topic = `sr-kjs-${fmt.toLowerCase()}-${RUN}`
  const subject = `${topic}-value`
  const { id } = await registry.register({ type: fmt, schema, ...extra }, { subject })
  check(id === (await registry.getLatestSchemaId(subject)), `latest id of ${subject} is not ${id}`)
  await createTopic(topic)
  const values = Array.from({ length: RECORDS }, (_, i) => value(i))
  const messages = []
  for (const [i, v] of values.entries()) messages.push({ key: `k${i}`, value: await registry.encode(id, v) })
  const sent = await produce(topic, messages)
  const read = await readToEnd(topic)
  // A fresh client: every schema comes from the registry by id.
  const reader = new SchemaRegistry({ host: SR_URL })
  const canon = await canonical(fmt, reader, id)
  const decoded = []
  for (const r of read) {
    check(r.value[0] === 0 && r.value.readInt32BE(1) === id, `record ${r.partition}@${r.offset} does not carry id ${id}`)
    decoded.push({ partition: r.partition, key: r.key, value: canon(await reader.decode(r.value)) })
  }
  const show = r => `${r.partition}/${r.key}/${r.value}`
  exact(sent.map(s => show({ ...s, value: canon(values[Number(s.key.slice(1))]) })), decoded.map(show))
  for (let p = 0; p < PARTITIONS; p++) {
    const idx = decoded.filter(d => d.partition === p).map(d => Number(d.key.slice(1)))
    check(idx.every((x, i) => i === 0 || idx[i - 1] < x), `partition ${p}: not in production order: ${idx}`)
  }
  return `schema id ${id}, ${RECORDS} records to the end offsets (kafkajs ${KAFKAJS})`
}

// ---------------------------------------------------------------- formats

const avro = fields => JSON.stringify({ type: 'record', name: 'User', namespace: 'samsa.compat.kjs', fields })
const AVRO_V1 = avro([
  { name: 'name', type: 'string' },
  { name: 'age', type: 'int' },
  { name: 'tags', type: { type: 'array', items: 'string' } },
])
const AVRO_V2 = avro([
  { name: 'name', type: 'string' },
  { name: 'age', type: 'int' },
  { name: 'tags', type: { type: 'array', items: 'string' } },
  { name: 'country', type: 'string', default: 'NL' },
])
const AVRO_BAD = avro([
  { name: 'name', type: 'string' },
  { name: 'age', type: 'int' },
  { name: 'zip', type: 'string' },
])

const json = (props, required) =>
  JSON.stringify({
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'User',
    type: 'object',
    properties: props,
    required,
    additionalProperties: false,
  })
const JSON_V1 = json({ name: { type: 'string' }, age: { type: 'integer' } }, ['name', 'age'])
const JSON_V2 = json({ name: { type: 'string' }, age: { type: 'integer' }, country: { type: 'string' } }, ['name', 'age'])
const JSON_BAD = json({ name: { type: 'string' }, age: { type: 'string' } }, ['name', 'age'])

// protobufjs as this library uses it does not load imports: a schema of
// its own, without the well-known types (the Python suite has them).
const PROTO_V1 = `syntax = "proto3";
package samsa.compat.kjs;

message User {
  string name = 1;
  int32 age = 2;
  repeated string tags = 3;
  Address address = 4;
  Kind kind = 5;
}

message Address {
  string city = 1;
}

enum Kind {
  KIND_UNSPECIFIED = 0;
  KIND_PERSON = 1;
}
`
const PROTO_V2 = PROTO_V1.replace('  Kind kind = 5;\n', '  Kind kind = 5;\n  string country = 6;\n')
const PROTO_BAD = PROTO_V1.replace('string name = 1;', 'int64 name = 1;')

const user = i => ({ name: `user-${i}`, age: 20 + i, tags: Array.from({ length: i % 3 }, (_, j) => `t${j}`) })

// BACKWARD (the library's default, set on the first registration): v2
// registers as a new version, bad is refused with 409.
async function evolve(fmt, v1, v2, bad) {
  const registry = new SchemaRegistry({ host: SR_URL })
  const subject = `sr-kjs-evolve-${fmt.toLowerCase()}-${RUN}`
  const { id: id1 } = await registry.register({ type: fmt, schema: v1 }, { subject })
  const { id: id2 } = await registry.register({ type: fmt, schema: v2 }, { subject })
  check(id1 !== id2, `v2 registered with v1's id ${id1}`)
  check((await registry.getRegistryId(subject, 2)) === id2, `version 2 of ${subject} is not id ${id2}`)
  let refused
  try {
    await registry.register({ type: fmt, schema: bad }, { subject })
  } catch (e) {
    check(e.status === 409, `the incompatible schema refused with ${e.status}, want 409: ${e.message}`)
    refused = e.message
  }
  check(refused, 'the incompatible schema registered')
  check((await registry.getLatestSchemaId(subject)) === id2, 'the latest version is not v2 after the refusal')
  if (fmt === SchemaType.AVRO) {
    // v1 data read with v2 as the reader's schema: the default fills in.
    const got = await registry.decode(await registry.encode(id1, user(3)), { [SchemaType.AVRO]: { readerSchema: v2 } })
    const want = { ...user(3), country: 'NL' }
    check(JSON.stringify(got) === JSON.stringify(want), `v1 data read as v2: ${JSON.stringify(got)}, want ${JSON.stringify(want)}`)
  }
  return `ids ${id1}, ${id2}; refused: ${refused.slice(0, 160)}`
}

async function main() {
  await feature('registry-avro', () => roundTrip(SchemaType.AVRO, AVRO_V1, user))
  await feature('registry-json', () => roundTrip(SchemaType.JSON, JSON_V1, i => ({ name: `user-${i}`, age: 20 + i })))
  await feature('registry-protobuf', () =>
    roundTrip(SchemaType.PROTOBUF, PROTO_V1, i => ({ ...user(i), address: { city: `city-${i % 4}` }, kind: 1 }))
  )
  await feature('registry-evolution-avro', () => evolve(SchemaType.AVRO, AVRO_V1, AVRO_V2, AVRO_BAD))
  await feature('registry-evolution-json', () => evolve(SchemaType.JSON, JSON_V1, JSON_V2, JSON_BAD))
  await feature('registry-evolution-protobuf', () => evolve(SchemaType.PROTOBUF, PROTO_V1, PROTO_V2, PROTO_BAD))
  process.exit(failed ? 1 : 0)
}

main().catch(e => {
  console.error(e)
  process.exit(2)
})
