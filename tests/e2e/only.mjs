// Runs the checks whose names match a pattern, against a built page: the
// share-link and embed checks (links.mjs, embed.mjs) and the calculator's
// (checks.mjs, each on a fresh page as run.mjs opens it: one that builds on
// an earlier check's state needs that check matched too). A quick loop
// while changing the page; the full suite is run.mjs.
// Usage: node tests/e2e/only.mjs PATTERN   (env: DIST_DIR, CHROMIUM)
import { chromium } from "playwright-core";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CheckFailed, LAUNCH_ARGS, pageCsp, serve, sharedContext } from "./helpers.mjs";
import { embedChecks } from "./embed.mjs";
import { linkChecks } from "./links.mjs";
import { checks } from "./checks.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const dist = path.resolve(repo, process.env.DIST_DIR ?? "dist");
const pattern = new RegExp(process.argv[2] ?? "", "i");
const chosen = [...linkChecks, ...embedChecks].filter(([name]) => pattern.test(name));
const calculator = checks.filter(([name]) => pattern.test(name));
if (chosen.length + calculator.length === 0) {
  console.error(`no check's name matches ${pattern}`);
  process.exit(2);
}
const { server, url } = await serve(dist, { csp: await pageCsp(dist) });
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: LAUNCH_ARGS });
let failed = 0;
for (const [name, fn] of chosen) {
  try {
    await fn({ browser, url, dist, repo });
    console.log(`ok   ${name}`);
  } catch (err) {
    failed += 1;
    console.log(`FAIL ${name}\n  ${err instanceof CheckFailed ? err.message : err.stack}`);
  }
}
if (calculator.length > 0) {
  const context = await sharedContext(browser);
  const page = await context.newPage();
  await page.goto(url);
  for (const [name, fn] of calculator) {
    try {
      await fn(page);
      console.log(`ok   ${name}`);
    } catch (err) {
      failed += 1;
      console.log(`FAIL ${name}\n  ${err instanceof CheckFailed ? err.message : err.stack}`);
    }
  }
  await context.close();
}
await browser.close();
server.close();
process.exit(failed ? 1 : 0);
