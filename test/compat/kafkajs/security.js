'use strict'
// The KafkaJS suite's security part (test/compat/README.md, "Security"):
// with COMPAT_PART=security, compat.js runs these features instead of its
// own, against the broker lib.sh's start_secure_samsa starts. A protocol or
// mechanism feature creates a topic, produces 10 records, takes the end
// offsets and reads to them with a group consumer, every client over that
// listener (compat.js's helpers, with ctx.kafka a client configured for it);
// an auth-* feature makes each refused login and wants KafkaJS's own error
// for it, well before the feature's timeout.

const fs = require('fs')

const FEATURES = [
  'ssl', 'mtls', 'mtls-principal',
  'sasl-plain', 'sasl-scram-sha-256', 'sasl-scram-sha-512', 'sasl-oauthbearer',
  'sasl-ssl-plain', 'sasl-ssl-scram-sha-256', 'sasl-ssl-scram-sha-512', 'sasl-ssl-oauthbearer',
  'auth-wrong-password', 'auth-unknown-user', 'auth-expired-token', 'auth-no-client-certificate',
]

// A refused login must be reported within this many milliseconds.
const REFUSAL_DEADLINE = 20000

// KafkaJS 2.2.4 cannot see a refused OAUTHBEARER login.
const OAUTHBEARER_UNTOLD =
  'KafkaJS 2.2.4 cannot see a refused OAUTHBEARER login: it takes the server\'s error challenge ' +
  '({"status":"invalid_token"}, RFC 7628 3.2.2) for success (protocol/sasl/oauthBearer/response.js decodes any ' +
  'answer as true) and never sends the %x01 after which the broker answers SASL_AUTHENTICATION_FAILED, so ' +
  'connect() resolves and the next request finds the connection closed'

const sleep = ms => new Promise(r => setTimeout(r, ms))

function env(name) {
  const v = process.env[name]
  if (!v) throw new Error(`${name} is not set: the security part runs against lib.sh's start_secure_samsa`)
  return v
}

// KafkaJS's connection settings: brokers, ssl, sasl. cert: 'client', 'other'
// (a certificate of another subject) or none.
function tls(cert) {
  const ssl = { ca: [fs.readFileSync(env('SAMSA_CA_FILE'), 'utf8')] }
  if (cert) {
    const who = cert === 'other' ? 'SAMSA_OTHER_CLIENT' : 'SAMSA_CLIENT'
    ssl.cert = fs.readFileSync(env(`${who}_CERT`), 'utf8')
    ssl.key = fs.readFileSync(env(`${who}_KEY`), 'utf8')
  }
  return ssl
}

// mechanism: plain, scram-sha-256, scram-sha-512 or oauthbearer, as KafkaJS
// names them; over SASL_SSL when overTLS.
function sasl(mechanism, overTLS) {
  const c = { brokers: [env('SAMSA_SASL_PLAINTEXT_BOOTSTRAP')], sasl: { mechanism } }
  if (overTLS) Object.assign(c, { brokers: [env('SAMSA_SASL_SSL_BOOTSTRAP')], ssl: tls() })
  if (mechanism === 'plain') {
    Object.assign(c.sasl, { username: env('SAMSA_PLAIN_USER'), password: env('SAMSA_PLAIN_PASSWORD') })
  } else if (mechanism === 'oauthbearer') {
    const token = env('SAMSA_OAUTH_TOKEN')
    c.sasl.oauthBearerProvider = async () => ({ value: token })
  } else {
    Object.assign(c.sasl, { username: env('SAMSA_SCRAM_USER'), password: env('SAMSA_SCRAM_PASSWORD') })
  }
  return c
}

function connection(feature) {
  if (feature === 'ssl') return { brokers: [env('SAMSA_SSL_BOOTSTRAP')], ssl: tls() }
  if (feature === 'mtls' || feature === 'mtls-principal') return { brokers: [env('SAMSA_MTLS_BOOTSTRAP')], ssl: tls('client') }
  if (feature.startsWith('sasl-ssl-')) return sasl(feature.slice('sasl-ssl-'.length), true)
  return sasl(feature.slice('sasl-'.length), false)
}

// [what, connection] for each login an auth-* feature makes.
function refusals(feature) {
  if (feature === 'auth-wrong-password' || feature === 'auth-unknown-user') {
    return ['plain', 'scram-sha-256', 'scram-sha-512'].map(m => {
      const c = sasl(m, false)
      if (feature === 'auth-wrong-password') c.sasl.password = env('SAMSA_WRONG_PASSWORD')
      else c.sasl.username = env('SAMSA_UNKNOWN_USER')
      return [m.toUpperCase(), c]
    })
  }
  if (feature === 'auth-expired-token') {
    const c = sasl('oauthbearer', false)
    const token = env('SAMSA_OAUTH_TOKEN_EXPIRED')
    c.sasl.oauthBearerProvider = async () => ({ value: token })
    return [['OAUTHBEARER', c]]
  }
  return [['TLS without a client certificate', { brokers: [env('SAMSA_MTLS_BOOTSTRAP')], ssl: tls() }]]
}

// The TLS alert of a server that wants a client certificate and got none:
// "certificate required" in TLS 1.3, "bad certificate" or "handshake
// failure" in TLS 1.2, as OpenSSL (Node's TLS) spells them.
function certificateRefused(text) {
  const t = text.toLowerCase().replace(/_/g, ' ')
  return ['certificate required', 'bad certificate', 'handshake failure'].some(m => t.includes(m))
}

