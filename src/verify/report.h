// The verify report: one line per check grouped by area, then the score (passed / applicable,
// where applicable = passed + failed), and the same as JSON for --json.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "verify/check.h"

namespace k3::verify {

struct Score {
  int passed = 0, failed = 0, skipped = 0;
};
Score Tally(const CheckList& results);

// "PASS  area  name  detail" lines under "== area ==" headings, then "score: P/A ...".
void PrintReport(const CheckList& results, std::ostream& out);

// {"score": {"passed", "failed", "skipped", "applicable"}, "checks": [{area, name, status,
// detail}]}.
nlohmann::json ReportJson(const CheckList& results, const std::string& url);

}  // namespace k3::verify
