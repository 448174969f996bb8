// make e2e-dashboard, the browser half (deploy/e2e/dashboard.sh runs it):
// a headless Debian chromium, driven by playwright-core, watches
// `lobbybench run --workers 2 --dashboard-addr` through a TCP proxy this
// script owns, so the connection can be cut and restored.
//
// Then, in the same browser at 1,280 × 800, the run's HTML report and a
// capacity report (of CAPACITY_JSON) are checked as the live page is:
// nothing wider than the window (wide tables scroll in their own box),
// every chart legend and label whole inside its chart.
//
// Environment: LOBBYBENCH (the binary), E2E_OUT (a work directory),
// DASHBOARD_SHOTS (where the screenshots go), E2E_TIMEOUT (seconds for
// the whole check), CAPACITY_JSON (a capacity result to render). Every wait is bounded in time; the processes it
// starts (the run, the browser) are ended by their PID.
import { chromium } from "playwright-core";
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const BIN = process.env.LOBBYBENCH;
const OUT = process.env.E2E_OUT;
const SHOTS = process.env.DASHBOARD_SHOTS || fs.mkdtempSync(path.join(os.tmpdir(), "dashboard-shots-"));
const DEADLINE = Date.now() + 1000 * Number(process.env.E2E_TIMEOUT || 150);
const DURATION = 30; // seconds of load: every check of the running page within it, on a loaded machine too
const CAPACITY_JSON = process.env.CAPACITY_JSON;
const VIEWPORT = { width: 1280, height: 800 };

