'use strict'
// KafkaJS compatibility suite for Samsa (see test/compat/README.md).
// Each feature appends one JSON line to $COMPAT_RESULTS; the process exits
// non-zero when any feature fails.

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1'

const fs = require('fs')
const {
  Kafka,
  CompressionTypes,
  CompressionCodecs,
  ConfigResourceTypes,
  Partitioners,
  logLevel,
} = require('kafkajs')
const SnappyCodec = require('kafkajs-snappy')
const LZ4Codec = require('@2l/kafkajs-lz4')
const zstd = require('@mongodb-js/zstd')

const CLIENT = 'kafkajs'
const VERSION = require('kafkajs/package.json').version
const BOOTSTRAP = process.env.SAMSA_BOOTSTRAP
const RESULTS = process.env.COMPAT_RESULTS
if (!BOOTSTRAP || !RESULTS) {
  console.error('SAMSA_BOOTSTRAP and COMPAT_RESULTS must be set')
  process.exit(2)
}
const RUN = Date.now().toString(36)
const T0 = Date.now()

// ---------------------------------------------------------------- codecs
// Every codec is wrapped to count calls: a produce-<codec> feature checks that
// the producer compressed and that the consumer got the batch back compressed
// (Kafka stores a producer's batch as it is with compression.type=producer).
const codecCalls = {}
function counted(name, factory) {
  codecCalls[name] = { compress: 0, decompress: 0 }
  return () => {
    const c = factory()
    return {
      async compress(encoder) {
        codecCalls[name].compress++
        return c.compress(encoder)
      },
      async decompress(buffer) {
        codecCalls[name].decompress++
        return c.decompress(buffer)
      },
    }
  }
}
CompressionCodecs[CompressionTypes.GZIP] = counted('gzip', CompressionCodecs[CompressionTypes.GZIP])
CompressionCodecs[CompressionTypes.Snappy] = counted('snappy', SnappyCodec)
CompressionCodecs[CompressionTypes.LZ4] = counted('lz4', new LZ4Codec().codec)
// @kafkajs/zstd needs a native build (cppzst) that fails on Node 20; this is the
// same two-function codec over @mongodb-js/zstd's prebuilt binding.
CompressionCodecs[CompressionTypes.ZSTD] = counted('zstd', () => ({
  compress: encoder => zstd.compress(encoder.buffer),
  decompress: buffer => zstd.decompress(buffer),
}))

// ---------------------------------------------------------------- client
const logCreator = () => ({ namespace, level, label, log }) => {
  const { message, timestamp, logger, ...extra } = log
  const rest = Object.keys(extra).length
    ? ' ' + JSON.stringify(extra, (k, v) => (typeof v === 'bigint' ? v.toString() : v))
    : ''
  process.stderr.write(`[kafkajs ${label} ${namespace}] ${message}${rest}\n`)
}

// newKafka is a client with the suite's options; conn may replace brokers
// and add ssl and sasl (the security part).
const newKafka = (conn = {}) =>
  new Kafka({
    clientId: 'samsa-compat-kafkajs',
    brokers: BOOTSTRAP.split(','),
    logLevel: process.env.KAFKAJS_LOG_LEVEL ? logLevel[process.env.KAFKAJS_LOG_LEVEL] : logLevel.ERROR,
    logCreator,
    connectionTimeout: 3000,
    requestTimeout: 15000,
    retry: { initialRetryTime: 100, retries: 6, maxRetryTime: 2000 },
    ...conn,
  })
const kafka = newKafka()

// apiName -> {key, versions:Set}: every request any client of the suite sent.
const apiUse = new Map()
function instrument(client) {
  client.apisSent = new Set()
  client.on(client.events.REQUEST, ({ payload }) => {
    const { apiName, apiKey, apiVersion } = payload
    client.apisSent.add(apiName)
    if (!apiUse.has(apiName)) apiUse.set(apiName, { key: apiKey, versions: new Set() })
    apiUse.get(apiName).versions.add(apiVersion)
  })
  return client
}

const sleep = ms => new Promise(r => setTimeout(r, ms))

function errText(e) {
  if (!e) return String(e)
  let s = `${e.name || 'Error'}: ${e.message}`
  if (e.type && !s.includes(e.type)) s += ` [${e.type}]`
  if (Array.isArray(e.partitions)) {
    const errs = e.partitions.filter(p => p.error).map(p => `partition ${p.partition}: ${errText(p.error)}`)
    if (errs.length) s += ` {${errs.join('; ')}}`
  }
  const cause = e.cause || e.originalError
  if (cause && cause !== e) s += ` (cause: ${errText(cause)})`
  return s
}

