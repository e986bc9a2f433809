#include "text/output/format_machine.h"

#include "base/utf8.h"

namespace k3::text::output {
namespace {

enum class Match { kNone, kPartial, kFull };

// How the markers relate to buf[pos..]: a full match (its length in *length), a possible match
// cut off by the end of buf, or none.
Match MatchAt(std::string_view buf, size_t pos, std::span<const std::string_view> markers,
              std::string_view* marker) {
  Match best = Match::kNone;
  std::string_view rest = buf.substr(pos);
  for (std::string_view m : markers) {
    if (rest.size() >= m.size()) {
      if (rest.substr(0, m.size()) == m) {
        *marker = m;
        return Match::kFull;
      }
    } else if (m.substr(0, rest.size()) == rest) {
      best = Match::kPartial;
    }
  }
  return best;
}

}  // namespace

void MarkerScanner::Feed(std::string_view chunk, FormatMachine& machine) {
  raw_.append(chunk);
  size_t complete = base::CompleteUtf8PrefixLength(raw_);
  buf_ += base::Utf8Replace(std::string_view(raw_).substr(0, complete));
  raw_.erase(0, complete);
  Drain(machine, /*final=*/false);
}

void MarkerScanner::Finish(bool truncated, FormatMachine& machine) {
  buf_ += base::Utf8Replace(raw_);
  raw_.clear();
  Drain(machine, /*final=*/true);
  machine.OnFinish(truncated);
}

// Hands buf_ to the machine up to the first undecidable position. After each OnText the marker
// set is re-read: when the state changed, scanning restarts at the same position.
void MarkerScanner::Drain(FormatMachine& machine, bool final) {
  std::string_view buf = buf_;
  size_t start = 0;
  for (;;) {
    std::span<const std::string_view> markers = machine.Markers();
    size_t pos = markers.empty() ? std::string_view::npos : buf.find('<', start);
    bool restarted = false;
    while (pos != std::string_view::npos) {
      std::string_view marker;
      Match match = MatchAt(buf, pos, markers, &marker);
      if (match == Match::kNone || (match == Match::kPartial && final)) {
        pos = buf.find('<', pos + 1);
        continue;
      }
      machine.OnText(buf.substr(start, pos - start));
      start = pos;
      if (machine.Markers().data() != markers.data()) {
        restarted = true;
        break;
      }
      if (match == Match::kPartial) {
        buf_.erase(0, start);
        return;
      }
      machine.OnMarker(marker);
      start = pos + marker.size();
      restarted = true;
      break;
    }
    if (restarted) continue;
    machine.OnText(buf.substr(start));
    buf_.clear();
    return;
  }
}

}  // namespace k3::text::output
