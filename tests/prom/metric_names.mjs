// tests/prom/metric_names.mjs -- every metric an alert or the dashboard uses is exported.
//
//   node metric_names.mjs --modules DIR --exprs EXPRS.json[,...] SCRAPE.txt...
//
// Parses every expression of the exprs.json files (tests/prom/prom_check.py writes them) with
// Prometheus' own PromQL grammar (@prometheus-io/lezer-promql, the grammar of Prometheus' web UI),
// refuses any that does not parse, collects the metric name of every vector selector, and checks
// that each one appears in the /metrics scrapes given (text exposition format, from the real
// croupier-game and croupier-gate processes). Exit 0 = all exported, 1 = a problem (printed).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const args = process.argv.slice(2);
const opt = (name) => {
    const i = args.indexOf(name);
    if (i < 0 || i + 1 >= args.length) {
        console.error(`usage: metric_names.mjs --modules DIR --exprs FILE[,FILE...] SCRAPE...`);
        process.exit(2);
    }
    return args.splice(i, 2)[1];
};
const modules = opt('--modules');
const exprFiles = opt('--exprs').split(',');
const scrapes = args;
const require = createRequire(path.join(path.resolve(modules), 'node_modules', 'x.js'));
const { parser } = require('@prometheus-io/lezer-promql');

// Exported names: the first token of every sample line (comments and blank lines skipped).
const exported = new Set();
for (const f of scrapes)
    for (const line of readFileSync(f, 'utf8').split('\n'))
        if (line && !line.startsWith('#')) exported.add(line.split(/[{ ]/, 1)[0]);
if (exported.size === 0) {
    console.error('metric_names: the scrapes hold no metric at all');
    process.exit(1);
}

const problems = [];
const used = new Map(); // name -> first place that uses it
for (const f of exprFiles) {
    for (const { where, expr } of JSON.parse(readFileSync(f, 'utf8'))) {
        const tree = parser.parse(expr);
        let names = 0;
        tree.iterate({
            enter(n) {
                if (n.type.isError) problems.push(`${where}: does not parse at ${n.from}: ${expr}`);
                if (n.name !== 'VectorSelector') return;
                const id = n.node.getChild('Identifier');
                if (!id) {
                    problems.push(`${where}: a selector without a metric name: ${expr}`);
                    return;
                }
                const name = expr.slice(id.from, id.to);
                names++;
                if (!used.has(name)) used.set(name, where);
            },
        });
        if (names === 0) problems.push(`${where}: uses no metric: ${expr}`);
    }
}
for (const [name, where] of used)
    if (!exported.has(name)) problems.push(`${name} (used by ${where}) is not exported by any scraped process`);
for (const p of problems) console.error(`metric_names: ${p}`);
console.log(`metric_names: ${used.size} metric names used, ${exported.size} exported, ${problems.length} problems`);
process.exit(problems.length ? 1 : 0);