// A feature's context: creates clients and disconnects them all at the end.
// kafka makes them (a secured one in the security part).
class Ctx {
  constructor(name) {
    this.name = name
    this.kafka = kafka
    this.clients = []
    this.closed = false
    this.seq = 0
    this._step = undefined
  }
  get step() {
    return this._step
  }
  set step(s) {
    this._step = s
    if (process.env.COMPAT_DEBUG && s) console.error(`${new Date().toISOString()} [${this.name}] ${s}`)
  }
  topic(suffix = '') {
    return `kjs-${this.name}${suffix}-${RUN}`
  }
  group(suffix = '') {
    return `kjs-${this.name}-g${suffix || ++this.seq}-${RUN}`
  }
  track(client) {
    this.clients.push(client)
    return instrument(client)
  }
  async admin(retry = { retries: 6 }) {
    const a = this.track(this.kafka.admin({ retry }))
    await a.connect()
    return a
  }
  async producer(opts = {}) {
    const p = this.track(
      this.kafka.producer({
        allowAutoTopicCreation: false,
        createPartitioner: Partitioners.DefaultPartitioner,
        ...opts,
      })
    )
    await p.connect()
    return p
  }
  consumer(opts = {}) {
    return this.track(
      this.kafka.consumer({
        allowAutoTopicCreation: false,
        sessionTimeout: 10000,
        rebalanceTimeout: 20000,
        heartbeatInterval: 500,
        maxWaitTimeInMs: 250,
        retry: { retries: 6 },
        ...opts,
      })
    )
  }
  async close() {
    this.closed = true
    await Promise.all(
      this.clients.map(c => Promise.race([c.disconnect().catch(() => {}), sleep(5000)]))
    )
  }
}

let failed = 0
// COMPAT_ONLY=a,b runs only the named features (for debugging).
const ONLY = process.env.COMPAT_ONLY ? new Set(process.env.COMPAT_ONLY.split(',')) : null

async function feature(name, timeoutMs, fn) {
  if (ONLY && !ONLY.has(name)) return
  const ctx = new Ctx(name)
  const start = Date.now()
  let timer
  let res
  try {
    const out = await Promise.race([
      fn(ctx),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`timed out after ${timeoutMs / 1000}s${ctx.step ? ` (at: ${ctx.step})` : ''}`)),
          timeoutMs
        )
      }),
    ])
    res = out && out.result ? out : { result: 'pass', detail: out || '' }
  } catch (e) {
    res = { result: 'fail', detail: errText(e) }
    if (process.env.COMPAT_DEBUG) console.error(e)
  } finally {
    clearTimeout(timer)
    await ctx.close()
  }
  if (res.result === 'fail') failed++
  const line = { client: CLIENT, version: VERSION, feature: name, result: res.result, detail: res.detail }
  fs.appendFileSync(RESULTS, JSON.stringify(line) + '\n')
  console.log(
    `${res.result.padEnd(11)} ${name.padEnd(24)} ${((Date.now() - start) / 1000).toFixed(1)}s  ${res.detail}`
  )
}

function check(cond, msg) {
  if (!cond) throw new Error(msg)
}

// ---------------------------------------------------------------- helpers
async function createTopic(ctx, admin, topic, numPartitions = 3, configEntries = []) {
  ctx.step = `createTopics ${topic}`
  const created = await admin.createTopics({
    topics: [{ topic, numPartitions, replicationFactor: 1, configEntries }],
    waitForLeaders: true,
    timeout: 10000,
  })
  check(created, `createTopics(${topic}) returned false (topic already existed?)`)
}

function records(n, prefix) {
  return Array.from({ length: n }, (_, i) => ({ key: `${prefix}-k${i % 10}`, value: `${prefix}-v${i}` }))
}

// Mutation hook for reviewers (test/compat/README.md): after each measured
// produce, a plain producer of its own writes one more copy of the last record
// sent (the last of its partition), and the checker is not told. Every
// consume check must then fail.
const INJECT_DUPLICATE = !['', '0', undefined].includes(process.env.COMPAT_INJECT_DUPLICATE)
async function inject(ctx, topic, sent) {
  if (!INJECT_DUPLICATE) return
  const last = sent[sent.length - 1]
  const plain = await ctx.producer()
  await plain.send({ topic, acks: -1, messages: [{ ...last }] })
}

// The end offset of every partition of topic, from ListOffsets (latest).
// kafkajs's admin asks with read_committed: the last stable offset, which is
// the high watermark too when no transaction is open, as in every feature
// here when it reads.
async function endOffsets(admin, topic) {
  const offs = await admin.fetchTopicOffsets(topic)
  return new Map(offs.map(o => [o.partition, Number(o.high)]))
}

// acks=0 gets no answer: waits until the end offsets add up to n records
// (or 10 s pass) before anything reads them.
async function settle(admin, topic, n) {
  const until = Date.now() + 10000
  for (;;) {
    const ends = await endOffsets(admin, topic)
    if ([...ends.values()].reduce((a, b) => a + b, 0) >= n || Date.now() > until) return
    await sleep(100)
  }
}

