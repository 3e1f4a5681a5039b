// Each page's actions, driven as a user would (links, forms, buttons),
// every page reached checked as the walk checks the sections (one h1, no
// browser errors, axe-core clean) with a screenshot; each page's steps
// are a block of their own. The Go test then checks the actions' effects
// in the cluster (console_test.go).
import { readFile } from 'node:fs/promises';
import { SEED, REGISTRY, CONNECT, launch, newPage, step, finish, assert, goto, checkPage } from './lib.mjs';

const browser = await launch();
const enc = encodeURIComponent;

// rows answers the texts of a table's body rows.
async function rows(page, sel) {
  return page.locator(`${sel} tbody tr`).allInnerTexts();
}

try {
  // ---- Messages ----
  const topic = SEED.jsonTopic;
  {
    const p = await newPage(browser);
    await step('messages: browse a partition from an offset', async () => {
      await goto(p, `/topics/${topic}/messages?p=1&from=offset&offset=10`);
      const r = await rows(p, '#messages-table');
      assert(r.length > 0, 'no records from partition 1 offset 10');
      const first = r[0].split('\t').map((s) => s.trim());
      assert(first[0] === '1' && first[1] === '10', `the first row is ${first.slice(0, 2)}, want partition 1 offset 10`);
      assert(r.every((x) => x.split('\t')[0].trim() === '1'), 'a row from another partition');
      await checkPage(p, 'messages');
    });
    await step('messages: the browse form (partition 0, oldest), a key filter, an expression', async () => {
      await p.locator('#m-p').selectOption('0');
      await p.locator('#m-from').selectOption('oldest');
      await p.locator('#m-key').fill('');
      await p.getByRole('button', { name: 'Show' }).click();
      await p.waitForURL((u) => u.searchParams.get('from') === 'oldest');
      await p.locator('#messages-table').waitFor();
      const r = await rows(p, '#messages-table');
      assert(r.length > 0 && r[0].split('\t')[1].trim() === '0', `the oldest of partition 0 is not offset 0: ${r[0]}`);
      await goto(p, `/topics/${topic}/messages?p=all&from=oldest&key=order-42`);
      const f = await rows(p, '#messages-table');
      assert(f.length === 1 && f[0].includes('order-42'), `the key filter found ${f.length} rows: ${f.join(' | ').slice(0, 300)}`);
      await goto(p, `/topics/${topic}/messages?p=all&from=oldest&expr=${enc('json.amount > 49 && headers["source"] == "consoletest"')}`);
      const e = await rows(p, '#messages-table');
      assert(e.length > 0 && e.every((x) => /"amount": 49\.5/.test(x)), `the expression filter found ${e.length} rows: ${e.join(' | ').slice(0, 300)}`);
      await checkPage(p, null);
    });
    await step('messages: view one record (value, headers, metadata)', async () => {
      await p.locator('#messages-table a').first().click();
      await p.locator('#messages-record-meta').waitFor();
      const value = await p.locator('#messages-value').textContent();
      assert(value.includes('customer'), `the record's value: ${value.slice(0, 200)}`);
      const headers = await p.locator('#messages-headers').textContent();
      assert(headers.includes('source') && headers.includes('consoletest'), `the record's headers: ${headers}`);
      await checkPage(p, 'record');
    });
    await step('messages: Avro records decoded through the registry', async () => {
      await goto(p, `/topics/${SEED.avroTopic}/messages?p=all&from=oldest`);
      const text = await p.locator('#messages-table').textContent();
      assert(text.includes('amount') && text.includes('USD'), `the Avro values are not decoded: ${text.slice(0, 300)}`);
      await checkPage(p, 'messages-avro');
    });
    await step('messages: download as JSON lines', async () => {
      await goto(p, `/topics/${topic}/messages?p=0&from=oldest`);
      const [dl] = await Promise.all([p.waitForEvent('download'), p.getByRole('link', { name: 'Download as JSON lines' }).click()]);
      const lines = (await readFile(await dl.path(), 'utf8')).split('\n').filter((l) => l);
      assert(lines.length > 0, 'the download is empty');
      for (const l of lines) {
        const o = JSON.parse(l);
        assert(o.partition === 0 && typeof o.offset === 'number', `a downloaded line: ${l.slice(0, 200)}`);
      }
      assert(JSON.stringify(JSON.parse(lines[0])).includes('customer'), `the first line lacks the value: ${lines[0].slice(0, 300)}`);
    });
    await step('messages: produce a record, then see it', async () => {
      await goto(p, `/topics/${topic}/messages/produce`);
      await checkPage(p, 'produce');
      await p.locator('#pr-key').fill('from-the-browser');
      await p.locator('#pr-value').fill('{"id": 9999, "note": "produced by the browser test"}');
      await p.locator('#pr-headers').fill('origin=playwright');
      await p.locator('#pr-partition').fill('2');
      await p.getByRole('button', { name: /^Produce/ }).click();
      await p.locator('#messages-produced').waitFor();
      const value = await p.locator('#messages-value').textContent();
      assert(value.includes('produced by the browser test'), `the produced record shows ${value}`);
      const meta = await p.locator('#messages-record-meta').textContent();
      assert(/Partition\s*2/.test(meta), `the produced record's metadata: ${meta}`);
      await checkPage(p, null);
    });
    await p.context().close();
  }

  // ---- Groups ----
  {
    const p = await newPage(browser);
    await step('groups: classic, consumer (KIP-848) and share groups are listed', async () => {
      await goto(p, '/groups');
      const t = await p.locator('#groups-table').innerText();
      for (const g of [SEED.classicLagGroup, SEED.classicLiveGroup, SEED.consumerGroup, SEED.shareGroup]) {
        assert(t.includes(g), `the groups list lacks ${g}: ${t.slice(0, 400)}`);
      }
      await checkPage(p, 'groups');
    });
    await step('groups: a group with lag (its members, offsets and lag chart)', async () => {
      await p.getByRole('link', { name: SEED.classicLagGroup, exact: true }).click();
      await p.locator('#groups-lag').waitFor();
      const lag = Number((await p.locator('#groups-total-lag').innerText()).replace(/[^0-9]/g, ''));
      assert(lag >= SEED.jsonRecords / 2, `total lag ${lag}, want at least ${SEED.jsonRecords / 2}`);
      await checkPage(p, 'group');
    });
    for (const [g, name] of [[SEED.consumerGroup, 'group-consumer'], [SEED.shareGroup, 'group-share']]) {
      await step(`groups: the live group ${g} with its members`, async () => {
        await goto(p, `/groups/${enc(g)}`);
        await p.locator('#groups-members').waitFor();
        await checkPage(p, name);
      });
    }
    await step('groups: reset offsets to the earliest, with a preview first', async () => {
      await goto(p, `/groups/${enc(SEED.classicLagGroup)}`);
      await p.locator('#groups-reset-link').click();
      await p.locator('#groups-reset-form').waitFor();
      await p.locator('#groups-topic').fill(SEED.jsonTopic);
      await p.locator('#groups-to').selectOption('earliest');
      await p.locator('#groups-preview').click();
      await p.locator('#groups-reset-preview').waitFor();
      const r = await rows(p, '#groups-reset-preview');
      assert(r.length === 3, `the preview has ${r.length} rows, want 3 partitions`);
      for (const row of r) {
        const cells = row.split('\t').map((c) => c.trim());
        assert(cells[3] === '0' && Number(cells[2]) > 0, `a preview row: ${cells}`);
      }
      await checkPage(p, 'group-reset');
      await p.locator('#groups-reset-apply button[type="submit"]').click();
      await p.locator('main [role="status"]').waitFor();
      await checkPage(p, null);
    });
    await step('groups: delete an empty group', async () => {
      await goto(p, `/groups/${enc(SEED.retiredGroup)}`);
      await p.locator('#groups-confirm').fill(SEED.retiredGroup);
      await p.getByRole('button', { name: 'Delete group' }).click();
      await p.waitForURL((u) => u.pathname === '/groups');
      assert(!(await p.locator('main').innerText()).includes(SEED.retiredGroup + '\t'), 'the deleted group is still listed');
      await checkPage(p, null);
    });
    await p.context().close();
  }

  // ---- Schemas ----
  {
    const p = await newPage(browser);
    await step('schemas: the subject list and a subject with two versions', async () => {
      await goto(p, '/schemas');
      await p.getByRole('link', { name: SEED.subject, exact: true }).click();
      await p.waitForURL((u) => u.pathname.includes(SEED.subject));
      const latest = await p.locator('#schemas-latest').textContent();
      assert(latest.includes('currency'), `the latest schema lacks the field version 2 added: ${latest}`);
      assert((await rows(p, '#schemas-versions')).length === 2, 'not two versions');
      await checkPage(p, 'schema');
    });
    await step('schemas: the diff of version 1 and 2', async () => {
      await p.getByRole('link', { name: /^Diff v1/ }).click();
      await p.locator('#schemas-diff').waitFor();
      const added = await p.locator('#schemas-diff tr.schemas-add').allInnerTexts();
      assert(added.some((l) => l.includes('currency')), `the diff's added lines: ${added.join(' | ')}`);
      await checkPage(p, 'schema-diff');
    });
    await step('schemas: set a subject\'s compatibility level', async () => {
      await goto(p, `/schemas/${enc(SEED.subject)}`);
      await p.locator('#schemas-level').selectOption('FULL');
      await p.locator('#schemas-subject-config button[type="submit"]').click();
      await p.locator('main [role="status"]').waitFor();
      const cfg = await (await fetch(`${REGISTRY}/config/${enc(SEED.subject)}`)).json();
      assert(cfg.compatibilityLevel === 'FULL', `the registry says ${JSON.stringify(cfg)}`);
      await checkPage(p, null);
    });
    await step('schemas: register a schema, and an incompatible version is refused', async () => {
      await goto(p, '/schemas/new');
      await checkPage(p, 'schema-register');
      const v1 = '{"type":"record","name":"Made","fields":[{"name":"n","type":"long"}]}';
      await p.locator('#schemas-subject').fill(SEED.newSubject);
      await p.locator('#schemas-schema').fill(v1);
      await p.getByRole('button', { name: 'Register' }).click();
      await p.waitForURL((u) => u.pathname.includes(SEED.newSubject));
      await p.locator('main [role="status"]').waitFor();
      // A new required field without a default breaks BACKWARD.
      await goto(p, `/schemas/new?subject=${enc(SEED.newSubject)}`);
      await p.locator('#schemas-schema').fill('{"type":"record","name":"Made","fields":[{"name":"n","type":"long"},{"name":"m","type":"string"}]}');
      await p.locator('#schemas-check').check();
      await p.getByRole('button', { name: 'Register' }).click();
      await p.locator('#schemas-error').waitFor();
      p.errors = p.errors.filter((e) => !/^http 4\d\d /.test(e));
      await checkPage(p, null);
      const versions = await (await fetch(`${REGISTRY}/subjects/${enc(SEED.newSubject)}/versions`)).json();
      assert(JSON.stringify(versions) === '[1]', `the registry holds versions ${JSON.stringify(versions)} of ${SEED.newSubject}`);
    });
    await p.context().close();
  }

  // ---- Connect ----
  {
    const p = await newPage(browser);
    const state = async (name) => (await (await fetch(`${CONNECT}/connectors/${enc(name)}/status`)).json()).connector.state;
    const until = async (name, want) => {
      for (let i = 0; i < 100 && (await state(name)) !== want; i++) await new Promise((r) => setTimeout(r, 100));
      assert((await state(name)) === want, `connector ${name} is ${await state(name)}, want ${want}`);
    };
    await step('connect: the running connector is listed', async () => {
      await goto(p, '/connect');
      const r = await rows(p, '#connect-table');
      assert(r.some((x) => x.includes(SEED.connector) && x.includes('RUNNING')), `the connectors: ${r.join(' | ')}`);
      await checkPage(p, 'connect');
    });
    await step('connect: a connector\'s status, tasks and config; pause and resume', async () => {
      await p.getByRole('link', { name: SEED.connector, exact: true }).click();
      await p.locator('#connect-tasks').waitFor();
      assert((await p.locator('#connect-state').textContent()).trim() === 'RUNNING', 'the connector is not shown RUNNING');
      await checkPage(p, 'connector');
      await p.getByRole('button', { name: 'Pause', exact: true }).click();
      await p.locator('main [role="status"]').waitFor();
      await until(SEED.connector, 'PAUSED');
      await goto(p, `/connect/${enc(SEED.connector)}`);
      assert((await p.locator('#connect-state').textContent()).trim() === 'PAUSED', 'the paused connector is not shown PAUSED');
      await p.getByRole('button', { name: 'Resume', exact: true }).click();
      await p.locator('main [role="status"]').waitFor();
      await until(SEED.connector, 'RUNNING');
      await checkPage(p, null);
    });
    await step('connect: restart the connector with its tasks', async () => {
      await goto(p, `/connect/${enc(SEED.connector)}`);
      await p.locator('#connect-include-tasks').check();
      await p.locator('#connect-restart button[type="submit"]').click();
      await p.locator('main [role="status"]').waitFor();
      await until(SEED.connector, 'RUNNING');
      await checkPage(p, null);
    });
    await step('connect: create a connector from a plugin\'s form, then delete it', async () => {
      await goto(p, '/connect/new');
      await checkPage(p, 'connect-plugins');
      await p.locator('#connect-plugins a', { hasText: /FileStreamSource/ }).first().click();
      await p.locator('#connect-form').waitFor();
      await checkPage(p, 'connect-new');
      await p.locator('#connect-name').fill(SEED.newConnector);
      await p.locator('#connect-f-file').fill(SEED.connectorFile);
      await p.locator('#connect-f-topic').fill('lines-again');
      await p.locator('#connect-form button[type="submit"]').click();
      await p.waitForURL((u) => u.pathname === `/connect/${SEED.newConnector}`);
      await until(SEED.newConnector, 'RUNNING');
      await p.locator('#connect-confirm').fill(SEED.newConnector);
      await p.getByRole('button', { name: 'Delete connector' }).click();
      await p.waitForURL((u) => u.pathname === '/connect');
      const r = await fetch(`${CONNECT}/connectors/${enc(SEED.newConnector)}`);
      assert(r.status === 404, `the deleted connector answers ${r.status}`);
      await checkPage(p, null);
    });
    await p.context().close();
  }

  // ---- Security ----
  {
    const p = await newPage(browser);
    await step('security: the seeded ACLs are listed', async () => {
      await goto(p, '/security');
      const t = await p.locator('#acls-table').textContent();
      assert(t.includes(`User:${SEED.loginUser}`) && t.includes(SEED.jsonTopic), `the ACL table: ${t.slice(0, 300)}`);
      await checkPage(p, 'security');
    });
    await step('security: create an ACL', async () => {
      const f = p.locator('#acl-create');
      await f.getByLabel('Principal').fill(SEED.aclUser);
      await f.getByLabel('Resource type').selectOption('TOPIC');
      await f.getByLabel('Resource name').fill(SEED.avroTopic);
      await f.getByLabel('Pattern type').selectOption('LITERAL');
      await f.getByLabel('Operation').selectOption('READ');
      await f.getByLabel('Permission').selectOption('ALLOW');
      await f.getByRole('button', { name: 'Create' }).click();
      await p.locator('main [role="status"]').waitFor();
      const t = await p.locator('#acls-table').textContent();
      assert(t.includes(SEED.aclUser), `the new ACL is not listed: ${t.slice(0, 400)}`);
      await checkPage(p, null);
    });
    await step('security: SCRAM users, create a credential (no password shown)', async () => {
      await goto(p, '/security/users');
      await checkPage(p, 'security-users');
      const f = p.locator('#user-upsert');
      await f.getByLabel('User').fill(SEED.scramUser);
      await f.getByLabel('Password').fill('carol-password-123');
      await f.getByRole('button', { name: 'Save' }).click();
      await p.locator('main [role="status"]').waitFor();
      const t = await p.locator('#users-table').textContent();
      assert(t.includes(SEED.scramUser), `the new user is not listed: ${t}`);
      assert(!(await p.content()).includes('carol-password-123'), 'the password is in the page');
      await checkPage(p, null);
    });
    await step('security: quotas render', async () => {
      await goto(p, '/security/quotas');
      await checkPage(p, 'security-quotas');
    });
    await p.context().close();
  }
  // ---- Topics (last: it deletes records of the Avro topic) ----
  {
    const p = await newPage(browser);
    await step('topics: the list, and a search', async () => {
      await goto(p, '/topics');
      const t = await p.locator('#topics-table').innerText();
      for (const n of [SEED.jsonTopic, SEED.avroTopic, SEED.emptyTopic]) assert(t.includes(n), `the topics list lacks ${n}`);
      await checkPage(p, 'topics');
      await p.locator('#topics-q').fill(SEED.jsonTopic.slice(0, 3));
      await p.locator('#topics-search button[type="submit"]').click();
      await p.waitForURL((u) => u.searchParams.get('q') === SEED.jsonTopic.slice(0, 3));
      const names = await p.locator('#topics-table tbody tr td:first-child a').allInnerTexts();
      assert(names.length === 1 && names[0] === SEED.jsonTopic, `the search found ${names}`);
      await checkPage(p, null);
    });
    await step('topics: a topic\'s overview and partitions', async () => {
      await p.getByRole('link', { name: SEED.jsonTopic, exact: true }).click();
      await p.locator('#topics-cards').waitFor();
      await checkPage(p, 'topic');
      await goto(p, `/topics/${SEED.jsonTopic}/partitions`);
      assert((await rows(p, '#topics-partitions')).length === 3, 'not 3 partition rows');
      await checkPage(p, 'topic-partitions');
    });
    await step('topics: create a topic, add a partition, delete it', async () => {
      await goto(p, '/topics');
      await p.locator('#topics-new').click();
      await p.locator('#topics-create').waitFor();
      await checkPage(p, 'topic-create');
      await p.locator('#topics-name').fill(SEED.newTopic);
      await p.locator('#topics-partitions').fill('2');
      await p.locator('#topics-replication').fill('1');
      await p.locator('#topics-create button[type="submit"]').click();
      await p.waitForURL((u) => u.pathname === `/topics/${SEED.newTopic}`);
      await p.locator('main [role="status"]').waitFor();
      await p.locator('#topics-count').fill('3');
      await p.locator('#topics-add-partitions button[type="submit"]').click();
      // (the page already shows "Topic created.": wait for the new notice)
      await p.locator('main [role="status"]', { hasText: /partition/i }).waitFor();
      await goto(p, `/topics/${SEED.newTopic}/partitions`);
      assert((await rows(p, '#topics-partitions')).length === 3, 'not 3 partitions after adding one');
      await goto(p, `/topics/${SEED.newTopic}`);
      await p.locator('#topics-delete').click();
      await p.locator('#topics-delete-form').waitFor();
      await p.locator('#topics-confirm').fill(SEED.newTopic);
      await p.locator('#topics-delete-form button[type="submit"]').click();
      await p.waitForURL((u) => u.pathname === '/topics');
      await p.locator('main [role="status"]').waitFor();
      await checkPage(p, null);
    });
    await step('topics: edit a config', async () => {
      await goto(p, `/topics/${SEED.emptyTopic}/configs`);
      await checkPage(p, 'topic-configs');
      await p.locator('#topics-configs input[name="set.retention.ms"]').fill('3600000');
      await p.locator('#topics-configs-form button[type="submit"]').click();
      await p.locator('main [role="status"]').waitFor();
      const v = await p.locator('#topics-configs input[name="set.retention.ms"]').inputValue();
      assert(v === '3600000', `retention.ms shows ${v} after the change`);
      await checkPage(p, null);
    });
    await step('topics: delete records before an offset', async () => {
      await goto(p, `/topics/${SEED.avroTopic}/delete-records`);
      await checkPage(p, 'topic-delete-records');
      await p.locator('input[name="mode"][value="partition"]').check();
      await p.locator('#topics-rec-partition').fill('0');
      await p.locator('#topics-rec-offset').fill('5');
      await p.locator('#topics-rec-confirm').fill(SEED.avroTopic);
      await p.locator('#topics-records-form button[type="submit"]').click();
      await p.waitForURL((u) => u.pathname === `/topics/${SEED.avroTopic}`);
      await p.locator('main [role="status"]').waitFor();
      await checkPage(p, null);
    });
    await p.context().close();
  }
} finally {
  await browser.close();
}
finish('actions.mjs');
