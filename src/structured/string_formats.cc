// JSON Schema `format` values as StringDfas, each a regular subset of its RFC (the DFA must never
// let through what a validator rejects, so where the RFC is not regular or is loose, this is the
// strict, common form):
//   date       RFC 3339 full-date, years 0001-9999, days checked per month and leap year
//   time       RFC 3339 full-time: HH:MM:SS[.frac](Z|±HH:MM); no leap second 60, no lowercase z
//   date-time  date "T" time (uppercase T only)
//   duration   RFC 3339 appendix A (ISO 8601): P[nY][nM][nD][T[nH][nM][nS]] in that nesting, or PnW
//   email      RFC 5321 dot-atom local part "@" a hostname (no quoted local parts, no IP literals)
//   hostname   RFC 1123: labels of 1-63 letters, digits, '-' (not first or last), total <= 253
//   ipv4       dotted quad, no leading zeros
//   ipv6       RFC 4291 text forms, '::' compression and a trailing IPv4 (no zone id)
//   uri        RFC 3986 URI (scheme ":" hier-part [?query] [#fragment]); no IP-literal hosts
//   uuid       RFC 4122 8-4-4-4-12 hex digits
// Formats not listed are annotations here (CompileFormat answers NOT_FOUND; the compiler ignores
// them), as JSON Schema 2020-12 makes format by default.
#include <map>
#include <mutex>
#include <string>

#include "structured/string_dfa.h"

namespace k3::structured {
namespace {

const std::string kYear = "(?:[1-9]\\d{3}|0[1-9]\\d{2}|00[1-9]\\d|000[1-9])";
const std::string kDate =
    "(?:" + kYear +
    "-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0["
    "1-9]|1\\d|2[0-8]))|(?:\\d\\d(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579]["
    "26])00)-02-29)";
const std::string kTime =
    "(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|[+-](?:[01]\\d|2[0-3]):[0-5]\\d))";
const std::string kDurTime = "(?:T(?:\\d+H(?:\\d+M(?:\\d+S)?)?|\\d+M(?:\\d+S)?|\\d+S))";
const std::string kDuration = "(?:P(?:(?:\\d+D|\\d+M(?:\\d+D)?|\\d+Y(?:\\d+M(?:\\d+D)?)?)" +
                              kDurTime + "?|" + kDurTime + "|\\d+W))";
const std::string kLabel = "(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)";
const std::string kHostname = "(?:" + kLabel + "(?:\\." + kLabel + ")*)";
const std::string kOctet = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const std::string kIpv4 = "(?:" + kOctet + "(?:\\." + kOctet + "){3})";
const std::string kH16 = "[0-9a-fA-F]{1,4}";
const std::string kLs32 = "(?:" + kH16 + ":" + kH16 + "|" + kIpv4 + ")";
std::string Head(int n) {  // up to n+1 groups before '::'
  return "(?:(?:" + kH16 + ":){0," + std::to_string(n) + "}" + kH16 + ")?::";
}
const std::string kIpv6 = "(?:(?:" + kH16 + ":){6}" + kLs32 + "|::(?:" + kH16 + ":){5}" + kLs32 +
                          "|" + Head(0) + "(?:" + kH16 + ":){4}" + kLs32 + "|" + Head(1) +
                          "(?:" + kH16 + ":){3}" + kLs32 + "|" + Head(2) + "(?:" + kH16 + ":){2}" +
                          kLs32 + "|" + Head(3) + kH16 + ":" + kLs32 + "|" + Head(4) + kLs32 + "|" +
                          Head(5) + kH16 + "|" + Head(6) + ")";
const std::string kUnreserved = "A-Za-z0-9._~\\-";
const std::string kSubDelims = "!$&'()*+,;=";
const std::string kPct = "%[0-9A-Fa-f]{2}";
const std::string kRegChar = "(?:[" + kUnreserved + kSubDelims + "]|" + kPct + ")";
const std::string kUserChar = "(?:[" + kUnreserved + kSubDelims + ":]|" + kPct + ")";
const std::string kPchar = "(?:[" + kUnreserved + kSubDelims + ":@]|" + kPct + ")";
const std::string kQchar = "(?:[" + kUnreserved + kSubDelims + ":@/?]|" + kPct + ")";
const std::string kUri = "(?:[A-Za-z][A-Za-z0-9+.\\-]*:(?://(?:" + kUserChar + "*@)?" + kRegChar +
                         "*(?::\\d*)?(?:/" + kPchar + "*)*|/(?:" + kPchar + "+(?:/" + kPchar +
                         "*)*)?|" + kPchar + "+(?:/" + kPchar + "*)*)?(?:\\?" + kQchar + "*)?(?:#" +
                         kQchar + "*)?)";
const std::string kAtext = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-]";
const std::string kEmail = "(?:" + kAtext + "+(?:\\." + kAtext + "+)*@" + kHostname + ")";
const std::string kUuid =
    "(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})";

base::Result<StringDfa> BuildFormat(std::string_view format) {
  std::string body;
  int64_t max_length = -1;
  if (format == "date") body = kDate;
  if (format == "time") body = kTime;
  if (format == "date-time") body = kDate + "T" + kTime;
  if (format == "duration") body = kDuration;
  if (format == "email") body = kEmail, max_length = 254;
  if (format == "hostname") body = kHostname, max_length = 253;
  if (format == "ipv4") body = kIpv4;
  if (format == "ipv6") body = kIpv6;
  if (format == "uri") body = kUri;
  if (format == "uuid") body = kUuid;
  if (body.empty()) return base::NotFound("format '" + std::string(format) + "' is not known");
  K3_ASSIGN_OR_RETURN(StringDfa dfa, CompilePattern("^" + body + "$"));
  if (max_length >= 0) return IntersectDfa(dfa, LengthDfa(0, max_length));
  return dfa;
}

}  // namespace

// Built once per process (the hostname and email products take tens of milliseconds).
base::Result<StringDfa> CompileFormat(std::string_view format) {
  static std::mutex mu;
  static std::map<std::string, base::Result<StringDfa>, std::less<>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(format);
  if (it == cache.end()) it = cache.emplace(std::string(format), BuildFormat(format)).first;
  return it->second;
}

}  // namespace k3::structured
