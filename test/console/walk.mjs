// The generic walk of the console: every section in the navigation
// (status 200, one h1, no browser errors, axe-core clean, a laptop-size
// screenshot), a phone-size view of two pages, the keyboard shortcuts and
// the skip link, the dark theme (by cookie and by its link), and the CSRF
// refusal of a form posted without the page's token.
import { BASE, PHONE, SEED, launch, newPage, step, finish, assert, goto, checkPage, shot, axeCheck } from './lib.mjs';

const browser = await launch();
try {
  const page = await newPage(browser);
  let nav = [];
  await step('the layout lists the sections', async () => {
    const resp = await page.goto(BASE + '/');
    assert(resp, 'no response for /');
    nav = await page.locator('header.top nav a').evaluateAll((as) =>
      as.map((a) => ({ href: a.getAttribute('href'), label: a.textContent.trim(), key: a.dataset.key })));
    const labels = nav.map((n) => n.label);
    for (const want of ['Overview', 'Topics', 'Groups', 'Schemas', 'Connect', 'Security', 'Operations']) {
      assert(labels.includes(want), `the navigation lacks ${want}: ${labels.join(', ')}`);
    }
  });

  for (const n of nav) {
    await step(`section ${n.label} (${n.href})`, async () => {
      const p = await newPage(browser);
      await goto(p, n.href);
      const current = await p.locator('header.top nav a[aria-current="page"]').textContent().catch(() => null);
      assert(current && current.trim() === n.label, `the navigation lights ${current}, want ${n.label}`);
      await checkPage(p, n.label.toLowerCase());
      await p.context().close();
    });
  }

  await step('the overview updates itself over server-sent events', async () => {
    const p = await newPage(browser);
    await p.goto(BASE + '/');
    await p.evaluate(() => new Promise((resolve, reject) => {
      document.body.addEventListener('htmx:sseMessage', () => resolve(), { once: true });
      setTimeout(() => reject(new Error('no server-sent event reached the page in 10 s')), 10000);
    }));
    assert(!p.errors.length, p.errors.join('\n'));
    await p.context().close();
  });

  await step('the error page (an unknown path) is a 404 with an h1, axe clean', async () => {
    const p = await newPage(browser);
    await goto(p, '/no-such-page', 404);
    p.errors = p.errors.filter((e) => !e.includes('404')); // the browser logs the 404 itself
    await checkPage(p, null);
    await p.context().close();
  });

  await step('the first Tab reaches the skip link, which moves focus to the content', async () => {
    const p = await newPage(browser);
    await p.goto(BASE + '/');
    await p.keyboard.press('Tab');
    const first = await p.evaluate(() => ({ cls: document.activeElement.className, text: document.activeElement.textContent.trim() }));
    assert(first.cls.split(' ').includes('skip'), `the first Tab focuses ${JSON.stringify(first)}, not the skip link`);
    await p.keyboard.press('Enter');
    await p.waitForFunction(() => document.activeElement && document.activeElement.id === 'main');
    await p.context().close();
  });

  await step('"g" then "t" goes to Topics; "/" focuses its search; "?" shows the keys', async () => {
    const p = await newPage(browser);
    await p.goto(BASE + '/');
    await p.keyboard.press('g');
    await p.keyboard.press('t');
    await p.waitForURL(BASE + '/topics');
    await p.locator('h1').first().waitFor();
    await p.keyboard.press('/');
    const focused = await p.evaluate(() => document.activeElement && document.activeElement.hasAttribute('data-search'));
    assert(focused, '"/" did not focus the search field');
    await p.locator('[data-search]').blur();
    await p.keyboard.press('?');
    await p.locator('#key-help').waitFor();
    await p.keyboard.press('Escape');
    await p.locator('#key-help').waitFor({ state: 'detached' });
    assert(!p.errors.length, p.errors.join('\n'));
    await p.context().close();
  });

  await step('the dark theme: its cookie sets data-theme="dark"; axe clean in dark', async () => {
    const p = await newPage(browser, { cookies: [{ name: 'samsa_theme', value: 'dark' }], colorScheme: 'light' });
    await p.goto(BASE + '/');
    const theme = await p.locator('html').getAttribute('data-theme');
    assert(theme === 'dark', `data-theme=${theme}, want dark`);
    const bg = await p.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const lum = bg.match(/\d+/g).slice(0, 3).map(Number).reduce((a, b) => a + b, 0) / 3;
    assert(lum < 100, `the dark theme's background is ${bg}`);
    await checkPage(p, 'dark-overview');
    await p.context().close();
  });

  await step('the theme links set the cookie and come back to the page', async () => {
    const p = await newPage(browser);
    await p.goto(BASE + '/');
    await p.getByRole('link', { name: 'Dark', exact: true }).click();
    await p.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
    const cookies = await p.context().cookies();
    const c = cookies.find((c) => c.name === 'samsa_theme');
    assert(c && c.value === 'dark', `theme cookie ${JSON.stringify(c)}`);
    assert(new URL(p.url()).pathname === '/', `the Dark link ended at ${p.url()}`);
    await p.getByRole('link', { name: 'Light', exact: true }).click();
    await p.waitForFunction(() => document.documentElement.dataset.theme === 'light');
    await p.context().close();
  });

  for (const [href, name] of [['/', 'phone-overview'], ['/topics', 'phone-topics']]) {
    await step(`phone view of ${href}: no sideways scrolling of the page, axe clean`, async () => {
      const p = await newPage(browser, { viewport: PHONE, isMobile: true });
      await goto(p, href);
      const over = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert(over <= 1, `the page is ${over}px wider than the phone's screen (wide tables belong in .table-wrap)`);
      await checkPage(p, name);
      await p.context().close();
    });
  }

  await step('a form posted without the page\'s CSRF token is refused (403), as is a wrong one', async () => {
    const p = await newPage(browser);
    await p.goto(BASE + '/');
    const probe = 'csrf-probe';
    for (const token of [null, 'not-the-token']) {
      // A plain form (not boosted), as another site would post it, but
      // from the console's own origin: only the token is missing.
      await p.evaluate(([probe, token]) => {
        const f = document.createElement('form');
        f.method = 'post';
        f.action = '/topics';
        f.setAttribute('hx-boost', 'false');
        const add = (n, v) => { const i = document.createElement('input'); i.type = 'hidden'; i.name = n; i.value = v; f.appendChild(i); };
        add('name', probe);
        add('partitions', '1');
        if (token) add('_csrf', token);
        document.body.appendChild(f);
      }, [probe, token]);
      const [resp] = await Promise.all([p.waitForResponse((r) => r.request().method() === 'POST'), p.evaluate(() => document.querySelector('body > form:last-of-type').submit())]);
      assert(resp.status() === 403, `POST /topics with token ${token}: status ${resp.status()}, want 403`);
      await p.waitForLoadState('load');
      const text = await p.locator('main').textContent();
      assert(/CSRF/.test(text), `the refusal does not say why: ${text.trim().slice(0, 200)}`);
      await p.goto(BASE + '/');
    }
    await goto(p, '/topics');
    assert(!(await p.content()).includes(probe), 'the refused form created its topic');
    await p.context().close();
  });
} finally {
  await browser.close();
}
finish('walk.mjs');
