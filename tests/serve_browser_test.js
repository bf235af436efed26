// The page `serve` answers at "/", driven in Chromium (playwright-core):
// the spans it marks and the token table it draws must be exactly those of
// the JSON that POST /v1/tag answers for the same text, with the JSON's
// UTF-8 byte offsets sliced right on non-ASCII text; errors (an empty
// submission, the server's own) are shown; and the page asks nothing of any
// origin but the server's.
//
// Usage: node serve_browser_test.js http://127.0.0.1:PORT MAX_TOKENS
// (MAX_TOKENS: the server's --max_tokens, which the error case exceeds).
'use strict';

const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { execSync } = require('child_process');

function fail(message) {
  console.error(`FAIL: ${message}`);
  process.exit(1);
}

const HOW = 'run it through `./bazelw test //tests:serve_browser_test`, which installs ' +
            'Chromium (Debian) and playwright-core (npm, global)';
const CHROMIUM = '/usr/bin/chromium';
if (!fs.existsSync(CHROMIUM)) fail(`${CHROMIUM} not found: ${HOW}`);
let chromium;
try {
  const root = execSync('npm root -g').toString().trim();
  ({ chromium } = require(path.join(root, 'playwright-core')));
} catch (e) {
  fail(`playwright-core not found (${e.message.split('\n')[0]}): ${HOW}`);
}

const [base, maxTokensArg] = process.argv.slice(2);
if (!base || !/^\d+$/.test(maxTokensArg || '')) {
  fail('usage: node serve_browser_test.js http://HOST:PORT MAX_TOKENS');
}
const origin = new URL(base).origin;
const maxTokens = Number(maxTokensArg);

