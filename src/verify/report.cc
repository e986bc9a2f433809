#include "verify/report.h"

#include <map>
#include <vector>

namespace k3::verify {

const char* CheckStatusName(CheckStatus status) {
  switch (status) {
    case CheckStatus::kPass:
      return "PASS";
    case CheckStatus::kFail:
      return "FAIL";
    case CheckStatus::kSkip:
      return "SKIP";
  }
  return "?";
}

Score Tally(const CheckList& results) {
  Score score;
  for (const CheckResult& result : results) {
    score.passed += result.status == CheckStatus::kPass;
    score.failed += result.status == CheckStatus::kFail;
    score.skipped += result.status == CheckStatus::kSkip;
  }
  return score;
}

void PrintReport(const CheckList& results, std::ostream& out) {
  // Areas in the order they first appear, checks in run order within each.
  std::vector<std::string> areas;
  std::map<std::string, std::vector<const CheckResult*>> by_area;
  for (const CheckResult& result : results) {
    if (!by_area.count(result.area)) areas.push_back(result.area);
    by_area[result.area].push_back(&result);
  }
  for (const std::string& area : areas) {
    out << "== " << area << " ==\n";
    for (const CheckResult* result : by_area[area]) {
      out << "  " << CheckStatusName(result->status) << "  " << result->name;
      if (!result->detail.empty()) out << "  -- " << result->detail;
      out << "\n";
    }
  }
  const Score score = Tally(results);
  out << "score: " << score.passed << "/" << score.passed + score.failed << " passed ("
      << score.failed << " failed, " << score.skipped << " skipped)\n";
}

nlohmann::json ReportJson(const CheckList& results, const std::string& url) {
  const Score score = Tally(results);
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckResult& result : results) {
    checks.push_back({{"area", result.area},
                      {"name", result.name},
                      {"status", CheckStatusName(result.status)},
                      {"detail", result.detail}});
  }
  return {{"url", url},
          {"score",
           {{"passed", score.passed},
            {"failed", score.failed},
            {"skipped", score.skipped},
            {"applicable", score.passed + score.failed}}},
          {"checks", checks}};
}

}  // namespace k3::verify
