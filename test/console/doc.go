// Package consoletest is the web console's browser test (issue 22):
// TestConsoleInBrowser starts `samsa serve` with the console, the Schema
// Registry and Connect inside it on free loopback ports, seeds it (topics
// with JSON and Avro records, classic, consumer (KIP-848) and share
// groups, two schema versions, a running connector), then runs the
// Playwright scripts here (*.mjs: playwright-core driving Debian's
// headless Chromium, axe-core checking every page) through every page and
// action. The npm packages are pinned by package-lock.json and installed
// by npm ci into a cache outside the repository (COMPAT_CACHE, as
// test/compat). Without node or chromium the test skips, unless
// SAMSA_REQUIRE_BROWSER=1 (CI). Screenshots go to a temporary directory,
// or to SAMSA_CONSOLE_SCREENSHOTS when set (make console-screenshots:
// docs/console).
package consoletest
