#include "cli/output/verdict_text.h"

#include <cmath>
#include <cstdio>

#include "objects/error.h"

namespace kistore::cli {

std::string verdict_brief(const VerdictResult& v) {
  // Appended piece by piece: GCC 12 -O3 misreads "literal" + std::string (-Wrestrict).
  std::string line(verdict_name(v.verdict));
  line += " (";
  line += v.method;
  if (v.p) {
    char p[32];
    std::snprintf(p, sizeof p, "%.3g", *v.p);
    line += ", p = ";
    line += p;
  }
  line += ")";
  return line;
}

Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(); }

Json verdict_json(const VerdictResult& v, const VerdictOptions& o) {
  Json out = Json::object();
  out.set("verdict", std::string(verdict_name(v.verdict)));
  out.set("method", v.method);
  out.set("ratio", v.ratio ? number_or_null(*v.ratio) : Json());
  out.set("interval", v.interval ? Json(Json::Array{number_or_null(v.interval->first), number_or_null(v.interval->second)})
                                 : Json());
  out.set("p", v.p ? Json(*v.p) : Json());
  out.set("reason", v.reason);
  out.set("threshold", o.threshold);
  out.set("alpha", o.alpha);
  return out;
}

std::string ratio_text(double ratio) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", ratio);
  return buf;
}

VerdictOptions verdict_options(double threshold, double alpha) {
  auto check = [](const char* option, double v, const char* high_text, double high) {
    if (!(v > 0 && v < high)) {
      std::string m = option;
      m += ": expected a number greater than 0 and less than ";
      m += high_text;
      char found[32];  // %g: NaN and infinities too, which JSON's numbers lack
      std::snprintf(found, sizeof found, "%g", v);
      m += ", found ";
      m += found;
      throw InvalidInput(m);
    }
  };
  check("--threshold", threshold, "1", 1);
  check("--alpha", alpha, "0.5", 0.5);
  return VerdictOptions{threshold, alpha};
}

}  // namespace kistore::cli
