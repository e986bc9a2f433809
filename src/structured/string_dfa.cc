#include "structured/string_dfa.h"

#include <algorithm>
#include <deque>
#include <map>

namespace k3::structured {
namespace {

constexpr size_t kMaxProductStates = 100000;

// A code point of [lo, hi) a completion should prefer: ASCII letters and digits first, never a
// control character when something else is there.
uint32_t Preferred(uint32_t lo, uint32_t hi, int* score) {
  for (uint32_t c : {uint32_t('a'), uint32_t('0'), uint32_t('A'), uint32_t(' '), uint32_t('-')}) {
    if (c >= lo && c < hi) {
      *score = 3;
      return c;
    }
  }
  uint32_t c = lo < 0x20 && hi > 0x20 ? 0x20 : lo;
  if (c >= 0xD800 && c <= 0xDFFF) c = hi > 0xE000 ? 0xE000 : c;
  *score = c >= 0x20 && c < 0x7F ? 2 : (c >= 0x20 ? 1 : 0);
  return c;
}

}  // namespace

int32_t StringDfa::Class(uint32_t cp) const {
  return static_cast<int32_t>(std::upper_bound(starts.begin(), starts.end(), cp) - starts.begin()) -
         1;
}

int32_t StringDfa::Next(int32_t state, uint32_t cp) const {
  if (state < 0 || cp >= kCodePointEnd) return -1;
  return next[static_cast<size_t>(state) * classes() + static_cast<size_t>(Class(cp))];
}

bool StringDfa::AnyLive(int32_t state, uint32_t lo, uint32_t hi) const {
  if (state < 0 || lo > hi) return false;
  hi = std::min<uint32_t>(hi, kCodePointEnd - 1);
  for (int32_t k = Class(lo); k < static_cast<int32_t>(classes()) && starts[k] <= hi; ++k) {
    if (next[static_cast<size_t>(state) * classes() + k] < 0) continue;
    const uint32_t a = std::max(lo, starts[k]);
    const uint32_t b = std::min(
        hi, k + 1 < static_cast<int32_t>(classes()) ? starts[k + 1] - 1 : kCodePointEnd - 1);
    // Some code point of [a, b] outside the surrogates.
    if (a < 0xD800 || b > 0xDFFF) return true;
  }
  return false;
}

bool StringDfa::Matches(const std::u32string& text) const {
  int32_t s = start;
  for (char32_t c : text) s = Next(s, static_cast<uint32_t>(c));
  return s >= 0 && accepting[s];
}

void StringDfa::Finish() {
  const size_t n = states(), k = classes();
  // Backward breadth-first search from the accepting states: distance, and liveness.
  std::vector<std::vector<int32_t>> preds(n);
  for (size_t s = 0; s < n; ++s) {
    for (size_t c = 0; c < k; ++c) {
      if (const int32_t t = next[s * k + c]; t >= 0) preds[t].push_back(static_cast<int32_t>(s));
    }
  }
  std::vector<int32_t> dist(n, -1);
  std::deque<int32_t> queue;
  for (size_t s = 0; s < n; ++s) {
    if (accepting[s]) {
      dist[s] = 0;
      queue.push_back(static_cast<int32_t>(s));
    }
  }
  while (!queue.empty()) {
    const int32_t s = queue.front();
    queue.pop_front();
    for (int32_t p : preds[s]) {
      if (dist[p] < 0) {
        dist[p] = dist[s] + 1;
        queue.push_back(p);
      }
    }
  }
  std::vector<int32_t> renumber(n, -1);
  int32_t live = 0;
  for (size_t s = 0; s < n; ++s) {
    if (dist[s] >= 0) renumber[s] = live++;
  }
  StringDfa out;
  out.starts = starts;
  out.start = start >= 0 ? renumber[start] : -1;
  out.next.assign(static_cast<size_t>(live) * k, -1);
  out.accepting.assign(live, 0);
  out.distance.assign(live, 0);
  out.toward.assign(live, 0);
  for (size_t s = 0; s < n; ++s) {
    const int32_t r = renumber[s];
    if (r < 0) continue;
    out.accepting[r] = accepting[s];
    out.distance[r] = dist[s];
    int best_score = -1;
    for (size_t c = 0; c < k; ++c) {
      const int32_t t = next[s * k + c];
      out.next[r * k + c] = t >= 0 ? renumber[t] : -1;
      if (t < 0 || renumber[t] < 0 || dist[t] != dist[s] - 1) continue;
      int score = 0;
      const uint32_t cp = Preferred(starts[c], c + 1 < k ? starts[c + 1] : kCodePointEnd, &score);
      if (score > best_score) {
        best_score = score;
        out.toward[r] = cp;
      }
    }
  }
  *this = std::move(out);
}

base::Result<StringDfa> IntersectDfa(const StringDfa& a, const StringDfa& b) {
  StringDfa out;
  out.starts.clear();
  std::merge(a.starts.begin(), a.starts.end(), b.starts.begin(), b.starts.end(),
             std::back_inserter(out.starts));
  out.starts.erase(std::unique(out.starts.begin(), out.starts.end()), out.starts.end());
  if (a.start < 0 || b.start < 0) {
    out.start = -1;
    return out;
  }
  std::map<std::pair<int32_t, int32_t>, int32_t> ids;
  std::vector<std::pair<int32_t, int32_t>> pairs;
  auto id_of = [&](int32_t x, int32_t y) {
    auto [it, fresh] = ids.emplace(std::make_pair(x, y), static_cast<int32_t>(pairs.size()));
    if (fresh) pairs.emplace_back(x, y);
    return it->second;
  };
  out.start = id_of(a.start, b.start);
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (pairs.size() > kMaxProductStates) {
      return base::InvalidArgument("the string constraints combined need too many states");
    }
    const auto [x, y] = pairs[i];
    out.accepting.push_back(a.accepting[x] && b.accepting[y]);
    for (uint32_t cp : out.starts) {
      const int32_t nx = a.Next(x, cp), ny = b.Next(y, cp);
      out.next.push_back(nx >= 0 && ny >= 0 ? id_of(nx, ny) : -1);
    }
  }
  out.Finish();
  return out;
}

StringDfa LengthDfa(int64_t min_length, int64_t max_length) {
  // States 0..cap count characters; past a bounded max there is no state, an unbounded count
  // stays at cap (= min_length) once it is reached.
  const int64_t cap = max_length >= 0 ? max_length : min_length;
  StringDfa out;
  out.start = 0;
  for (int64_t i = 0; i <= cap; ++i) {
    out.accepting.push_back(i >= min_length);
    out.next.push_back(i < cap ? static_cast<int32_t>(i + 1)
                               : (max_length >= 0 ? -1 : static_cast<int32_t>(cap)));
  }
  out.Finish();
  return out;
}

std::u32string DecodeUtf8(std::string_view utf8) {
  std::u32string out;
  for (size_t i = 0; i < utf8.size();) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    const int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    uint32_t cp = len == 1 ? c : c & (0x3F >> (len - 1));
    for (int j = 1; j < len && i + j < utf8.size(); ++j) {
      cp = cp << 6 | (static_cast<unsigned char>(utf8[i + j]) & 0x3F);
    }
    out.push_back(static_cast<char32_t>(cp));
    i += len;
  }
  return out;
}

}  // namespace k3::structured
