// The evaluation gate's statistics (score.mjs binomialCdf, passingCount) against an exact
// rational computation: P(X <= k) for X ~ Binomial(n, p = a / b) summed in BigInt, so the float
// code under test is compared with a reference that shares none of its arithmetic.
//   node tests/demo_model/score_test.mjs
import { binomialCdf, passingCount } from './score.mjs';

function choose(n, k) {
  let c = 1n;
  for (let i = 1n; i <= BigInt(k); i++) c = (c * (BigInt(n) - i + 1n)) / i;
  return c;
}

// Exact P(X <= k) as a float, p = a / b.
function exactCdf(k, n, a, b) {
  let num = 0n;
  for (let i = 0; i <= k; i++) num += choose(n, i) * BigInt(a) ** BigInt(i) * BigInt(b - a) ** BigInt(n - i);
  const den = BigInt(b) ** BigInt(n);
  const scale = 10n ** 30n;  // 30 significant digits before the division to a float
  return Number((num * scale) / den) / 1e30;
}

const problems = [];
for (const n of [1, 10, 25, 53, 165]) {
  for (const [a, b] of [[1, 100], [37, 100], [78, 100], [94, 100], [99, 100]]) {
    for (let k = 0; k <= n; k += Math.max(1, Math.floor(n / 17))) {
      const want = exactCdf(k, n, a, b), got = binomialCdf(k, n, a / b);
      // Relative 1e-9 where the tail is not vanishing; absolute 1e-15 below.
      if (Math.abs(got - want) > Math.max(1e-15, 1e-9 * want)) problems.push(`cdf(${k}, ${n}, ${a}/${b}) = ${got}, exact ${want}`);
    }
    for (const alpha of [1e-4, 0.05]) {
      const k = passingCount(n, a / b, alpha);
      const below = k === 0 ? 0 : exactCdf(k - 1, n, a, b), at = exactCdf(k, n, a, b);
      if (!(below < alpha && (at >= alpha || k === n))) {
        problems.push(`passingCount(${n}, ${a}/${b}, ${alpha}) = ${k}: P(X <= k-1) = ${below}, P(X <= k) = ${at}`);
      }
    }
  }
}
for (const p of problems) console.log(`FAILED: ${p}`);
console.log(`score_test: ${problems.length === 0 ? 'passed' : `${problems.length} problems`}`);
process.exitCode = problems.length === 0 ? 0 : 1;