// run reports every security feature through h.feature; h holds compat.js's
// helpers and its client options.
async function run(h) {
  const { feature, check, createTopic, records, inject, readToEnd, sameRecords, errText, newKafka } = h
  // Over ctx.kafka: 10 records to partition 0 of topic, read back to the
  // end offsets by a group consumer, compared.
  const roundTrip = async (ctx, name, admin, topic) => {
    const producer = await ctx.producer()
    const sent = records(10, name)
    ctx.step = `produce to ${topic}`
    await producer.send({ topic, acks: -1, messages: sent.map(m => ({ ...m, partition: 0 })) })
    await inject(ctx, topic, sent)
    const { got } = await readToEnd(ctx, admin, topic)
    sameRecords(sent, got)
  }
  const rounds = FEATURES.filter(f => !f.startsWith('auth-') && f !== 'mtls-principal')
  for (const name of rounds) {
    await feature(name, 45000, async ctx => {
      ctx.kafka = newKafka(connection(name))
      const admin = await ctx.admin()
      const topic = ctx.topic()
      await createTopic(ctx, admin, topic, 1)
      await roundTrip(ctx, name, admin, topic)
    })
  }
  // mtls-principal: start_secure_samsa's ACL lets only the client
  // certificate's principal use the topics named with its prefix; another
  // subject's certificate must be refused with TOPIC_AUTHORIZATION_FAILED
  // (tried until the ACL is in force), then the round trip with the
  // client's certificate must pass. Only where the broker has an authorizer.
  if (!process.env.SAMSA_AUTHORIZER) {
    console.log('mtls-principal: not run, the broker has no authorizer (SAMSA_AUTHORIZER is empty)')
  } else {
    await feature('mtls-principal', 45000, async ctx => {
      const topic = env('SAMSA_PRINCIPAL_TOPIC_PREFIX') + ctx.topic()
      await createTopic(ctx, await ctx.admin(), topic, 1) // PLAINTEXT
      ctx.kafka = newKafka({ brokers: [env('SAMSA_MTLS_BOOTSTRAP')], ssl: tls('other'), retry: { retries: 0 } })
      const other = await ctx.producer()
      let denied
      for (const until = Date.now() + 20000; !denied; ) {
        ctx.step = `produce to ${topic} with another subject's certificate`
        try {
          await other.send({ topic, acks: -1, messages: [{ key: 'k', value: 'v', partition: 0 }] })
        } catch (e) {
          if (e.type === 'TOPIC_AUTHORIZATION_FAILED' || (e.cause && e.cause.type === 'TOPIC_AUTHORIZATION_FAILED')) denied = e
        }
        check(denied || Date.now() < until,
          `another subject's certificate wrote to ${topic}, which only ${env('SAMSA_CLIENT_PRINCIPAL')} may`)
        if (!denied) await sleep(300) // the ACL is not in force yet
      }
      ctx.kafka = newKafka(connection('mtls-principal'))
      await roundTrip(ctx, 'mtls-principal', await ctx.admin(), topic)
      return `${env('SAMSA_CLIENT_PRINCIPAL')} (subject ${env('SAMSA_CLIENT_SUBJECT')}) wrote and read a topic only it may; another subject: ${errText(denied).slice(0, 120)}`
    })
  }
  for (const name of FEATURES.filter(f => f.startsWith('auth-'))) {
    await feature(name, 75000, async ctx => {
      const seen = []
      let untold
      for (const [what, conn] of refusals(name)) {
        ctx.step = `login: ${what}`
        ctx.kafka = newKafka({ ...conn, retry: { retries: 0 } })
        const start = Date.now()
        let err
        try {
          await Promise.race([
            ctx.admin({ retries: 0 }),
            new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer within ${REFUSAL_DEADLINE / 1000}s`)), REFUSAL_DEADLINE)),
          ])
        } catch (e) {
          err = e
        }
        if (!err && what === 'OAUTHBEARER') {
          // KafkaJS takes the broker's error challenge for success (see
          // OAUTHBEARER_UNTOLD): the first request after shows what it gets.
          untold = OAUTHBEARER_UNTOLD
          try {
            ctx.step = 'a request after the OAUTHBEARER login'
            const admin = ctx.clients[ctx.clients.length - 1]
            await Promise.race([admin.listTopics(), sleep(REFUSAL_DEADLINE).then(() => { throw new Error('no answer') })])
          } catch (e) {
            err = e
          }
        }
        const took = ((Date.now() - start) / 1000).toFixed(1)
        check(err, `${what}: the login succeeded, want it refused`)
        const text = errText(err)
        if (untold) {
          // the request failed: nothing more to check
        } else if (conn.sasl) {
          check(err.name === 'KafkaJSSASLAuthenticationError',
            `${what}: want KafkaJSSASLAuthenticationError, got after ${took}s: ${text}`)
        } else {
          check(certificateRefused(text), `${what}: want a TLS error for the missing certificate, got after ${took}s: ${text}`)
        }
        seen.push(`${what}: ${text.slice(0, 160)} (${took}s)`)
      }
      if (untold) return { result: 'unsupported', detail: `${untold}; the first request after: ${seen.join('; ')}` }
      return seen.join('; ')
    })
  }
}

module.exports = { run }
