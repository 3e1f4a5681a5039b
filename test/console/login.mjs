// The console with logins (SCRAM-SHA-256 on the broker's SASL listener,
// StandardAuthorizer): an anonymous visit goes to the login form; a wrong
// password is refused with a message; the right one lands on the page
// asked for, as the user, under the user's ACLs (one topic visible);
// logging out ends the session.
import { LOGIN, SEED, launch, newPage, step, finish, assert, goto, checkPage } from './lib.mjs';

const browser = await launch();
try {
  const p = await newPage(browser);
  await step('an anonymous visit is sent to the login form', async () => {
    await goto(p, LOGIN + '/topics');
    const u = new URL(p.url());
    assert(u.pathname === '/login' && u.searchParams.get('next') === '/topics', `landed on ${p.url()}`);
    await checkPage(p, 'login');
  });
  await step('a wrong password is refused with a message', async () => {
    await p.getByLabel('User').fill(SEED.loginUser);
    await p.getByLabel('Password').fill('not-the-password');
    await p.getByRole('button', { name: 'Log in' }).click();
    await p.locator('main [role="alert"]').waitFor();
    assert(new URL(p.url()).pathname === '/login', `a wrong password reached ${p.url()}`);
    assert(!(await p.content()).includes('not-the-password'), 'the refused password is echoed in the page');
    p.errors = p.errors.filter((e) => !/^http 40[13] /.test(e)); // the refusal's own status
    await checkPage(p, null);
  });
  await step('the right password lands on the page asked for, as the user', async () => {
    await p.getByLabel('User').fill(SEED.loginUser);
    await p.getByLabel('Password').fill(SEED.loginPassword);
    await p.getByRole('button', { name: 'Log in' }).click();
    await p.waitForURL((u) => u.pathname !== '/login');
    assert(new URL(p.url()).pathname === '/topics', `logged in at ${p.url()}`);
    const user = (await p.locator('header .user').textContent()).trim();
    assert(user === SEED.loginUser, `the header names ${user}`);
  });
  await step('the user sees only the topic the ACLs allow', async () => {
    await goto(p, LOGIN + '/topics');
    const main = await p.locator('main').textContent();
    assert(main.includes(SEED.jsonTopic), `the topics page lacks ${SEED.jsonTopic}`);
    assert(!main.includes(SEED.avroTopic), `the user sees ${SEED.avroTopic}, which no ACL allows`);
    await checkPage(p, null);
  });
  await step('logging out ends the session', async () => {
    await p.goto(LOGIN + '/'); // the layout's logout button is on every page
    await p.getByRole('button', { name: 'Log out' }).click();
    await p.waitForURL((u) => u.pathname === '/login');
    await goto(p, LOGIN + '/groups');
    assert(new URL(p.url()).pathname === '/login', `after logging out /groups shows ${p.url()}`);
  });
} finally {
  await browser.close();
}
finish('login.mjs');
