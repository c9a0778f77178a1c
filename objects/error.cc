#include "objects/error.h"

namespace kistore {

std::string Error::without_nul(std::string m) {
  if (m.find('\0') == std::string::npos) return m;
  std::string out;
  out.reserve(m.size() + 5);
  for (char c : m) {
    if (c == '\0') out += "\\u0000";
    else out += c;
  }
  return out;
}

}  // namespace kistore