async function post(body) {
  const response = await fetch(`${origin}/v1/tag`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

// The text a record's offsets point into: its line, or its paragraph (lines
// up to the next blank one, joined by "\n"), as UTF-8 bytes.
function sourceBytes(text, record, paragraphs) {
  const lines = text.split('\n');
  const first = record.line - 1;
  if (!paragraphs) return Buffer.from(lines[first], 'utf8');
  const parts = [];
  for (let i = first; i < lines.length && !/^[ \t]*$/.test(lines[i]); ++i) parts.push(lines[i]);
  return Buffer.from(parts.join('\n'), 'utf8');
}

// What the page must show for `answer`: the marks of stage `stageName`, the
// text of each sentence, and each token's row of the table.
function expected(text, paragraphs, answer, stageName) {
  const marks = [], sentences = [], rows = [];
  answer.sentences.forEach((record, i) => {
    const bytes = sourceBytes(text, record, paragraphs);
    const offsets = record.offsets;
    assert.strictEqual(offsets.length, record.tokens.length, `sentence ${i}: offsets`);
    const slice = (b, e) => bytes.subarray(b, e).toString('utf8');
    sentences.push(slice(offsets[0].begin || 0, offsets[offsets.length - 1].end));
    const stage = record.stages.find((s) => s.name === stageName);
    for (const span of stage.spans || []) {
      const begin = span.begin || 0;
      marks.push({ sentence: i, begin, end: span.end, type: span.type,
                   text: slice(offsets[begin].begin || 0, offsets[span.end - 1].end) });
    }
    const last = record.stages[record.stages.length - 1];
    record.tokens.forEach((token, t) => {
      rows.push({
        sentence: i,
        token,
        tags: Object.fromEntries(record.stages.map((s) => [s.name, s.tags[t]])),
        nbest: (last.nbest || []).map((l) => l.tags[t]),
      });
    });
  });
  return { marks, sentences, rows };
}

// What the page shows.
async function shown(page) {
  return page.evaluate(() => {
    const marks = [...document.querySelectorAll('#marked mark.span')].map((m) => ({
      sentence: Number(m.dataset.sentence), begin: Number(m.dataset.begin),
      end: Number(m.dataset.end), type: m.dataset.type, text: m.textContent,
    }));
    const sentences = [...document.querySelectorAll('#marked p.sentence .text')]
      .map((p) => p.textContent);
    const rows = [...document.querySelectorAll('#tables table.tokens tbody tr')].map((tr) => ({
      sentence: Number(tr.dataset.sentence),
      token: tr.querySelector('td.token').textContent,
      tags: Object.fromEntries([...tr.querySelectorAll('td[data-stage]:not([data-nbest])')]
        .map((td) => [td.dataset.stage, td.textContent])),
      nbest: [...tr.querySelectorAll('td[data-nbest]')].map((td) => td.textContent),
    }));
    const margins = [...document.querySelectorAll('#tables table.tokens')].map((table) => {
      const row = [...table.querySelectorAll('tfoot tr')]
        .find((tr) => tr.querySelector('th').textContent === 'margin');
      return row ? [...row.querySelectorAll('td[data-stage]')].map((td) => td.textContent) : null;
    });
    return { marks, sentences, rows, margins };
  });
}

async function tagInPage(page, submit) {
  const answered = page.waitForResponse((r) => r.url() === `${origin}/v1/tag`);
  await submit();
  await answered;
  await page.waitForFunction(() => !document.getElementById('tag').disabled);
}

async function main() {
  const models = await (await fetch(`${origin}/v1/models`)).json();
  // api.md gives each stage "chunking"; a server without it still names the
  // output scheme, and chunk schemes are IOB1, IOB2 and IOBES.
  const chunking = models.stages
    .filter((s) => (typeof s.chunking === 'boolean' ? s.chunking
                    : /^(iob1|iob2|iobes)$/i.test(s.scheme || '')))
    .map((s) => s.name);
  assert.ok(chunking.length > 0, `no chunking stage in /v1/models: ${JSON.stringify(models)}`);
  const defaultStage = chunking[chunking.length - 1];

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--headless=new', '--disable-dev-shm-usage', '--disable-gpu'],
  });
  try {
    const page = await browser.newPage();
    const requests = [];
    const pageErrors = [];
    page.on('request', (r) => requests.push(`${r.method()} ${r.url()}`));
    page.on('pageerror', (e) => pageErrors.push(e.message));

    const response = await page.goto(`${origin}/`);
    assert.strictEqual(response.status(), 200, 'GET /');
    assert.match(response.headers()['content-type'] || '', /^text\/html/, 'GET / content type');

    // The model's name and stages from /v1/models.
    await page.waitForFunction(() => document.getElementById('model').dataset.name !== undefined);
    const modelText = await page.textContent('#model');
    for (const name of [models.name, ...models.stages.map((s) => s.name)]) {
      assert.ok(modelText.includes(name), `model line "${modelText}" lacks "${name}"`);
    }

    // An empty submission: an error, no request.
    await page.click('#tag');
    await page.waitForSelector('#error', { state: 'visible' });
    assert.match(await page.textContent('#error'), /Nothing to tag/);
    assert.ok(!requests.some((r) => r.endsWith('/v1/tag')), 'an empty text was sent');

    // Two sentences, one with non-ASCII letters, with margins and 2-best.
    const text = 'Müller ging nach Zürich.\n' +
                 'Rockwell International Corp. said it signed a tentative agreement.';
    await page.fill('#text', text);
    await page.check('#margins');
    await page.fill('#nbest', '2');
    await tagInPage(page, () => page.click('#tag'));
    assert.ok(await page.isHidden('#error'), 'the error is still shown after a good answer');
    const answer = await post({ text, margins: true, nbest: 2 });
    assert.strictEqual(answer.status, 200, JSON.stringify(answer.json));
    assert.strictEqual(answer.json.sentences.length, 2, JSON.stringify(answer.json));
    const want = expected(text, false, answer.json, defaultStage);
    // The first sentence must have a span after its first non-ASCII letter,
    // where byte and character offsets differ, or the check proves nothing.
    const lineOne = text.split('\n')[0];
    assert.ok(want.marks.some((m) => m.sentence === 0 &&
                             Buffer.from(lineOne).indexOf(Buffer.from(m.text)) !== lineOne.indexOf(m.text)),
              `no span past a non-ASCII letter: ${JSON.stringify(want.marks)}`);
    const got = await shown(page);
    assert.deepStrictEqual(got.marks, want.marks, 'marked spans');
    assert.deepStrictEqual(got.sentences, want.sentences, 'sentence texts');
    assert.deepStrictEqual(got.rows, want.rows, 'token table');
    assert.deepStrictEqual(got.margins, answer.json.sentences.map(
      (r) => r.stages.map((s) => (typeof s.margin === 'number' ? s.margin.toFixed(3) : '∞'))), 'margins');
    assert.ok(want.rows.every((r) => r.nbest.length === 2), 'no 2-best columns expected');
    assert.deepStrictEqual(await page.$$eval('#stage option', (os) => os.map((o) => o.value)), chunking,
                           'stage selector');
    assert.strictEqual(await page.inputValue('#stage'), defaultStage, 'default stage');

    // The server's own error (413: over --max_tokens), sent with Ctrl+Enter;
    // the page shows its code and message and drops the old result.
    const long = Array(Math.ceil((maxTokens + 1) / 10)).fill(text.split('\n')[1]).join('\n');
    await page.fill('#text', long);
    await page.uncheck('#margins');
    await page.fill('#nbest', '1');
    await tagInPage(page, () => page.press('#text', 'Control+Enter'));
    const refused = await post({ text: long });
    assert.strictEqual(refused.status, 413, JSON.stringify(refused.json));
    assert.strictEqual(await page.getAttribute('#error', 'data-code'), '413');
    assert.strictEqual(await page.textContent('#error'),
                       `Error 413: ${refused.json.error.message}`);
    assert.ok(await page.isHidden('#result'), 'the old result is still shown under the error');

    // Paragraphs: sentences split, offsets into the paragraph; markup in
    // the text stays text.
    const paragraphs = 'He left. She stayed\nat <b>home</b> in Köln.\n\nThe end & <i>Zoë</i>.';
    await page.fill('#text', paragraphs);
    await page.check('#paragraphs');
    await tagInPage(page, () => page.click('#tag'));
    const split = await post({ text: paragraphs, paragraphs: true });
    assert.strictEqual(split.status, 200, JSON.stringify(split.json));
    assert.strictEqual(split.json.sentences.length, 3, JSON.stringify(split.json));
    const wantSplit = expected(paragraphs, true, split.json, defaultStage);
    const gotSplit = await shown(page);
    assert.deepStrictEqual(gotSplit.marks, wantSplit.marks, 'paragraph spans');
    assert.deepStrictEqual(gotSplit.sentences, wantSplit.sentences, 'paragraph sentence texts');
    assert.deepStrictEqual(gotSplit.rows, wantSplit.rows, 'paragraph token table');
    assert.strictEqual(await page.$$eval('#result b, #result i', (e) => e.length), 0,
                       'text became markup');
    assert.ok(gotSplit.sentences.some((s) => s.includes('Köln')) &&
              gotSplit.sentences.some((s) => s.includes('<i>Zoë</i>')), gotSplit.sentences.join('|'));

    // Nothing asked of any other origin; the page's requests are these.
    const outside = requests.filter((r) => new URL(r.split(' ')[1]).origin !== origin);
    assert.deepStrictEqual(outside, [], 'requests outside the server');
    for (const r of ['GET /', 'GET /v1/models', 'POST /v1/tag']) {
      assert.ok(requests.includes(`${r.split(' ')[0]} ${origin}${r.split(' ')[1]}`),
                `no ${r} in ${requests.join(', ')}`);
    }
    assert.deepStrictEqual(pageErrors, [], 'errors in the page\'s script');
  } finally {
    await browser.close();
  }
}

main().then(() => console.log('PASS'), (e) => fail(e.stack || e.message));