let failed = 0;
let run = null;
let context = null;
const log = (...a) => console.error("e2e-dashboard:", ...a);
function check(what, ok, detail) {
  log(`${ok ? "PASS" : "FAIL"} ${what}${detail ? ": " + detail : ""}`);
  if (!ok) failed++;
  return ok;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// until polls f (every 100 ms) until it returns a truthy value, for at most
// ms and never past the deadline; it returns the value, or null.
async function until(ms, f) {
  const end = Math.min(Date.now() + ms, DEADLINE);
  for (let i = 0; i < 100000 && Date.now() < end; i++) {
    const v = await f().catch(() => null);
    if (v) return v;
    await sleep(100);
  }
  return null;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

// proxy forwards 127.0.0.1:listenPort to 127.0.0.1:target until cut():
// then it listens no more and every connection through it is destroyed,
// so the page's polls are refused, as from a server gone; restore()
// listens again on the same port.
function proxy(listenPort, target) {
  const socks = new Set();
  let server = null;
  const listen = () => new Promise((resolve, reject) => {
    server = net.createServer((c) => {
      const u = net.connect(target, "127.0.0.1");
      socks.add(c); socks.add(u);
      const drop = () => { c.destroy(); u.destroy(); socks.delete(c); socks.delete(u); };
      c.on("error", drop); u.on("error", drop); c.on("close", drop); u.on("close", drop);
      c.pipe(u); u.pipe(c);
    });
    server.once("error", reject);
    server.listen(listenPort, "127.0.0.1", resolve);
  });
  return {
    listen,
    cut: () => new Promise((resolve) => {
      server.close(() => resolve());
      for (const s of socks) s.destroy();
      socks.clear();
    }),
  };
}

async function main() {
  fs.mkdirSync(SHOTS, { recursive: true });
  const scenario = path.join(OUT, "scenario.yaml");
  fs.writeFileSync(scenario, `name: e2e-dashboard
description: list_rooms against the embedded server, ramping from 20/s to 80/s over ${DURATION} s
protocol: udp-lobby
seed: 11
embedded_server:
  cleanup_interval: 500ms
load:
  start_rate: 20/s
  stages:
    - {rate: 80/s, for: ${DURATION}s}
  max_clients: 400
flows:
  - name: poll
    steps: [list_rooms, list_rooms]
thresholds:
  - list_rooms.p99 < 500ms
  - errors.rate < 5%
`);
  // The browser first: on a loaded machine it took longer to start than
  // the run lasted, and every check of the running page met the final
  // report (.ci/stress-ci, two busy loops).
  const userData = fs.mkdtempSync(path.join(OUT, "chromium-"));
  context = await chromium.launchPersistentContext(userData, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
    viewport: VIEWPORT,
  });
  const page = context.pages()[0] || (await context.newPage());
  const dashPort = await freePort();
  const proxyPort = await freePort();
  const json = path.join(OUT, "run.json");
  const errFile = fs.openSync(path.join(OUT, "run.err"), "w");
  const outFile = fs.openSync(path.join(OUT, "run.out"), "w");
  run = spawn(BIN, ["run", "--workers", "2", "--dashboard-addr", `127.0.0.1:${dashPort}`, "--serve-linger", "120s",
    "--json", json, scenario], { stdio: ["ignore", outFile, errFile], env: { ...process.env, CI: "1" } });
  log(`run --workers 2 (pid ${run.pid}) for ${DURATION} s, page on 127.0.0.1:${dashPort} behind a proxy on 127.0.0.1:${proxyPort}`);
  const runExit = new Promise((resolve) => run.on("exit", (code, sig) => resolve({ code, sig })));
  const px = proxy(proxyPort, dashPort);
  await px.listen();

  // Every request the pages make that fails or is refused (a favicon
  // 404 was one).
  const refused = [];
  page.on("response", (r) => { if (r.status() >= 400 && !r.url().includes("/report")) refused.push(`${r.status()} ${r.url()}`); });
  const url = `http://127.0.0.1:${proxyPort}/`;
  const opened = await until(15000, async () => (await page.goto(url, { timeout: 3000 })).ok());
  if (!check("the page opens through the proxy", !!opened)) return;

  const body = (attr) => page.evaluate((a) => document.body.dataset[a] || "", attr);
  const counter = (name) => page.evaluate((n) => Number(document.querySelector(`[data-counter="${n}"] b`)?.textContent || -1), name);
  // What the charts draw: the SVG paths' and marks' points, summed.
  const drawn = () => page.evaluate(() => {
    let points = 0;
    const svgs = document.querySelectorAll("#report svg");
    document.querySelectorAll("#report svg path").forEach((p) => { points += ((p.getAttribute("d") || "").match(/[ML]/g) || []).length; });
    points += document.querySelectorAll("#report svg circle").length;
    return { svgs: svgs.length, points };
  });

  const running = await until(30000, async () => (await body("phase")) === "running" && (await body("shown")) !== "");
  if (!check("the page shows the running run's report", !!running)) return;
  await sleep(3000);
  const c1 = await counter("requests");
  const d1 = await drawn();
  await page.screenshot({ path: path.join(SHOTS, "dashboard-running-1.png"), fullPage: false });
  await sleep(4000);
  const c2 = await counter("requests");
  const d2 = await drawn();
  await page.screenshot({ path: path.join(SHOTS, "dashboard-running-2.png"), fullPage: false });
  // The per-second charts as they grow (below the fold of the shots): the
  // report is swapped every second, so its place is read and shot at once.
  const box = await page.evaluate(() => {
    const h = Array.from(document.querySelectorAll("#report h3")).find((e) => e.textContent === "Over the run");
    const f = h && h.nextElementSibling;
    if (!f) return null;
    const r = f.getBoundingClientRect();
    return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height };
  });
  check("the page draws the per-second charts", !!box && box.height > 0);
  if (box) await page.screenshot({ path: path.join(SHOTS, "dashboard-charts.png"), fullPage: true, clip: box });
  check("the counters advance between the two screenshots", c1 > 0 && c2 > c1, `requests ${c1} then ${c2}`);
  check("the charts are drawn and grow", d1.svgs > 0 && d2.points > d1.points, `${d1.svgs} charts, ${d1.points} then ${d2.points} points`);
  const phase = await page.textContent("#phase");
  const bar = await page.evaluate(() => { const p = document.querySelector("#progress"); return p && !p.hidden ? p.value : -1; });
  check("the page says how long of how long planned, with a progress bar", /^running, \d+ s of \d+ s planned$/.test(phase || "") && bar > 0 && bar <= 1,
    `"${phase}", bar ${bar}`);
  await fits(page, "the live page while running");
  const headline = await page.textContent("#headline");
  check("the page leads with a headline", /^(PASS|FAIL|INCOMPLETE|INTERRUPTED|TARGET DOWN|INCONCLUSIVE) · /.test(headline || ""), headline);

  // The connection is cut: the page says so, with the last update's time,
  // and shows no new figures; restored, it resumes by itself.
  const seqBefore = Number(await body("seq"));
  await px.cut();
  const lost = await until(10000, async () => (await body("conn")) === "lost");
  const lostText = await page.textContent("#conn");
  check("a cut connection shows as lost", !!lost && /connection lost, retrying… \(last update .+\)/.test(lostText || ""), lostText);
  await page.screenshot({ path: path.join(SHOTS, "dashboard-lost.png") });
  await sleep(2000);
  const seqLost = Number(await body("seq"));
  check("nothing new is shown while it is lost", seqLost === seqBefore && (await body("conn")) === "lost", `seq ${seqBefore} then ${seqLost}`);
  // Resumed means a newer report shown with the connection good: a live
  // one, or the final one when the run ended while the page was cut off
  // (on a loaded machine the steps above can take most of the run).
  await px.listen();
  const back = await until(15000, async () => {
    const c = await body("conn");
    return (c === "ok" || c === "over") && Number(await body("seq")) > seqLost && Number(await body("shown")) > seqLost && c;
  });
  check("restored, the page resumes updating by itself", !!back,
    `seq ${seqLost} then ${await body("seq")}, shown ${await body("shown")}, connection ${back || await body("conn")}`);

  // After the run: the final report, led by the JSON result's headline.
  const final = await until((DURATION + 40) * 1000, async () => (await body("phase")) === "final" && (await body("shown")) === (await body("seq")));
  if (!check("after the run the page shows the final report", !!final)) return;
  await page.screenshot({ path: path.join(SHOTS, "dashboard-final.png"), fullPage: false });
  await fits(page, "the live page's final report");
  const overText = await until(5000, async () => (await body("conn")) === "over" && (await page.textContent("#conn")));
  check("with the final report shown, the page says the run is over", overText === "the run is over (final report below)", String(overText));
  const reportHTML = path.join(OUT, "from-json.html");
  execFileSync(BIN, ["report", "html", json, "-o", reportHTML], { timeout: 30000 });
  const fromJSON = (fs.readFileSync(reportHTML, "utf8").match(/<p class="status ([a-z_]+)">([^<]*)</) || []);
  const banner = await page.evaluate(() => {
    const p = document.querySelector("#report p.status");
    return p ? [p.className, p.textContent] : [];
  });
  const top = await page.textContent("#headline");
  const want = (fromJSON[2] || "").replace(/&#43;/g, "+").replace(/&amp;/g, "&").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&#34;/g, '"').replace(/&#39;/g, "'");
  check("the final headline is the JSON result's", want !== "" && top === want && banner[1] === want && banner[0] === "status " + fromJSON[1],
    `page "${top}", report banner "${banner[1]}", JSON "${want}"`);
  const total = JSON.parse(fs.readFileSync(json, "utf8")).totals.requests;
  check("the final counters are the JSON result's", (await counter("requests")) === total, `${await counter("requests")} vs ${total}`);

  // End the linger (Ctrl-C) and the run.
  run.kill("SIGINT");
  const end = await Promise.race([runExit, sleep(15000).then(() => null)]);
  check("the run ends on Ctrl-C during the linger", end !== null, end ? `exit ${end.code}` : "still running");

  // The server is gone: the page still says the run is over, not
  // "connection lost", and keeps the final report.
  await sleep(3000);
  const afterConn = await page.textContent("#conn");
  const afterBanner = await page.evaluate(() => document.querySelector("#report p.status")?.textContent || "");
  check("after the server went away the page says the run is over and keeps the report",
    (await body("conn")) === "over" && afterConn === "the run is over (final report below)" && afterBanner === want,
    `conn "${afterConn}", banner "${afterBanner}"`);
  await page.screenshot({ path: path.join(SHOTS, "dashboard-over.png"), fullPage: false });
  check("no request of the live page was refused (no favicon 404)", refused.length === 0, refused.join(", "));

  // The run's HTML report and a capacity report, at the same size.
  await page.goto("file://" + reportHTML);
  await fits(page, "the run report");
  await page.screenshot({ path: path.join(SHOTS, "run-report.png"), fullPage: false });
  if (check("a capacity result to render (CAPACITY_JSON)", !!CAPACITY_JSON && fs.existsSync(CAPACITY_JSON), CAPACITY_JSON)) {
    const capHTML = path.join(OUT, "capacity.html");
    execFileSync(BIN, ["report", "html", CAPACITY_JSON, "-o", capHTML], { timeout: 30000 });
    await page.goto("file://" + capHTML);
    await fits(page, "the capacity report");
    const capBanner = await page.evaluate(() => { const p = document.querySelector("main p.status"); return p ? getComputedStyle(p).backgroundColor : ""; });
    check("the capacity report has the run report's coloured banner", capBanner !== "" && capBanner !== "rgba(0, 0, 0, 0)", capBanner);
    await page.screenshot({ path: path.join(SHOTS, "capacity-report.png"), fullPage: false });
  }
}

// fits checks a page as a person at 1,280 px sees it: nothing is wider
// than the window (a wide table scrolls inside its .scroll box, which
// itself fits), every chart legend entry is whole inside its box, and no
// chart text leaves its SVG.
async function fits(page, what) {
  const r = await page.evaluate(() => {
    const W = window.innerWidth;
    const out = { scroll: document.documentElement.scrollWidth, W, wide: [], legends: 0, charts: 0, cut: [] };
    const name = (e) => e.tagName.toLowerCase() + (e.className && typeof e.className === "string" ? "." + e.className.split(" ")[0] : "");
    document.querySelectorAll("body *").forEach((e) => {
      if (e.closest(".scroll") && !e.classList.contains("scroll")) return; // inside a box that scrolls
      const b = e.getBoundingClientRect();
      if (b.width > 0 && b.right > W + 1) out.wide.push(`${name(e)} to ${Math.round(b.right)} px`);
    });
    document.querySelectorAll("ul.lg li").forEach((li) => {
      out.legends++;
      const box = li.getBoundingClientRect();
      const rg = document.createRange();
      rg.selectNodeContents(li);
      const t = rg.getBoundingClientRect();
      if (t.right > box.right + 1 || li.scrollWidth > li.clientWidth + 1) out.cut.push(`legend "${li.textContent}"`);
    });
    // Each chart's legend is HTML just above it, where text wraps (an
    // SVG text at a fixed size was cut at the chart's edge).
    document.querySelectorAll("svg.chart").forEach((svg) => {
      out.charts++;
      const ul = svg.previousElementSibling;
      if (!ul || !ul.matches("ul.lg") || ul.children.length === 0) out.cut.push(`chart "${svg.getAttribute("aria-label")}" has no HTML legend`);
    });
    document.querySelectorAll("svg.chart text").forEach((tx) => {
      const s = tx.ownerSVGElement.getBoundingClientRect(), b = tx.getBoundingClientRect();
      if (b.left < s.left - 1 || b.right > s.right + 1 || b.top < s.top - 1 || b.bottom > s.bottom + 1) out.cut.push(`chart text "${tx.textContent}"`);
    });
    out.wide = out.wide.slice(0, 5);
    return out;
  });
  check(`${what}: nothing wider than the ${r.W} px window`, r.scroll <= r.W && r.wide.length === 0, `scrollWidth ${r.scroll}; ${r.wide.join("; ")}`);
  check(`${what}: every legend and chart label whole`, r.charts > 0 && r.cut.length === 0, `${r.charts} charts, ${r.legends} legend entries; cut: ${r.cut.slice(0, 5).join("; ")}`);
}

// Ended from outside (dashboard.sh's timeout): the run goes too.
process.on("SIGTERM", () => {
  if (run && run.exitCode === null) run.kill("SIGKILL");
  process.exit(1);
});

try {
  await main();
} catch (e) {
  check("no error", false, e && e.stack || String(e));
} finally {
  if (context) await context.close().catch(() => {});
  if (run && run.exitCode === null && run.signalCode === null) {
    run.kill("SIGKILL");
  }
}
log(`screenshots in ${SHOTS}`);
if (failed > 0) {
  log(`FAIL: ${failed} check(s)`);
  process.exit(1);
}
log("PASS");
process.exit(0);
