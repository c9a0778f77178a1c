// The Json value (objects/json.h): member lookup and update, equality, and
// JSON Pointer tokens. Parsing is in json_parse.cc, writing in json_write.cc.
#include "objects/json.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

namespace kistore {
namespace {

bool objects_equal(const Json::Object& a, const Json::Object& b) {
  if (a.size() != b.size()) return false;
  constexpr std::size_t kLookupLimit = 16;  // beyond this, sort instead of searching
  if (a.size() <= kLookupLimit) {
    for (const Json::Member& m : a) {
      const auto it = std::find_if(b.begin(), b.end(),
                                   [&](const Json::Member& n) { return n.first == m.first; });
      if (it == b.end() || !(it->second == m.second)) return false;
    }
    return true;
  }
  const auto by_name = [](const Json::Member* x, const Json::Member* y) {
    return x->first < y->first;
  };
  std::vector<const Json::Member*> sa, sb;
  for (const Json::Member& m : a) sa.push_back(&m);
  for (const Json::Member& m : b) sb.push_back(&m);
  std::sort(sa.begin(), sa.end(), by_name);
  std::sort(sb.begin(), sb.end(), by_name);
  for (std::size_t i = 0; i < sa.size(); ++i) {
    if (sa[i]->first != sb[i]->first || !(sa[i]->second == sb[i]->second)) return false;
  }
  return true;
}

}  // namespace

const Json* Json::find(std::string_view name) const {
  if (!is_object()) return nullptr;
  for (const Member& m : as_object()) {
    if (m.first == name) return &m.second;
  }
  return nullptr;
}

Json* Json::find(std::string_view name) {
  return const_cast<Json*>(static_cast<const Json*>(this)->find(name));
}

Json& Json::set(std::string_view name, Json value) {
  Object& members = as_object();
  for (Member& m : members) {
    if (m.first == name) {
      m.second = std::move(value);
      return m.second;
    }
  }
  members.emplace_back(std::string(name), std::move(value));
  return members.back().second;
}

bool Json::erase(std::string_view name) {
  if (!is_object()) return false;
  Object& members = as_object();
  const auto it = std::find_if(members.begin(), members.end(),
                               [&](const Member& m) { return m.first == name; });
  if (it == members.end()) return false;
  members.erase(it);
  return true;
}

bool operator==(const Json& a, const Json& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case Json::Type::kNull: return true;
    case Json::Type::kBool: return a.as_bool() == b.as_bool();
    case Json::Type::kNumber: return a.as_number() == b.as_number();
    case Json::Type::kString: return a.as_string() == b.as_string();
    case Json::Type::kArray: return a.as_array() == b.as_array();
    case Json::Type::kObject: return objects_equal(a.as_object(), b.as_object());
  }
  return false;
}

namespace {

void append_pointer_token(std::string_view name, std::string& out) {
  if (name.find_first_of("~/") == std::string_view::npos) {
    out.append(name);
    return;
  }
  for (char c : name) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
}

}  // namespace

std::string pointer_token(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  append_pointer_token(name, out);
  return out;
}

std::string pointer_child(std::string_view parent, std::string_view member) {
  std::string out;
  out.reserve(parent.size() + 1 + member.size());
  out.append(parent);
  out += '/';
  append_pointer_token(member, out);
  return out;
}

std::string pointer_child(std::string_view parent, std::size_t index) {
  char digits[24];
  const auto r = std::to_chars(digits, digits + sizeof digits, index);
  std::string out;
  out.reserve(parent.size() + 1 + static_cast<std::size_t>(r.ptr - digits));
  out.append(parent);
  out += '/';
  out.append(digits, r.ptr);
  return out;
}

}  // namespace kistore

