#include "objects/shown_text.h"

#include <algorithm>
#include <set>

namespace kistore {
namespace {

// The byte length of the first `max_chars` characters of `text` (all of it
// when it has fewer); `chars` gets how many characters that is.
std::size_t prefix_bytes(std::string_view text, std::size_t max_chars, std::size_t& chars) {
  chars = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    if (chars == max_chars) return i;
    unsigned char lead = static_cast<unsigned char>(text[i]);
    std::size_t len = lead < 0xc0 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
    std::size_t k = 1;
    while (k < len && i + k < text.size() && (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80) ++k;
    i += k;
    ++chars;
  }
  return i;
}

struct Cutter {
  std::size_t max_chars, budget;
  bool cut = false;

  std::string text(const std::string& s) {
    std::size_t chars = 0;
    std::size_t bytes = prefix_bytes(s, max_chars, chars);
    budget -= std::min(budget, chars);
    if (bytes == s.size()) return s;
    cut = true;
    return s.substr(0, bytes) + std::string(kCutMark);
  }

  Json walk(const Json& v) {
    switch (v.type()) {
      case Json::Type::kString: return Json(text(v.as_string()));
      case Json::Type::kArray: {
        Json out = Json::array();
        for (const Json& e : v.as_array()) {
          if (budget == 0) {
            cut = true;
            out.push_back(Json(std::string(kCutMark)));
            break;
          }
          out.push_back(walk(e));
        }
        return out;
      }
      case Json::Type::kObject: {
        // Names stay unique: a cut name equal to one kept before (two long
        // names of one prefix) drops its member, as the budget does.
        Json::Object out;
        std::set<std::string> names;
        bool dropped = false;
        for (const auto& [name, member] : v.as_object()) {
          if (budget == 0) {
            dropped = true;
            break;
          }
          std::string n = text(name);
          if (!names.insert(n).second) {
            dropped = true;
            continue;
          }
          out.emplace_back(std::move(n), walk(member));
        }
        if (dropped) {
          cut = true;
          if (names.insert(std::string(kCutMark)).second) out.emplace_back(std::string(kCutMark), Json(std::string(kCutMark)));
        }
        return Json(std::move(out));
      }
      default:
        budget -= std::min<std::size_t>(budget, 8);
        return v;
    }
  }
};

}  // namespace

std::string cut_text(std::string_view text, std::size_t max_chars) {
  std::size_t chars = 0;
  std::size_t bytes = prefix_bytes(text, max_chars, chars);
  if (bytes == text.size()) return std::string(text);
  return std::string(text.substr(0, bytes)) + std::string(kCutMark);
}

Json cut_json(const Json& value, std::size_t max_chars, std::size_t budget) {
  Cutter c{max_chars, budget, false};
  return c.walk(value);
}

bool json_needs_cut(const Json& value, std::size_t max_chars, std::size_t budget) {
  Cutter c{max_chars, budget, false};
  c.walk(value);
  return c.cut;
}

}  // namespace kistore