// Takes the end offsets of topic, then runs a consumer of a (new or given)
// group until its position in every partition has reached them: past the
// last record it delivered, or past the last offset of a batch kafkajs has
// processed (its END_BATCH_PROCESS event, which counts control records and
// filtered aborted ones). `from` is where a group member starts (its
// committed offsets). Returns the records, the end offsets and the consumer
// (still running; the ctx disconnects it). The feature's timeout is the
// deadline; the step then shows the positions.
async function readToEnd(ctx, admin, topic, opts = {}) {
  const { groupId = ctx.group(), fromBeginning = true, consumerOpts = {}, autoCommit = true, from = {} } = opts
  ctx.step = `end offsets of ${topic}`
  const ends = await endOffsets(admin, topic)
  const consumer = ctx.consumer({ groupId, ...consumerOpts })
  const got = []
  const pos = new Map([...ends.keys()].map(p => [p, from[p] || 0]))
  let done
  const finished = new Promise(r => (done = r))
  const advance = (partition, next) => {
    pos.set(partition, Math.max(pos.get(partition) || 0, next))
    const behind = [...ends].filter(([p, e]) => pos.get(p) < e)
    if (behind.length === 0) done()
    else ctx.step = `consume ${topic} as ${groupId} to the end offsets; behind (partition: position/end): ${behind.map(([p, e]) => `${p}: ${pos.get(p)}/${e}`).join(', ')}; ${got.length} records read`
  }
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    if (payload.topic === topic) advance(payload.partition, Number(payload.lastOffset) + 1)
  })
  ctx.step = `connect consumer ${groupId}`
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning })
  advance(0, 0)
  await consumer.run({
    autoCommit,
    eachMessage: async ({ partition, message }) => {
      got.push({
        partition,
        offset: Number(message.offset),
        key: message.key === null ? null : message.key.toString(),
        keyBuf: message.key,
        value: message.value,
        headers: message.headers,
        timestamp: message.timestamp,
      })
      advance(partition, Number(message.offset) + 1)
    },
  })
  await finished
  ctx.step = undefined
  return { consumer, got, groupId, ends }
}

// The group's committed offsets, as numbers by partition.
async function committedOffsets(admin, groupId, topic) {
  const [c] = await admin.fetchOffsets({ groupId, topics: [topic] })
  return new Map(c.partitions.filter(p => Number(p.offset) >= 0).map(p => [p.partition, Number(p.offset)]))
}

const showMap = m => JSON.stringify([...m].sort((a, b) => a[0] - b[0]))
const sameMap = (a, b) => showMap(a) === showMap(b)

// Waits (up to 10 s) until the group's committed offsets are the end offsets.
async function committedAtEnd(ctx, admin, groupId, topic, ends) {
  ctx.step = `committed offsets of ${groupId}`
  const until = Date.now() + 10000
  for (;;) {
    const c = await committedOffsets(admin, groupId, topic)
    if (sameMap(c, ends)) return c
    check(Date.now() < until, `committed offsets ${showMap(c)}, want the end offsets ${showMap(ends)}`)
    await sleep(100)
  }
}

// Checks that `got` holds exactly the records `sent` (by value), each once,
// with the right key, in send order within each partition.
function sameRecords(sent, got) {
  const index = new Map(sent.map((r, i) => [String(r.value), { i, key: r.key }]))
  const seen = new Set()
  const lastPerPartition = new Map()
  for (const g of got) {
    const v = g.value === null ? null : g.value.toString()
    const s = index.get(v)
    check(s !== undefined, `read ${got.length} records, produced ${sent.length}: unexpected record ${JSON.stringify(v)} at ${g.partition}@${g.offset}`)
    check(!seen.has(v), `read ${got.length} records, produced ${sent.length}: record ${v} read twice (again at ${g.partition}@${g.offset})`)
    seen.add(v)
    check(g.key === s.key, `record ${v}: key ${g.key}, want ${s.key}`)
    const last = lastPerPartition.get(g.partition)
    check(last === undefined || s.i > last, `partition ${g.partition}: ${v} out of order`)
    lastPerPartition.set(g.partition, s.i)
  }
  check(seen.size === sent.length, `read ${seen.size} of ${sent.length} records`)
}

// ---------------------------------------------------------------- features
let adminTopic

