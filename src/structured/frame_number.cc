// JSON numbers, with bounds enforced while the number is being written: after every byte some
// completion must still land inside [minimum, maximum], so the matcher never walks into a dead
// end. Limits (documented in docs/structured.md): at most 18 integer and 18 fraction digits, 2
// exponent digits (so every number is a finite double); no exponent when the schema has bounds;
// integers have no fraction or exponent.
//
// Frame fields: state = NumState; a = int digits | frac digits << 8 | exp digits << 16 |
// negative << 24; c = integer part, d = fraction digits as an integer (bounded numbers only).
#include <array>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "structured/frame_internal.h"
#include "structured/grammar.h"

namespace k3::structured {
namespace {

enum NumState : uint8_t { kStart, kMinus, kZero, kInt, kDot, kFrac, kExpMark, kExpSign, kExp };
constexpr int kMaxDigits = 18;
constexpr int kMaxExpDigits = 2;  // every number stays a finite double

struct Digits {
  int int_digits, frac_digits, exp_digits;
  bool negative;
};
Digits Unpack(uint32_t a) {
  return {int(a & 0xFF), int((a >> 8) & 0xFF), int((a >> 16) & 0xFF), bool((a >> 24) & 1)};
}
uint32_t Pack(const Digits& d) {
  return uint32_t(d.int_digits) | uint32_t(d.frac_digits) << 8 | uint32_t(d.exp_digits) << 16 |
         uint32_t(d.negative) << 24;
}

long double Pow10(int n) {
  static const auto table = [] {
    std::array<long double, kMaxDigits + 2> t{};
    t[0] = 1;
    for (size_t i = 1; i < t.size(); ++i) t[i] = t[i - 1] * 10;
    return t;
  }();
  return table[static_cast<size_t>(n)];
}

// Does the magnitude interval [a, b] (b_open: b itself excluded) of a number with this sign meet
// the node's bounds?
bool Meets(const SchemaNode& n, bool negative, long double a, long double b, bool b_open) {
  long double lo = negative ? -b : a, hi = negative ? -a : b;
  bool lo_open = negative && b_open, hi_open = !negative && b_open;
  if (n.has_max) {
    const long double m = n.maximum;
    if (lo > m || (lo == m && (lo_open || n.exclusive_max))) return false;
  }
  if (n.has_min) {
    const long double m = n.minimum;
    if (hi < m || (hi == m && (hi_open || n.exclusive_min))) return false;
  }
  return true;
}

// Is a bound so close to magnitude x (of a number with this sign) that long double arithmetic and
// the reader's double could order them differently? The margin covers both roundings and the
// 1e-18 between a prefix padded with nines and the next decimal step.
bool NearBound(const SchemaNode& n, bool negative, long double x) {
  const long double v = negative ? -x : x;
  const long double margin = (std::fabs(v) + 1) * 1e-14L;
  return (n.has_max && std::fabs(v - static_cast<long double>(n.maximum)) <= margin) ||
         (n.has_min && std::fabs(v - static_cast<long double>(n.minimum)) <= margin);
}

// "ip.fp" with exactly frac_digits fraction digits ("ip." when zero: a prefix about to get some).
std::string DecimalText(uint64_t ip, uint64_t fp, int frac_digits) {
  std::string text = std::to_string(ip) + ".";
  if (frac_digits > 0) {
    const std::string frac = std::to_string(fp);
    text += std::string(static_cast<size_t>(frac_digits) - frac.size(), '0') + frac;
  }
  return text;
}

// Can some completion of this prefix satisfy the bounds?
bool Viable(const SchemaNode& n, NumState s, const Digits& d, uint64_t ip, uint64_t fp) {
  const bool integer_only = !(n.types & kNumber);
  const long double p = static_cast<long double>(ip);
  switch (s) {
    case kMinus:
      return Meets(n, true, 0, Pow10(kMaxDigits), true);
    case kZero:
      return Meets(n, d.negative, 0, 0, false) ||
             (!integer_only && Meets(n, d.negative, 0, 1, true));
    case kInt: {
      if (Meets(n, d.negative, p, p, false)) return true;
      if (!integer_only && Meets(n, d.negative, p, p + 1, true)) return true;
      for (int j = 1; d.int_digits + j <= kMaxDigits; ++j) {
        const long double scale = Pow10(j);
        if (integer_only ? Meets(n, d.negative, p * scale, (p + 1) * scale - 1, false)
                         : Meets(n, d.negative, p * scale, (p + 1) * scale, true)) {
          return true;
        }
      }
      return false;
    }
    case kDot:
    case kFrac: {
      // The doubles a completion can parse to run from the prefix itself (or p.0) to the prefix
      // padded with nines; as decimal steps (1e-18) are finer than doubles there, every double in
      // between is reached. Compared exactly as the validator's reader parses (strtod), so bounds
      // like 0.3 or an exclusive 2.5 give no dead end and refuse no valid value — but strtod
      // (~0.3 us) only when a bound lies within rounding distance of the interval's ends.
      const int frac_digits = s == kFrac ? d.frac_digits : 0;
      const long double lo = p + static_cast<long double>(fp) / Pow10(frac_digits);
      const long double hi = lo + 1 / Pow10(frac_digits);
      if (!NearBound(n, d.negative, lo) && !NearBound(n, d.negative, hi)) {
        return Meets(n, d.negative, lo, hi, false);
      }
      const std::string text = DecimalText(ip, fp, frac_digits);
      const double exact_lo = std::strtod(text.c_str(), nullptr);
      const int pad = kMaxDigits - frac_digits;
      const double exact_hi =
          std::strtod((text + std::string(static_cast<size_t>(pad), '9')).c_str(), nullptr);
      return Meets(n, d.negative, exact_lo, exact_hi, false);
    }
    default:
      return true;
  }
}

// The exact check at the end uses the double the text parses to (as any JSON reader would), not
// long double arithmetic, so bounds like 0.001 compare as the validator compares them (strtod
// only when a bound is within rounding distance).
bool InBounds(const SchemaNode& n, const Digits& d, uint64_t ip, uint64_t fp) {
  const long double approx =
      static_cast<long double>(ip) + static_cast<long double>(fp) / Pow10(d.frac_digits);
  if (!NearBound(n, d.negative, approx)) return Meets(n, d.negative, approx, approx, false);
  const std::string text = DecimalText(ip, fp, d.frac_digits);
  const double v = std::strtod(text.c_str(), nullptr);
  return Meets(n, d.negative, v, v, false);
}

// What a number may contain, fixed by its node.
struct NumberSyntax {
  bool plain;         // no schema node: no bounds, so the digits are not accumulated
  bool integer_only;  // no fraction, no exponent
  bool exponent_ok;   // only plain numbers (bounds are checked on int.frac values)
};

// Sign and integer part (s in kStart..kInt): the state after byte e, with the digit count and
// the integer accumulator f->c updated; kStart when e ends the number; nullopt to reject e.
std::optional<NumState> AdvanceInteger(const NumberSyntax& syntax, NumState s, int32_t e, Digits* d,
                                       Frame* f) {
  const bool digit = e >= '0' && e <= '9';
  const int v = e - '0';
  switch (s) {
    case kStart:
      if (e == '-') {
        d->negative = true;
        return kMinus;
      }
      [[fallthrough]];
    case kMinus:
      if (!digit) return std::nullopt;
      if (v == 0) return kZero;
      d->int_digits = 1;
      if (!syntax.plain) f->c = static_cast<uint64_t>(v);
      return kInt;
    default:  // kZero, kInt
      if (digit && s == kInt && d->int_digits < kMaxDigits) {
        ++d->int_digits;
        if (!syntax.plain) f->c = f->c * 10 + static_cast<uint64_t>(v);
        return kInt;
      }
      if (e == '.' && !syntax.integer_only) return kDot;
      if ((e == 'e' || e == 'E') && syntax.exponent_ok) return kExpMark;
      return kStart;  // the number ends before e
  }
}

// Fraction and exponent (s in kDot..kExp): as AdvanceInteger, with the fraction accumulator f->d.
std::optional<NumState> AdvanceFraction(const NumberSyntax& syntax, NumState s, int32_t e,
                                        Digits* d, Frame* f) {
  const bool digit = e >= '0' && e <= '9';
  const int v = e - '0';
  switch (s) {
    case kDot:
    case kFrac:
      if (digit && d->frac_digits < kMaxDigits) {
        ++d->frac_digits;
        if (!syntax.plain) f->d = f->d * 10 + static_cast<uint64_t>(v);
        return kFrac;
      }
      if (s == kFrac && (e == 'e' || e == 'E') && syntax.exponent_ok) return kExpMark;
      if (s == kFrac) return kStart;
      return std::nullopt;
    case kExpMark:
      if (e == '+' || e == '-') return kExpSign;
      [[fallthrough]];
    case kExpSign:
      if (!digit) return std::nullopt;
      d->exp_digits = 1;
      return kExp;
    default:  // kExp
      if (digit && d->exp_digits < kMaxExpDigits) {
        ++d->exp_digits;
        return kExp;
      }
      return kStart;
  }
}

}  // namespace

StepResult StepNumber(const Grammar& g, Frame& f, int32_t e) {
  NumberSyntax syntax;
  syntax.plain = f.node < 0;
  syntax.integer_only =
      f.node == kPlainIntegerNode || (!syntax.plain && !(g.node(f.node).types & kNumber));
  syntax.exponent_ok = syntax.plain && !syntax.integer_only;
  Digits d = Unpack(f.a);
  const auto s = static_cast<NumState>(f.state);
  const std::optional<NumState> next =
      s <= kInt ? AdvanceInteger(syntax, s, e, &d, &f) : AdvanceFraction(syntax, s, e, &d, &f);
  if (!next) return MakeStep(StepKind::kReject);
  if (*next == kStart) {  // e is not part of the number: finish if the number is complete
    const bool complete = s == kZero || s == kInt || s == kFrac || s == kExp;
    if (!complete || (!syntax.plain && !InBounds(g.node(f.node), d, f.c, f.d))) {
      return MakeStep(StepKind::kReject);
    }
    return MakeStep(StepKind::kPopRetry);
  }
  if (!syntax.plain && !Viable(g.node(f.node), *next, d, f.c, f.d)) {
    return MakeStep(StepKind::kReject);
  }
  f.state = *next;
  f.a = Pack(d);
  return MakeStep(StepKind::kConsume);
}

}  // namespace k3::structured
