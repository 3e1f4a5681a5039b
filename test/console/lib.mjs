// Shared helpers of the console's browser scripts: Debian's Chromium
// through playwright-core, each page checked the same way (its status, one
// h1, no error in the browser's console, no serious or critical axe-core
// violation, a screenshot), and a tiny runner: every step runs, failures
// are listed at the end and the exit code is 1 when any failed.
import { chromium } from 'playwright-core';
import AxeBuilder from '@axe-core/playwright';
import path from 'node:path';

export const BASE = process.env.CONSOLE_URL;
export const SHOTS = process.env.SHOTS_DIR;
export const SEED = JSON.parse(process.env.SEED || '{}');
export const LOGIN = process.env.LOGIN_URL;
export const REGISTRY = process.env.REGISTRY_URL;
export const CONNECT = process.env.CONNECT_URL;
if (!BASE || !SHOTS) {
  console.error('CONSOLE_URL and SHOTS_DIR must be set');
  process.exit(2);
}

export const LAPTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

// launch starts Chromium as the machine's notes say it must run here:
// headless, no sandbox (root), and nothing that reaches the network on its
// own (the closed network refuses it, noisily). Playwright gives each
// launch a fresh, empty profile directory.
export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

// newPage opens a page in a new context (its own cookies) and records
// what goes wrong in it (page.errors; checkPage fails on any and clears
// them).
export async function newPage(browser, opts = {}) {
  const ctx = await browser.newContext({ viewport: opts.viewport || LAPTOP, deviceScaleFactor: 1,
    colorScheme: opts.colorScheme || 'light', isMobile: !!opts.isMobile, hasTouch: !!opts.isMobile });
  if (opts.cookies) await ctx.addCookies(opts.cookies.map((c) => ({ url: BASE, ...c })));
  // Name the source of a Content-Security-Policy violation (the
  // browser's own message does not).
  await ctx.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const el = e.target && e.target.tagName ? `<${e.target.tagName.toLowerCase()}${e.target.id ? ' id=' + e.target.id : ''}${e.target.className ? ' class=' + e.target.className : ''}>` : '';
      console.error(`CSP violation of ${e.violatedDirective}: ${e.sourceFile || '(inline)'}:${e.lineNumber}:${e.columnNumber} ${el} sample=${JSON.stringify(e.sample)}`);
    });
  });
  const page = await ctx.newPage();
  page.setDefaultTimeout(15000);
  // errors are what went wrong in the browser: console errors, uncaught
  // exceptions, and answers of 400 or more to any request (by URL, so an
  // expected refusal can be told apart). The browser's own "Failed to
  // load resource" line is left out: the answer's entry names the URL.
  page.errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource') && !m.text().startsWith('Applying inline style violates')) page.errors.push(`console: ${m.text()} (${page.url()})`);
  });
  page.on('pageerror', (e) => page.errors.push(`exception: ${e.message} (${page.url()})`));
  page.on('response', (r) => { if (r.status() >= 400) page.errors.push(`http ${r.status()} ${r.request().method()} ${r.url()}`); });
  current = page;
  return page;
}

const failures = [];
let current = null; // the page opened last: shown when a step fails
let steps = 0;

// step runs fn as a named check; a failure is recorded and the run goes on.
export async function step(name, fn) {
  steps++;
  const t0 = Date.now();
  try {
    await fn();
    console.log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    failures.push(name);
    console.log(`FAIL ${name} (${Date.now() - t0} ms): ${e && e.stack ? e.stack : e}`);
    if (current && !current.isClosed()) {
      const main = await current.locator('main').innerText({ timeout: 2000 }).catch(() => '(no main)');
      console.log(`     the page: ${current.url()}\n     ${main.slice(0, 600).replace(/\n+/g, '\n     ')}`);
    }
  }
}

// finish prints the summary and sets the exit code.
export function finish(script) {
  if (failures.length) {
    console.log(`${script}: ${failures.length} of ${steps} steps failed: ${failures.join('; ')}`);
    process.exitCode = 1;
  } else {
    console.log(`${script}: all ${steps} steps passed`);
  }
}

export function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

// goto loads path and answers the response; it fails unless the status is
// want (200 by default).
export async function goto(page, p, want = 200) {
  const resp = await page.goto(p.startsWith('http') ? p : BASE + p, { waitUntil: 'load' });
  assert(resp, `no response for ${p}`);
  assert(resp.status() === want, `GET ${p}: status ${resp.status()}, want ${want}`);
  return resp;
}

// axeCheck runs axe-core on the page as it is and fails on any serious or
// critical violation, naming each rule and the elements it found.
export async function axeCheck(page, what) {
  const r = await new AxeBuilder({ page }).analyze();
  const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  if (bad.length) {
    const lines = bad.map((v) => `  ${v.impact} ${v.id}: ${v.help} at ${v.nodes.slice(0, 5).map((n) => n.target.join(' ')).join(', ')}${v.nodes.length > 5 ? ` (+${v.nodes.length - 5} more)` : ''}`);
    throw new Error(`axe-core on ${what}: ${bad.length} serious or critical violations:\n${lines.join('\n')}`);
  }
}

// checkPage checks the page as loaded: exactly one h1, no browser error
// so far, axe clean; then takes its screenshot as name.png (the viewport,
// laptop size unless the context says otherwise).
export async function checkPage(page, name) {
  const h1 = await page.locator('h1').count();
  assert(h1 === 1, `${page.url()}: ${h1} h1 elements, want 1`);
  const errors = page.errors;
  page.errors = [];
  assert(!errors.length, `browser errors on ${page.url()}:\n  ${errors.join('\n  ')}`);
  await axeCheck(page, page.url());
  if (name) await shot(page, name);
}

export async function shot(page, name) {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

// csrfToken is the token the layout puts in the page.
export async function csrfToken(page) {
  return page.locator('meta[name="csrf-token"]').getAttribute('content');
}