async function main() {
  console.log(`kafkajs ${VERSION} against ${BOOTSTRAP}`)

  await feature('create-topic', 30000, async ctx => {
    const admin = await ctx.admin()
    adminTopic = ctx.topic()
    await createTopic(ctx, admin, adminTopic, 3)
    ctx.step = 'fetchTopicMetadata'
    const md = await admin.fetchTopicMetadata({ topics: [adminTopic] })
    const t = md.topics.find(x => x.name === adminTopic)
    check(t, `${adminTopic} not in metadata`)
    check(t.partitions.length === 3, `${t.partitions.length} partitions, want 3`)
    check(t.partitions.every(p => p.leader >= 0), `partition without leader: ${JSON.stringify(t.partitions)}`)
    const names = await admin.listTopics()
    check(names.includes(adminTopic), `listTopics lacks ${adminTopic}`)
    return `3 partitions, leaders ${t.partitions.map(p => p.leader).join(',')}`
  })

  await feature('delete-topic', 30000, async ctx => {
    check(adminTopic, 'create-topic did not run')
    const admin = await ctx.admin()
    ctx.step = 'deleteTopics'
    await admin.deleteTopics({ topics: [adminTopic], timeout: 10000 })
    // Brokers apply a deletion from the metadata log each in its own time
    // (as Kafka's do), and kafkajs asks any of them: wait for both views.
    const until = Date.now() + 10000
    let names, md
    for (;;) {
      names = await admin.listTopics()
      md = await admin.fetchTopicMetadata()
      const gone = !names.includes(adminTopic) && !md.topics.some(t => t.name === adminTopic)
      if (gone || Date.now() > until) break
      await sleep(200)
    }
    check(!names.includes(adminTopic), `${adminTopic} still listed 10s after deleteTopics`)
    check(!md.topics.some(t => t.name === adminTopic), `${adminTopic} still in full metadata 10s after deleteTopics`)
    return 'gone from listTopics and metadata'
  })

  const codecs = [
    ['produce-none', CompressionTypes.None, null],
    ['produce-gzip', CompressionTypes.GZIP, 'gzip'],
    ['produce-snappy', CompressionTypes.Snappy, 'snappy'],
    ['produce-lz4', CompressionTypes.LZ4, 'lz4'],
    ['produce-zstd', CompressionTypes.ZSTD, 'zstd'],
  ]
  for (const [name, compression, codec] of codecs) {
    await feature(name, 40000, async ctx => {
      const admin = await ctx.admin()
      const topic = ctx.topic()
      await createTopic(ctx, admin, topic, 3)
      const producer = await ctx.producer()
      const sent = records(100, name)
      const before = codec ? { ...codecCalls[codec] } : null
      ctx.step = 'send'
      await producer.send({ topic, compression, messages: sent })
      await inject(ctx, topic, sent)
      const { got } = await readToEnd(ctx, admin, topic)
      sameRecords(sent, got)
      const parts = [0, 1, 2].map(p => got.filter(g => g.partition === p).length)
      if (!codec) return `100 records, per partition ${parts.join('/')}`
      const c = codecCalls[codec].compress - before.compress
      const d = codecCalls[codec].decompress - before.decompress
      check(c > 0, `${codec} codec never called to compress`)
      check(
        d > 0,
        `records read back but the ${codec} codec never decompressed: the broker returned the batches uncompressed (Kafka keeps the producer's compression)`
      )
      return `100 records, per partition ${parts.join('/')}; ${c} batches compressed, ${d} decompressed`
    })
  }

  for (const [name, acks] of [
    ['acks-0', 0],
    ['acks-1', 1],
    ['acks-all', -1],
  ]) {
    await feature(name, 40000, async ctx => {
      const admin = await ctx.admin()
      const topic = ctx.topic()
      await createTopic(ctx, admin, topic, 3)
      const producer = await ctx.producer()
      const sent = records(100, name)
      ctx.step = 'send'
      const meta = []
      for (let i = 0; i < 100; i += 25) {
        meta.push(...(await producer.send({ topic, acks, messages: sent.slice(i, i + 25) })))
      }
      if (acks === 0) await settle(admin, topic, sent.length)
      await inject(ctx, topic, sent)
      if (acks !== 0) {
        check(meta.length > 0, 'no produce response metadata')
        check(
          meta.every(m => m.errorCode === 0 && Number(m.baseOffset) >= 0),
          `bad produce response: ${JSON.stringify(meta)}`
        )
      }
      const { got } = await readToEnd(ctx, admin, topic)
      sameRecords(sent, got)
      return acks === 0 ? '100 records sent without responses, all read back' : `100 records, ${meta.length} partition responses`
    })
  }

  await feature('keys-headers', 30000, async ctx => {
    const admin = await ctx.admin()
    const topic = ctx.topic()
    await createTopic(ctx, admin, topic, 1)
    const producer = await ctx.producer()
    const bin = Buffer.from([0x00, 0x01, 0x02, 0x7f, 0x80, 0xfe, 0xff])
    const sent = [
      { key: 'null-value', value: null, headers: { empty: '', binary: bin, text: 'hello' } },
      { key: null, value: 'null-key', headers: {} },
      { key: bin, value: bin, headers: { multi: ['first', 'second'], 'ünïcode-kéy': 'välue' } },
      { key: '', value: '', headers: { e: Buffer.alloc(0) } },
    ]
    ctx.step = 'send'
    await producer.send({ topic, messages: sent })
    await inject(ctx, topic, sent)
    const { got } = await readToEnd(ctx, admin, topic)
    check(got.length === 4, `read ${got.length} records to the end offset, want the 4 produced`)
    const buf = x => (x === null ? null : Buffer.isBuffer(x) ? x : Buffer.from(x))
    const eq = (a, b) => (a === null || b === null ? a === b : a.equals(b))
    got.forEach((g, i) => {
      const s = sent[i]
      check(eq(g.keyBuf, buf(s.key)), `record ${i}: key ${g.keyBuf && g.keyBuf.toString('hex')}, want ${s.key}`)
      check(eq(g.value, buf(s.value)), `record ${i}: value ${g.value && g.value.toString('hex')}, want ${s.value}`)
      const want = Object.keys(s.headers)
      const have = Object.keys(g.headers || {})
      check(
        want.length === have.length && want.every(k => have.includes(k)),
        `record ${i}: header keys ${JSON.stringify(have)}, want ${JSON.stringify(want)}`
      )
      for (const k of want) {
        const w = s.headers[k]
        const h = g.headers[k]
        if (Array.isArray(w)) {
          check(
            Array.isArray(h) && h.length === w.length && w.every((x, j) => eq(h[j], buf(x))),
            `record ${i}: header ${k} = ${JSON.stringify(h)}, want ${JSON.stringify(w)}`
          )
        } else {
          check(h !== null && eq(h, buf(w)), `record ${i}: header ${k} = ${h && h.toString('hex')}, want ${buf(w).toString('hex')}`)
        }
      }
    })
    return 'null value, null key, empty key/value, binary key/value, empty/binary/unicode/repeated headers'
  })

  await feature('group-consume-commit', 60000, async ctx => {
    const admin = await ctx.admin()
    const topic = ctx.topic()
    await createTopic(ctx, admin, topic, 3)
    const producer = await ctx.producer()
    const first = records(30, 'first')
    await producer.send({ topic, messages: first })
    await inject(ctx, topic, first)
    const groupId = ctx.group('shared')
    const a = await readToEnd(ctx, admin, topic, { groupId, autoCommit: false })
    sameRecords(first, a.got)
    // Commit the end offsets: the position after the last record of each partition.
    ctx.step = 'commitOffsets'
    await a.consumer.commitOffsets([...a.ends].map(([partition, offset]) => ({ topic, partition, offset: String(offset) })))
    await committedAtEnd(ctx, admin, groupId, topic, a.ends)
    ctx.step = 'first member disconnect'
    await a.consumer.disconnect()
    const second = records(30, 'second')
    await producer.send({ topic, messages: second })
    await inject(ctx, topic, second)
    // fromBeginning would re-read everything if the commit were ignored.
    const b = await readToEnd(ctx, admin, topic, { groupId, fromBeginning: true, from: Object.fromEntries(a.ends) })
    sameRecords(second, b.got)
    // autoCommit: the second member's offsets reach the end offsets too.
    await committedAtEnd(ctx, admin, groupId, topic, b.ends)
    return `member 1 read 30 to the end offsets and committed ${showMap(a.ends)}; member 2 resumed there, read exactly the 30 new records and committed ${showMap(b.ends)}`
  })

  await feature('rebalance-two-members', 90000, async ctx => {
    const admin = await ctx.admin()
    const topic = ctx.topic()
    const N = 4
    await createTopic(ctx, admin, topic, N)
    const groupId = ctx.group('shared')
    const members = ['A', 'B'].map(name => ({ name, assignment: null, got: [], joins: 0 }))
    // Positions of the group: past the last record or batch either member processed.
    const pos = new Map()
    let ends = null
    let done
    const finished = new Promise(r => (done = r))
    const advance = (partition, next) => {
      pos.set(partition, Math.max(pos.get(partition) || 0, next))
      if (!ends) return
      const behind = [...ends].filter(([p, e]) => (pos.get(p) || 0) < e)
      if (behind.length === 0) done()
      else ctx.step = `consume by both members to the end offsets; behind (partition: position/end): ${behind.map(([p, e]) => `${p}: ${pos.get(p) || 0}/${e}`).join(', ')}`
    }
    const start = async m => {
      const c = ctx.consumer({ groupId })
      m.consumer = c
      c.on(c.events.GROUP_JOIN, ({ payload }) => {
        m.joins++
        m.assignment = payload.memberAssignment[topic] || []
        m.memberId = payload.memberId
      })
      c.on(c.events.END_BATCH_PROCESS, ({ payload }) => {
        if (payload.topic === topic) advance(payload.partition, Number(payload.lastOffset) + 1)
      })
      await c.connect()
      await c.subscribe({ topics: [topic], fromBeginning: true })
      // autoCommit (the default): kafkajs commits after each batch.
      await c.run({
        eachMessage: async ({ partition, message }) => {
          const key = message.key && message.key.toString()
          m.got.push({ partition, offset: Number(message.offset), key, value: message.value })
          advance(partition, Number(message.offset) + 1)
        },
      })
    }
    const [A, B] = members
    ctx.step = 'member A joins'
    await start(A)
    while (!A.assignment) await sleep(50)
    check(A.assignment.length === N, `sole member A got ${JSON.stringify(A.assignment)}`)
    const aJoins = A.joins
    ctx.step = 'member B joins, A rejoins'
    await start(B)
    // Stable: both have an assignment from the rebalance, disjoint, covering all.
    for (;;) {
      const a = A.assignment || []
      const b = B.assignment || []
      if (
        A.joins > aJoins &&
        B.joins > 0 &&
        a.length > 0 &&
        b.length > 0 &&
        a.length + b.length === N &&
        new Set([...a, ...b]).size === N
      )
        break
      await sleep(50)
    }
    ctx.step = 'produce'
    const producer = await ctx.producer()
    const sent = records(100, 'rebalance')
    await producer.send({ topic, messages: sent })
    await inject(ctx, topic, sent)
    ends = await endOffsets(admin, topic)
    advance(0, 0)
    ctx.step = 'consume by both members to the end offsets'
    await finished
    for (const m of members) {
      const bad = m.got.filter(g => !m.assignment.includes(g.partition))
      check(bad.length === 0, `member ${m.name} read partition ${bad[0] && bad[0].partition} outside its assignment ${m.assignment}`)
      check(m.got.length > 0, `member ${m.name} read nothing`)
    }
    // Exactly the records sent, none read twice by a member or across the two.
    sameRecords(sent, [...A.got, ...B.got])
    await committedAtEnd(ctx, admin, groupId, topic, ends)
    return `A partitions [${[...A.assignment].sort()}] read ${A.got.length}, B partitions [${[...B.assignment].sort()}] read ${B.got.length}; every record once; committed offsets = end offsets ${showMap(ends)}`
  })

  await feature('list-offsets', 30000, async ctx => {
    const admin = await ctx.admin()
    const topic = ctx.topic()
    await createTopic(ctx, admin, topic, 3)
    const producer = await ctx.producer()
    const base = Date.now() - 10 * 60 * 1000
    // One batch on partition 0: offsets 0..9 with timestamps base+1000*i.
    const msgs = Array.from({ length: 10 }, (_, i) => ({
      partition: 0,
      key: `k${i}`,
      value: `v${i}`,
      timestamp: String(base + 1000 * i),
    }))
    ctx.step = 'send'
    await producer.send({ topic, messages: msgs })
    await producer.send({ topic, messages: [{ partition: 1, key: 'p1', value: 'p1' }] })
    ctx.step = 'fetchTopicOffsets'
    const offs = await admin.fetchTopicOffsets(topic)
    const by = p => offs.find(o => o.partition === p)
    const want = { 0: ['0', '10'], 1: ['0', '1'], 2: ['0', '0'] }
    for (const p of [0, 1, 2]) {
      const o = by(p)
      check(o && o.low === want[p][0] && o.high === want[p][1], `partition ${p}: low/high ${o && o.low}/${o && o.high}, want ${want[p]}`)
    }
    const cases = [
      [base - 5000, '0', 'before all'],
      [base, '0', 'first timestamp'],
      [base + 2000, '2', 'exact 3rd'],
      [base + 4500, '5', 'between 5th and 6th'],
      [base + 9000, '9', 'last'],
      [base + 9001, '10', 'after last (-1 mapped to latest by kafkajs)'],
    ]
    ctx.step = 'fetchTopicOffsetsByTimestamp'
    for (const [ts, offset, what] of cases) {
      const r = await admin.fetchTopicOffsetsByTimestamp(topic, ts)
      const p0 = r.find(x => x.partition === 0)
      check(p0 && String(p0.offset) === offset, `by timestamp ${what} (${ts}): offset ${p0 && p0.offset}, want ${offset}`)
      if (ts === base + 2000) {
        const p2 = r.find(x => x.partition === 2)
        check(p2 && String(p2.offset) === '0', `empty partition 2 by timestamp: ${p2 && p2.offset}, want 0`)
      }
    }
    return 'earliest/latest on 3 partitions, 6 by-timestamp look-ups inside one batch'
  })

  await feature('delete-records', 30000, async ctx => {
    const admin = await ctx.admin()
    const topic = ctx.topic()
    await createTopic(ctx, admin, topic, 1)
    const producer = await ctx.producer()
    const sent = records(10, 'dr').map(m => ({ ...m, partition: 0 }))
    await producer.send({ topic, messages: sent })
    // kafkajs looks the partition leaders up in its cached metadata before
    // it refreshes it: load the topic's metadata first.
    await admin.fetchTopicOffsets(topic)
    ctx.step = 'deleteTopicRecords'
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '4' }] })
    const [o] = await admin.fetchTopicOffsets(topic)
    check(o.low === '4' && o.high === '10', `after deleting before 4: low/high ${o.low}/${o.high}, want 4/10`)
    await inject(ctx, topic, sent)
    const { got } = await readToEnd(ctx, admin, topic)
    check(got.length > 0 && got[0].offset === 4, `a new reader started at ${got[0] && got[0].offset}, want the log start 4`)
    sameRecords(sent.slice(4), got)
    return 'DeleteRecords moved the log start to 4; earliest offset and a new reader agree'
  })

  await feature('reset-offsets', 90000, async ctx => {
    const admin = await ctx.admin()
    const topic = ctx.topic()
    await createTopic(ctx, admin, topic, 1)
    const producer = await ctx.producer()
    const sent = records(20, 'reset').map(m => ({ ...m, partition: 0 }))
    await producer.send({ topic, messages: sent })
    await inject(ctx, topic, sent)
    const groupId = ctx.group('shared')
    // Member 1 reads to the end offset and commits it.
    const m1 = await readToEnd(ctx, admin, topic, { groupId, autoCommit: false })
    sameRecords(sent, m1.got)
    await m1.consumer.commitOffsets([{ topic, partition: 0, offset: String(m1.ends.get(0)) }])
    await m1.consumer.disconnect()
    const committed = async () => (await admin.fetchOffsets({ groupId, topics: [topic] }))[0].partitions[0].offset
    check((await committed()) === '20', `committed ${await committed()}, want 20`)

    // setOffsets to 5: the next member (fromBeginning false) starts at 5.
    ctx.step = 'setOffsets'
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '5' }] })
    check((await committed()) === '5', `after setOffsets: committed ${await committed()}, want 5`)
    const m2 = await readToEnd(ctx, admin, topic, { groupId, fromBeginning: false, autoCommit: false, from: { 0: 5 } })
    check(m2.got.length > 0 && m2.got[0].offset === 5, `after setOffsets 5: the next member started at ${m2.got[0] && m2.got[0].offset}, want 5`)
    sameRecords(sent.slice(5), m2.got)
    await m2.consumer.disconnect()

    // resetOffsets earliest: kafkajs commits -2 (EARLIEST); the next member
    // sees an invalid committed offset and starts from its fromBeginning.
    ctx.step = 'resetOffsets earliest'
    await admin.resetOffsets({ groupId, topic, earliest: true })
    const afterReset = await committed()
    check(afterReset === '-2', `after resetOffsets earliest: committed ${afterReset}, want -2 (kafkajs commits EARLIEST_OFFSET; Kafka stores it as given)`)
    const m3 = await readToEnd(ctx, admin, topic, { groupId, fromBeginning: true })
    check(m3.got.length > 0 && m3.got[0].offset === 0, `after resetOffsets earliest: the next member started at ${m3.got[0] && m3.got[0].offset}, want 0`)
    sameRecords(sent, m3.got)
    await committedAtEnd(ctx, admin, groupId, topic, m3.ends)
    return 'setOffsets 5 -> next member read 5..19; resetOffsets earliest (committed -2) -> next member read from 0'
  })

  await feature('describe-configs', 30000, async ctx => {
    const admin = await ctx.admin()
    const topic = ctx.topic()
    await createTopic(ctx, admin, topic, 1, [
      { name: 'retention.ms', value: '86400000' },
      { name: 'max.message.bytes', value: '500000' },
    ])
    const describe = async () => {
      const r = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [
          { type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms', 'max.message.bytes', 'cleanup.policy'] },
        ],
      })
      const res = r.resources[0]
      check(res.errorCode === 0, `describeConfigs error ${res.errorCode} ${res.errorMessage}`)
      return Object.fromEntries(res.configEntries.map(e => [e.configName, e]))
    }
    ctx.step = 'describeConfigs'
    let c = await describe()
    const show = e => (e ? `${e.configValue} (isDefault ${e.isDefault})` : 'missing')
    check(c['retention.ms'] && c['retention.ms'].configValue === '86400000' && !c['retention.ms'].isDefault, `retention.ms: ${show(c['retention.ms'])}, want override 86400000`)
    check(c['max.message.bytes'] && c['max.message.bytes'].configValue === '500000', `max.message.bytes: ${show(c['max.message.bytes'])}, want 500000`)
    check(c['cleanup.policy'] && c['cleanup.policy'].configValue === 'delete' && c['cleanup.policy'].isDefault, `cleanup.policy: ${show(c['cleanup.policy'])}, want default delete`)
    // DescribeConfigs v1+: ConfigSource 1 = DYNAMIC_TOPIC_CONFIG, 5 = DEFAULT_CONFIG.
    check(c['retention.ms'].configSource === 1, `retention.ms configSource ${c['retention.ms'].configSource}, want 1 (DYNAMIC_TOPIC_CONFIG)`)
    check(c['cleanup.policy'].configSource === 5, `cleanup.policy configSource ${c['cleanup.policy'].configSource}, want 5 (DEFAULT_CONFIG)`)

    // AlterConfigs (the legacy, non-incremental API) replaces the topic's
    // whole override set: max.message.bytes falls back to its default.
    ctx.step = 'alterConfigs'
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'retention.ms', value: '3600000' }] }],
    })
    c = await describe()
    check(c['retention.ms'] && c['retention.ms'].configValue === '3600000' && !c['retention.ms'].isDefault, `after alterConfigs retention.ms: ${show(c['retention.ms'])}, want override 3600000`)
    check(
      c['max.message.bytes'] && c['max.message.bytes'].isDefault && c['max.message.bytes'].configValue !== '500000',
      `after alterConfigs without max.message.bytes: ${show(c['max.message.bytes'])}, want the default (AlterConfigs replaces all overrides)`
    )

    ctx.step = 'describeConfigs broker'
    const md = await admin.describeCluster()
    const br = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.BROKER, name: String(md.brokers[0].nodeId), configNames: ['log.retention.hours'] }],
    })
    const lr = br.resources[0].configEntries.find(e => e.configName === 'log.retention.hours')
    check(lr, `broker config log.retention.hours not described: ${JSON.stringify(br.resources[0])}`)
    return `override set at create and by alterConfigs seen; alterConfigs dropped the other override; broker log.retention.hours=${lr.configValue}`
  })

  await feature('idempotent-produce', 40000, async ctx => {
    const admin = await ctx.admin()
    const topic = ctx.topic()
    await createTopic(ctx, admin, topic, 3)
    const producer = await ctx.producer({ idempotent: true, maxInFlightRequests: 1 })
    const apis = producer.apisSent
    const sent = records(100, 'idem')
    ctx.step = 'send'
    for (let i = 0; i < 100; i += 10) await producer.send({ topic, messages: sent.slice(i, i + 10) })
    check(apis.has('InitProducerId'), `idempotent producer sent no InitProducerId (sent ${[...apis]})`)
    await inject(ctx, topic, sent)
    const { got } = await readToEnd(ctx, admin, topic)
    sameRecords(sent, got)
    return '100 records in 10 sends, each read once'
  })

  const txTopicOf = ctx => ctx.topic()
  await feature('transactions', 60000, async ctx => {
    const admin = await ctx.admin()
    const topic = txTopicOf(ctx)
    await createTopic(ctx, admin, topic, 3)
    const producer = await ctx.producer({
      transactionalId: `kjs-tx-${RUN}`,
      idempotent: true,
      maxInFlightRequests: 1,
    })
    const committed = records(30, 'committed')
    const aborted = records(30, 'aborted')
    ctx.step = 'committed transaction'
    const t1 = await producer.transaction()
    await t1.send({ topic, messages: committed.slice(0, 15) })
    await t1.send({ topic, messages: committed.slice(15) })
    await t1.commit()
    ctx.step = 'aborted transaction'
    const t2 = await producer.transaction()
    await t2.send({ topic, messages: aborted })
    await t2.abort()
    await inject(ctx, topic, committed)
    // Both read to the end offsets (the last stable offset and the high
    // watermark are one here: no transaction is open any more).
    const rc = await readToEnd(ctx, admin, topic, { consumerOpts: { readUncommitted: false } })
    sameRecords(committed, rc.got)
    const ru = await readToEnd(ctx, admin, topic, { consumerOpts: { readUncommitted: true } })
    // read_uncommitted: both transactions' records, each once (committed before aborted in each partition).
    const all = [...committed, ...aborted]
    sameRecords(all, ru.got)
    return `read_committed: the 30 committed only; read_uncommitted: all ${all.length}; both to the end offsets ${showMap(ru.ends)}`
  })

  await feature('transactions-send-offsets', 60000, async ctx => {
    const admin = await ctx.admin()
    const topic = ctx.topic()
    const src = ctx.topic('-src')
    await createTopic(ctx, admin, topic, 1)
    await createTopic(ctx, admin, src, 1)
    const producer = await ctx.producer({
      transactionalId: `kjs-txo-${RUN}`,
      idempotent: true,
      maxInFlightRequests: 1,
    })
    const groupId = ctx.group('eos')
    ctx.step = 'transaction with sendOffsets'
    const t = await producer.transaction()
    await t.send({ topic, messages: records(5, 'eos') })
    await t.sendOffsets({ consumerGroupId: groupId, topics: [{ topic: src, partitions: [{ partition: 0, offset: '42' }] }] })
    await t.commit()
    ctx.step = 'fetchOffsets'
    let off
    const until = Date.now() + 10000
    for (;;) {
      off = (await admin.fetchOffsets({ groupId, topics: [src] }))[0].partitions[0].offset
      if (off === '42' || Date.now() > until) break
      await sleep(200)
    }
    check(off === '42', `group offset after the committed transaction: ${off}, want 42`)
    return 'AddOffsetsToTxn + TxnOffsetCommit: offset visible after commit'
  })

  await feature('rebalance-two-members-kip848', 1000, async () => ({
    result: 'unsupported',
    detail: 'kafkajs implements only the classic group protocol (no KIP-848 ConsumerGroupHeartbeat)',
  }))

  await feature('old-protocol-era', 60000, async ctx => {
    const admin = await ctx.admin()
    const topic = ctx.topic()
    await createTopic(ctx, admin, topic, 3)
    const producer = await ctx.producer()
    const sent = records(20, 'old')
    await producer.send({ topic, messages: sent })
    await inject(ctx, topic, sent)
    const groupId = ctx.group('old')
    const { got, consumer, ends } = await readToEnd(ctx, admin, topic, { groupId, autoCommit: false })
    sameRecords(sent, got)
    await consumer.commitOffsets([...ends].map(([partition, offset]) => ({ topic, partition, offset: String(offset) })))
    await committedAtEnd(ctx, admin, groupId, topic, ends)
    // The broker's advertised ranges, from a debug-logging client's ApiVersions exchange.
    let brokerApis = []
    const probe = new Kafka({
      clientId: 'samsa-compat-kafkajs-probe',
      brokers: BOOTSTRAP.split(','),
      logLevel: logLevel.DEBUG,
      logCreator: () => ({ log }) => {
        if (String(log.message).startsWith('Response ApiVersions') && log.data && log.data.apiVersions) {
          brokerApis = log.data.apiVersions
        }
      },
    })
    const pa = ctx.track(probe.admin())
    await pa.connect()
    await pa.listTopics()
    const range = key => {
      const r = brokerApis.find(a => a.apiKey === key)
      return r ? ` [broker ${r.minVersion}-${r.maxVersion}]` : ''
    }
    const list = [...apiUse.entries()]
      .sort((a, b) => a[1].key - b[1].key)
      .map(([name, { key, versions }]) => `${name}(${key}) v${[...versions].sort((x, y) => x - y).join('/v')}${range(key)}`)
    return `produce+group consume+commit work; API versions kafkajs used in this suite: ${list.join(', ')}`
  })
}

// COMPAT_PART=security runs the security part's features instead (security.js).
const part =
  process.env.COMPAT_PART === 'security'
    ? () =>
        require('./security').run({
          feature, check, createTopic, records, inject, readToEnd, sameRecords, errText, newKafka,
        })
    : main
part()
  .catch(e => {
    console.error('suite error:', errText(e))
    failed++
  })
  .finally(() => {
    console.log(`kafkajs suite: ${failed} failed, ${((Date.now() - T0) / 1000).toFixed(1)}s`)
    process.exit(failed > 0 ? 1 : 0)
  })
